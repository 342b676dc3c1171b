#include "provkit/wheels/zip.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/checked.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/parallel.hpp"
#include "provkit/util/size.hpp"
#include "provkit/util/text.hpp"
#include "provkit/wheels/record.hpp"

namespace provkit::wheels {

// libarchive's message is NULL when it set none (a truncated central
// directory can end a read that way).
std::string archive_error(archive* a) {
  const char* msg = archive_error_string(a);
  return msg ? msg : "unreadable archive";
}

namespace {

// This thread's locale while the guard lives (uselocale; the process's locale is not touched); none: as it is.
class ThreadLocale {
 public:
  explicit ThreadLocale(locale_t l) {
    if (l) previous_ = ::uselocale(l);
  }
  ~ThreadLocale() {
    if (previous_) ::uselocale(previous_);
  }
  ThreadLocale(const ThreadLocale&) = delete;
  ThreadLocale& operator=(const ThreadLocale&) = delete;

 private:
  locale_t previous_ = nullptr;
};

// Entry names are UTF-8 whatever the process's locale: libarchive converts a zip's UTF-8 names to the
// current locale's charset, and under the C locale (every tool's) a name outside ASCII fails the read ("cannot
// be converted") and is written without the UTF-8 flag. This thread reads and writes archives under C.UTF-8
// while one is open.
locale_t utf8_locale() {
  static const locale_t utf8 = [] {
    for (const char* name : {"C.UTF-8", "C.utf8", "en_US.UTF-8"})
      if (locale_t l = ::newlocale(LC_CTYPE_MASK, name, static_cast<locale_t>(nullptr))) return l;
    return static_cast<locale_t>(nullptr);
  }();
  return utf8;
}
struct Utf8Names : ThreadLocale {
  Utf8Names() : ThreadLocale(utf8_locale()) {}
};

// For one entry whose name is not UTF-8 (an installed file's raw bytes, which capture packs as they are): the
// process's locale back while its header is written, as before Utf8Names. libarchive's zip writer fails to
// convert such a name under C.UTF-8 and crashes (libarchive 3.6.2, archive_write_zip_header); under the C
// locale it writes the bytes as they are, without the UTF-8 flag.
locale_t locale_for_name(std::string_view name) {
  for (std::size_t i = 0; i < name.size();)
    if (util::next_code_point(name, i) < 0) return LC_GLOBAL_LOCALE;
  return nullptr;
}

struct ReadArchive {
  Utf8Names names;
  archive* a = archive_read_new();
  ~ReadArchive() { archive_read_free(a); }
};

[[noreturn]] void refuse(const fs::path& wheel, const std::string& what) {
  throw Error(ExitCode::check_failed, wheel.filename().string() + ": " + what);
}

void open_zip(ReadArchive& ar, const fs::path& wheel) {
  archive_read_support_format_zip_seekable(ar.a);
  if (archive_read_open_filename(ar.a, wheel.c_str(), 1 << 20) != ARCHIVE_OK)
    refuse(wheel, std::string("cannot open as a zip: ") + archive_error(ar.a));
}

// Past `ratio_applies_above` bytes, the total may not exceed max_ratio times
// the wheel's own size (3 GiB of zeros deflate to 3 MiB).
void check_ratio(const fs::path& wheel, std::uint64_t total, const UnpackLimits& limits) {
  if (total <= limits.ratio_applies_above) return;
  std::error_code ec;
  auto packed = fs::file_size(wheel, ec);
  if (ec || packed == 0) packed = 1;
  double ratio = static_cast<double>(total) / static_cast<double>(packed);
  if (ratio > limits.max_ratio)
    refuse(wheel, "unpacks to " + util::format_size(total) + " from " + util::format_size(packed) + " (more than " +
                      std::to_string(static_cast<int>(limits.max_ratio)) +
                      " times its size), a compression bomb; refused");
}

std::string entry_name(archive_entry* e) {
  const char* utf8 = archive_entry_pathname_utf8(e);
  const char* name = utf8 ? utf8 : archive_entry_pathname(e);
  return name ? name : "";
}

// One entry as the central directory describes it.
struct EntryHeader {
  std::string name;   // as stored
  std::string clean;  // without trailing '/'
  bool is_dir = false;
  std::optional<std::uint64_t> size;  // declared uncompressed size
};

// Every entry is judged from the headers before anything is written: names,
// kinds, conflicts, one .dist-info, entry count and declared sizes.
std::vector<EntryHeader> read_headers(const fs::path& wheel, const UnpackLimits& limits) {
  ReadArchive ar;
  open_zip(ar, wheel);
  std::vector<EntryHeader> headers;
  std::unordered_map<std::string, std::size_t> by_name;       // clean name -> index
  std::unordered_map<std::string, std::size_t> implied_dirs;  // parent dir -> first entry under it
  std::set<std::string> dist_infos;
  std::uint64_t declared = 0;
  archive_entry* entry = nullptr;
  int r;
  while ((r = archive_read_next_header(ar.a, &entry)) == ARCHIVE_OK) {
    if (headers.size() >= limits.max_entries)
      refuse(wheel, "more than " + std::to_string(limits.max_entries) + " entries; refused");
    EntryHeader h;
    h.name = entry_name(entry);
    auto type = archive_entry_filetype(entry);
    h.is_dir = type == AE_IFDIR || (!h.name.empty() && h.name.back() == '/');
    h.clean = h.name;
    while (!h.clean.empty() && h.clean.back() == '/') h.clean.pop_back();
    if (!h.clean.empty() && h.clean[0] == '/') refuse(wheel, "absolute path '" + h.name + "' refused");
    if (!util::is_safe_relative_path(h.clean))
      refuse(wheel, "path '" + h.name + "' escapes the target or is malformed; refused");
    if (type == AE_IFLNK || archive_entry_symlink(entry) || archive_entry_hardlink(entry))
      refuse(wheel, "link entry '" + h.name + "' refused");
    if (!h.is_dir && type != AE_IFREG && type != 0) refuse(wheel, "special file '" + h.name + "' refused");
    if (auto [it, fresh] = by_name.emplace(h.clean, headers.size()); !fresh) {
      const EntryHeader& other = headers[it->second];
      if (other.is_dir != h.is_dir)
        refuse(wheel, "entries '" + other.name + "' and '" + h.name + "' conflict: '" + h.clean +
                          "' cannot be both a file and a directory");
      refuse(wheel, "duplicate entry '" + h.name + "' refused");
    }
    for (auto slash = h.clean.find('/'); slash != std::string::npos; slash = h.clean.find('/', slash + 1))
      implied_dirs.emplace(h.clean.substr(0, slash), headers.size());
    auto top = h.clean.substr(0, h.clean.find('/'));
    if (top.size() > 10 && top.compare(top.size() - 10, 10, ".dist-info") == 0) dist_infos.insert(top);
    if (!h.is_dir && archive_entry_size_is_set(entry)) {
      h.size = static_cast<std::uint64_t>(std::max<la_int64_t>(0, archive_entry_size(entry)));
      declared = util::saturating_add(declared, *h.size);  // past 2^64 - 1 is past the limit, never a wrap
      if (declared > limits.max_total_bytes)
        refuse(wheel, "unpacks to more than " + util::format_size(limits.max_total_bytes) + " (declared sizes up to '" +
                          h.name + "'); refused");
    }
    headers.push_back(std::move(h));
  }
  if (r != ARCHIVE_EOF) refuse(wheel, std::string("corrupt zip: ") + archive_error(ar.a));
  for (auto& h : headers) {
    if (h.is_dir) continue;
    if (auto it = implied_dirs.find(h.clean); it != implied_dirs.end())
      refuse(wheel, "entries '" + h.name + "' and '" + headers[it->second].name + "' conflict: '" + h.clean +
                        "' cannot be both a file and a directory");
  }
  if (dist_infos.size() > 1) {
    std::string names;
    for (auto& d : dist_infos) names += (names.empty() ? "" : ", ") + d;
    refuse(wheel, "more than one .dist-info directory (" + names + ")");
  }
  check_ratio(wheel, declared, limits);
  return headers;
}

}  // namespace

namespace {

// Entries [begin, end) of the archive order, written below `root` (their directories made already): each one
// streamed, hashed and checked against its declared size and the wheel's limits (`total` is what every part
// has written so far). The file's write-back is started as soon as it is written, so that the cache's one
// syncfs before publishing finds little left to write.
void extract_part(const fs::path& wheel, const fs::path& dest, const util::Root& root,
                  const std::vector<EntryHeader>& headers, std::size_t begin, std::size_t end,
                  const UnpackLimits& limits, std::atomic<std::uint64_t>& total,
                  std::vector<std::optional<UnpackedFile>>& files) {
  ReadArchive ar;
  open_zip(ar, wheel);
  archive_entry* entry = nullptr;
  int r = ARCHIVE_OK;
  std::size_t index = 0;
  while (index < end && (r = archive_read_next_header(ar.a, &entry)) == ARCHIVE_OK) {
    if (index >= headers.size() || entry_name(entry) != headers[index].name)
      refuse(wheel, "entries differ between two reads of the archive");
    const EntryHeader& h = headers[index++];
    if (index - 1 < begin || h.is_dir) continue;
    const std::string& name = h.name;
    fs::path target = dest / h.clean;
    bool exec = (archive_entry_perm(entry) & 0111) != 0;
    // 0644 or 0755 whatever the umask of the run that fills the cache: an install takes its files' modes from
    // its own umask (linker.hpp), and a hardlink shares these.
    const mode_t mode = exec ? 0755 : 0644;
    util::Fd fd = root.open(target, O_WRONLY | O_CREAT | O_EXCL, mode);
    if (!fd) refuse(wheel, "cannot create " + target.string() + ": " + util::describe_open_error(errno));
    if (::fchmod(fd.get(), mode) != 0)
      refuse(wheel, "cannot set the mode of " + target.string() + ": " + std::strerror(errno));
    util::Hasher hasher;
    const void* block;
    size_t size;
    la_int64_t offset;
    std::uint64_t written = 0;
    for (;;) {
      int rb = archive_read_data_block(ar.a, &block, &size, &offset);
      if (rb == ARCHIVE_EOF) break;
      if (rb != ARCHIVE_OK) refuse(wheel, "corrupt entry '" + name + "': " + archive_error(ar.a));
      // Sparse gaps do not occur in zips; treat as corruption.
      if (static_cast<std::uint64_t>(offset) != written) refuse(wheel, "unexpected gap in entry '" + name + "'");
      // The declared sizes were judged; an entry holding more lies about them.
      if (h.size && written + size > *h.size)
        refuse(wheel,
               "entry '" + name + "' holds more than its declared " + std::to_string(*h.size) + " bytes; refused");
      const std::uint64_t so_far = total += size;
      if (so_far > limits.max_total_bytes)
        refuse(wheel,
               "unpacks to more than " + util::format_size(limits.max_total_bytes) + " (at '" + name + "'); refused");
      check_ratio(wheel, so_far, limits);
      hasher.update(block, size);
      if (int e = util::write_all(fd.get(), block, size); e != 0)
        refuse(wheel, "cannot write " + target.string() + ": " + std::strerror(e));
      written += size;
    }
    if (written) ::sync_file_range(fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
    files[index - 1] = UnpackedFile{h.clean, record_hash(hasher.raw_digest()), written, exec};
  }
  if (index < end)
    refuse(wheel, r == ARCHIVE_EOF ? std::string("entries differ between two reads of the archive")
                                   : "corrupt zip: " + archive_error(ar.a));
}

// Parts in archive order: a member of `part_bytes` or more is a part of its own (torch's and the CUDA
// libraries' largest files are single members of up to a GB, one stream of inflate, hash and write each);
// smaller members are grouped until a part holds `part_bytes`. The bounds of each part.
std::vector<std::size_t> part_bounds(const std::vector<EntryHeader>& headers, std::uint64_t part_bytes) {
  part_bytes = std::max<std::uint64_t>(part_bytes, 1);
  std::vector<std::size_t> bounds{0};
  std::uint64_t open_part = 0;  // declared bytes of the part being grouped
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const std::uint64_t size = headers[i].size.value_or(0);
    if (size >= part_bytes) {
      if (bounds.back() != i) bounds.push_back(i);  // the group before it ends here
      bounds.push_back(i + 1);
      open_part = 0;
      continue;
    }
    open_part += size;
    if (open_part >= part_bytes) {
      bounds.push_back(i + 1);
      open_part = 0;
    }
  }
  if (bounds.back() != headers.size()) bounds.push_back(headers.size());
  return bounds;
}

// A file just unpacked, hashed again with the algorithm its RECORD row names (the unpack hashed sha256 while
// writing; a row may name any algorithm record_hash_algorithm allows).
std::string rehash(const util::Root& root, const fs::path& file, const std::string& algorithm) {
  util::Fd fd = root.open_regular(file, O_RDONLY);
  if (!fd) return "(unreadable: " + util::describe_open_error(errno) + ")";
  return record_hash_of_fd(fd.get(), file.string(), algorithm);
}

}  // namespace

struct WheelUnpack::State {
  fs::path wheel, dest;
  UnpackLimits limits;
  std::vector<EntryHeader> headers;
  util::Root root;  // nothing is written through a link, should one appear in dest meanwhile
  std::vector<std::size_t> bounds;
  std::vector<std::optional<UnpackedFile>> files;
  std::atomic<std::uint64_t> total{0};
  State(const fs::path& w, const fs::path& d, const UnpackLimits& l)
      : wheel(w), dest(d), limits(l), headers(read_headers(w, l)), root(d) {}
};

WheelUnpack::WheelUnpack(const fs::path& wheel, const fs::path& dest, const UnpackLimits& limits)
    : state_(std::make_unique<State>(wheel, dest, limits)) {
  State& st = *state_;
  // Every directory first, so that the parts only create files.
  std::unordered_set<std::string> made_dirs;
  for (const auto& h : st.headers) {
    const fs::path dir = h.is_dir ? dest / h.clean : (dest / h.clean).parent_path();
    if (made_dirs.insert(dir.string()).second) st.root.make_dirs(dir);
  }
  st.bounds = part_bounds(st.headers, limits.part_bytes);
  st.files.resize(st.headers.size());
}

WheelUnpack::~WheelUnpack() = default;

std::size_t WheelUnpack::parts() const { return state_->bounds.size() - 1; }

std::uint64_t WheelUnpack::part_size(std::size_t part) const {
  std::uint64_t bytes = 0;
  for (std::size_t i = state_->bounds[part]; i < state_->bounds[part + 1]; ++i)
    bytes += state_->headers[i].size.value_or(0);
  return bytes;
}

void WheelUnpack::run_part(std::size_t part) {
  State& st = *state_;
  extract_part(st.wheel, st.dest, st.root, st.headers, st.bounds[part], st.bounds[part + 1], st.limits, st.total,
               st.files);
}

UnpackedWheel WheelUnpack::finish() {
  State& st = *state_;
  const fs::path& wheel = st.wheel;
  const fs::path& dest = st.dest;
  const util::Root& root = st.root;
  UnpackedWheel out;
  for (auto& f : st.files)
    if (f) out.files.push_back(std::move(*f));
  st.files.clear();

  // The one top-level .dist-info directory (read_headers refused a second), holding RECORD.
  for (auto& f : out.files) {
    auto slash = f.path.find('/');
    if (slash == std::string::npos) continue;
    auto top = f.path.substr(0, slash);
    if (top.size() > 10 && top.substr(top.size() - 10) == ".dist-info" && f.path == top + "/RECORD")
      out.dist_info = top;
  }
  if (out.dist_info.empty()) refuse(wheel, "no .dist-info/RECORD inside; not a wheel");

  // Every file against RECORD (RECORD and its signatures excepted), and every
  // RECORD row must exist.
  const std::string record_name = out.dist_info + "/RECORD";
  auto rows = parse_record(root.read(dest / record_name, util::kReadFileMax),
                           wheel.filename().string() + ":" + record_name);
  std::unordered_map<std::string, const RecordRow*> by_path;
  for (auto& row : rows) by_path.emplace(row.path, &row);
  std::unordered_set<std::string> files_seen;
  for (auto& f : out.files) {
    files_seen.insert(f.path);
    if (f.path == record_name || f.path == record_name + ".jws" || f.path == record_name + ".p7s") continue;
    auto it = by_path.find(f.path);
    if (it == by_path.end()) {
      out.record_problems.push_back(f.path + ": not listed in RECORD");
      continue;
    }
    const RecordRow& row = *it->second;
    const auto algorithm = record_hash_algorithm(row.hash);
    if (row.hash.empty()) {
      out.record_problems.push_back(f.path + ": no hash in RECORD");
    } else if (!algorithm.allowed) {
      out.record_problems.push_back(f.path + ": RECORD's hash '" + row.hash.substr(0, 80) + "': " + algorithm.refusal);
    } else if (const std::string actual = algorithm.name == "sha256" ? f.hash
                                                                     : rehash(root, dest / f.path, algorithm.name);
               row.hash != actual) {
      out.record_problems.push_back(f.path + ": hash " + actual + " does not match RECORD's " + row.hash);
    } else if (!row.size.empty() && row.size != std::to_string(f.size)) {
      out.record_problems.push_back(f.path + ": size " + std::to_string(f.size) + " does not match RECORD's " +
                                    row.size);
    }
  }
  for (auto& row : rows)
    if (!files_seen.count(row.path) && !row.hash.empty())
      out.record_problems.push_back(row.path + ": listed in RECORD but not in the wheel");
  return out;
}

void run_parts(const std::vector<WheelUnpack*>& unpacks, unsigned threads) {
  struct Part {
    WheelUnpack* unpack;
    std::size_t part;
    std::uint64_t bytes;
  };
  std::vector<Part> parts;
  for (WheelUnpack* u : unpacks)
    for (std::size_t p = 0; p < u->parts(); ++p) parts.push_back({u, p, u->part_size(p)});
  std::stable_sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.bytes > b.bytes; });
  util::parallel_for(parts.size(), threads, [&](std::size_t i) { parts[i].unpack->run_part(parts[i].part); });
}

UnpackedWheel unpack_wheel(const fs::path& wheel, const fs::path& dest, const UnpackLimits& limits) {
  WheelUnpack unpack(wheel, dest, limits);
  run_parts({&unpack}, util::cpu_jobs());
  return unpack.finish();
}

std::string read_zip_member(const fs::path& zip, const std::string& name) {
  ReadArchive ar;
  open_zip(ar, zip);
  archive_entry* entry = nullptr;
  while (archive_read_next_header(ar.a, &entry) == ARCHIVE_OK) {
    if (entry_name(entry) != name) continue;
    std::string out;
    char buf[65536];
    for (;;) {
      auto n = archive_read_data(ar.a, buf, sizeof buf);
      if (n < 0) refuse(zip, "corrupt entry '" + name + "'");
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
  refuse(zip, "no member '" + name + "'");
}

std::optional<WheelRecord> read_wheel_record(const fs::path& wheel, std::size_t max_bytes) {
  constexpr std::string_view kSuffix = ".dist-info/RECORD";
  ReadArchive ar;
  open_zip(ar, wheel);
  std::optional<WheelRecord> found;
  archive_entry* entry = nullptr;
  int rc;
  while ((rc = archive_read_next_header(ar.a, &entry)) == ARCHIVE_OK) {
    std::string name = entry_name(entry);
    if (name.size() <= kSuffix.size() || name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0 ||
        name.find('/') != name.size() - std::string_view("/RECORD").size())
      continue;
    if (found) return std::nullopt;  // two .dist-info directories with a RECORD: which one is the wheel's is unclear
    WheelRecord r;
    r.dist_info = name.substr(0, name.size() - std::string_view("/RECORD").size());
    char buf[65536];
    for (;;) {
      auto n = archive_read_data(ar.a, buf, sizeof buf);
      if (n < 0) refuse(wheel, "corrupt entry '" + name + "'");
      if (n == 0) break;
      if (r.text.size() + static_cast<std::size_t>(n) > max_bytes)
        refuse(wheel, name + " is over " + std::to_string(max_bytes) + " bytes");
      r.text.append(buf, static_cast<std::size_t>(n));
    }
    found = std::move(r);
  }
  if (rc != ARCHIVE_EOF) refuse(wheel, std::string("cannot read as a zip: ") + archive_error(ar.a));
  return found;
}

namespace {
// The zip of pack_wheel, written to `fd` (`out` names the wheel in errors).
void write_wheel_zip(int zip_fd, const fs::path& out, const std::vector<PackEntry>& entries,
                     const std::string& record_name) {
  const Utf8Names names;  // entry names are UTF-8 whatever the locale
  std::unique_ptr<archive, int (*)(archive*)> a(archive_write_new(), archive_write_free);
  archive_write_set_format_zip(a.get());
  archive_write_zip_set_compression_deflate(a.get());
  if (archive_write_open_fd(a.get(), zip_fd) != ARCHIVE_OK)
    throw Error(ExitCode::check_failed, out.string() + ": cannot write: " + archive_error(a.get()));
  std::vector<char> buf(1 << 20);
  std::vector<RecordRow> rows;
  auto add = [&](const std::string& name, const std::string& content, const util::Fd& fd, std::uint64_t size,
                 bool executable) {
    const ThreadLocale raw(locale_for_name(name));
    std::unique_ptr<archive_entry, void (*)(archive_entry*)> ae(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname_utf8(ae.get(), name.c_str());
    archive_entry_set_filetype(ae.get(), AE_IFREG);
    archive_entry_set_perm(ae.get(), executable ? 0755 : 0644);
    archive_entry_set_mtime(ae.get(), 315532800, 0);  // 1980-01-01: reproducible wheels
    archive_entry_set_size(ae.get(), static_cast<la_int64_t>(size));
    if (archive_write_header(a.get(), ae.get()) != ARCHIVE_OK)
      throw Error(ExitCode::check_failed, out.string() + ": cannot add " + name + ": " + archive_error(a.get()));
    util::Hasher h;
    std::uint64_t packed = 0;
    auto write = [&](const char* data, std::size_t n) {
      h.update(data, n);
      packed += n;
      archive_write_data(a.get(), data, n);
    };
    if (fd) util::read_blocks(fd.get(), buf, write, name);
    else if (!content.empty()) write(content.data(), content.size());
    if (packed != size)
      throw Error(ExitCode::check_failed, out.string() + ": " + name + " changed size while it was packed (" +
                                              std::to_string(size) + " bytes, then " + std::to_string(packed) + ")");
    rows.push_back({name, record_hash(h.raw_digest()), std::to_string(packed)});
  };
  for (const auto& e : entries) {
    if (e.source.empty()) {
      add(e.name, e.content, util::Fd(), e.content.size(), e.executable);
      continue;
    }
    util::Fd fd = e.below.empty() ? util::open_regular(e.source) : util::Root(e.below).open_regular(e.source, O_RDONLY);
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0)
      throw Error(ExitCode::check_failed, e.source.string() + ": cannot read: " + util::describe_open_error(errno));
    add(e.name, {}, fd, static_cast<std::uint64_t>(st.st_size), e.executable);
  }
  if (!record_name.empty()) {
    rows.push_back({record_name, "", ""});
    const std::string record = format_record(rows);
    add(record_name, record, util::Fd(), record.size(), false);
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK)
    throw Error(ExitCode::check_failed, out.string() + ": cannot finish zip: " + archive_error(a.get()));
}
}  // namespace

void pack_wheel(const fs::path& out, const std::vector<PackEntry>& entries, const std::string& record_name) {
  fs::create_directories(out.parent_path());
  pack_wheel(util::Root(out.parent_path()), out, entries, record_name);
}

void pack_wheel(const util::Root& root, const fs::path& out, const std::vector<PackEntry>& entries,
                const std::string& record_name) {
  const auto tmp = util::temp_path_beside(out);
  root.parent(out, true);
  util::Fd fd = root.open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (!fd) throw Error(ExitCode::check_failed, tmp.string() + ": cannot create: " + util::describe_open_error(errno));
  try {
    write_wheel_zip(fd.get(), out, entries, record_name);
    if (::fsync(fd.get()) != 0)
      throw Error(ExitCode::check_failed, tmp.string() + ": cannot write: " + std::strerror(errno));
    root.rename(tmp, out);
  } catch (...) {
    root.remove(tmp);
    throw;
  }
}

}  // namespace provkit::wheels
