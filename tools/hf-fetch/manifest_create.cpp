// hf-fetch manifest create REPO[@REV]: pin a revision to its commit and write
// a manifest of the tree's files (hub::pin_tree_files).
#include <iostream>

#include "commands.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/text.hpp"

namespace hffetch {

using namespace provkit;

int run_manifest_create(const CreateArgs& a, Output& out) {
  hub::Manifest m;
  auto [id, revision] = hub::parse_repo_revision(a.repo);
  m.repo.id = id;
  auto type = hub::parse_repo_type(a.type);
  if (!type) throw Error(ExitCode::usage, "--type must be model, dataset or space");
  m.repo.type = *type;

  hub::HubClient client(hub::endpoint_from(a.common.endpoint), hub::find_token(a.common.token_file), a.common.http());
  m.revision = client.resolve_commit(m.repo, revision);
  m.ref = hub::ref_for_revision(revision, m.revision);  // refs/<name> is written for it, as huggingface_hub does
  out.note("revision " + revision + " of " + m.repo.id + " is commit " + m.revision);

  m.files = hub::pin_tree_files(
      client.list_tree(m.repo, m.revision), a.include, a.exclude,
      [&](const hub::TreeEntry& e) { return client.download_small(m.repo, m.revision, e.path); },
      [&](const hub::ManifestFile& f, const hub::TreeEntry& e) {
        out.event("file", "ADDED", f.path, std::to_string(f.size) + " bytes", false,
                  {{"size", f.size}, {"sha256", *f.sha256}, {"lfs", e.lfs.has_value()}});
      });
  if (m.files.empty())
    throw Error(ExitCode::usage,
                "no file of " + m.repo.id + " at " + m.revision + " matches the --include/--exclude patterns");
  try {
    auto repo_sums = [&] { return client.download_small(m.repo, m.revision, "SHA256SUMS"); };
    for (const auto& spec : a.assemble) m.assemble.push_back(hub::parse_assembly(m, spec, repo_sums));
  } catch (const hub::AssemblySpecError& e) {
    throw Error(e.code(), (e.part ? "--assemble: " : "--assemble ") + std::string(e.what()));
  }

  std::string yaml = m.to_yaml();
  hub::Manifest::parse(yaml, "(generated manifest)");  // what we write must read back
  if (a.output.empty()) {
    std::cout << yaml << std::flush;
  } else {
    util::write_file_atomic(a.output, yaml);
  }
  // Plain output to stdout is quiet here (the manifest is the output), so only -o FILE shows the sentence.
  out.summary(0, std::nullopt,
              {{"repo", m.repo.id}, {"revision", m.revision}, {"files", m.files.size()}, {"output", a.output}},
              "wrote " + util::printable(a.output) + " (" + std::to_string(m.files.size()) + " files)", false);
  return 0;
}

}  // namespace hffetch
