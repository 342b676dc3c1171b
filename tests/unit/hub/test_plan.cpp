// The plan before bytes (hub/plan.hpp) on a real cache in a temp directory: what is in place, what a
// partial already holds (a preallocated split partial holds its whole size on disk), what the
// assembly outputs add, and the disk gate's arithmetic.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "provkit/download/ranges.hpp"
#include "provkit/hub/plan.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/fs.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
namespace fs = std::filesystem;
using hub::FilePlan;

namespace {
const std::string kCommit = "5d0c7d5a1f0e4c3b9a8d7e6f5a4b3c2d1e0f9a8b";

hub::ManifestFile file(const std::string& path, std::uint64_t size, char c) {
  hub::ManifestFile f;
  f.path = path;
  f.size = size;
  f.sha256 = std::string(64, c);
  return f;
}
}  // namespace

TEST_CASE("plan: a partial the engine would start over is fetched whole, as the engine's resume rule says", "[plan]") {
  provkit::test::TempDir tmp("plan-resume");
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kCommit;
  m.files = {file("long.bin", 1000, 'a'), file("cut.bin", 4 << 20, 'b')};
  hub::hfcache::CacheLayout layout(tmp.path, m.repo, kCommit);
  std::vector<hub::UpstreamCheck> checks;
  for (const auto& f : m.files) checks.push_back({f.path, hub::UpstreamState::ok, "", nullptr, *f.sha256, {}});
  auto plan = hub::plan_downloads(m, layout, checks, "http://127.0.0.1:1");
  fs::create_directories(plan.job(0).partial_path.parent_path());
  // Longer than the file, no sidecar: the engine starts over (it was "RESUME, 0 to fetch").
  util::write_file_atomic(plan.job(0).partial_path, std::string(1001, 'x'));
  // A sidecar saying every range is done over a partial file cut to 1 MiB: only that MiB is kept.
  auto ranges = download::ranges::plan(4 << 20, 4, 1 << 20);
  for (auto& r : ranges) r.done = r.end - r.start;
  util::write_file_atomic(plan.job(1).partial_path, std::string(1 << 20, 'y'));
  util::write_file_atomic(util::path_with_suffix(plan.job(1).partial_path, ".ranges"),
                          download::ranges::format_sidecar(4 << 20, ranges));
  auto s = hub::plan_space(m, layout, plan);
  REQUIRE(s.files.size() == 2);
  CHECK(s.files[0].action == FilePlan::Action::fetch);
  CHECK(s.files[0].have == 0);
  CHECK(s.files[1].action == FilePlan::Action::resume);
  CHECK(s.files[1].have == 1u << 20);
  CHECK(s.to_fetch == 1000 + (3u << 20));
}

TEST_CASE("plan: in place, resume with what a partial holds, fetch, assembly outputs", "[plan]") {
  provkit::test::TempDir tmp("plan");
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kCommit;
  m.files = {file("config.json", 100, 'a'), file("part-1", 1 << 20, 'b'), file("part-2", 1 << 20, 'c')};
  hub::AssembleEntry whole;
  whole.output = "whole.bin";
  whole.parts = {"part-1", "part-2"};
  m.assemble = {whole};
  hub::hfcache::CacheLayout layout(tmp.path, m.repo, kCommit);
  std::vector<hub::UpstreamCheck> checks;
  for (const auto& f : m.files) checks.push_back({f.path, hub::UpstreamState::ok, "", nullptr, *f.sha256, {}});
  auto plan = hub::plan_downloads(m, layout, checks, "http://127.0.0.1:1");
  // config.json in place; part-1 a split partial: preallocated to its size, its sidecar saying 256 KiB are done.
  util::write_file_atomic(plan.job(0).final_path, std::string(100, 'x'));
  {
    int fd = ::open(plan.job(1).partial_path.c_str(), O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::posix_fallocate(fd, 0, 1 << 20) == 0);
    ::close(fd);
    auto ranges = download::ranges::plan(1 << 20, 4, 256 << 10);
    ranges[0].done = ranges[0].end - ranges[0].start;
    util::write_file_atomic(util::path_with_suffix(plan.job(1).partial_path, ".ranges"),
                            download::ranges::format_sidecar(1 << 20, ranges));
  }
  auto s = hub::plan_space(m, layout, plan);
  REQUIRE(s.files.size() == 3);
  CHECK(s.files[0].action == FilePlan::Action::in_place);
  CHECK(s.files[1].action == FilePlan::Action::resume);
  CHECK(s.files[1].have == 256 << 10);
  CHECK(s.files[1].allocated == 1 << 20);  // the disk already holds all of it
  CHECK(s.files[2].action == FilePlan::Action::fetch);
  CHECK(s.to_fetch == (1u << 20) - (256u << 10) + (1u << 20));
  CHECK(s.held == 100 + (1u << 20));
  CHECK(s.assembly_bytes == 2u << 20);  // the output is new disk too
  CHECK(s.needed == (1u << 20) + (2u << 20));
  CHECK(s.free > 0);
  CHECK(s.fits() == (s.needed <= s.free));
  CHECK(s.gate() == std::nullopt);
  s.free = s.needed - 1;
  CHECK_FALSE(s.fits());
  // The gate's decision is typed, with its figures: the same for a dry run and the fetch it stops.
  REQUIRE(s.gate() == hub::PlanRefusal::no_space);
  CHECK(hub::reason_name(*s.gate()) == "no_space");
  CHECK(hub::exit_code(*s.gate()) == ExitCode::check_failed);
  CHECK(hub::gate_detail(s) ==
        nlohmann::json{{"needed_bytes", s.needed}, {"free_bytes", s.needed - 1}, {"target", s.target.string()}});
  auto j = hub::to_json(s);
  CHECK(j["needed_bytes"] == s.needed);
  CHECK(j["fits"] == false);
  // The assembly output already there with its size adds nothing.
  util::write_file_atomic(layout.file_path("whole.bin"), std::string(2 << 20, 'w'));
  CHECK(hub::plan_space(m, layout, plan).assembly_bytes == 0);
}

TEST_CASE("plan: sums that would pass 2^64 - 1 are refused naming the file, never a plan that fits",
          "[plan][checked]") {
  // Built, not parsed (Manifest::parse refuses these sizes first): the plan checks its own sums all the same.
  provkit::test::TempDir tmp("plan-huge");
  hub::Manifest m;
  m.repo = {hub::RepoType::model, "org/name"};
  m.revision = kCommit;
  m.files = {file("w0", 1ull << 62, 'a'), file("w1", 1ull << 62, 'b'), file("w2", 1ull << 62, 'c')};
  hub::hfcache::CacheLayout layout(tmp.path, m.repo, kCommit);
  auto checks_of = [](const hub::Manifest& man) {
    std::vector<hub::UpstreamCheck> checks;
    for (const auto& f : man.files) checks.push_back({f.path, hub::UpstreamState::ok, "", nullptr, *f.sha256, {}});
    return checks;
  };
  auto three = hub::plan_downloads(m, layout, checks_of(m), "http://127.0.0.1:1");
  CHECK(three.total_bytes == 3ull << 62);
  auto s = hub::plan_space(m, layout, three);
  CHECK(s.needed == 3ull << 62);
  CHECK_FALSE(s.fits());
  m.files.push_back(file("w3", 1ull << 62, 'd'));  // 2^64 in all: wrapped to 0 bytes needed, "fits"
  try {
    hub::plan_downloads(m, layout, checks_of(m), "http://127.0.0.1:1");
    FAIL("planned");
  } catch (const Error& e) {
    CHECK(e.is(util::SumRefusal::overflow));
    CHECK_THAT(e.what(), Catch::StartsWith("w3: "));
  }
  // The disk gate's own sums, given a plan whose total was not checked (a caller's).
  three.files.push_back(3);  // w3, in the manifest now
  three.etags.push_back(*m.files[3].sha256);
  three.git_oids.emplace_back();
  CHECK_THROWS_AS(hub::plan_space(m, layout, three), Error);
  // An assembly output of three parts adds 3 * 2^62 to the 3 * 2^62 of the files.
  m.files.pop_back();
  hub::AssembleEntry whole;
  whole.output = "whole.bin";
  whole.parts = {"w0", "w1", "w2"};
  m.assemble = {whole};
  CHECK_THROWS_AS(hub::plan_space(m, layout, hub::plan_downloads(m, layout, checks_of(m), "http://127.0.0.1:1")),
                  Error);
}
