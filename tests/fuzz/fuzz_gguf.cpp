// libFuzzer target: a GGUF file's header (provkit::checkpoint::parse_gguf through
// read_header, small first read so the "need more bytes" path runs). Any input
// parses or is refused with provkit::Error(usage); absurd counts and string lengths
// are refused before any allocation (the run's -rss_limit_mb catches one that is not);
// what parses lies inside the file with no two tensors overlapping.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "checkpoint/gguf.hpp"
#include "provkit/checkpoint/report.hpp"
#include "provkit/error.hpp"

using namespace provkit::checkpoint;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file(reinterpret_cast<const char*>(data), size);
  try {
    FileHeader h = read_header(
        "f.gguf", Format::gguf, file.size(),
        [&](std::uint64_t at, std::uint64_t n) {
          if (at + n > file.size()) std::abort();
          return file.substr(at, n);
        },
        nullptr, 64);
    if (h.header_bytes > file.size()) std::abort();
    for (const auto& t : h.tensors) {
      auto type = ggml_type(0);
      (void)type;
      if (t.offset < h.header_bytes || t.offset + t.bytes > file.size()) std::abort();
    }
    std::vector<FileHeader> files{h};
    (void)dump(make_report(files, {}, std::nullopt).to_json());
  } catch (const provkit::Error& e) {
    if (e.code() != provkit::ExitCode::usage) std::abort();
  }
  return 0;
}
