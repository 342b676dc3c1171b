#include "response.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "options.hpp"
#include "provkit/error.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/text.hpp"

namespace provkit::ccshim {

namespace {

// libiberty's buildargv: whitespace separates; '...' and "..." group;
// a backslash takes the next character literally, inside quotes too.
std::vector<std::string> split_response_text(const std::string& text) {
  std::vector<std::string> out;
  std::string arg;
  bool in_arg = false, squote = false, dquote = false, escaped = false;
  for (char c : text) {
    if (escaped) {
      arg += c;
      escaped = false;
      in_arg = true;
    } else if (c == '\\') {
      escaped = true;
      in_arg = true;
    } else if (squote) {
      if (c == '\'') squote = false;
      else arg += c;
    } else if (dquote) {
      if (c == '"') dquote = false;
      else arg += c;
    } else if (c == '\'') {
      squote = in_arg = true;
    } else if (c == '"') {
      dquote = in_arg = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      if (in_arg) out.push_back(std::move(arg));
      arg.clear();
      in_arg = false;
    } else {
      arg += c;
      in_arg = true;
    }
  }
  if (in_arg) out.push_back(std::move(arg));
  return out;
}

void expand_into(const std::vector<std::string>& args, const SearchContext& ctx, int& expansions,
                 std::vector<std::string>& out) {
  for (const auto& arg : args) {
    if (arg.size() < 2 || arg[0] != '@') {
      out.push_back(arg);
      continue;
    }
    fs::path file = arg.substr(1);
    auto text = ctx.read_response_file(file);
    if (!text) {  // gcc leaves an unreadable @file as it is (then reports it as a missing input)
      out.push_back(arg);
      continue;
    }
    if (++expansions > max_response_file_expansions)
      throw input_error(ResponseFileRefusal::too_many, file.string(), 0,
                        "too many @-files encountered (more than " + std::to_string(max_response_file_expansions) +
                            " response files expanded; does a file include itself?)");
    expand_into(split_response_text(*text), ctx, expansions, out);
  }
}

}  // namespace

std::string_view reason_name(ResponseFileRefusal r) {
  return reason_name(reason_for(exit_code(r)));  // the shared names: invalid_input, check_failed
}

ExitCode exit_code(ResponseFileRefusal r) {
  return r == ResponseFileRefusal::unreadable ? ExitCode::check_failed : ExitCode::usage;
}

std::vector<std::string> expand_response_files(const std::vector<std::string>& args, const SearchContext& ctx) {
  std::vector<std::string> out;
  out.reserve(args.size());
  int expansions = 0;
  expand_into(args, ctx, expansions, out);
  // An @file that could not be read stays as gcc leaves it, an input that gcc then reports missing (exit 1).
  // The shim reports it so itself, the name made printable: zig would echo it raw, and a newline in it would
  // forge a line of the build log. (The value of an option, `-o @out`, is a name like any other.)
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto p = parse_one(out, i);
    if (p.value_separate) ++i;
    else if (!p.option && out[i].size() > 1 && out[i][0] == '@')
      throw Error(ResponseFileRefusal::unreadable,
                  util::printable(out[i]) + ": linker input file not found (a response file that cannot be read)");
  }
  return out;
}

std::optional<std::string> quote_for_zig_response_file(const std::string& arg) {
  if (arg.find('\'') != std::string::npos) return std::nullopt;
  // Inside "...": backslashes are literal unless a quote follows; then 2n
  // backslashes give n, and 2n+1 give n and a literal quote.
  std::string out = "\"";
  std::size_t backslashes = 0;
  for (char c : arg) {
    if (c == '\\') {
      ++backslashes;
      continue;
    }
    if (c == '"') {
      out.append(backslashes * 2 + 1, '\\');
    } else {
      out.append(backslashes, '\\');
    }
    backslashes = 0;
    out += c;
  }
  out.append(backslashes * 2, '\\');
  return out + "\"";
}

std::vector<std::string> pack_for_exec(const std::vector<std::string>& args,
                                       const std::function<std::string(const std::string&)>& write_file,
                                       std::size_t max_inline) {
  std::size_t bytes = 0;
  for (const auto& a : args) bytes += a.size() + 1 + sizeof(char*);
  if (bytes <= max_inline) return args;
  std::vector<std::string> out;
  std::string text;
  auto flush = [&] {
    if (text.empty()) return;
    out.push_back("@" + write_file(text));
    text.clear();
  };
  for (const auto& a : args) {
    if (auto quoted = quote_for_zig_response_file(a)) {
      text += *quoted;
      text += '\n';
    } else {
      flush();
      out.push_back(a);
    }
  }
  flush();
  return out;
}

std::string response_memfd(const std::string& text) {
  // Not O_CLOEXEC: zig, exec'd next, reads it by its /proc/self/fd name; the descriptor is kept open for it.
  util::Fd fd(::memfd_create("cc-shim-args", 0));
  if (!fd) return "";
  if (int e = util::write_all(fd.get(), text); e != 0) {
    fd.reset();
    errno = e;
    return "";
  }
  return "/proc/self/fd/" + std::to_string(fd.release());
}

}  // namespace provkit::ccshim
