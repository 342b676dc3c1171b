#include "invocation.hpp"

#include <initializer_list>
#include <string_view>

#include "provkit/util/strings.hpp"
#include "response.hpp"

namespace provkit::ccshim {

namespace {

// The options by which a caller says whether floating-point code may raise exceptions the source would not:
// gcc's and clang's names of fast-math and trapping-math, and clang's own.
bool sets_fp_semantics(const std::string& a) {
  static constexpr std::string_view exact[] = {"-ffast-math",
                                               "-fno-fast-math",
                                               "-Ofast",
                                               "-ftrapping-math",
                                               "-fno-trapping-math",
                                               "-funsafe-math-optimizations",
                                               "-fno-unsafe-math-optimizations"};
  for (auto e : exact)
    if (a == e) return true;
  return a.starts_with("-ffp-exception-behavior=") || a.starts_with("-ffp-model=");
}

bool any_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (name == n) return true;
  return false;
}

// The value of an option with a value (-o, -MF) as gcc reads the last one: `-o FILE` or `-oFILE`.
void note_last_value(const Argument& a, std::string_view option,
                     std::optional<std::pair<std::size_t, std::string>>& found) {
  if (a.is(option) && a.value_separate) found = {{a.index + 1, a.value}};
  if (!a.option && a.given.size() > option.size() && a.given.starts_with(option))
    found = {{a.index, a.given.substr(option.size())}};
}

// What an -Wl, list or -Xlinker argument says of the link: true when it asks ld for its version.
bool asks_ld_version(const Argument& a) {
  if (a.option->rule == Rule::linker)
    for (const auto& t : util::split(a.value, ','))
      if (t == "--version") return true;
  return a.option->rule == Rule::linker_arg && a.value == "--version";
}

}  // namespace

Invocation read_invocation(std::vector<std::string> args) {
  Invocation inv;
  inv.args = std::move(args);
  const auto& all = inv.args;
  std::string language;  // the -x in force
  bool preprocess = false, syntax_only = false, assemble = false, compile = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto p = parse_one(all, i);
    Argument a{p.option, all[i], std::move(p.value), p.value_separate, i};
    if (a.value_separate) ++i;
    note_last_value(a, "-o", inv.output);
    note_last_value(a, "-MF", inv.dependency_file);
    inv.warnings_are_errors |= a.given == "-Werror";
    inv.chooses_fp |= sets_fp_semantics(a.given);
    if (!a.option) {
      if (a.given == "-frtti" || a.given == "-fno-rtti") inv.rtti.push_back(a.given);
      if (a.given == "-" || (!a.given.empty() && !a.given.starts_with("-"))) inv.inputs.push_back({a.given, language});
      inv.arguments.push_back(std::move(a));
      continue;
    }
    const auto name = a.option->name;
    switch (a.option->rule) {
      case Rule::library_dir: inv.l_dirs.emplace_back(a.value); break;
      case Rule::target: inv.names_target = true; break;
      case Rule::cpu: inv.names_cpu = true; break;
      case Rule::linker:
      case Rule::linker_arg: inv.asks_linker_version |= asks_ld_version(a); break;
      default: break;
    }
    if (name == "-x") language = a.value;
    inv.asks_dumpmachine |= name == "-dumpmachine";
    inv.asks_multiarch |= name == "-print-multiarch";
    inv.sanitizes |= name == "-fsanitize=";
    inv.static_link |= name == "-static";
    inv.no_std_includes |= any_of(name, {"-nostdinc", "--sysroot", "--sysroot=", "-isysroot"});
    inv.m32 |= name == "-m32";
    inv.chooses_pic |= any_of(name,
                              {"-fPIC", "-fpic", "-fPIE", "-fpie", "-fno-PIC", "-fno-pic", "-fno-PIE", "-fno-pie"});
    inv.no_pie_link |= any_of(name, {"-shared", "-r", "-static", "-static-pie", "-no-pie", "-pie"});
    preprocess |= any_of(name, {"-E", "-M", "-MM"});
    syntax_only |= name == "-fsyntax-only";
    assemble |= name == "-S";
    compile |= name == "-c";
    inv.arguments.push_back(std::move(a));
  }
  inv.mode = preprocess    ? Mode::preprocess
             : syntax_only ? Mode::syntax_only
             : assemble    ? Mode::assemble
             : compile     ? Mode::compile
                           : Mode::link;
  return inv;
}

Invocation parse_invocation(const std::vector<std::string>& args, const SearchContext& ctx) {
  return read_invocation(expand_response_files(args, ctx));
}

}  // namespace provkit::ccshim
