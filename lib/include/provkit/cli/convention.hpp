#pragma once
// One command-line convention for every provkit tool (each tool's docs page, "Command line"):
// - a global option is declared once, on the app, and is accepted before or after any subcommand (every
//   subcommand falls through to the app); given with a command it cannot apply to, it is refused;
// - an option of a subcommand given elsewhere, or an unknown option, is refused naming it (and the nearest
//   known name);
// - Usage and help name the tool by the basename it was started by, not its path;
// - --help-all shows every subcommand's options (the man page is made from it).
// Every command-line mistake is one sentence for stderr, "TOOL: ...", and exit 2. The library prints nothing:
// parse() returns what the tool is to print and the exit code.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::cli {

// Where the tool stops after parsing: its exit code and what it prints first on stdout and stderr.
struct Stop {
  int code = 0;
  std::string out, err;
};

class Convention {
 public:
  // `app` must outlive this. `root_synopsis` names the app run without a subcommand in sentences, after
  // the tool's name (e.g. "--manifest FILE" for "hf-fetch --manifest FILE"); empty: the name alone.
  explicit Convention(CLI::App& app, std::string root_synopsis = "");

  // `option`, declared on the app, is global: accepted before or after any subcommand, and meaningful only
  // with `commands` (the app itself means: run without a subcommand). An option of the app not declared
  // global applies only when no subcommand is given.
  CLI::Option* global(CLI::Option* option, std::vector<const CLI::App*> commands);

  // Parses argv (the app's name becomes argv[0]'s basename). Returns a Stop when the tool must stop now:
  // 0 with help or the version to print, 2 with a command-line mistake; nullopt to go on.
  std::optional<Stop> parse(int argc, const char* const* argv);

  // The command that was run: the deepest subcommand given, or the app itself.
  const CLI::App* selected() const;

 private:
  struct Global {
    CLI::Option* option;
    std::vector<const CLI::App*> commands;
  };
  std::string command_name(const CLI::App* command) const;
  std::string names(const std::vector<const CLI::App*>& commands) const;
  const Global* find_global(const CLI::Option* option) const;
  void prepare();
  std::optional<std::string> misplaced_option() const;
  std::optional<std::string> inapplicable_option() const;
  std::string help_all() const;

  CLI::App& app_;
  std::string root_synopsis_;
  std::vector<Global> globals_;
};

// SIZE options (util::parse_size), read while the command line is parsed, before the tool does anything:
// a bad value is a command-line mistake like any other, refused naming the flag (CLI11 says "--flag: why").
// size_value: the text becomes its number of bytes (bind the option to a std::uint64_t), at least `minimum`.
CLI::Validator size_value(std::uint64_t minimum = 0);
// size_list: "SIZE" or "SIZE,SIZE,...", each a size; the text is left as it is.
CLI::Validator size_list();

// Levenshtein distance between two names.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name in `known` that `given` most likely meant: the only one it is a prefix of, else the one nearest by
// edit distance when that is close (at most a third of the name, and 2 for short ones) and no other is as near.
std::optional<std::string> nearest_name(const std::vector<std::string>& known, std::string_view given);

}  // namespace provkit::cli
