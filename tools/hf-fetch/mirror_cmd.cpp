// hf-fetch mirror export --manifest M... --to DIR [--cache-dir C]
#include "mirror_cmd.hpp"

#include "provkit/hub/cache_layout.hpp"
#include "provkit/hub/mirror.hpp"

namespace hffetch {

void add_mirror_command(CLI::App& app, MirrorArgs& a) {
  auto* mirror = app.add_subcommand("mirror", "serve pinned commits to other nodes from one nginx");
  mirror->require_subcommand(1);
  a.export_cmd = mirror->add_subcommand(
      "export", "write a static Hub tree (and its nginx configuration) for the manifests' files from a verified cache");
  a.export_cmd->add_option("--to", a.to, "the directory to write (absent, empty, or an earlier export)")->required();
}

int run_mirror_export(const MirrorArgs& a, Output& out) {
  std::vector<provkit::hub::Manifest> manifests;
  for (const auto& m : a.manifests) manifests.push_back(provkit::hub::Manifest::load(m));
  auto cache = a.cache_dir.empty() ? provkit::hub::hfcache::default_hub_cache() : std::filesystem::path(a.cache_dir);
  auto r = provkit::hub::mirror::export_tree(manifests, cache, a.to);
  for (const auto& f : r.files)
    out.event("export", "OK", f.path, std::string(f.linked ? "linked" : "copied") + " and verified", false,
              {{"repo", f.repo}, {"commit", f.commit}, {"size", f.size}, {"sha256", f.sha256}, {"lfs", f.lfs}});
  out.summary({{"mode", "mirror-export"}, {"files", r.files.size()}, {"bytes", r.bytes}, {"linked", r.linked},
               {"copied", r.copied}, {"root", r.root.string()}, {"nginx_conf", r.nginx_conf.string()},
               {"exit_code", 0}},
              "exported " + std::to_string(r.files.size()) + " verified files (" + human_bytes(r.bytes) + ", " +
                  std::to_string(r.linked) + " hard-linked, " + std::to_string(r.copied) + " copied) to " +
                  r.root.string() + "; serve it with: server { listen PORT; include " + r.nginx_conf.string() + "; }",
              false);
  return 0;
}

}  // namespace hffetch
