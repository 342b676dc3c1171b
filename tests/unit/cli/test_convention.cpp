// The tools' shared command-line convention (provkit/cli/convention.hpp): suggestions, and the sentences
// for options given where they cannot apply, on a CLI11 app built here.
#include <catch2/catch.hpp>

#include "provkit/cli/convention.hpp"

using provkit::cli::edit_distance;
using provkit::cli::nearest_name;

TEST_CASE("edit distance counts insertions, deletions and substitutions", "[cli]") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("--python", "--python") == 0);
  CHECK(edit_distance("--pyton", "--python") == 1);
  CHECK(edit_distance("--jsno", "--json") == 2);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("the nearest name: the only one extended, else a close one, else none", "[cli]") {
  std::vector<std::string> known{"--python", "--python-dir", "--lock", "--endpoint", "--json", "--jobs"};
  CHECK(nearest_name(known, "--pyton") == "--python");
  CHECK(nearest_name(known, "--end") == "--endpoint");               // the only name it begins
  CHECK(nearest_name(known, "--jso") == "--json");                   // the only name it begins
  CHECK(nearest_name(known, "--jo") == "--jobs");                    // the only name it begins
  CHECK(nearest_name(known, "--pyth") == "--python");                // begins two: the nearest of them
  CHECK(nearest_name({"--cap", "--car"}, "--cat") == std::nullopt);  // two as near: no telling
  // A name several commands share is one name.
  CHECK(nearest_name({"--json", "--json", "--jobs"}, "--jsn") == "--json");
  CHECK(nearest_name({"--json", "--json"}, "--js") == "--json");
  CHECK(nearest_name(known, "--lokc") == "--lock");
  CHECK(nearest_name(known, "--frobnicate") == std::nullopt);
  CHECK(nearest_name({}, "--x") == std::nullopt);
}

namespace {
// argv from a list of words, the first being the program's path.
std::optional<int> parse(provkit::cli::Convention& c, std::vector<std::string> words) {
  std::vector<const char*> argv;
  for (auto& w : words) argv.push_back(w.c_str());
  auto stop = c.parse(static_cast<int>(argv.size()), argv.data());
  return stop ? std::optional<int>(stop->code) : std::nullopt;
}
}  // namespace

TEST_CASE("a global option reaches the app from after a subcommand, and is refused where it cannot apply", "[cli]") {
  CLI::App app{"test"};
  provkit::cli::Convention c(app);
  std::string cache;
  auto* cache_opt = app.add_option("--cache-dir", cache);
  auto* used = app.add_subcommand("used", "reads the cache");
  app.add_subcommand("other", "reads no cache");
  c.global(cache_opt, {used});

  SECTION("after") {
    CHECK(parse(c, {"/usr/local/bin/tool", "used", "--cache-dir", "D"}) == std::nullopt);
    CHECK(cache == "D");
    CHECK(c.selected() == used);
    CHECK(app.get_name() == "tool");
  }
  SECTION("before") {
    CHECK(parse(c, {"tool", "--cache-dir", "D", "used"}) == std::nullopt);
    CHECK(cache == "D");
  }
  SECTION("refused") { CHECK(parse(c, {"tool", "other", "--cache-dir", "D"}) == 2); }
  SECTION("unknown") { CHECK(parse(c, {"tool", "used", "--cache-dri", "D"}) == 2); }
}

TEST_CASE("convention: an option's value that is empty or an option is refused, naming both", "[cli]") {
  auto parse = [](std::vector<const char*> argv) {
    CLI::App app{"t", "t"};
    provkit::cli::Convention convention(app);
    std::string dir;
    bool offline = false;
    app.add_option("--cache-dir", dir, "d");
    app.add_flag("--offline", offline, "o");
    auto stop = convention.parse(static_cast<int>(argv.size()), argv.data());
    return stop ? stop->err : "ran with " + dir;
  };
  CHECK(parse({"t", "--cache-dir", "--offline"}) ==
        "t: --cache-dir needs a value, but was given '--offline', which is an option (a value that starts with '-' can "
        "be written --cache-dir=./--offline for a path)\n");
  CHECK(parse({"t", "--cache-dir=", "--offline"}) == "t: --cache-dir was given an empty value\n");
  CHECK(parse({"t", "--cache-dir", ""}) == "t: --cache-dir was given an empty value\n");
  CHECK_THAT(parse({"t", "--cache-dir=--offline"}), Catch::Contains("which is an option"));
  CHECK(parse({"t", "--cache-dir", "./--offline"}) == "ran with ./--offline");
  CHECK(parse({"t", "--cache-dir", "-1"}) == "ran with -1");
}

TEST_CASE("convention: a SIZE option is read into bytes with the command line, a bad one refused naming it", "[cli]") {
  auto parse = [](std::vector<const char*> argv) {
    CLI::App app{"t", "t"};
    provkit::cli::Convention convention(app);
    std::uint64_t split = 0;
    std::string cards;
    app.add_option("--min-split-size", split, "s")->transform(provkit::cli::size_value(1));
    app.add_option("--gpu-memory", cards, "g")->check(provkit::cli::size_list());
    auto stop = convention.parse(static_cast<int>(argv.size()), argv.data());
    return stop ? stop->err : "ran with " + std::to_string(split) + " " + cards;
  };
  CHECK(parse({"t", "--min-split-size", "16M", "--gpu-memory", "24G,80GB"}) == "ran with 16777216 24G,80GB");
  CHECK(parse({"t", "--min-split-size", "1.5K"}) == "ran with 1536 ");
  CHECK_THAT(parse({"t", "--min-split-size", "lots"}),
             Catch::StartsWith("t: --min-split-size: 'lots' is not a size") && Catch::EndsWith("\n"));
  CHECK_THAT(parse({"t", "--min-split-size", "0"}), Catch::Contains("--min-split-size: must be at least 1 bytes"));
  CHECK_THAT(parse({"t", "--gpu-memory", "24G,lots"}), Catch::StartsWith("t: --gpu-memory: 'lots' is not a size"));
  CHECK_THAT(parse({"t", "--gpu-memory", "24G,,24G"}), Catch::StartsWith("t: --gpu-memory: '' is not a size"));
}
