#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "provkit/hub/client.hpp"

#include "support/loopback_server.hpp"
#include "support/reason_of.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::hub;

TEST_CASE("revisions are encoded with no safe characters, paths keep '/'", "[hub]") {
  CHECK(encode_revision("refs/pr/1") == "refs%2Fpr%2F1");
  CHECK(encode_revision("v1.0-rc_2~x") == "v1.0-rc_2~x");
  CHECK(encode_revision("a b+c") == "a%20b%2Bc");
  CHECK(encode_path("dir/a b+c#?.bin") == "dir/a%20b%2Bc%23%3F.bin");
  CHECK(encode_path("caf\xc3\xa9.txt") == "caf%C3%A9.txt");
}

TEST_CASE("Hub URLs", "[hub]") {
  Repo model{RepoType::model, "org/name"};
  Repo dataset{RepoType::dataset, "org/data"};
  CHECK(resolve_url("http://h", model, "refs/pr/1", "a/b c.json") ==
        "http://h/org/name/resolve/refs%2Fpr%2F1/a/b%20c.json");
  CHECK(resolve_url("http://h", dataset, "main", "x") == "http://h/datasets/org/data/resolve/main/x");
  CHECK(tree_url("http://h", model, "main") == "http://h/api/models/org/name/tree/main?recursive=true&expand=false");
  CHECK(revision_url("http://h", dataset, "v1/x") == "http://h/api/datasets/org/data/revision/v1%2Fx");
}

TEST_CASE("repo ids and types", "[hub]") {
  CHECK(is_valid_repo_id("org/name"));
  CHECK(is_valid_repo_id("gpt2"));
  CHECK(is_valid_repo_id("Org-1/name.v2_x"));
  CHECK_FALSE(is_valid_repo_id("org/na--me"));
  CHECK_FALSE(is_valid_repo_id("org/../x"));
  CHECK_FALSE(is_valid_repo_id("a/b/c"));
  CHECK_FALSE(is_valid_repo_id("org/"));
  CHECK_FALSE(is_valid_repo_id("org/name with space"));
  CHECK(parse_repo_type("space") == RepoType::space);
  CHECK_FALSE(parse_repo_type("models"));
}

TEST_CASE("tree pages parse as a pure function", "[hub]") {
  auto entries = parse_tree_page(R"([
    {"type":"file","path":"config.json","size":173,"oid":"efa1237ac4b72b9aa43a2d3f05d5d8ff369ff242"},
    {"type":"directory","path":"sub","oid":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","size":0},
    {"type":"file","path":"sub/w.safetensors","size":327808,"oid":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
     "lfs":{"oid":"12b96cf9282daddd72ef7b6ac2e5b179d327117d915fc0b074e060744e7cdfbf","size":327808,"pointerSize":134}}
  ])");
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].is_file());
  CHECK(entries[0].etag() == "efa1237ac4b72b9aa43a2d3f05d5d8ff369ff242");
  CHECK_FALSE(entries[1].is_file());
  REQUIRE(entries[2].lfs);
  CHECK(entries[2].etag() == "12b96cf9282daddd72ef7b6ac2e5b179d327117d915fc0b074e060744e7cdfbf");
  CHECK(entries[2].content_size() == 327808);
  CHECK(entries[2].lfs->pointer_size == 134);
  CHECK(parse_tree_page("[]").empty());

  for (
      const char* bad :
      {"", "{", "{}", "[1]", R"([{"path":"a"}])", R"([{"type":"file","path":"a"}])",
       R"([{"type":"file","path":"a","size":-1}])", R"([{"type":"file","path":"a","size":1.5}])",
       R"([{"type":"file","path":7,"size":1}])", R"([{"type":"file","path":"a","size":1,"lfs":[]}])",
       R"([{"type":"file","path":"a","size":1,"lfs":{"size":1}}])",
       // Ids name files on disk: exactly 40 / 64 lower-case hex, a file's oid required.
       R"([{"type":"file","path":"a","size":1}])",
       R"([{"type":"file","path":"a","size":1,"oid":"../../../../OUTSIDE"}])",
       R"([{"type":"file","path":"a","size":1,"oid":"EFA1237AC4B72B9AA43A2D3F05D5D8FF369FF242"}])",
       R"([{"type":"file","path":"a","size":1,"oid":"12b96cf9282daddd72ef7b6ac2e5b179d327117d915fc0b074e060744e7cdfbf"}])",
       R"([{"type":"directory","path":"d","oid":"../x"}])",
       R"([{"type":"file","path":"a","size":1,"oid":"efa1237ac4b72b9aa43a2d3f05d5d8ff369ff242",
                               "lfs":{"oid":"../../blobs/x","size":1}}])"}) {
    INFO(bad);
    try {
      parse_tree_page(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::network);
      CHECK_THAT(e.what(), Catch::Contains("malformed tree listing"));
    }
  }
}

TEST_CASE("refused answers become sentences naming the repo, with exit codes", "[hub]") {
  Repo repo{RepoType::model, "org/name"};
  auto with_code = [](const char* code) {
    http::Headers h;
    h.add("X-Error-Code", code);
    return h;
  };
  http::Headers odd;
  odd.add("X-Error-Message", "busy\x1b[2J now");
  CHECK(std::string(hub_error(repo, "the tree", 500, odd, "").what()) ==
        "the tree: the Hub answered HTTP 500 (busy\\x1b[2J now)");  // upstream text is printed escaped
  // By util::printable, the one escaper: a bidi control cannot reorder what follows it on the screen.
  http::Headers bidi;
  bidi.add("X-Error-Message", "see \xe2\x80\xaegnp.exe");
  CHECK(std::string(hub_error(repo, "the tree", 500, bidi, "").what()) ==
        "the tree: the Hub answered HTTP 500 (see \\xe2\\x80\\xaegnp.exe)");
  // Each refusal typed (what a tool branches on), its exit code the reason's, and the sentence naming the repo.
  Error gated = hub_error(repo, "the tree", 401, with_code("GatedRepo"), "");
  CHECK(gated.is(HubRefusal::gated));
  CHECK(gated.code() == ExitCode::auth);
  CHECK(gated.reason().name() == "auth");  // --json's shared name, as before the type
  CHECK_THAT(gated.what(), Catch::Contains("org/name is a gated repository") && Catch::Contains("HF_TOKEN"));
  CHECK_THAT(gated.what(), !Catch::Contains("--"));  // no tool flag in a library sentence: the tool adds its own
  Error gated_tok = hub_error(repo, "the tree", 403, with_code("GatedRepo"), "HF_TOKEN");
  CHECK(gated_tok.is(HubRefusal::gated));
  CHECK_THAT(gated_tok.what(), Catch::Contains("the token from HF_TOKEN has no access"));
  CHECK_THAT(hub_error(repo, "x", 404, with_code("RepoNotFound"), "/t").what(),
             Catch::Contains("or the token from /t has no access"));
  Error missing = hub_error(repo, "the tree", 401, with_code("RepoNotFound"), "");
  CHECK(missing.is(HubRefusal::not_found_or_private));
  CHECK(missing.code() == ExitCode::auth);
  CHECK_THAT(missing.what(), Catch::Contains("repository org/name was not found") && Catch::Contains("private"));
  CHECK_THAT(missing.what(), !Catch::Contains("--"));
  CHECK(hub_error(repo, "x", 401, http::Headers{}, "").is(HubRefusal::not_found_or_private));
  CHECK(hub_error(repo, "x", 403, http::Headers{}, "").is(HubRefusal::access_refused));
  Error revision = hub_error(repo, "x", 404, with_code("RevisionNotFound"), "");
  CHECK(revision.is(HubRefusal::revision_not_found));
  CHECK(revision.code() == ExitCode::check_failed);
  CHECK(revision.reason().name() == "check_failed");
  Error entry = hub_error(repo, "x", 404, with_code("EntryNotFound"), "");
  CHECK(entry.is(HubRefusal::entry_not_found));
  CHECK(entry.code() == ExitCode::check_failed);
  CHECK(hub_error(repo, "x", 404, http::Headers{}, "").is(HubRefusal::entry_not_found));
  Error server = hub_error(repo, "x", 503, http::Headers{}, "");
  CHECK(server.is(HubRefusal::upstream));
  CHECK(server.code() == ExitCode::network);
  CHECK(server.reason().name() == "network");
  CHECK_THAT(server.what(), Catch::Contains("HTTP 503"));
  CHECK_THAT(hub_error(Repo{RepoType::dataset, "o/d"}, "x", 401, with_code("GatedRepo"), "").what(),
             Catch::Contains("dataset o/d"));
}

TEST_CASE("a full commit id resolves to itself: an answer naming another commit is refused", "[hub]") {
  const std::string asked(40, 'a'), other(40, 'b');
  // The revision endpoint answers every request with `other`, as a Hub or mirror that lies would.
  test::LoopbackServer server("127.0.0.1", [&](const std::string&, const std::string&) {
    std::string body = R"({"id": "org/name", "sha": ")" + other + R"("})";
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
  });
  HubClient client(server.base, Token{});
  Repo repo{RepoType::model, "org/name"};
  CHECK(test::reason_of([&] { client.resolve_commit(repo, asked); }) == ReasonId(HubRefusal::commit_mismatch));
  try {
    client.resolve_commit(repo, asked);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::network);
    CHECK(e.reason().name() == "network");
    CHECK_THAT(e.what(), Catch::Contains(asked) && Catch::Contains("another commit, " + other));
  }
  // A name resolves to whatever commit the Hub says; and the commit it names resolves to itself.
  CHECK(client.resolve_commit(repo, "main") == other);
  CHECK(client.resolve_commit(repo, other) == other);
  // A 40-character name that is not lower-case hex is a name (huggingface_hub's REGEX_COMMIT_HASH).
  CHECK(client.resolve_commit(repo, std::string(40, 'A')) == other);
}

namespace {
struct EnvGuard {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvGuard() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second) setenv(it->first.c_str(), it->second->c_str(), 1);
      else unsetenv(it->first.c_str());
    }
  }
};
}  // namespace

TEST_CASE("endpoint from flag, HF_ENDPOINT, default", "[hub]") {
  EnvGuard env;
  env.set("HF_ENDPOINT", nullptr);
  CHECK(endpoint_from("") == "https://huggingface.co");
  CHECK(endpoint_from("http://127.0.0.1:8080//") == "http://127.0.0.1:8080");
  env.set("HF_ENDPOINT", "http://mirror:1/");
  CHECK(endpoint_from("") == "http://mirror:1");
  CHECK(endpoint_from("http://flag") == "http://flag");
  CHECK_THROWS_AS(endpoint_from("not a url"), Error);
}

TEST_CASE("token sources in huggingface_hub's order: --token-file, HF_TOKEN, HUGGING_FACE_HUB_TOKEN, token file",
          "[hub]") {
  namespace fs = std::filesystem;
  provkit::test::TempDir tmp("token-sources");
  const fs::path& dir = tmp.path;
  fs::create_directories(dir / "home");
  std::ofstream(dir / "flag") << "hf_from_flag\n";
  std::ofstream(dir / "path") << "  hf_from_path\n";
  std::ofstream(dir / "home" / "token") << "hf_from_home";
  EnvGuard env;
  env.set("HF_TOKEN", nullptr);
  env.set("HUGGING_FACE_HUB_TOKEN", nullptr);
  env.set("HF_TOKEN_PATH", nullptr);
  env.set("HF_HOME", (dir / "nothing-here").c_str());
  CHECK(find_token("").value.empty());
  CHECK(find_token((dir / "flag").string()).value == "hf_from_flag");
  CHECK_THROWS_AS(find_token((dir / "missing").string()), Error);
  env.set("HF_HOME", (dir / "home").c_str());
  CHECK(find_token("").value == "hf_from_home");
  CHECK(find_token("").source == (dir / "home" / "token").string());
  env.set("HF_TOKEN_PATH", (dir / "path").c_str());
  CHECK(find_token("").value == "hf_from_path");  // HF_TOKEN_PATH replaces $HF_HOME/token
  CHECK(find_token("").source == "HF_TOKEN_PATH (" + (dir / "path").string() + ")");
  env.set("HUGGING_FACE_HUB_TOKEN", "hf_from_old_env");
  CHECK(find_token("").value == "hf_from_old_env");
  env.set("HF_TOKEN", "hf_from_env");
  CHECK(find_token("").value == "hf_from_env");
  CHECK(find_token("").source == "HF_TOKEN");
  // --token-file is the token given, as huggingface_hub's token= argument: it beats every other source.
  auto t = find_token((dir / "flag").string());
  CHECK(t.value == "hf_from_flag");
  CHECK(t.source == (dir / "flag").string());  // the file's path: no tool's flag named
  env.set("HUGGING_FACE_HUB_TOKEN", nullptr);
  // A control character inside a token (a CR/LF would inject a header) is refused, naming the source only.
  env.set("HF_TOKEN", "hf_secret\r\nX-Injected: yes");
  CHECK_THROWS_WITH(find_token(""),
                    "the token from HF_TOKEN contains a control character (a line break?); nothing was sent");
  env.set("HF_TOKEN", nullptr);
  std::ofstream(dir / "path") << "hf_secret\nX-Injected: yes\n";
  try {
    find_token("");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK_THAT(e.what(), Catch::Contains((dir / "path").string()));
    CHECK_THAT(e.what(), !Catch::Contains("hf_secret"));
  }
}

TEST_CASE("HF_HUB_OFFLINE is read as huggingface_hub reads a boolean", "[hub]") {
  for (const char* on : {"1", "ON", "yes", "True"}) {
    ::setenv("HF_HUB_OFFLINE", on, 1);
    CHECK(provkit::hub::offline_from_env());
  }
  for (const char* off : {"0", "off", "", "2", "y"}) {
    ::setenv("HF_HUB_OFFLINE", off, 1);
    CHECK_FALSE(provkit::hub::offline_from_env());
  }
  ::unsetenv("HF_HUB_OFFLINE");
  CHECK_FALSE(provkit::hub::offline_from_env());
}
