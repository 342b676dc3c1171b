#include "provkit/checkpoint/header.hpp"

#include <algorithm>

#include "gguf.hpp"
#include "provkit/error.hpp"
#include "provkit/util/beneath.hpp"
#include "provkit/util/fd.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"
#include "safetensors.hpp"

namespace provkit::checkpoint {

std::optional<std::pair<const Tensor*, const Tensor*>> first_overlap(const std::vector<Tensor>& tensors) {
  std::vector<const Tensor*> by_offset;
  for (const auto& t : tensors)
    if (t.bytes) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->offset < by_offset[i - 1]->offset + by_offset[i - 1]->bytes)
      return std::pair{by_offset[i - 1], by_offset[i]};
  return std::nullopt;
}

std::string format_name(Format f) { return f == Format::gguf ? "gguf" : "safetensors"; }

std::string_view reason_name(HeaderRefusal) { return reason_name(Reason::invalid_input); }
ExitCode exit_code(HeaderRefusal) { return ExitCode::usage; }

bool is_gguf_split_name(std::string_view path) {
  // "-%05d-of-%05d.gguf", as llama.cpp's llama_split_path writes it (wider numbers past 99999 parts).
  auto digits = [](std::string_view s) {
    return s.size() >= 5 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!path.ends_with(".gguf")) return false;
  path.remove_suffix(5);
  auto of = path.rfind("-of-");
  if (of == std::string_view::npos || !digits(path.substr(of + 4))) return false;
  auto dash = path.rfind('-', of - 1);
  return of > 0 && dash != std::string_view::npos && digits(path.substr(dash + 1, of - dash - 1));
}

bool is_checkpoint_name(std::string_view path, Format* format) {
  auto ends = [&](std::string_view s) { return path.size() > s.size() && path.substr(path.size() - s.size()) == s; };
  Format f;
  if (ends(".safetensors")) f = Format::safetensors;
  else if (ends(".gguf")) f = Format::gguf;
  else return false;
  if (format) *format = f;
  return true;
}

FileHeader read_header(const std::string& path, Format format, std::uint64_t file_size, const ReadAt& read,
                       std::uint64_t* read_bytes, std::uint64_t first_read) {
  std::string have;
  // safetensors: the 8-byte length, then exactly the header (never a byte of tensor data);
  // GGUF has no length up front: a first guess, then more as the parser asks.
  std::uint64_t want = std::min(file_size, format == Format::safetensors ? 8 : first_read);
  for (int round = 0;; ++round) {
    if (want > have.size()) {
      std::string more = read(have.size(), want - have.size());
      if (read_bytes) *read_bytes += more.size();
      if (more.size() != want - have.size())
        throw Error(ExitCode::network, util::printable(path) + ": asked for " + std::to_string(want - have.size()) +
                                           " bytes at " + std::to_string(have.size()) + ", got " +
                                           std::to_string(more.size()));
      have += more;
    }
    ParseResult r = format == Format::gguf ? parse_gguf(have, file_size, path)
                                           : parse_safetensors(have, file_size, path);
    if (auto* h = std::get_if<FileHeader>(&r)) return std::move(*h);
    auto need = std::get<NeedBytes>(r).bytes;
    // Every answer needs more bytes than the last (the parsers guarantee it);
    // GGUF vocabularies are read a few at a time, so ask for at least twice as much.
    if (need <= have.size() || round > 64)
      throw Error(HeaderRefusal::too_large, util::printable(path) + ": the header cannot be read to its end");
    want = format == Format::gguf ? std::max(need, std::min<std::uint64_t>(have.size() * 2, kMaxGgufHeader)) : need;
    want = std::min(file_size, want);
  }
}

}  // namespace provkit::checkpoint

namespace provkit::checkpoint {

namespace fs = std::filesystem;

namespace {

// An hf cache repository folder: its refs/main snapshot, or its only one.
std::optional<fs::path> cache_snapshot(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir / "snapshots", ec) || !fs::is_directory(dir / "blobs", ec)) return std::nullopt;
  if (fs::is_regular_file(dir / "refs" / "main", ec)) {
    std::string commit = util::trim(util::read_file(dir / "refs" / "main", 4096));  // a ref is one commit id
    if (util::is_hex(commit, 40) && fs::is_directory(dir / "snapshots" / commit, ec)) return dir / "snapshots" / commit;
  }
  std::vector<fs::path> snapshots;
  for (const auto& e : fs::directory_iterator(dir / "snapshots", ec))
    if (e.is_directory()) snapshots.push_back(e.path());
  if (snapshots.size() == 1) return snapshots.front();
  throw Error(ExitCode::usage, util::printable(dir.string()) + " holds " + std::to_string(snapshots.size()) +
                                   " snapshots and no refs/main; name one: " +
                                   util::printable((dir / "snapshots").string()) + "/COMMIT");
}

}  // namespace

// Through the file-system boundary's open_regular: a FIFO or a device named as a model (an engine line's -m)
// is refused, never opened for a read that blocks.
std::string read_local(const fs::path& file, std::uint64_t at, std::uint64_t n) {
  util::Fd fd = util::open_regular(file);
  std::string out = fd ? util::read_at(fd.get(), at, static_cast<std::size_t>(n), file.string()) : std::string();
  if (!fd || out.size() != n)
    throw Error(ExitCode::usage, util::printable(file.string()) + ": cannot read " + std::to_string(n) + " bytes at " +
                                     std::to_string(at) + (fd ? "" : ": " + util::describe_open_error(errno)));
  return out;
}

std::vector<LocalFile> list_local(const fs::path& arg) {
  std::vector<LocalFile> files;
  std::error_code ec;
  if (fs::is_directory(arg, ec)) {
    fs::path root = cache_snapshot(arg).value_or(arg);
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->path().filename() == ".cache") {
        it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(ec)) continue;  // follows the cache's links to blobs
      files.push_back(
          {it->path().lexically_relative(root).generic_string(), fs::file_size(it->path(), ec), it->path()});
    }
    if (ec) throw Error(ExitCode::usage, util::printable(root.string()) + ": cannot list: " + ec.message());
  } else if (fs::is_regular_file(arg, ec)) {
    // Single files keep the path given; config.json and hf_quant_config.json are known by name wherever they are.
    std::string name = arg.filename().string();
    std::string key = name == "config.json" || name == "hf_quant_config.json" ? name : arg.generic_string();
    files.push_back({key, fs::file_size(arg, ec), arg});
  } else {
    throw Error(ExitCode::usage, util::printable(arg.string()) + ": no such file or directory");
  }
  return files;
}

FileHeader read_local_header(const LocalFile& file, Format format) {
  return read_header(file.path, format, file.size,
                     [&](std::uint64_t at, std::uint64_t n) { return read_local(file.where, at, n); });
}

}  // namespace provkit::checkpoint
