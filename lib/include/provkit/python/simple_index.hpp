#pragma once
// PEP 503 (HTML) and PEP 691 (JSON) simple repository pages, and wheel
// downloads into the cache checked while they stream.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "provkit/python/env_create.hpp"
#include "provkit/python/wheel_cache.hpp"

namespace provkit::python {

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
std::string download_unhashed_wheel(const std::string& url, WheelCache& cache);

// Downloads `url` into the cache as wheels/<sha256>.whl through the download
// engine (resumed, ranged, size and hash checked before the rename; a size
// nothing stated is learned from the server first); returns the path.
fs::path download_wheel(const std::string& url, const std::string& sha256, std::optional<std::uint64_t> size,
                        WheelCache& cache);

}  // namespace provkit::python
