// RepoPattern judged by huggingface_hub itself: tests/data/hf-patterns/filter_repo_objects.json holds the verdicts
// of its filter_repo_objects (v1.28.0, run from its source by generate.py there) for every (pattern, path) pair.
#include "provkit/hub/patterns.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace provkit;
namespace fs = std::filesystem;

namespace {

nlohmann::json filter_repo_objects_table() {
  std::ifstream in(fs::path(PROVKIT_TEST_DATA) / "hf-patterns" / "filter_repo_objects.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("patterns: every row of huggingface_hub's filter_repo_objects table", "[patterns]") {
  const auto table = filter_repo_objects_table();
  const auto& rows = table.at("rows");
  REQUIRE(rows.size() > 1000);
  std::size_t included = 0;
  for (const auto& row : rows) {
    const std::string pattern = row.at(0), path = row.at(1);
    const bool want_included = row.at(2), want_excluded = row.at(3);
    INFO("pattern '" << pattern << "' path '" << path << "'");
    CHECK(hub::RepoPattern(pattern).matches(path) == want_included);
    CHECK(hub::selected_by_patterns(path, {pattern}, {}) == want_included);
    CHECK(hub::selected_by_patterns(path, {}, {pattern}) == !want_excluded);
    included += want_included ? 1 : 0;
  }
  CHECK(included > 100);  // the table selects things, not only refuses them
}

TEST_CASE("patterns: the corners hf download users meet", "[patterns]") {
  // A folder pattern is everything under it (every Llama checkpoint's original/ duplicate).
  CHECK(hub::RepoPattern("original/").matches("original/consolidated.00.pth"));
  CHECK_FALSE(hub::RepoPattern("original/").matches("original.bin"));
  CHECK_FALSE(hub::selected_by_patterns("original/params.json", {}, {"original/"}));
  CHECK(hub::selected_by_patterns("config.json", {}, {"original/"}));
  // `?` is one character, `^` a literal, `!` the negation, `\` a `/`.
  CHECK(hub::RepoPattern("???.txt").matches("\xc3\xbcn\xc3\xaf.txt"));
  CHECK(hub::RepoPattern("[^c].txt").matches("c.txt"));
  CHECK(hub::RepoPattern("[^c].txt").matches("^.txt"));
  CHECK_FALSE(hub::RepoPattern("[!c].txt").matches("c.txt"));
  CHECK(hub::RepoPattern("data\\*.json").matches("data/file.json"));
  // A byte outside UTF-8 is one character, never part of another.
  CHECK(hub::RepoPattern("?.bin").matches("\xff.bin"));
  CHECK_FALSE(hub::RepoPattern("?.bin").matches("\xc3.bin."));
}
