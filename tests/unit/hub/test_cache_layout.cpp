#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "provkit/hub/cache_layout.hpp"
#include "provkit/util/fs.hpp"

#include "support/temp_dir.hpp"

using namespace provkit;
using namespace provkit::hub::hfcache;
namespace fs = std::filesystem;

namespace {
using provkit::test::TempDir;
const std::string kCommit = "5d0c7d5a1f0e4c3b9a8d7e6f5a4b3c2d1e0f9a8b";
}  // namespace

TEST_CASE("repo folder names", "[hfcache]") {
  CHECK(repo_folder_name({hub::RepoType::model, "org/name"}) == "models--org--name");
  CHECK(repo_folder_name({hub::RepoType::dataset, "org/data"}) == "datasets--org--data");
  CHECK(repo_folder_name({hub::RepoType::space, "gpt2"}) == "spaces--gpt2");
}

TEST_CASE("relative symlink targets climb one level per directory", "[hfcache]") {
  CHECK(relative_blob_target("config.json", "abc") == "../../blobs/abc");
  CHECK(relative_blob_target("a/b/c.bin", "abc") == "../../../../blobs/abc");
}

TEST_CASE("cache location from the environment", "[hfcache]") {
  auto save = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  auto restore = [](const char* n, const std::optional<std::string>& v) {
    if (v) setenv(n, v->c_str(), 1);
    else unsetenv(n);
  };
  auto hub_cache = save("HF_HUB_CACHE"), hf_home_v = save("HF_HOME"), xdg = save("XDG_CACHE_HOME"), home = save("HOME");
  unsetenv("HF_HUB_CACHE");
  unsetenv("HF_HOME");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/u", 1);
  CHECK(default_hub_cache() == fs::path("/home/u/.cache/huggingface/hub"));
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  CHECK(default_hub_cache() == fs::path("/xdg/huggingface/hub"));
  setenv("HF_HOME", "/hfhome", 1);
  CHECK(hf_home() == fs::path("/hfhome"));
  CHECK(default_hub_cache() == fs::path("/hfhome/hub"));
  setenv("HF_HUB_CACHE", "/explicit", 1);
  CHECK(default_hub_cache() == fs::path("/explicit"));
  restore("HF_HUB_CACHE", hub_cache);
  restore("HF_HOME", hf_home_v);
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

TEST_CASE("cache layout: blobs, snapshot symlinks, refs", "[hfcache]") {
  TempDir tmp("hfcache-cache");
  const fs::path& root = tmp.path;
  CacheLayout c(root, {hub::RepoType::model, "org/name"}, kCommit);
  fs::path repo = root / "models--org--name";
  CHECK(c.content_path("a/b.bin", "e1") == repo / "blobs" / "e1");
  StoredPaths stored = c.stored_paths("a/b.bin", "e1");
  CHECK(stored.content == repo / "blobs" / "e1");
  CHECK(stored.partial == repo / "blobs" / "e1.provkit-partial.incomplete");
  CHECK(stored.rejected_prefix == repo / "blobs" / "e1");
  CHECK(stored.lock == root / ".locks" / "models--org--name" / "e1.lock");  // huggingface_hub's
  CHECK(c.file_path("a/b.bin") == repo / "snapshots" / kCommit / "a" / "b.bin");
  util::write_file_atomic(c.content_path("a/b.bin", "e1"), "data");
  c.publish("a/b.bin", "e1");
  c.publish("a/b.bin", "e1");  // again: no error, same link
  CHECK(fs::read_symlink(c.file_path("a/b.bin")) == "../../../blobs/e1");
  CHECK(util::read_file(c.file_path("a/b.bin")) == "data");
  util::write_file_atomic(c.content_path("a/b.bin", "e2"), "new");
  c.publish("a/b.bin", "e2");  // a changed etag replaces the link
  CHECK(util::read_file(c.file_path("a/b.bin")) == "new");
  c.finish({}, {{"main"}, false});
  CHECK(util::read_file(repo / "refs" / "main") == kCommit);
  // Only the names given; main_if_absent never over a refs/main that is there (huggingface_hub's or ours).
  const std::string other(40, 'f');
  util::write_file_atomic(repo / "refs" / "main", other);
  c.finish({}, {{"v1"}, true});
  CHECK(util::read_file(repo / "refs" / "v1") == kCommit);
  CHECK(util::read_file(repo / "refs" / "main") == other);
  fs::remove(repo / "refs" / "main");
  c.finish({}, {{}, true});
  CHECK(util::read_file(repo / "refs" / "main") == kCommit);
  // begin(): the snapshot folder and huggingface_hub's CACHEDIR.TAG, never over one already there.
  fs::remove_all(c.snapshot_dir());
  c.begin();
  CHECK(fs::is_directory(c.snapshot_dir()));
  CHECK(util::read_file(root / "CACHEDIR.TAG") == std::string(hub::hfcache::kCachedirTag));
  util::write_file_atomic(root / "CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# mine\n");
  c.begin();
  CHECK_THAT(util::read_file(root / "CACHEDIR.TAG"), Catch::Contains("# mine"));
}

TEST_CASE("local dir layout: metadata, .gitignore, SHA256SUMS", "[hfcache]") {
  TempDir tmp("hfcache-local");
  const fs::path& root = tmp.path;
  LocalDirLayout l(root, kCommit);
  CHECK(l.content_path("x/y.json", "e") == root / "x" / "y.json");
  CHECK(l.metadata_path("x/y.json") == root / ".cache/huggingface/download/x/y.json.metadata");
  StoredPaths stored = l.stored_paths("x/y.json", "e");
  CHECK(stored.content == root / "x" / "y.json");
  CHECK(stored.partial == root / ".cache/huggingface/download/x/y.json.e.provkit-partial");
  CHECK(stored.rejected_prefix == root / ".cache/huggingface/download/x/y.json");
  CHECK(stored.lock == root / ".cache/huggingface/download/x/y.json.lock");
  util::write_file_atomic(root / "x" / "y.json", "{}");
  l.publish("x/y.json", "etag1");
  std::string meta = util::read_file(l.metadata_path("x/y.json"));
  CHECK(meta.rfind(kCommit + "\netag1\n", 0) == 0);
  double ts = std::stod(meta.substr(kCommit.size() + 7));
  CHECK(ts > 1.6e9);  // a unix time in seconds, as huggingface_hub writes it
  CHECK(util::read_file(root / ".cache/huggingface/.gitignore") == "*");
  l.finish({{"z.bin", std::string(64, 'b')}, {"x/y.json", std::string(64, 'a')}}, {});
  CHECK_FALSE(fs::exists(root / "SHA256SUMS"));  // the repo's own, if it has one, goes there
  CHECK(util::read_file(root / ".cache/huggingface/SHA256SUMS") ==
        std::string(64, 'a') + "  x/y.json\n" + std::string(64, 'b') + "  z.bin\n");
}

TEST_CASE("derived names fit NAME_MAX and stay the same from run to run", "[hfcache]") {
  CHECK(util::path_with_suffix("/d/config.json", ".stamp") == "/d/config.json.stamp");
  std::string name(240, 'a');
  fs::path longer = util::path_with_suffix("/d/" + name, ".stamp");
  CHECK(longer.parent_path() == "/d");
  CHECK(longer.filename().string().size() <= 255);
  CHECK(longer.filename().string().ends_with(".stamp"));
  CHECK(longer.filename().string().starts_with(std::string(200, 'a')));
  CHECK(longer == util::path_with_suffix("/d/" + name, ".stamp"));
  CHECK(longer != util::path_with_suffix("/d/" + std::string(239, 'a') + "b", ".stamp"));  // the hash tells them apart
  CHECK(util::path_with_suffix("/d/" + std::string(255, 'a'), "").filename().string().size() == 255);
  // UTF-8 is never cut inside a character.
  std::string wide;
  for (int i = 0; i < 80; ++i) wide += "\xc3\xa9";  // 160 bytes
  std::string cut =
      util::path_with_suffix("/d/" + wide + std::string(80, 'x'), "." + std::string(64, 'e') + ".part").filename();
  CHECK(cut.size() <= 255);
  CHECK((static_cast<unsigned char>(cut[cut.find('~') - 1]) & 0xc0) != 0xc0);
  CHECK(util::temp_path_beside("/d/" + name, "link").filename().string().size() <= 255);
}

TEST_CASE("local dir: paths hf-fetch writes itself are reserved", "[hfcache]") {
  LocalDirLayout local("/l", "c");
  CHECK(local.reserved_reason("SHA256SUMS").empty());  // the repo's own: hf-fetch's list is under .cache/huggingface
  CHECK_FALSE(local.reserved_reason(".cache").empty());
  CHECK_FALSE(local.reserved_reason(".cache/huggingface").empty());
  CHECK_FALSE(local.reserved_reason(".cache/huggingface/download/x.metadata").empty());
  CHECK(local.reserved_reason("sub/SHA256SUMS").empty());
  CHECK(local.reserved_reason(".cache/other").empty());
  CHECK(local.reserved_reason("config.json").empty());
  CacheLayout cache("/c", hub::Repo{hub::RepoType::model, "org/name"}, "c");
  CHECK(cache.reserved_reason("SHA256SUMS").empty());
}
