// hf-fetch manifest create REPO[@REV]: pin a revision to its commit and write
// a manifest of the tree's files (hub::pin_from_tree, as --save-manifest).
#include <iostream>

#include "commands.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/text.hpp"

namespace hffetch {

using namespace provkit;

void add_assemblies(hub::Manifest& m, const std::vector<std::string>& specs, hub::HubClient& client) {
  try {
    auto repo_sums = [&] { return client.download_small(m.repo, m.revision, "SHA256SUMS"); };
    for (const auto& spec : specs) m.assemble.push_back(hub::parse_assembly(m, spec, repo_sums));
  } catch (const hub::AssemblySpecError& e) {
    throw Error(e, (e.part ? "--assemble: " : "--assemble ") + std::string(e.what()));
  }
}

int run_manifest_create(const CreateArgs& a, Output& out) {
  auto [id, revision] = hub::parse_repo_revision(a.repo);
  auto type = hub::parse_repo_type(a.type);
  if (!type) throw Error(ExitCode::usage, "--type must be model, dataset or space");

  hub::HubClient client(hub::endpoint_from(a.common.endpoint), hub::find_token(a.common.token_file), a.common.http());
  std::vector<hub::TreeEntry> tree;
  // Pinned as --save-manifest pins (every file by sha256); refs/<name> is written for a name, as
  // huggingface_hub does.
  hub::Manifest m =
      hub::pin_from_tree(client, {*type, id}, revision, a.include, a.exclude, tree, hub::Pin::content,
                         [&](const hub::ManifestFile& f, const hub::TreeEntry& e) {
                           out.event("file", "ADDED", f.path, std::to_string(f.size) + " bytes", false,
                                     {{"size", f.size}, {"sha256", *f.sha256}, {"lfs", e.lfs.has_value()}});
                         });
  out.note("revision " + revision + " of " + m.repo.id + " is commit " + m.revision);
  if (m.files.empty())
    throw Error(ExitCode::usage,
                "no file of " + m.repo.id + " at " + m.revision + " matches the --include/--exclude patterns");
  add_assemblies(m, a.assemble, client);

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
