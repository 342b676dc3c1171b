// The shared command-line convention (provkit/cli/convention.hpp) on top of CLI11.
#include "provkit/cli/convention.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "provkit/cli/output.hpp"
#include "provkit/error.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"

namespace provkit::cli {

namespace {

// Every command of the tree below `app` (not `app` itself), parents before children.
void collect_commands(CLI::App* app, std::vector<CLI::App*>& out) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    out.push_back(sub);
    collect_commands(sub, out);
  }
}

std::vector<const CLI::App*> all_commands(CLI::App& app) {
  std::vector<CLI::App*> subs;
  collect_commands(&app, subs);
  std::vector<const CLI::App*> out{&app};
  out.insert(out.end(), subs.begin(), subs.end());
  return out;
}

// The option's names as typed: --name and -n.
std::vector<std::string> spellings(const CLI::Option* opt) {
  std::vector<std::string> out;
  for (const auto& l : opt->get_lnames()) out.push_back("--" + l);
  for (const auto& s : opt->get_snames()) out.push_back("-" + s);
  return out;
}

// The option name a left-over argument spells, if it looks like one: "--name[=value]" or "-n...".
std::optional<std::string> option_spelled(const std::string& arg) {
  if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) return arg.substr(0, arg.find('='));
  if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-' && !(arg[1] >= '0' && arg[1] <= '9')) return arg.substr(0, 2);
  return std::nullopt;
}

std::string basename_of(const char* argv0, const std::string& fallback) {
  std::string path = argv0 ? argv0 : "";
  auto slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return base.empty() ? fallback : base;
}

// "tool sub subsub": how a command is typed.
std::string command_path(const CLI::App* command) {
  std::string path = command->get_name();
  for (const CLI::App* p = command->get_parent(); p; p = p->get_parent())
    path = util::concat({p->get_name(), " ", path});
  return path;
}

bool is_help_or_version(const CLI::App& app, const CLI::Option* opt) {
  return opt == app.get_help_ptr() || opt == app.get_help_all_ptr() || opt == app.get_version_ptr();
}

// An option's value as given: "--name=value" or the argument after "--name" / "-n". Refused when it is empty
// or spells an option of the tool (`--cache-dir --offline`, `--cache-dir= --offline` from a script's empty
// variable): CLI11 would take it as the value and the run would go on in a directory named "--offline".
// An option whose value is optional (expected(0, 1)) is left to CLI11, which does not take an option as it.
std::optional<std::string> bad_option_value(const std::vector<const CLI::App*>& commands, int argc,
                                            const char* const* argv) {
  std::map<std::string, const CLI::Option*> known;
  for (const CLI::App* command : commands)
    for (const CLI::Option* opt : command->get_options())
      if (!opt->get_positional())
        for (auto& s : spellings(opt)) known.emplace(s, opt);
  auto takes_value = [](const CLI::Option* o) { return o->get_type_size_min() > 0 && o->get_expected_min() > 0; };
  auto is_option = [&](const std::string& v) {
    if (known.count(v)) return true;
    auto eq = v.find('=');
    return v.compare(0, 2, "--") == 0 && eq != std::string::npos && known.count(v.substr(0, eq));
  };
  auto quoted = [](const std::string& v) { return "'" + util::printable(v) + "'"; };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (arg == "--") break;
    std::string name = arg, value;
    bool attached = false;
    if (arg.compare(0, 2, "--") == 0 && arg.find('=') != std::string::npos) {
      name = arg.substr(0, arg.find('=')), value = arg.substr(arg.find('=') + 1), attached = true;
    }
    auto it = known.find(name);
    if (it == known.end() || !takes_value(it->second)) continue;
    if (!attached) {
      if (i + 1 >= argc) continue;  // CLI11 says the value is missing
      value = argv[++i] ? argv[i] : "";
    }
    if (value.empty()) return name + " was given an empty value";
    if (is_option(value))
      return util::concat({name, " needs a value, but was given ", quoted(value),
                           ", which is an option (a value that starts with '-' can be written ", name, "=./",
                           util::printable(value), " for a path)"});
  }
  return std::nullopt;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(const std::vector<std::string>& known, std::string_view given) {
  std::vector<std::string> extending;
  for (const auto& k : known)
    if (k.size() > given.size() && k.compare(0, given.size(), given) == 0 &&
        std::find(extending.begin(), extending.end(), k) == extending.end())
      extending.push_back(k);
  if (extending.size() == 1) return extending.front();

  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, given.size() / 3) + 1, at_best = 0;
  for (const auto& k : known) {
    std::size_t d = edit_distance(given, k);
    if (d < best_distance) best = k, best_distance = d, at_best = 1;
    else if (d == best_distance && best && *best != k) ++at_best;
  }
  if (at_best > 1) return std::nullopt;  // two names as near: no telling which was meant
  return best;
}

Convention::Convention(CLI::App& app, std::string root_synopsis)
    : app_(app), root_synopsis_(std::move(root_synopsis)) {}

CLI::Option* Convention::global(CLI::Option* option, std::vector<const CLI::App*> commands) {
  globals_.push_back({option, std::move(commands)});
  return option;
}

const CLI::App* Convention::selected() const {
  const CLI::App* command = &app_;
  while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
  return command;
}

std::string Convention::command_name(const CLI::App* command) const {
  if (command == &app_) return root_synopsis_.empty() ? app_.get_name() : app_.get_name() + " " + root_synopsis_;
  return command_path(command);
}

std::string Convention::names(const std::vector<const CLI::App*>& commands) const {
  std::string out;
  for (std::size_t i = 0; i < commands.size(); ++i)
    out += (i == 0 ? "" : i + 1 == commands.size() ? " and " : ", ") + command_name(commands[i]);
  return out;
}

const Convention::Global* Convention::find_global(const CLI::Option* option) const {
  for (const auto& g : globals_)
    if (g.option == option) return &g;
  return nullptr;
}

void Convention::prepare() {
  std::vector<CLI::App*> subs;
  collect_commands(&app_, subs);
  if (!subs.empty() && !app_.get_help_all_ptr())
    app_.set_help_all_flag("--help-all", "Print this help and every subcommand's options, then exit");
  if (!subs.empty()) {
    for (const auto& g : globals_) g.option->group("Global options (before or after a subcommand)");
    for (CLI::Option* opt : app_.get_options([](CLI::Option*) { return true; }))
      if (!find_global(opt) && !is_help_or_version(app_, opt)) opt->group("Options of " + command_name(&app_));
  }
  for (CLI::App* sub : subs) {
    // A global option after the subcommand reaches the app.
    sub->fallthrough();
    if (!sub->get_subcommands([](CLI::App*) { return true; }).empty()) continue;
    std::string applying;
    for (const auto& g : globals_)
      if (std::find(g.commands.begin(), g.commands.end(), sub) != g.commands.end())
        applying += (applying.empty() ? "" : ", ") + g.option->get_name();
    if (!applying.empty())
      sub->footer("Global options that apply here, before or after the subcommand: " + applying + " (see " +
                  app_.get_name() + " --help)");
  }
}

// A left-over argument that spells an option: one of another command, or one that does not exist.
std::optional<std::string> Convention::misplaced_option() const {
  std::vector<std::string> known_long;
  for (const CLI::App* command : all_commands(app_))
    for (const CLI::Option* opt : command->get_options())
      for (const auto& l : opt->get_lnames()) known_long.push_back("--" + l);

  for (const auto& arg : app_.remaining(true)) {
    auto name = option_spelled(arg);
    if (!name) continue;
    std::vector<const CLI::App*> owners;
    for (const CLI::App* command : all_commands(app_))
      for (const CLI::Option* opt : command->get_options())
        for (auto& s : spellings(opt))
          if (s == *name && std::find(owners.begin(), owners.end(), command) == owners.end()) owners.push_back(command);
    if (!owners.empty()) return *name + " is an option of " + names(owners) + "; give it after the subcommand's name";
    std::string sentence = "unknown option " + *name;
    if (name->compare(0, 2, "--") == 0)
      if (auto near = nearest_name(known_long, *name)) return sentence + "; did you mean " + *near + "?";
    return sentence + " (see " + app_.get_name() + " --help)";
  }
  return std::nullopt;
}

// A given option that means nothing for the command run.
std::optional<std::string> Convention::inapplicable_option() const {
  const CLI::App* run = selected();
  for (const CLI::Option* opt : app_.get_options()) {
    if (opt->count() == 0 || is_help_or_version(app_, opt)) continue;
    const Global* g = find_global(opt);
    std::vector<const CLI::App*> applies = g ? g->commands : std::vector<const CLI::App*>{&app_};
    if (std::find(applies.begin(), applies.end(), run) == applies.end())
      return opt->get_name() + " does not apply to " + command_name(run) + "; it is an option of " + names(applies);
  }
  return std::nullopt;
}

// The app's help, then for every leaf command a section headed by its name (help2man makes each a section
// of the man page): what it does, its usage line, its positionals and options, the globals that apply.
std::string Convention::help_all() const {
  std::string out = app_.help();
  for (const CLI::App* command : all_commands(app_)) {
    if (command == &app_ || !command->get_subcommands([](const CLI::App*) { return true; }).empty()) continue;
    // The lines a command's --help has, but one block per command and without --help itself.
    auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(command->get_formatter());
    if (!formatter) throw Error(provkit::Reason::internal, "cli: --help-all needs CLI11's own formatter");
    out += "\n" + command_name(command) + ":\n  " + command->get_description() + "\n\n";
    out += "  " + formatter->make_usage(command, command_path(command)) + "\n";
    for (bool positional : {true, false})
      for (const CLI::Option* opt : command->get_options(
               [positional](const CLI::Option* o) { return positional ? o->get_positional() : o->nonpositional(); }))
        if (opt != command->get_help_ptr()) out += formatter->make_option(opt, positional);
    if (!command->get_footer().empty()) out += "\n  " + command->get_footer() + "\n";
  }
  return out;
}

std::optional<Stop> Convention::parse(int argc, const char* const* argv) {
  app_.name(basename_of(argc > 0 ? argv[0] : nullptr, app_.get_name()));
  prepare();
  const std::string tool = app_.get_name();
  const int usage = static_cast<int>(ExitCode::usage);
  if (auto why = bad_option_value(all_commands(app_), argc, argv)) return Stop{usage, "", sentence(tool, *why)};
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForAllHelp&) {
    return Stop{0, help_all(), ""};
  } catch (const CLI::Success& e) {  // --help, --version
    std::ostringstream out, err;
    int code = app_.exit(e, out, err);
    return Stop{code, out.str(), err.str()};
  } catch (const CLI::ParseError& e) {
    // A mistyped or misplaced option is the cause of whatever else went wrong (a value taken as a
    // positional, a required option seemingly missing): name it first.
    return Stop{usage, "", sentence(tool, misplaced_option().value_or(e.what()))};
  }
  if (auto why = inapplicable_option()) return Stop{usage, "", sentence(tool, *why)};
  return std::nullopt;
}

CLI::Validator size_value(std::uint64_t minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        try {
          std::uint64_t bytes = util::parse_size(text);
          if (bytes < minimum) return "must be at least " + std::to_string(minimum) + " bytes, not '" + text + "'";
          text = std::to_string(bytes);
          return {};
        } catch (const Error& e) {
          return e.what();
        }
      },
      "SIZE");
}

CLI::Validator size_list() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          for (const auto& item : util::split(text, ',')) util::parse_size(item);
          return {};
        } catch (const Error& e) {
          return e.what();
        }
      },
      "SIZE[,SIZE...]");
}

}  // namespace provkit::cli
