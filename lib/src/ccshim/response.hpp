#pragma once
// cc-shim's response files: gcc's @file expansion on
// the way in, and the response file zig reads when the command line is too
// long for exec on the way out.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "context.hpp"
#include "provkit/error.hpp"

namespace provkit::ccshim {

// Response files expanded in one command line before giving up, counting
// nested ones: gcc's (libiberty's) limit, which also ends a cycle or a
// fan-out of files that include each other.
inline constexpr int max_response_file_expansions = 2000;

// Why a command line's response files were refused (Error::is); the exit codes are gcc's.
enum class ResponseFileRefusal {
  too_many,    // 2: more than max_response_file_expansions expanded (a cycle, or a fan-out)
  unreadable,  // 1: a file that cannot be read, which gcc leaves as an input and then finds missing
};
std::string_view reason_name(ResponseFileRefusal r);
ExitCode exit_code(ResponseFileRefusal r);

// Replaces each `@file` by the arguments in it, recursively (gcc's rules:
// quoting with '' and "" and backslash escapes as in libiberty's buildargv).
// Throws provkit::Error (ResponseFileRefusal) naming the file (util::printable), worded as gcc words it.
std::vector<std::string> expand_response_files(const std::vector<std::string>& args, const SearchContext& ctx);

// Argument bytes above which they go to zig in a response file: below the
// 128 KiB that exec allows for one argument, and far below the total
// (ARG_MAX, a quarter of the stack limit, shared with the environment).
inline constexpr std::size_t max_inline_argument_bytes = std::size_t{128} * 1024;

// An argument quoted for zig's response-file reader (std.process.ArgIteratorGeneral
// with single quotes: either quote toggles quoting, backslashes are literal
// except before a quote). nullopt for an argument it cannot carry: one with a
// single quote.
std::optional<std::string> quote_for_zig_response_file(const std::string& arg);

// The arguments as they are when they fit; otherwise runs of them written by
// `write_file` (given the text, returns a path zig can read) and replaced by
// `@path`. Arguments zig's reader cannot carry stay on the command line.
std::vector<std::string> pack_for_exec(const std::vector<std::string>& args,
                                       const std::function<std::string(const std::string&)>& write_file,
                                       std::size_t max_inline = max_inline_argument_bytes);

// A memfd holding `text`, left open (not close-on-exec) so that the program
// this process execs next reads it as the returned /proc/self/fd/N: nothing
// is written to disk and nothing is left behind. Empty when it cannot be
// made, with errno saying why.
std::string response_memfd(const std::string& text);

}  // namespace provkit::ccshim
