// hf-fetch manifest create REPO[@REV]: pin a revision to its commit and write
// a manifest of the tree's files (hub::pin_tree_files).
#include <iostream>

#include "commands.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/hash.hpp"
#include "provkit/hub/snapshot.hpp"

namespace hffetch {

using namespace provkit;

int run_manifest_create(const CreateArgs& a, Output& out) {
  hub::Manifest m;
  std::string revision = "main";
  auto at = a.repo.find('@');
  m.repo.id = a.repo.substr(0, at);
  if (at != std::string::npos) revision = a.repo.substr(at + 1);
  if (!hub::is_valid_repo_id(m.repo.id) || revision.empty())
    throw Error(ExitCode::usage, "'" + a.repo + "' is not REPO[@REVISION] (e.g. org/name@main)");
  auto type = hub::parse_repo_type(a.type);
  if (!type) throw Error(ExitCode::usage, "--type must be model, dataset or space");
  m.repo.type = *type;

  http::Options ho;
  ho.retry.tries = a.common.retries;
  ho.stall_timeout_s = a.common.stall_timeout_s;
  hub::HubClient client(hub::endpoint_from(a.common.endpoint), hub::find_token(a.common.token_file).value, ho);
  m.revision = client.resolve_commit(m.repo, revision);
  out.note("revision " + revision + " of " + m.repo.id + " is commit " + m.revision);

  m.files = hub::pin_tree_files(
      client.list_tree(m.repo, m.revision), a.include, a.exclude,
      [&](const hub::TreeEntry& e) { return client.download_small(m.repo, m.revision, e.path); },
      [&](const hub::ManifestFile& f, const hub::TreeEntry& e) {
        out.event("file", "ADDED", f.path, std::to_string(f.size) + " bytes", false,
                  {{"size", f.size}, {"sha256", *f.sha256}, {"lfs", e.lfs.has_value()}});
      });
  if (m.files.empty())
    throw Error(ExitCode::usage, "no file of " + m.repo.id + " at " + m.revision + " matches the --include/--exclude patterns");

  // --assemble OUTPUT=PART,PART,...[:SHA256]: the size is the parts' sum.
  for (std::string spec : a.assemble) {
    std::optional<std::string> sha;
    if (auto colon = spec.rfind(':'); colon != std::string::npos && util::is_hex(spec.substr(colon + 1), 64)) {
      sha = spec.substr(colon + 1);
      spec.resize(colon);
    }
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(ExitCode::usage, "--assemble '" + spec + "' is not OUTPUT=PART,PART,...");
    hub::AssembleEntry e;
    e.output = spec.substr(0, eq);
    std::uint64_t size = 0;
    std::string rest = spec.substr(eq + 1);
    for (std::size_t pos = 0; pos <= rest.size();) {
      auto comma = rest.find(',', pos);
      std::string part = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      const hub::ManifestFile* f = m.find(part);
      if (!f) throw Error(ExitCode::usage, "--assemble: part '" + part + "' is not one of the manifest's files");
      size += f->size;
      e.parts.push_back(part);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    e.size = size;
    e.sha256 = sha;
    m.assemble.push_back(std::move(e));
  }

  std::string yaml = m.to_yaml();
  hub::Manifest::parse(yaml, "(generated manifest)");  // what we write must read back
  if (a.output.empty()) {
    std::cout << yaml << std::flush;
  } else {
    util::write_file_atomic(a.output, yaml);
    out.note("wrote " + a.output + " (" + std::to_string(m.files.size()) + " files)");
  }
  return 0;
}

}  // namespace hffetch
