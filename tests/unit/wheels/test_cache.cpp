#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "provkit/util/hash.hpp"
#include "provkit/wheels/cache.hpp"

#include "support/temp_dir.hpp"

using namespace provkit::wheels;
namespace fs = std::filesystem;

// Issue 22, item 5: an entry edited in place (as through a hardlink from an
// environment) is found before it is linked again.
TEST_CASE("wheel cache: an entry changed since it was unpacked is found", "[envbuild][cache]") {
  provkit::test::TempDir tmp("wheelcache");
  const fs::path wheel = fs::path(PROVKIT_TEST_DATA) / "locks" / "uv-0.11.15" / "wheels" /
                         "demopure-1.0-py3-none-any.whl";
  WheelCache cache(tmp / "cache");
  const std::string sha = provkit::util::sha256_file(wheel);
  CacheEntry entry = cache.unpacked(sha, wheel);
  REQUIRE_FALSE(entry.info.files.empty());
  REQUIRE(entry.mtimes.size() == entry.info.files.size());
  auto again = cache.find(sha);
  REQUIRE(again);
  CHECK(cache.changed_files(*again).empty());
  const std::string first = entry.info.files.front().path;
  {
    std::ofstream out(entry.tree / first, std::ios::app);
    out << "HOTFIX = 1\n";  // a `>>` hotfix: size and mtime change
  }
  CHECK(cache.changed_files(*again) == std::vector<std::string>{first});
  // Same size, new mtime (an editor writing in place) is a change too.
  cache.evict(sha);
  entry = cache.unpacked(sha, wheel);
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  REQUIRE(::utimensat(AT_FDCWD, (entry.tree / first).c_str(), times, 0) == 0);
  CHECK(cache.changed_files(*cache.find(sha)) == std::vector<std::string>{first});
  fs::remove(entry.tree / first);
  CHECK(cache.changed_files(*cache.find(sha)) == std::vector<std::string>{first});
}

TEST_CASE("wheel cache: the link-mode fallback is reported once per cache", "[envbuild][cache]") {
  provkit::test::TempDir tmp("wheelcache-notice");
  WheelCache cache(tmp / "cache");
  CHECK(cache.first_fallback_notice("clone>hardlink"));
  CHECK_FALSE(cache.first_fallback_notice("clone>hardlink"));
  CHECK(cache.first_fallback_notice("clone>copy"));
  WheelCache other(tmp / "other");
  CHECK(other.first_fallback_notice("clone>hardlink"));
}

namespace {
std::size_t entries_in(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}
}  // namespace

// Issue 20: links planted in a shared cache. unpacked/ or tmp/ a link out: refused before anything is
// unpacked or published there. An entry that is a link to a tree elsewhere: never read, replaced.
TEST_CASE("wheel cache: links planted in the cache move nothing outside it", "[envbuild][cache]") {
  provkit::test::TempDir tmp("wheelcache-links");
  const fs::path wheel = fs::path(PROVKIT_TEST_DATA) / "locks" / "uv-0.11.15" / "wheels" /
                         "demopure-1.0-py3-none-any.whl";
  const std::string sha = provkit::util::sha256_file(wheel);
  fs::create_directories(tmp / "outside");

  SECTION("unpacked/ is a link") {
    fs::create_directories(tmp / "cache");
    fs::create_directory_symlink(tmp / "outside", tmp / "cache" / "unpacked");
    WheelCache cache(tmp / "cache");
    CHECK_THROWS_WITH(cache.unpacked(sha, wheel), Catch::Contains("symbolic link"));
    CHECK(entries_in(tmp / "outside") == 0);
    CHECK(entries_in(tmp / "cache" / "tmp") == 0);  // the staged tree is not left behind
  }
  SECTION("tmp/ is a link") {
    fs::create_directories(tmp / "cache");
    fs::create_directory_symlink(tmp / "outside", tmp / "cache" / "tmp");
    WheelCache cache(tmp / "cache");
    CHECK_THROWS_WITH(cache.unpacked(sha, wheel), Catch::Contains("symbolic link"));
    CHECK(entries_in(tmp / "outside") == 0);
  }
  SECTION("an entry is a link to a tree elsewhere") {
    WheelCache cache(tmp / "cache");
    CacheEntry first = cache.unpacked(sha, wheel);
    const fs::path entry = tmp / "cache" / "unpacked" / sha;
    fs::rename(entry, tmp / "outside" / "entry");
    fs::create_directory_symlink(tmp / "outside" / "entry", entry);
    CHECK_FALSE(cache.has_unpacked(sha));
    CHECK_FALSE(cache.find(sha));
    CacheEntry fresh = cache.unpacked(sha, wheel);
    CHECK(!fs::is_symlink(entry));
    CHECK(fs::is_regular_file(entry / "files.json"));
    CHECK(fs::is_regular_file(tmp / "outside" / "entry" / "files.json"));  // what the link named is kept
    CHECK(cache.changed_files(fresh).empty());
    // A directory of the tree replaced by a link is a change, whatever is behind it.
    const std::string inner = fresh.info.files.front().path;
    const fs::path top = fresh.tree / fs::path(inner).begin()->string();
    if (fs::path(inner).has_parent_path()) {
      fs::rename(top, tmp / "outside" / "top");
      fs::create_directory_symlink(tmp / "outside" / "top", top);
      CHECK_FALSE(cache.changed_files(fresh).empty());
    }
  }
}

TEST_CASE("wheel cache: a staging in steps publishes what finished; a dropped one leaves nothing in tmp/",
          "[envbuild][cache]") {
  provkit::test::TempDir tmp("wheelcache-steps");
  const fs::path wheels = fs::path(PROVKIT_TEST_DATA) / "locks" / "uv-0.11.15" / "wheels";
  const fs::path pure = wheels / "demopure-1.0-py3-none-any.whl";
  WheelCache cache(tmp / "cache");
  const std::string sha = provkit::util::sha256_file(pure);
  auto staging = cache.begin_stage(sha, pure);
  REQUIRE(staging.unpack);
  CHECK(fs::is_directory(staging.dir / "tree"));
  CHECK_FALSE(cache.has_unpacked(sha));
  run_parts({staging.unpack.get()}, 2);
  auto staged = cache.finish_stage(staging);
  CHECK_FALSE(staged.entry.info.files.empty());
  CHECK(staged.entry.mtimes.size() == staged.entry.info.files.size());
  CHECK_FALSE(cache.has_unpacked(sha));  // nothing is published before publish_all
  std::vector<WheelCache::Staged> batch{staged};
  cache.publish_all(batch);
  CHECK(cache.has_unpacked(sha));
  CHECK(fs::is_empty(tmp / "cache" / "tmp"));

  // Begun, never run: discarded, its directory gone, nothing published.
  auto dropped = cache.begin_stage(std::string(64, 'a'), pure);
  CHECK(fs::exists(dropped.dir));
  cache.discard(dropped);
  CHECK_FALSE(fs::exists(dropped.dir));
  CHECK(fs::is_empty(tmp / "cache" / "tmp"));
  CHECK_FALSE(cache.has_unpacked(std::string(64, 'a')));
}
