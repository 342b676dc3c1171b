#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <optional>

#include "provkit/hub/manifest.hpp"

using namespace provkit;

namespace {
const std::string kSha(64, 'a');
const std::string kOid(40, 'b');
const std::string kRev = "0123456789abcdef0123456789abcdef01234567";

std::string head(const std::string& rev = kRev) {
  return "manifest: 1\nrepo: org/name\nrevision: " + rev + "\nfiles:\n";
}
std::string file(const std::string& path, const std::string& extra = "    sha256: " + kSha + "\n") {
  return "  - path: " + path + "\n    size: 10\n" + extra;
}

// The reason and line of the usage error parse() throws ("m.yaml:LINE: ..."), and its message.
struct Refused {
  std::optional<ReasonId> reason;
  int line = -1;
  std::string message;
};
Refused refused(const std::string& text) {
  try {
    hub::Manifest::parse(text, "m.yaml");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    Refused r{e.reason(), -1, e.what()};
    if (r.message.rfind("m.yaml:", 0) == 0) r.line = std::atoi(r.message.c_str() + 7);
    return r;
  }
  FAIL("accepted: " << text);
  return {};
}
// The message alone, where what it says of the input is the point (escaping, a second document).
std::string refusal(const std::string& text) { return refused(text).message; }
// The reason and line a refusal must have.
void refused_as(const std::string& text, ReasonId reason, int line) {
  INFO(text);
  auto r = refused(text);
  INFO(r.message);
  CHECK(r.reason == reason);
  CHECK(r.line == line);
}
}  // namespace

TEST_CASE("a valid manifest", "[manifest]") {
  std::string text = "type: dataset\n" + head() +
                     file("config.json", "    sha256: " + kSha + "\n    git_oid: " + kOid + "\n") +
                     file("a/b.safetensors") + file("p/1") + file("p/2") +
                     "assemble:\n  - output: whole.gguf\n    parts: [p/1, p/2]\n    sha256: " + kSha +
                     "\n    size: 20\n";
  hub::Manifest m = hub::Manifest::parse(text, "m.yaml");
  CHECK(m.repo.id == "org/name");
  CHECK(m.repo.type == hub::RepoType::dataset);
  CHECK(m.revision == kRev);
  REQUIRE(m.files.size() == 4);
  CHECK(m.files[0].git_oid == kOid);
  CHECK(m.files[0].line == 6);  // after the type line
  CHECK_FALSE(m.files[1].git_oid);
  REQUIRE(m.assemble.size() == 1);
  CHECK(m.assemble[0].parts == std::vector<std::string>{"p/1", "p/2"});
  CHECK(m.assemble[0].size == 20u);
  CHECK(m.find("a/b.safetensors"));
  CHECK_FALSE(m.find("nope"));
}

TEST_CASE("serialised manifests read back the same", "[manifest]") {
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kRev;
  m.files.push_back({"weird \"name\": with #yaml chars.bin", 5, kSha, std::nullopt, 0});
  m.files.push_back({"dir/config.json", 12, kSha, kOid, 0});
  m.files.push_back({"true", 0, std::nullopt, kOid, 0});
  m.files.push_back({"caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80.bin", 1, kSha, std::nullopt, 0});
  m.assemble.push_back({"out.bin", {"dir/config.json", "true"}, kSha, 12, 0});
  hub::Manifest back = hub::Manifest::parse(m.to_yaml(), "gen");
  REQUIRE(back.files.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(back.files[i].path == m.files[i].path);
    CHECK(back.files[i].size == m.files[i].size);
    CHECK(back.files[i].sha256 == m.files[i].sha256);
    CHECK(back.files[i].git_oid == m.files[i].git_oid);
  }
  CHECK(back.assemble[0].parts == m.assemble[0].parts);
  CHECK(back.assemble[0].sha256 == kSha);
  CHECK(back.to_yaml() == m.to_yaml());
}

TEST_CASE("validate() refuses a manifest made in memory as parse() refuses its YAML, line and all", "[manifest]") {
  // The by-repo form pins a tree and validates it without building the YAML (a tree of 300,000 files read
  // back took about 2.5 KB a file): every refusal must be the one parse() gives the text to_yaml() writes.
  auto base = [] {
    hub::Manifest m;
    m.repo = {hub::RepoType::model, "org/name"};
    m.revision = kRev;
    m.files.push_back({"config.json", 10, kSha, kOid, 0});
    m.files.push_back({"p/1", 10, std::nullopt, kOid, 0});
    m.files.push_back({"p/2", 10, kSha, std::nullopt, 0});
    m.assemble.push_back({"whole.bin", {"p/1", "p/2"}, kSha, 20, 0});
    return m;
  };
  std::vector<std::pair<const char*, std::function<void(hub::Manifest&)>>> defects = {
      {"a branch for a commit", [](hub::Manifest& m) { m.revision = "main"; }},
      {"a bad ref", [](hub::Manifest& m) { m.ref = "../x"; }},
      {"a bad repo id", [](hub::Manifest& m) { m.repo.id = "org/../name"; }},
      {"an unsafe path", [](hub::Manifest& m) { m.files[2].path = "p/../../x"; }},
      {"a path twice (with a ref line)",
       [](hub::Manifest& m) {
         m.ref = "main";
         m.files[2].path = "p/1";
       }},
      {"an upper-case sha256", [](hub::Manifest& m) { m.files[2].sha256 = std::string(64, 'A'); }},
      {"a short git_oid after a sha256", [](hub::Manifest& m) { m.files[0].git_oid = "abc"; }},
      {"no hash", [](hub::Manifest& m) { m.files[1].git_oid.reset(); }},
      {"sizes past 2^64 - 1", [](hub::Manifest& m) { m.files[1].size = m.files[2].size = UINT64_MAX / 2 + 1; }},
      {"a file that is also a folder", [](hub::Manifest& m) { m.files[0].path = "p"; }},
      {"an output that is a file", [](hub::Manifest& m) { m.assemble[0].output = "config.json"; }},
      {"an unsafe output", [](hub::Manifest& m) { m.assemble[0].output = "/abs"; }},
      {"an unknown part", [](hub::Manifest& m) { m.assemble[0].parts.push_back("p/3"); }},
      {"a bad assembly sha256, its size left out",
       [](hub::Manifest& m) {
         m.assemble[0].size.reset();
         m.assemble[0].sha256 = "00";
       }},
      {"an output assembled twice", [](hub::Manifest& m) { m.assemble.push_back(m.assemble[0]); }},
  };
  // No files, or no parts: to_yaml() writes an empty key there (a null, not a list), refused as such by parse();
  // validate() refuses the lists themselves.
  hub::Manifest none = base();
  none.files.clear();
  none.assemble.clear();
  CHECK_THROWS_WITH(none.validate("m.yaml"), "m.yaml:5: files is empty: a manifest names the files to fetch");
  hub::Manifest no_parts = base();
  no_parts.assemble[0].parts.clear();
  CHECK_THROWS_WITH(no_parts.validate("m.yaml"), "m.yaml:18: parts must be a non-empty list of paths from files");
  hub::Manifest good = base();
  CHECK_NOTHROW(good.validate("gen"));
  CHECK(good.files[2].line == hub::Manifest::parse(good.to_yaml(), "gen").files[2].line);
  CHECK(good.assemble[0].line == hub::Manifest::parse(good.to_yaml(), "gen").assemble[0].line);
  for (auto& [what, spoil] : defects) {
    INFO(what);
    hub::Manifest m = base();
    spoil(m);
    Refused want = refused(m.to_yaml());
    INFO(m.to_yaml());
    try {
      m.validate("m.yaml");
      FAIL("validate() accepted it");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK(e.reason() == want.reason);
      CHECK(std::string(e.what()) == want.message);
    }
  }
}

TEST_CASE("every refusal is typed and names the file and line", "[manifest]") {
  using R = hub::ManifestRefusal;
  refused_as("manifest: 2\nrepo: org/name\nrevision: " + kRev + "\nfiles:\n" + file("a"), R::unsupported_version, 1);
  refused_as(head("main") + file("a"), R::not_pinned, 3);
  refused_as(head(std::string(40, 'A')) + file("a"), R::not_pinned, 3);
  refused_as("manifest: 1\nrepo: org/na--me\nrevision: " + kRev + "\nfiles:\n" + file("a"), R::invalid_value, 2);
  refused_as("type: image\n" + head() + file("a"), R::invalid_value, 1);
  refused_as("manifest: 1\nrepo: org/name\nrevision: " + kRev + "\n", R::missing, 1);
  refused_as(head() + "  []\n", R::missing, 5);
  refused_as(head() + "  - path: a\n    sha256: " + kSha + "\n", R::missing, 5);  // no size
  refused_as(head() + "  - path: a\n    size: -1\n    sha256: " + kSha + "\n", R::invalid_value, 6);
  refused_as(head() + "  - path: a\n    size: 1.5\n    sha256: " + kSha + "\n", R::invalid_value, 6);
  refused_as(head() + "  - path: a\n    size: 1\n", R::unhashed, 5);
  refused_as(head() + file("a", "    sha256: abc\n"), R::invalid_value, 7);
  refused_as(head() + file("a", "    git_oid: " + std::string(40, 'g') + "\n"), R::invalid_value, 7);
  for (const char* path : {"/etc/passwd", "a/../../b", "a//b", "./a", "\"\""})
    refused_as(head() + file(path), R::unsafe_path, 5);
  refused_as(head() + file("a") + file("b") + file("a"), R::duplicate, 11);
  refused_as(head() + file("a", "    sha256: " + kSha + "\n    md5: x\n"), R::unknown_key, 8);
  refused_as(head() + file("a") + "extra: 1\n", R::unknown_key, 8);
  refused_as(head() + file("a", "    sha256: " + kSha + "\n    sha256: " + kSha + "\n"), R::duplicate, 8);
  refused_as(head() + file("a") + "assemble:\n  - output: o\n    parts: [a, b]\n", R::unknown_part, 10);
  refused_as(head() + file("a") + "assemble:\n  - output: a\n    parts: [a]\n", R::unknown_part, 9);
  refused_as(head() + file("a") + "assemble:\n  - output: o\n", R::missing, 9);
  refused_as(head() + file("a") + "assemble:\n  - output: o\n    parts: []\n", R::malformed, 10);
  refused_as("- just\n- a list\n", R::malformed, 1);
  refused_as("manifest: 1\nrepo: org/name\nrevision: " + kRev + "\nfiles: a\n", R::malformed, 4);
  // A YAML syntax error and an empty file are util's (the shared invalid_input), still at a place.
  auto syntax = refused(head() + "  - path: [unclosed\n");
  CHECK(syntax.reason == ReasonId(Reason::invalid_input));
  CHECK(syntax.line >= 5);
  CHECK(refused("").message.rfind("m.yaml", 0) == 0);
  // A path listed twice says where it was first.
  CHECK_THAT(refused(head() + file("a") + file("b") + file("a")).message, Catch::Contains("first at line 5"));
  CHECK(ReasonId(R::duplicate).name() == "invalid_input");  // the --json name these always had
  // Which refusal it is travels beside it (--json's detail.refusal); util's syntax error has none.
  CHECK(ReasonId(R::duplicate).refusal() == "duplicate");
  CHECK(ReasonId(R::gguf_split_parts).refusal() == "gguf_split_parts");
  CHECK(refused(head() + file("/etc/passwd")).reason->refusal() == "unsafe_path");
  CHECK(syntax.reason->refusal().empty());
}

TEST_CASE("sizes that add up past 2^64 - 1 are refused at the line that does it, never wrapped",
          "[manifest][checked]") {
  using R = hub::ManifestRefusal;
  auto sized = [](const std::string& path, const std::string& size) {
    return "  - path: " + path + "\n    size: " + size + "\n    sha256: " + kSha + "\n";
  };
  const std::string quarter = std::to_string(1ull << 62);  // four of them are 2^64, which wrapped to 0
  std::string four = head();
  for (const char* p : {"w0", "w1", "w2", "w3"}) four += sized(p, quarter);
  refused_as(four, R::sizes_overflow, 14);
  CHECK_THAT(refusal(four), Catch::Contains("'w3'") && Catch::Contains("2^64 - 1"));
  // Three are 3 * 2^62: taken as they are.
  std::string three = head() + sized("w0", quarter) + sized("w1", quarter) + sized("w2", quarter);
  CHECK(hub::Manifest::parse(three, "m.yaml").files.size() == 3);
  // An assembly output counts: declared, or its parts' bytes (the disk it takes besides them).
  refused_as(three + "assemble:\n  - output: o\n    parts: [w0, w1]\n", R::sizes_overflow, 15);
  refused_as(three + "assemble:\n  - output: o\n    parts: [w0]\n    size: " + quarter + "\n", R::sizes_overflow, 15);
  CHECK(ReasonId(R::sizes_overflow).name() == "invalid_input");
}

TEST_CASE("a path that is a file and also a folder of another is refused, naming both", "[manifest]") {
  using R = hub::ManifestRefusal;
  // 'x.txt-b' sorts between 'x.txt' and 'x.txt/inner': the check is by folder, not by neighbours.
  refused_as(head() + file("x.txt") + file("x.txt-b") + file("x.txt/inner"), R::file_and_folder, 11);
  CHECK_THAT(refusal(head() + file("x.txt") + file("x.txt-b") + file("x.txt/inner")),
             Catch::Contains("'x.txt/inner' lies in the folder 'x.txt', which is a file (line 5)"));
  refused_as(head() + file("a/b/c") + file("a/b"), R::file_and_folder, 5);  // deeper, and listed first
  // An assembly output is a path of the snapshot too.
  refused_as(head() + file("p") + "assemble:\n  - output: p/q\n    parts: [p]\n", R::file_and_folder, 9);
  // Siblings and names that merely start alike are fine.
  CHECK(hub::Manifest::parse(head() + file("x.txt") + file("x.txt2") + file("x/txt") + file("dir/x.txt"), "m.yaml")
            .files.size() == 4);
}

TEST_CASE("safe relative paths", "[manifest]") {
  CHECK(hub::is_safe_relative_path("a"));
  CHECK(hub::is_safe_relative_path("a/b.c/d..e"));
  CHECK(hub::is_safe_relative_path(".hidden/x"));
  CHECK_FALSE(hub::is_safe_relative_path(""));
  CHECK_FALSE(hub::is_safe_relative_path("/a"));
  CHECK_FALSE(hub::is_safe_relative_path("a/"));
  CHECK_FALSE(hub::is_safe_relative_path(".."));
  CHECK_FALSE(hub::is_safe_relative_path("a\\b"));
  CHECK_FALSE(hub::is_safe_relative_path("a\nb"));
  CHECK(hub::is_safe_relative_path("caf\xc3\xa9.txt"));
  CHECK_FALSE(hub::is_safe_relative_path("bad\xc3"));          // truncated UTF-8
  CHECK_FALSE(hub::is_safe_relative_path("bad\xc0\xaf"));      // overlong
  CHECK_FALSE(hub::is_safe_relative_path("nel\xc2\x85x"));     // U+0085, a YAML line break
  CHECK_FALSE(hub::is_safe_relative_path("ls\xe2\x80\xa8x"));  // U+2028
}

TEST_CASE("the pre-flight compares exactly the manifest's files", "[manifest]") {
  hub::Manifest m = hub::Manifest::parse(head() + file("lfs.bin") + file("plain.json", "    git_oid: " + kOid + "\n") +
                                             file("gone.bin") + file("bigger.bin") +
                                             file("plain2.json", "    git_oid: " + kOid + "\n"),
                                         "m.yaml");
  std::vector<hub::TreeEntry> tree(6);
  tree[0] = {"file", "lfs.bin", 134, std::string(40, 'c'), hub::LfsInfo{kSha, 10, 134}};
  tree[1] = {"file", "plain.json", 10, kOid, std::nullopt};
  tree[2] = {"file", "bigger.bin", 134, std::string(40, 'c'), hub::LfsInfo{kSha, 11, 134}};
  tree[3] = {"file", "plain2.json", 10, std::string(40, 'd'), std::nullopt};
  tree[4] = {"file", "not-in-manifest.bin", 1, kOid, std::nullopt};
  tree[5] = {"directory", "gone.bin", 0, kOid, std::nullopt};  // a directory is not the file
  auto checks = hub::compare_with_tree(m, tree);
  REQUIRE(checks.size() == 5);
  CHECK(checks[0].state == hub::UpstreamState::ok);
  CHECK(checks[0].entry->etag() == kSha);
  CHECK(checks[1].state == hub::UpstreamState::ok);
  CHECK(checks[2].state == hub::UpstreamState::not_in_tree);
  CHECK(checks[3].state == hub::UpstreamState::changed);
  CHECK_THAT(checks[3].detail, Catch::Contains("size 11 upstream, 10 in the manifest"));
  CHECK(checks[4].state == hub::UpstreamState::changed);
  CHECK_THAT(checks[4].detail, Catch::Contains("git oid"));
  CHECK(hub::upstream_state_name(hub::UpstreamState::not_in_tree) == "NOT IN HUB TREE");
  CHECK(hub::upstream_state_name(hub::UpstreamState::changed) == "UPSTREAM CHANGED");

  hub::Manifest other = hub::Manifest::parse(head() + file("lfs.bin", "    sha256: " + std::string(64, 'f') + "\n"),
                                             "m.yaml");
  auto c2 = hub::compare_with_tree(other, tree);
  CHECK(c2[0].state == hub::UpstreamState::changed);
  hub::Manifest only_oid = hub::Manifest::parse(head() + file("lfs.bin", "    git_oid: " + kOid + "\n"), "m.yaml");
  CHECK(hub::compare_with_tree(only_oid, tree)[0].state == hub::UpstreamState::changed);  // LFS upstream needs a sha256
}

// ---- issue 11: hostile input ---------------------------------------------------------

TEST_CASE("a second YAML document is refused, naming its line", "[manifest]") {
  std::string one = head() + file("config.json");
  CHECK(refusal(one + "---\n" + head() + file("other.json")) ==
        "m.yaml:8: more YAML after the first document (a second document after '---', or a stray character) starts "
        "here; the file must be one document");
  CHECK(refusal(one + "---\n").starts_with("m.yaml:"));
  CHECK_NOTHROW(hub::Manifest::parse("---\n" + one, "m.yaml"));  // one document with its marker is fine
  // yaml-cpp's LoadAll never ends on a lone "," (found by fuzz_manifest): refused at once.
  CHECK(refusal(",").starts_with("m.yaml:"));
  CHECK(refusal(one + ",\n").starts_with("m.yaml:"));
}

TEST_CASE("control bytes from the input are escaped in messages, NUL included", "[manifest]") {
  std::string esc = refusal(head() + file("\"a\\e[31mb\""));
  CHECK(esc.find('\x1b') == std::string::npos);
  CHECK(esc.find("a\\x1b[31mb") != std::string::npos);
  std::string nul = refusal(head() + file("\"a\\0b\""));
  CHECK(nul == "m.yaml:5: path 'a\\x00b' must be relative, without '..', '.', empty segments or backslashes");
  CHECK(refusal(head() + file("\"a\\nb\"")).find("a\\nb") != std::string::npos);
}

namespace {
hub::TreeEntry tree_file(const std::string& path, const std::string& oid, std::optional<std::string> lfs = {}) {
  hub::TreeEntry e;
  e.type = "file";
  e.path = path;
  e.size = 10;
  e.oid = oid;
  if (lfs) e.lfs = hub::LfsInfo{*lfs, 10, 134};
  return e;
}
}  // namespace

TEST_CASE("blob names come from what the manifest pins, else are verified", "[manifest]") {
  const std::string sha_a(64, 'a'), sha_c(64, 'c'), oid_b(40, 'b'), oid_d(40, 'd');
  hub::Manifest m = hub::Manifest::parse(head() + file("lfs.bin", "    sha256: " + sha_a + "\n") +
                                             file("git.json",
                                                  "    sha256: " + sha_c + "\n    git_oid: " + oid_b + "\n") +
                                             file("sha-only.json", "    sha256: " + sha_c.substr(0, 63) + "e\n"),
                                         "m.yaml");
  auto checks = hub::compare_with_tree(m, {tree_file("lfs.bin", oid_d, sha_a), tree_file("git.json", oid_b),
                                           tree_file("sha-only.json", oid_d)});
  REQUIRE(checks.size() == 3);
  CHECK(checks[0].state == hub::UpstreamState::ok);
  CHECK(checks[0].etag == sha_a);  // the manifest's sha256, not the pointer's oid
  CHECK_FALSE(checks[0].git_oid_to_verify);
  CHECK(checks[1].etag == oid_b);
  CHECK_FALSE(checks[1].git_oid_to_verify);
  CHECK(checks[2].etag == oid_d);  // the tree's, to be verified against the content
  CHECK(checks[2].git_oid_to_verify == oid_d);
}

TEST_CASE("two files given one blob name for different contents are upstream changed", "[manifest]") {
  const std::string oid(40, 'b');
  hub::Manifest m = hub::Manifest::parse(head() + file("a.json", "    sha256: " + std::string(64, 'a') + "\n") +
                                             file("b.json", "    sha256: " + std::string(64, 'c') + "\n"),
                                         "m.yaml");
  auto checks = hub::compare_with_tree(m, {tree_file("a.json", oid), tree_file("b.json", oid)});
  CHECK(checks[0].state == hub::UpstreamState::ok);
  CHECK(checks[1].state == hub::UpstreamState::changed);
  CHECK(checks[1].detail.find("'a.json'") != std::string::npos);
  CHECK(checks[1].etag.empty());
  // The same content twice shares its blob.
  hub::Manifest same = hub::Manifest::parse(head() + file("a.json") + file("b.json"), "m.yaml");
  auto ok = hub::compare_with_tree(same, {tree_file("a.json", oid), tree_file("b.json", oid)});
  CHECK(ok[1].state == hub::UpstreamState::ok);
}

TEST_CASE("REPO[@REVISION] and assembly specs over a manifest's files", "[manifest]") {
  using provkit::hub::parse_repo_revision;
  CHECK(parse_repo_revision("org/name") == std::pair<std::string, std::string>{"org/name", "main"});
  CHECK(parse_repo_revision("org/name@v1.0") == std::pair<std::string, std::string>{"org/name", "v1.0"});
  CHECK_THROWS_WITH(parse_repo_revision("org/name@"), "'org/name@' is not REPO[@REVISION] (e.g. org/name@main)");
  CHECK_THROWS_AS(parse_repo_revision("../x"), provkit::Error);
  CHECK_FALSE(provkit::hub::split_repo_revision("org/name@"));
  CHECK(provkit::hub::split_repo_revision("org/name")->second == "main");

  provkit::hub::Manifest m;
  m.files = {{"a.bin", 3, std::nullopt, std::nullopt, 0}, {"b.bin", 4, std::nullopt, std::nullopt, 0}};
  std::string sha(64, 'a');
  auto e = provkit::hub::parse_assembly(m, "whole.bin=a.bin,b.bin:" + sha);
  CHECK(e.output == "whole.bin");
  CHECK(e.parts == std::vector<std::string>{"a.bin", "b.bin"});
  CHECK(e.size == 7u);
  CHECK(e.sha256 == sha);
  CHECK_FALSE(provkit::hub::parse_assembly(m, "x=a.bin").sha256);
  try {
    provkit::hub::parse_assembly(m, "x=a.bin,,b.bin");
    FAIL("accepted an empty part");
  } catch (const provkit::hub::AssemblySpecError& err) {
    CHECK(err.part == "");
    CHECK(std::string(err.what()) == "part '' is not one of the manifest's files");
  }
  try {
    provkit::hub::parse_assembly(m, "=a.bin:" + sha);
    FAIL("accepted no output");
  } catch (const provkit::hub::AssemblySpecError& err) {
    CHECK_FALSE(err.part);
    CHECK(std::string(err.what()) == "'=a.bin' is not OUTPUT=PART,PART,... or OUTPUT=GLOB");
  }
}

TEST_CASE("assemble specs: OUTPUT=GLOB in natural order, OUTPUT=...:SHA256SUMS from the repo's own list",
          "[manifest]") {
  using provkit::hub::parse_assembly;
  CHECK(provkit::hub::natural_less("part-2", "part-10"));
  CHECK_FALSE(provkit::hub::natural_less("part-10", "part-2"));
  CHECK(provkit::hub::natural_less("m.gguf.part2of12", "m.gguf.part10of12"));
  CHECK(provkit::hub::natural_less("a-009", "a-10"));
  CHECK_FALSE(provkit::hub::natural_less("a", "a"));
  provkit::hub::Manifest m;
  for (const char* p : {"q/m.gguf.part10of10", "q/m.gguf.part2of10", "q/m.gguf.part1of10", "config.json"})
    m.files.push_back({p, 5, std::nullopt, std::nullopt, 0});
  for (int i = 3; i <= 9; ++i)
    m.files.push_back({"q/m.gguf.part" + std::to_string(i) + "of10", 5, std::nullopt, std::nullopt, 0});
  auto e = parse_assembly(m, "m.gguf=q/m.gguf.part*");
  REQUIRE(e.parts.size() == 10);
  CHECK(e.parts.front() == "q/m.gguf.part1of10");
  CHECK(e.parts[1] == "q/m.gguf.part2of10");
  CHECK(e.parts.back() == "q/m.gguf.part10of10");
  CHECK(e.size == 50u);
  CHECK_THROWS_AS(parse_assembly(m, "m.gguf=nothing/*"), provkit::hub::AssemblySpecError);
  const std::string sha(64, 'c');
  const std::string sums = std::string(64, 'd') + "  other.gguf\n" + std::string(64, 'C') + " *./m.gguf\r\n";
  int asked = 0;
  auto e2 = parse_assembly(m, "m.gguf=q/m.gguf.part*:SHA256SUMS", [&] {
    ++asked;
    return sums;
  });
  CHECK(e2.sha256 == sha);
  CHECK(asked == 1);
  parse_assembly(m, "m.gguf=q/m.gguf.part*", [&] {
    ++asked;
    return sums;
  });
  CHECK(asked == 1);  // asked only for :SHA256SUMS
  // The spec's own words, typed: the tool says which flag gave it (hf-fetch's --assemble).
  CHECK_THROWS_AS(parse_assembly(m, "x.gguf=q/m.gguf.part*:SHA256SUMS", [&] { return sums; }),
                  provkit::hub::AssemblySpecError);
  CHECK_THROWS_WITH(parse_assembly(m, "x.gguf=q/m.gguf.part*:SHA256SUMS", [&] { return sums; }),
                    "x.gguf: the repo's SHA256SUMS has no line for it");
  CHECK(provkit::hub::checksum_from_sums(sums, "sub/other.gguf").sha256 == std::string(64, 'd'));
}

TEST_CASE("SHA256SUMS: the full relative path first, a basename only when one line has it", "[manifest]") {
  using provkit::hub::checksum_from_sums;
  const std::string bf16(64, 'b'), q8(64, '8');
  // Two quantizations of one model, each in its folder; BF16's line comes first.
  const std::string sums = bf16 + "  BF16/model.gguf\n" + q8 + "  ./Q8_0/model.gguf\n";
  CHECK(checksum_from_sums(sums, "Q8_0/model.gguf").sha256 == q8);
  CHECK(checksum_from_sums(sums, "BF16/model.gguf").sha256 == bf16);
  auto ambiguous = checksum_from_sums(sums, "model.gguf");
  CHECK(!ambiguous.sha256);
  CHECK(ambiguous.candidates == std::vector<std::string>{"BF16/model.gguf", "Q8_0/model.gguf"});
  CHECK(checksum_from_sums(sums, "out/Q8_0.gguf").candidates.empty());  // no line at all: no candidates
  // One line with the basename (or the same sum twice) is the answer.
  CHECK(checksum_from_sums(bf16 + "  BF16/model.gguf\n", "merged/model.gguf").sha256 == bf16);
  CHECK(checksum_from_sums(sums + q8 + "  other/x.gguf\n", "x.gguf").sha256 == q8);

  provkit::hub::Manifest m;
  m.files.push_back({"Q8_0/model.gguf.part1of2", 3, std::string(64, '1'), std::nullopt, 1});
  m.files.push_back({"Q8_0/model.gguf.part2of2", 3, std::string(64, '2'), std::nullopt, 2});
  auto repo_sums = [&] { return sums; };
  CHECK(provkit::hub::parse_assembly(m, "Q8_0/model.gguf=Q8_0/model.gguf.part*:SHA256SUMS", repo_sums).sha256 == q8);
  CHECK_THROWS_WITH(provkit::hub::parse_assembly(m, "model.gguf=Q8_0/model.gguf.part*:SHA256SUMS", repo_sums),
                    Catch::Contains("BF16/model.gguf, Q8_0/model.gguf"));
}
