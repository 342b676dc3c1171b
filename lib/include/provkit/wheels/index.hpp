#pragma once
// PEP 503 (HTML) and PEP 691 (JSON) simple repository pages, and wheel
// downloads into the cache checked while they stream.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "provkit/download/downloader.hpp"
#include "provkit/pyspec/wheel_name.hpp"
#include "provkit/wheels/cache.hpp"

namespace provkit::wheels {

// A wheel that could satisfy a lock entry.
struct WheelCandidate {
  pyspec::WheelName wheel;
  fs::path local;      // a file here, or
  std::string url;     // a URL to download
  std::string sha256;  // when the source states it (index fragment, pylock)
  std::optional<std::uint64_t> size;
  // The sha256 of the file's bytes, when read (a local file hashed, an index file without a stated hash
  // downloaded once); empty when not known.
  std::string hashed;
};

// Wheels a simple index offers for `project` ({index}/{normalized}/).
std::vector<WheelCandidate> simple_index_wheels(const std::string& index_url, const std::string& project);

// Parses a project page (HTML anchors with #sha256= fragments, or the JSON
// form); relative hrefs are resolved against `page_url`.
std::vector<WheelCandidate> parse_simple_page(const std::string& body, const std::string& content_type,
                                              const std::string& page_url);

// A wheel offered without a hash (an index page without #sha256= fragments):
// downloaded once into the cache, then known by its sha256, which is returned.
// HTTP refusals are Error(auth) (401/403) or Error(check_failed) (404/410),
// transport failures after retries Error(network), a wrong size
// Error(check_failed) with nothing of it kept.
// `observer` hears the download's events (start, progress, retries, finish), as hf-fetch's display does.
std::string download_unhashed_wheel(const std::string& url, WheelCache& cache, download::Observer& observer);

// Downloads `url` into the cache as wheels/<sha256>.whl through the download
// engine (resumed, ranged, size and hash checked before the rename; a size
// nothing stated is learned from the server first); returns the path.
fs::path download_wheel(const std::string& url, const std::string& sha256, std::optional<std::uint64_t> size,
                        WheelCache& cache, download::Observer& observer);

}  // namespace provkit::wheels
