// PEP 440 versions and specifiers, each case checked against packaging (pip's vendored packaging.version and
// packaging.specifiers give the same answers).
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "provkit/pyspec/pep440.hpp"

using namespace provkit::pyspec;

namespace {

std::string normalised(const std::string& text) {
  auto v = parse_version(text);
  REQUIRE(v);
  return v->str();
}

int order(const std::string& a, const std::string& b) {
  auto x = parse_version(a), y = parse_version(b);
  REQUIRE(x);
  REQUIRE(y);
  int c = compare(*x, *y);
  return (c > 0) - (c < 0);
}

bool contains(const std::string& spec, const std::string& version) {
  auto s = parse_specifier(spec);
  REQUIRE(s);
  return specifier_contains(*s, version);
}

}  // namespace

TEST_CASE("pep440: a version is normalised as packaging writes it", "[python][pep440]") {
  CHECK(normalised("1.0RC1") == "1.0rc1");
  CHECK(normalised("v1.0") == "1.0");
  CHECK(normalised(" 1.0 ") == "1.0");
  CHECK(normalised("1.0-post1") == "1.0.post1");
  CHECK(normalised("1.0-1") == "1.0.post1");
  CHECK(normalised("1.0.DEV0") == "1.0.dev0");
  CHECK(normalised("1.0a") == "1.0a0");
  CHECK(normalised("1!2.0") == "1!2.0");
  CHECK(normalised("01.002") == "1.2");
  CHECK(normalised("1.0+Ubuntu.1") == "1.0+ubuntu.1");
  CHECK(parse_version("1.0+cpu")->public_version().str() == "1.0");
}

TEST_CASE("pep440: what packaging refuses as a version is refused", "[python][pep440]") {
  for (const char* bad : {"", "1.0.x", "1..0", "1.0-", "a1", "1.0+", "=1.0"}) {
    INFO(bad);
    CHECK_FALSE(parse_version(bad));
  }
}

TEST_CASE("pep440: versions compare in PEP 440 order", "[python][pep440]") {
  CHECK(order("1.0", "1.0.0") == 0);  // trailing zeros are insignificant
  CHECK(order("1.0.dev0", "1.0a1") < 0);
  CHECK(order("1.0a1", "1.0rc1") < 0);
  CHECK(order("1.0rc1", "1.0") < 0);
  CHECK(order("1.0", "1.0.post1") < 0);
  CHECK(order("1.0", "1.0+local") < 0);
  CHECK(order("1!0.1", "2.0") > 0);                     // the epoch first
  CHECK(order("1.99", "1.100000000000000000000") < 0);  // numbers without a bound
  CHECK(parse_version("1.0rc1")->is_prerelease());
  CHECK(parse_version("1.0.dev0")->is_prerelease());
  CHECK_FALSE(parse_version("1.0.post1")->is_prerelease());
  CHECK(parse_version("1.0.post1")->is_postrelease());
}

TEST_CASE("pep440: a specifier contains what packaging's contains (pre-releases allowed)", "[python][pep440]") {
  CHECK(contains("~=3.10", "3.11"));
  CHECK_FALSE(contains("~=3.10", "4.0"));
  CHECK(contains("==3.12.*", "3.12.4"));
  CHECK_FALSE(contains("==3.12.*", "3.13"));
  CHECK_FALSE(contains("!=1.2.*", "1.2.9"));
  CHECK_FALSE(contains("<2.0", "2.0rc1"));     // < excludes the pre-releases of the version itself
  CHECK_FALSE(contains(">1.0", "1.0.post1"));  // > excludes its post-releases
  CHECK(contains(">=1.0", "1.0.post1"));
  CHECK(contains("<=2.0", "2.0"));
  CHECK(contains("==1.0", "1.0+cpu"));  // a local label is ignored by a public specifier
  CHECK_FALSE(contains("==1.0+cpu", "1.0"));
  CHECK(contains("===foo", "foo"));  // arbitrary equality: the text
  CHECK_FALSE(contains("==1.0", "not-a-version"));
}

TEST_CASE("pep440: what packaging refuses as a specifier is refused", "[python][pep440]") {
  for (const char* bad : {"=>1.0", "~=1", "==1.0.*+local", "1.0"}) {
    INFO(bad);
    CHECK_FALSE(parse_specifier(bad));
  }
}

TEST_CASE("pep440: a specifier set skips empty clauses and names the one that is not a specifier", "[python][pep440]") {
  auto set = parse_specifier_set(">=1.0,,<2");
  CHECK(set.size() == 2);
  CHECK(specifier_set_contains(set, "1.5"));
  CHECK_FALSE(specifier_set_contains(set, "2.0"));
  CHECK_THROWS_WITH(parse_specifier_set(">=1.0, =>2"), Catch::Contains("=>2"));
  CHECK_THROWS_MATCHES(parse_specifier_set(">=1.0, =>2"), provkit::Error,
                       Catch::Predicate<provkit::Error>(
                           [](const provkit::Error& e) { return e.is(SyntaxRefusal::invalid_specifier); }));
}

namespace {

std::vector<std::string> tab_fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t tab; (tab = line.find('\t', from)) != std::string::npos; from = tab + 1)
    out.push_back(line.substr(from, tab - from));
  out.push_back(line.substr(from));
  return out;
}

}  // namespace

// The table is packaging's own answers (scripts/pep440-table.py writes it with Debian's python3-packaging, and
// the ctest "pep440: the table is packaging's answers" fails when packaging answers otherwise).
TEST_CASE("pep440: packaging's verdicts on the table: spelling, refusal, order, containment", "[python][pep440]") {
  std::ifstream table(std::string(PROVKIT_TEST_DATA) + "/pep440/table.txt");
  REQUIRE(table);
  std::vector<std::pair<Version, long>> ranked;
  std::size_t versions = 0, refused = 0, specs = 0, contains_checked = 0;
  for (std::string line; std::getline(table, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto f = tab_fields(line);
    INFO(line);
    if (f[0] == "V" && f[2] == "!") {
      CHECK_FALSE(parse_version(f[1]));
      ++refused;
    } else if (f[0] == "V") {
      REQUIRE(f.size() == 4);
      auto v = parse_version(f[1]);
      REQUIRE(v);
      CHECK(v->str() == f[2]);
      ranked.emplace_back(*v, std::stol(f[3]));
      ++versions;
    } else if (f[0] == "S") {
      CHECK(static_cast<bool>(parse_specifier(f[1])) == (f[2] == "ok"));
      ++specs;
    } else if (f[0] == "C") {
      REQUIRE(f.size() == 4);
      auto spec = parse_specifier(f[1]);
      REQUIRE(spec);
      CHECK(specifier_contains(*spec, f[2]) == (f[3] == "1"));
      ++contains_checked;
    }
  }
  CHECK(versions > 200);
  CHECK(refused > 20);
  CHECK(specs > 40);
  CHECK(contains_checked > 5000);
  for (const auto& [a, rank_a] : ranked)
    for (const auto& [b, rank_b] : ranked) {
      int c = compare(a, b);
      if ((c > 0) - (c < 0) != (rank_a > rank_b) - (rank_a < rank_b)) {
        INFO(a.str() + " against " + b.str());
        CHECK((c > 0) - (c < 0) == (rank_a > rank_b) - (rank_a < rank_b));
      }
    }
}
