#include <catch2/catch.hpp>

#include "pyspec/markers.hpp"

using provkit::pyspec::evaluate_marker;

namespace {
const std::map<std::string, std::string> env = {{"python_version", "3.11"},
                                                {"python_full_version", "3.11.7"},
                                                {"sys_platform", "linux"},
                                                {"platform_machine", "x86_64"},
                                                {"implementation_name", "cpython"},
                                                {"os_name", "posix"},
                                                {"platform_python_implementation", "CPython"},
                                                {"implementation_version", "3.11.7"},
                                                {"platform_system", "Linux"},
                                                {"platform_release", "6.1"},
                                                {"platform_version", "#1"}};
}

namespace {
// The refusal a marker or specifier error carries: typed, never judged by its wording.
auto refused(provkit::pyspec::SyntaxRefusal r) {
  return Catch::Predicate<provkit::Error>([r](const provkit::Error& e) { return e.is(r); }, "refused as expected");
}
}  // namespace

TEST_CASE("markers compare versions as versions and strings as strings", "[envbuild]") {
  CHECK(evaluate_marker("python_version >= '3.8'", env));
  CHECK(evaluate_marker("python_version > '3.9'", env));  // 3.11 > 3.9 as versions, not as text
  CHECK_FALSE(evaluate_marker("python_version < \"3.10\"", env));
  CHECK(evaluate_marker("python_full_version == '3.11.*'", env));
  CHECK(evaluate_marker("python_version ~= '3.9'", env));
  CHECK(evaluate_marker("sys_platform == 'linux' and platform_machine != 'aarch64'", env));
  CHECK(evaluate_marker("sys_platform == 'win32' or (os_name == 'posix' and implementation_name == 'cpython')", env));
  CHECK_FALSE(evaluate_marker("sys_platform == 'win32' or os_name == 'nt'", env));
  CHECK(evaluate_marker("'linux' in sys_platform", env));
  CHECK(evaluate_marker("platform_machine not in 'arm64 aarch64'", env));
  CHECK_FALSE(evaluate_marker("extra == 'test'", env));
}

TEST_CASE("malformed markers are refused", "[envbuild]") {
  CHECK_THROWS_MATCHES(evaluate_marker("python_version >= ", env), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
  CHECK_THROWS_MATCHES(evaluate_marker("nonsense_var == '1'", env), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
  CHECK_THROWS_MATCHES(evaluate_marker("(python_version >= '3'", env), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
  CHECK_THROWS_MATCHES(evaluate_marker("python_version >= '3' junk", env), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
}

TEST_CASE("PEP 751 set variables: 'NAME' in extras / dependency_groups", "[envbuild][locks]") {
  using provkit::pyspec::MarkerSets;
  MarkerSets sets{{"cli"}, {"dev", "default"}};
  CHECK(evaluate_marker("'cli' in extras", env, &sets));
  CHECK_FALSE(evaluate_marker("'docs' in extras", env, &sets));
  CHECK(evaluate_marker("'docs' not in extras", env, &sets));
  CHECK(evaluate_marker("\"dev\" in dependency_groups", env, &sets));
  CHECK(evaluate_marker("'Dev' in dependency_groups", env, &sets));       // names compare normalised
  CHECK_FALSE(evaluate_marker("'de' in dependency_groups", env, &sets));  // membership, not a substring
  // pdm's and uv's combined shapes.
  CHECK(evaluate_marker("python_version >= \"3.6\" and \"cli\" in extras", env, &sets));
  CHECK_FALSE(evaluate_marker("sys_platform == \"win32\" and \"cli\" in extras", env, &sets));
  CHECK(evaluate_marker("\"default\" in dependency_groups or \"security\" in extras", env, &sets));
  MarkerSets none;
  CHECK_FALSE(evaluate_marker("'cli' in extras", env, &none));
  // Outside a pylock, or used as a string, they are errors.
  CHECK_THROWS_WITH(evaluate_marker("'cli' in extras", env), Catch::Contains("pylock.toml"));
  CHECK_THROWS_MATCHES(evaluate_marker("extras == 'cli'", env, &sets), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
  CHECK_FALSE(evaluate_marker("'cli' == extras", env, &sets));  // packaging: a string is never equal to a set
}

TEST_CASE("requires-python specifier sets", "[envbuild][locks]") {
  using provkit::pyspec::version_matches;
  CHECK(version_matches("3.12.1", ">=3.12"));
  CHECK_FALSE(version_matches("3.12.1", ">=3.13"));
  CHECK(version_matches("3.12.1", ">=3.9, <3.14"));
  CHECK_FALSE(version_matches("3.14.0", ">=3.9,<3.14"));
  CHECK(version_matches("3.12.1", "== 3.12.*"));      // PEP 751's example writes '== 3.12' with a space
  CHECK_FALSE(version_matches("3.12.1", "== 3.12"));  // PEP 440: == 3.12 is 3.12.0
  CHECK(version_matches("3.12.1", "~=3.10"));
  CHECK(version_matches("3.12.1", "!=3.12.0"));
  CHECK(version_matches("3.12.1", ""));
  CHECK(version_matches("3.12.1", ">=3.9,"));  // packaging skips empty clauses
  CHECK_THROWS_MATCHES(version_matches("3.12.1", "3.9"), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_specifier));
  CHECK_THROWS_MATCHES(version_matches("3.12.1", "=>3.9"), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_specifier));
}

// pypa/packaging tests/test_markers.py, case by case (packaging 26.3).
namespace {
using provkit::pyspec::Marker;
using provkit::pyspec::MarkerContext;
bool parses(const std::string& m) {
  try {
    Marker::parse(m);
    return true;
  } catch (const provkit::Error& e) {
    if (!e.is(provkit::pyspec::SyntaxRefusal::invalid_marker)) throw;
    return false;
  }
}
bool eval_with(const std::string& m, std::map<std::string, std::string> env) {
  return Marker::parse(m).evaluate(env, MarkerContext::metadata);
}
}  // namespace

TEST_CASE("markers: packaging's parse cases (every variable, operator and value; the invalid ones)",
          "[envbuild][markers]") {
  const char* variables[] = {"extra", "implementation_name", "implementation_version", "os_name", "platform_machine",
                             "platform_release", "platform_system", "platform_version", "python_full_version",
                             "python_version", "platform_python_implementation", "sys_platform",
                             // PEP 345 and setuptools spellings
                             "os.name", "sys.platform", "platform.version", "platform.machine",
                             "platform.python_implementation", "python_implementation"};
  const char* operators[] = {"===", "==", ">=", "<=", "!=", "~=", ">", "<", "in", "not in"};
  const char* values[] = {"1.0", "5.6a0", "dog", "freebsd", "literally any string can go here", "things @#4 dsfd ((("};
  for (auto v : variables)
    for (auto o : operators)
      for (auto val : values) {
        std::string quoted = std::string("'") + val + "'";
        INFO(v << " " << o << " " << val);
        CHECK(parses(std::string(v) + " " + o + " " + quoted));
        CHECK(parses(quoted + " " + o + " " + v));
      }
  for (auto bad :
       {"this_isnt_a_real_variable >= '1.0'", "python_version", "(python_version)",
        "python_version >= 1.0 and (python_version)", "(python_version == \"2.7\" and os_name == \"linux\"",
        "(python_version == \"2.7\") with random text", "platform.release == '6'", "python.version == '3'"}) {
    INFO(bad);
    CHECK_FALSE(parses(bad));
  }
  for (auto lb : {"\n", "\r", "\r\n"}) CHECK_FALSE(parses(std::string("python_version >= \"3\"") + lb));
  for (auto ws : {" ", "\t", " \t"}) CHECK(parses(std::string("python_version >= \"3\"") + ws));
  // Strings are Python literals: a backslash before the closing quote, or a bad escape, is refused.
  CHECK_FALSE(parses("os_name == \"C:\\\""));
  CHECK_FALSE(parses("os_name == \"\\x\""));
  CHECK(eval_with("os_name == 'C:\\\\'", {{"os_name", "C:\\"}}));
  CHECK(eval_with("os_name == '\\x41\\u00e9\\101'", {{"os_name",
                                                      "A\xc3\xa9"
                                                      "A"}}));
  // One string, quotes of the other kind inside: 'a" == os_name ... "b' == os_name.
  CHECK(eval_with("'a\" == os_name or python_version >= \"0\" or \"b' == os_name",
                  {{"os_name", "a\" == os_name or python_version >= \"0\" or \"b"}}));
}

TEST_CASE("markers: packaging's evaluation cases", "[envbuild][markers]") {
  // PEP 440 first, then packaging's string rules (< and > never hold; <= and >= are equality).
  CHECK(eval_with("\"2.7.9\" < python_full_version", {{"python_full_version", "2.7.10"}}));
  CHECK_FALSE(eval_with("\"2.7.9\" < python_full_version", {{"python_full_version", "2.7.8"}}));
  CHECK_FALSE(eval_with("\"b\" < python_full_version", {{"python_full_version", "c"}}));
  CHECK_FALSE(eval_with("\"b\" < python_full_version", {{"python_full_version", "a"}}));
  CHECK_FALSE(eval_with("\"b\" > \"a\"", {{"a", "a"}}));
  CHECK_FALSE(eval_with("\"b\" < \"a\"", {{"a", "a"}}));
  CHECK_FALSE(eval_with("\"b\" >= \"a\"", {{"a", "a"}}));
  CHECK_FALSE(eval_with("\"b\" <= \"a\"", {{"a", "a"}}));
  CHECK(eval_with("\"a\" <= \"a\"", {{"a", "a"}}));
  CHECK_THROWS_MATCHES(eval_with("'2.7.0' ~= os_name", {{"os_name", "posix"}}), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
  CHECK_THROWS_MATCHES(eval_with("os_name === 'posix'", {{"os_name", "posix"}}), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
  CHECK(eval_with("python_full_version > \"3.6.2\"", {{"python_full_version", "3.11.0a5"}}));
  // Why item 5 of issue 22: a wildcard is no specifier for >, so the string rule holds: false.
  CHECK_FALSE(eval_with("python_version > \"3.9.*\"", {{"python_version", "3.11"}}));
  CHECK_FALSE(eval_with("python_version > \"3.9.*\"", {{"python_version", "3.10"}}));
  CHECK(eval_with("'2.7' in python_version", {{"python_version", "2.7.5"}}));
  CHECK_FALSE(eval_with("'2.7' not in python_version", {{"python_version", "2.7"}}));
  std::map<std::string, std::string> foo274 = {{"os_name", "foo"}, {"python_version", "2.7.4"}};
  CHECK(eval_with("os_name == 'foo' and python_version ~= '2.7.0'", {{"os_name", "foo"}, {"python_version", "2.7.6"}}));
  CHECK(eval_with("python_version ~= '2.7.0' and (os_name == 'foo' or os_name == 'bar')", foo274));
  foo274["os_name"] = "other";
  CHECK_FALSE(eval_with("python_version ~= '2.7.0' and (os_name == 'foo' or os_name == 'bar')", foo274));
  CHECK_FALSE(eval_with("extra == 'security'", {{"extra", "quux"}}));
  CHECK(eval_with("extra == 'SECURITY'", {{"extra", "security"}}));
  CHECK(eval_with("extra == 'security'", {{"extra", "SECURITY"}}));
  CHECK(eval_with("extra == 'pep-685-norm'", {{"extra", "PEP_685...norm"}}));
  CHECK(eval_with("extra == 'Different.punctuation..is...equal'", {{"extra", "different__punctuation_is_EQUAL"}}));
  CHECK_FALSE(eval_with("extra == \"v2\"", {}));
  CHECK_FALSE(eval_with("extra == \"v2\"", {{"extra", "v2a3"}}));
  CHECK(eval_with("extra == \"v2a3\"", {{"extra", "v2a3"}}));
  // The legacy spellings evaluate (Why item 5: they were exit 2).
  CHECK_FALSE(eval_with("sys.platform == 'win32'", {{"sys_platform", "linux2"}}));
  CHECK_FALSE(eval_with("platform.version in 'Ubuntu'", {{"platform_version", "#39"}}));
  CHECK(eval_with("platform.machine=='x86_64'", {{"platform_machine", "x86_64"}}));
  CHECK_FALSE(eval_with("platform.python_implementation=='Jython'", {{"platform_python_implementation", "CPython"}}));
  CHECK_FALSE(eval_with("python_implementation=='Jython'", {{"platform_python_implementation", "CPython"}}));
  CHECK(eval_with("python_full_version < '3.12'", {{"python_full_version", "3.11.1+"}}));
  // Sets: membership only, names normalised; in a lock file `extra` is not defined.
  provkit::pyspec::MarkerSets sets{{"foo", "bar"}, {"foo", "bar"}};
  for (auto var : {"extras", "dependency_groups"}) {
    auto lock = [&](const std::string& m) { return Marker::parse(m).evaluate({}, MarkerContext::lock_file, &sets); };
    std::string v = var;
    CHECK(lock("\"foo\" in " + v));
    CHECK_FALSE(lock("\"baz\" in " + v));
    CHECK(lock("\"baz\" not in " + v));
    CHECK(lock("\"Foo\" in " + v));
    CHECK_FALSE(lock("\"baz\" in " + v + " and \"foo\" in " + v));
    CHECK(lock("\"foo\" in " + v + " or \"baz\" in " + v));
    for (auto op : {"==", "!=", ">=", "<="})
      CHECK_THROWS_MATCHES(lock(v + " " + op + " 'foo'"), provkit::Error,
                           refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
    CHECK_THROWS_MATCHES(Marker::parse("\"foo\" in " + v).evaluate({}, MarkerContext::requirement), provkit::Error,
                         refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
    CHECK_FALSE(Marker::parse("\"foo\" in " + v).evaluate({}, MarkerContext::lock_file));
  }
  CHECK_THROWS_MATCHES(Marker::parse("extra == 'x'").evaluate({}, MarkerContext::lock_file, &sets), provkit::Error,
                       refused(provkit::pyspec::SyntaxRefusal::invalid_marker));
}

// issue 20, item 10: 20k nested parentheses were a stack overflow.
TEST_CASE("markers: nesting is bounded", "[envbuild][markers]") {
  std::string ok = std::string(provkit::pyspec::max_marker_depth, '(') + "os_name == 'posix'" +
                   std::string(provkit::pyspec::max_marker_depth, ')');
  CHECK(eval_with(ok, {{"os_name", "posix"}}));
  std::string deep = std::string(20000, '(') + "os_name == 'posix'" + std::string(20000, ')');
  CHECK_THROWS_WITH(Marker::parse(deep), Catch::Contains("nest deeper"));
}
