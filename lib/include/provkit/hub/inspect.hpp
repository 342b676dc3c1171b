#pragma once
// hf-fetch inspect's reading: a checkpoint's safetensors and GGUF headers and
// its small JSON sidecars (config.json, hf_quant_config.json, the
// safetensors index), from the Hub by Range requests (the HTTP client's
// redirects, token rule, retries and pacing; never a byte of tensor data
// beyond the header's first read) or from paths on disk, then the
// checkpoint::Report.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "provkit/checkpoint/report.hpp"
#include "provkit/hub/client.hpp"
#include "provkit/hub/manifest.hpp"

namespace provkit::hub {

struct InspectOptions {
  std::vector<std::string> include, exclude;  // patterns (hub/patterns.hpp), as manifest create's
  unsigned jobs = 8;                          // files read at once
  // Header bytes held at once by all jobs together (util::ByteBudget): sixteen jobs on 100 MB headers would
  // otherwise hold 1.6 GB of buffers before the first is parsed.
  std::uint64_t header_budget = 256ull << 20;
  std::optional<checkpoint::FitRequest> fit;
};

// A file to read: its path in the checkpoint and its size.
struct InspectFile {
  std::string path;
  std::uint64_t size = 0;
};

// `revision` resolved to its commit, its tree listed, then as inspect_files.
checkpoint::Report inspect_repo(HubClient& client, const Repo& repo, const std::string& revision,
                                const InspectOptions& options);
// The manifest's repo at its commit, its files (sizes from the manifest); an
// `assemble` output that is a checkpoint file is read from its parts.
checkpoint::Report inspect_manifest(HubClient& client, const Manifest& manifest, const InspectOptions& options);
// The checkpoint and sidecar files among `files`, at `commit`; every other
// file is listed in the report's not_read, with why.
checkpoint::Report inspect_files(HubClient& client, const Repo& repo, const std::string& commit,
                                 const std::vector<InspectFile>& files, const InspectOptions& options,
                                 const std::vector<AssembleEntry>& assemble = {});

// Paths on disk: a directory (a snapshot, a plain tree, or an hf cache's
// repository folder "models--org--name", whose refs/main or only snapshot is
// read), or single files. Error(usage) for a path that is none of these.
checkpoint::Report inspect_paths(const std::vector<std::filesystem::path>& paths, const InspectOptions& options);

}  // namespace provkit::hub
