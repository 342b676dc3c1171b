#pragma once
// A plan before bytes: what a fetch would do with each file (fetch, resume,
// in place), how many bytes are still to come, how many the disk already
// holds, what the assembly outputs add, and whether it fits in the free space
// of the target file system. `hf-fetch --dry-run` shows it; every fetch
// checks it first (the disk gate, SpacePlan::gate: a typed decision, never a
// thrown sentence), so a disk that cannot hold the run is refused before the
// first byte rather than failing at the assembly.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "provkit/error.hpp"
#include "provkit/hub/snapshot.hpp"

namespace provkit::hub {

// The disk gate's decision, for scripts: --json's "reason" "no_space" (exit 1), the same in a dry run
// and in the fetch it stops.
enum class PlanRefusal {
  no_space,  // the run needs more new disk than is free on the target's file system
};
std::string_view reason_name(PlanRefusal r);
ExitCode exit_code(PlanRefusal r);

struct FilePlan {
  enum class Action { fetch, resume, in_place } action = Action::fetch;
  std::string path;
  std::uint64_t size = 0;
  std::uint64_t have = 0;       // bytes already fetched (resume) or the whole file (in place)
  std::uint64_t allocated = 0;  // disk blocks already held for it (a preallocated partial holds its full size)
  std::string dropped_into;     // in place as a part dropped after this output verified (drop.hpp)
};

struct AssemblyPlan {
  std::string output;
  std::uint64_t size = 0;
  bool in_place = false;  // already there with its size: no new disk
};

struct SpacePlan {
  std::vector<FilePlan> files;
  std::vector<AssemblyPlan> assemblies;
  std::uint64_t to_fetch = 0;        // bytes still to transfer
  std::uint64_t held = 0;            // bytes the target already holds for these files
  std::uint64_t assembly_bytes = 0;  // assembly outputs still to write
  // New disk the run needs: files' unallocated bytes + assembly outputs; when parts are dropped, the
  // files' bytes + the outputs at their peak (each output written while its parts are still there).
  std::uint64_t needed = 0;
  bool drop_parts = false;
  std::uint64_t drop_bytes = 0;  // drop_parts: the part bytes given back once their outputs verify
  std::uint64_t free = 0;        // free to this user on the target file system
  std::filesystem::path target;  // the directory whose file system was asked
  bool fits() const { return needed <= free; }
  // The disk gate: PlanRefusal::no_space when the run does not fit, else nothing.
  std::optional<PlanRefusal> gate() const {
    return fits() ? std::nullopt : std::optional<PlanRefusal>(PlanRefusal::no_space);
  }
};

// Looks at the disk only (sizes, partials and their range sidecars, statvfs);
// no request. A file whose content is at its place with its size is
// in_place (the fetch verifies it); a partial whose bytes the engine would
// keep (download::resume_on_disk, the one resume rule) is a resume.
// `dropped`: parts already dropped (in place, no bytes); `drop_parts`: the
// fetch drops the parts of each verified output right after its assembly.
SpacePlan plan_space(const Manifest& m, const hfcache::Layout& layout, const DownloadPlan& plan,
                     bool drop_parts = false, const DroppedParts* dropped = nullptr);

std::string action_name(FilePlan::Action a);  // "FETCH", "RESUME", "IN PLACE"

// The summary's fields: to_fetch_bytes, held_bytes, assembly_bytes, needed_bytes, free_bytes, fits,
// and with drop_parts: drop_parts, drop_bytes.
nlohmann::json to_json(const SpacePlan& plan);

// The disk gate's refusal as --json's "detail" beside its reason: needed_bytes, free_bytes, target.
nlohmann::json gate_detail(const SpacePlan& plan);

}  // namespace provkit::hub
