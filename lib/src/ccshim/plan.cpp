// cc-shim's run, decided (provkit/ccshim/plan.hpp). No iostreams here: every compile pays the shim's start-up.
#include "provkit/ccshim/plan.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <tuple>

#include "ccshim.hpp"
#include "options.hpp"
#include "provkit/ccshim/supervise.hpp"
#include "provkit/error.hpp"
#include "provkit/util/environment.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/process.hpp"
#include "provkit/util/text.hpp"

namespace provkit::ccshim {

namespace {

constexpr int exit_usage = static_cast<int>(ExitCode::usage);

Reply fail(const std::string& sentence, int code = exit_usage) { return {code, "", "cc-shim: " + sentence + "\n"}; }

// An output that zig must not write itself (Exec::outputs): the last `option`'s value where it names what
// is no regular file or directory, or (`links_too`) a link that is not one of the system's own names below
// /dev or /proc (/dev/stdout, /dev/fd/N: the user's own streams). nullopt where zig writes it as gcc would.
struct Redirected {
  std::size_t index;
  std::string given;
  bool replace_link;
};
std::optional<Redirected> redirected_output(const std::vector<std::string>& argv, std::string_view option,
                                            bool links_too) {
  const auto found = last_option_value(argv, option);
  struct stat st {};
  if (!found || ::lstat(found->second.c_str(), &st) != 0) return std::nullopt;  // not there: zig makes it
  const std::string& given = found->second;
  const bool system_name = given.starts_with("/dev/") || given.starts_with("/proc/");
  if (S_ISLNK(st.st_mode) && links_too && !system_name) {
    // A link to a file, or to nothing: replaced. To a FIFO or device: written into.
    const bool to_file = ::stat(given.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode);
    return Redirected{found->first, given, to_file};
  }
  if (S_ISLNK(st.st_mode) && ::stat(given.c_str(), &st) != 0) return std::nullopt;  // dangling: zig's
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) return std::nullopt;
  return Redirected{found->first, given, false};
}

// What gcc's driver (and cc1) refuse before anything is written, where zig would go on (docs/cc-shim.md,
// "refused as gcc refuses"): an -o that is one of the inputs (gcc: "input file 'a.c' is the same as output
// file"; the shim compares st_dev and st_ino, so ./a.c, dir/../a.c, a symlink and a hard link all count), an
// empty -o, and an empty -MF (gcc's cc1: "opening dependency file : No such file or directory"). The
// sentence for gcc's exit status 1, nullopt where gcc goes on.
std::optional<std::string> gcc_refusal(const Invocation& inv) {
  if (inv.dependency_file && inv.dependency_file->second.empty())
    return "fatal error: opening dependency file '': an empty -MF names no file";
  if (!inv.output) return std::nullopt;
  const std::string& output = inv.output->second;
  if (output.empty()) return "fatal error: output filename may not be empty";
  struct stat out {};
  // Only a regular file is replaced by the output (/dev/null, a FIFO or /dev/stdout are written into).
  if (::stat(output.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return std::nullopt;
  for (const auto& input : inv.inputs) {
    const auto& a = input.path;
    if (a == "-") continue;  // stdin
    struct stat in {};
    if (::stat(a.c_str(), &in) != 0 || in.st_dev != out.st_dev || in.st_ino != out.st_ino) continue;
    return "fatal error: input file '" + util::printable(a) + "' is the same as output file" +
           (a == output ? "" : " '" + util::printable(output) + "'");
  }
  return std::nullopt;
}

}  // namespace

std::string exec_failed(const std::string& zig, int error) {
  return "cc-shim: cannot run " + zig + ": " + std::strerror(error) + "\n";
}

Reply zig_not_found(const ZigSearch& search) {
  std::string where;
  for (std::size_t i = 0; i < search.looked.size(); ++i) where += (i ? ", " : "") + search.looked[i];
  return fail("no zig found (looked at: " + where + "); install zig or set CC_SHIM_ZIG to its path");
}

std::optional<Reply> refuse_nested_run() {
  // zig runs `$CC` (else `cc`) with this set to find the native libc. Running
  // zig from here would loop back into zig's detection; failing makes zig use
  // its own libc, the same as on a host with no C compiler at all.
  if (util::env_get(util::EnvVar::zig_is_detecting_libc_paths))
    return fail("not answering zig's native libc detection (ZIG_IS_DETECTING_LIBC_PATHS is set); zig uses its own libc",
                static_cast<int>(ExitCode::check_failed));
  // Set in zig's environment before the exec; seeing it on entry means the zig
  // we started ran us again (a zig that is really a wrapper around cc-shim).
  if (auto zig = util::env_get(util::EnvVar::cc_shim_active))
    return fail("called again from within the zig it started (" + *zig +
                "); refusing to recurse: that zig runs cc-shim, point CC_SHIM_ZIG at a real zig");
  return std::nullopt;
}

Plan plan(const std::vector<std::string>& args, const std::string& argv0, bool cxx) {
  Exec run;
  std::optional<std::string> zig_libc;
  bool linker_version = false, links = false;
  ZigSearch search;
  try {
    auto ctx = system_context();
    // The command line read once (its response files expanded): every step below takes it.
    const auto inv = parse_invocation(args, ctx);
    // gcc's answers about itself that build systems probe (-dumpmachine):
    // the shim knows them without zig.
    if (auto answer = answer_query(inv, ctx)) return Reply{0, *answer, ""};
    if (auto refusal = gcc_refusal(inv))
      return fail(*refusal, static_cast<int>(ExitCode::check_failed));  // gcc's exit status, before zig
    search = locate_zig(zig_query(argv0));
    if (!search.zig) return zig_not_found(search);
    ctx.zig_newest_glibc = [zig = *search.zig] { return newest_glibc_zig_builds(zig); };
    linker_version = inv.asks_linker_version;
    run.argv = translate(inv, ctx);
    links = inv.links();
    run.preface = gcc_driver_warnings(inv, cxx);
    // A libc file the caller gave zig stays theirs.
    if (util::env_value(util::EnvVar::zig_libc).empty()) zig_libc = zig_libc_file(inv, ctx);
  } catch (const Error& e) {
    return fail(e.what(), static_cast<int>(e.code()));
  } catch (const std::exception& e) {  // e.g. the working directory was removed
    return fail(e.what());
  }
  auto caches = zig_cache_dirs();
  run.env = {{"ZIG_GLOBAL_CACHE_DIR", caches.global}, {"ZIG_LOCAL_CACHE_DIR", caches.local}};
  std::string libc_path;
  if (!linker_version) {
    // Every run gets its own directory, removed when zig ends: zig's local cache, where zig keeps the
    // objects it compiled (on a hit it prints no diagnostics, and ccache would store the silence), unless
    // CC_SHIM_ZIG_OBJECT_CACHE=1 keeps zig's own; and the files for an -o that is no regular file.
    try {
      run.scratch_dir = make_scratch_dir((fs::path(caches.global) / "cc-shim-runs").string());
    } catch (const Error& e) {
      return fail(e.what(), static_cast<int>(e.code()));
    }
    if (util::env_value(util::EnvVar::cc_shim_zig_object_cache) != "1") run.env[1].second = run.scratch_dir;
    // gcc writes into /dev/null, a FIFO or /dev/stdout as into any file; zig renames its output into
    // place (or, for /dev/null, leaves ./a.out, ./-.o or ./NAME.o behind): zig gets a file of its own.
    // The dependency file likewise, and also where a link stands at its name (a build directory others
    // write to): zig's clang writes -MF through it, where the shim replaces the link, as zig does at -o.
    for (const auto& [option, own_name, links_too] : {std::tuple{"-o", "out", false}, {"-MF", "deps", true}}) {
      if (auto output = redirected_output(run.argv, option, links_too)) {
        auto own = (fs::path(run.scratch_dir) / (own_name + fs::path(output->given).extension().string())).string();
        auto& arg = run.argv[output->index];
        arg = arg == output->given ? own : std::string(option).append(own);  // `-o FILE` or `-oFILE`
        run.outputs.push_back({own, output->given, output->replace_link});
      }
    }
    // lld's warnings where GNU ld is silent are left out of zig's stderr (read through a pipe: zig 0.11's
    // clang prints no colours then, as for any redirected build log).
    run.filter_linker_warnings = links;
  }
  if (linker_version) {
    // gcc -Wl,--version prints its linker's version and links nothing; zig cc
    // would print "zig ld 0.11.0", which names no linker meson knows. Its
    // linker is lld.
    run.argv = {search.zig->string(), "ld.lld", "--version"};
  } else {
    // A long command line goes to zig in a response file (exec refuses more
    // than ARG_MAX), a memfd zig reads as /proc/self/fd/N.
    std::string pack_error;
    run.argv = pack_for_exec(run.argv, [&](const std::string& text) {
      auto path = response_memfd(text);
      if (path.empty()) pack_error = std::strerror(errno);
      return path;
    });
    auto failed = [&](const std::string& sentence) {
      std::error_code ec;
      if (!run.scratch_dir.empty()) fs::remove_all(run.scratch_dir, ec);
      return fail(sentence);
    };
    if (!pack_error.empty())
      return failed("cannot hold the " + std::to_string(args.size()) +
                    " arguments for zig in a response file: " + pack_error);
    // The host's C library for zig to link against, in a memfd as well.
    if (zig_libc) {
      libc_path = response_memfd(*zig_libc);
      if (libc_path.empty()) return failed(std::string("cannot hold zig's libc file: ") + std::strerror(errno));
      run.env.emplace_back("ZIG_LIBC", libc_path);
    }
    run.argv.insert(run.argv.begin(), {search.zig->string(), cxx ? "c++" : "cc"});
  }
  if (auto debug = util::env_value(util::EnvVar::cc_shim_debug); !debug.empty() && debug != "0") {
    // One line on a terminal: an argument's newline or escape sequence is shown escaped (util::printable).
    run.debug = "cc-shim: exec";
    if (zig_libc) run.debug += " ZIG_LIBC=" + util::printable(shell_quote(libc_path));
    for (const auto& a : run.argv) run.debug += " " + util::printable(shell_quote(a));
    run.debug += "\n";
  }
  run.env.emplace_back(std::string(util::env_entry(util::EnvVar::cc_shim_active).name), search.zig->string());
  return run;
}

}  // namespace provkit::ccshim
