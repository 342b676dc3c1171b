#include "provkit/hub/drop.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <sstream>

#include "provkit/download/downloader.hpp"
#include "provkit/hub/snapshot.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::hub {

namespace {
constexpr std::size_t kRecordMax = std::size_t{64} << 10;
constexpr std::string_view kRecordHead = "provkit-dropped 1\n";
}  // namespace

std::string drop_record_text(const DropRecord& r) {
  return std::string(kRecordHead) + "output " + r.output + "\nsha256 " + r.sha256 + "\nsize " + std::to_string(r.size) +
         "\n";
}

std::optional<DropRecord> parse_drop_record(const std::string& text) {
  if (!text.starts_with(kRecordHead)) return std::nullopt;
  std::istringstream in(text.substr(kRecordHead.size()));
  DropRecord r;
  std::string line;
  bool has_output = false, has_size = false;
  while (std::getline(in, line)) {
    if (line.starts_with("output ")) {
      r.output = line.substr(7);
      has_output = !r.output.empty();
    } else if (line.starts_with("sha256 ")) {
      r.sha256 = line.substr(7);
    } else if (line.starts_with("size ")) {
      if (!util::parse_u64(std::string_view(line).substr(5), r.size)) return std::nullopt;  // a damaged record
      has_size = true;
    }
  }
  if (!has_output || !has_size || !util::is_hex(r.sha256, 64)) return std::nullopt;
  return r;
}

fs::path drop_record_path(const hfcache::Layout& layout, const std::string& part) {
  return stamp_path(layout, "dropped", part);
}

const std::string* DroppedParts::output_of(const std::string& part) const {
  auto it = parts.find(part);
  return it == parts.end() ? nullptr : &it->second;
}

DroppedParts find_dropped_parts(const Manifest& m, const hfcache::Layout& layout, bool verify_outputs) {
  DroppedParts out;
  for (const auto& e : m.assemble) {
    if (!e.sha256) continue;  // nothing is dropped for an output whose sha256 is not known
    std::vector<std::string> recorded;
    for (const auto& p : e.parts) {
      struct stat st;
      try {
        if (layout.guard().stat(layout.file_path(p), st)) continue;  // the part is there: it is what it is
      } catch (const Error&) {
        continue;
      }
      std::string text;
      try {
        text = layout.guard().read_if_present(drop_record_path(layout, p), kRecordMax);
      } catch (const Error&) {  // a link or FIFO where the record should be: no record
        continue;
      }
      auto r = parse_drop_record(text);
      if (!r || r->output != e.output || r->sha256 != *e.sha256 || (e.size && *e.size != r->size)) continue;
      recorded.push_back(p);
    }
    if (recorded.empty()) continue;
    if (verify_outputs) {
      download::FileSpec spec{e.output, 0, e.sha256, std::nullopt};
      std::error_code ec;
      auto size = fs::file_size(layout.file_path(e.output), ec);
      spec.size = e.size.value_or(ec ? 0 : size);
      auto v = download::verify_file_stamped(layout.guard(), layout.file_path(e.output), spec,
                                             stamp_path(layout, "verified", e.output));
      if (v.state != download::FileState::ok) continue;  // the parts are needed again
    }
    for (const auto& p : recorded) out.parts.emplace(p, e.output);
  }
  return out;
}

std::vector<std::string> droppable_parts(const Manifest& m, std::size_t index, const std::vector<bool>& verified) {
  std::vector<std::string> out;
  for (const auto& p : m.assemble[index].parts) {
    bool needed = false;
    for (std::size_t j = 0; j < m.assemble.size() && !needed; ++j) {
      if (j == index) continue;
      const auto& parts = m.assemble[j].parts;
      bool lists = std::find(parts.begin(), parts.end(), p) != parts.end();
      needed = lists && (j > index || j >= verified.size() || !verified[j]);
    }
    if (!needed && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

std::vector<DroppedPart> drop_parts(hfcache::Layout& layout, const AssembleEntry& e, const std::string& sha256,
                                    std::uint64_t size, const std::vector<std::string>& parts,
                                    const std::map<std::string, std::string>& etags, std::string& warning) {
  const util::Root& guard = layout.guard();
  download::Verification v;
  v.state = download::FileState::ok;
  v.sha256 = sha256;
  v.size = size;
  warning = download::record_verified(guard, layout.file_path(e.output), v, stamp_path(layout, "verified", e.output));
  std::vector<DroppedPart> out;
  for (const auto& p : parts) {
    // The record first: a run stopped between the two leaves a part that is still there, which is
    // verified as any file, never a part gone without a record.
    guard.write_atomic(drop_record_path(layout, p), drop_record_text({e.output, sha256, size}));
    auto it = etags.find(p);
    DroppedPart d{p, e.output, layout.remove_file(p, it == etags.end() ? std::string() : it->second)};
    try {
      guard.remove(stamp_path(layout, "verified", p));
    } catch (const Error&) {  // a stale stamp vouches for nothing once the file is gone
    }
    // The part's folders, when nothing else is left in them (Q8_0/ of Q8_0/x.part1of2): no empty tree stays.
    for (fs::path dir = fs::path(p).parent_path(); !dir.empty(); dir = dir.parent_path())
      if (!guard.remove_empty_directory(layout.file_path(dir.string()))) break;
    out.push_back(std::move(d));
  }
  return out;
}

std::uint64_t peak_assembly_bytes(const std::vector<std::uint64_t>& sizes, const std::vector<std::uint64_t>& freed) {
  // A signed running sum (dropping may give back more than an output took), wide enough that sizes past
  // 2^63 neither turn negative nor wrap; a peak past 2^64 - 1 is held there (a need no disk meets).
  __int128 now = 0, peak = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    now += sizes[i];
    peak = std::max(peak, now);
    if (i < freed.size()) now -= freed[i];
  }
  return peak > static_cast<__int128>(UINT64_MAX) ? UINT64_MAX : static_cast<std::uint64_t>(peak);
}

}  // namespace provkit::hub
