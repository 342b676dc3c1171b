// hf-fetch mirror export --manifest M... --to DIR [--cache-dir C]: the fleet mirror (hub/mirror.hpp).
#include "commands.hpp"
#include "provkit/hub/mirror.hpp"
#include "provkit/util/text.hpp"

namespace hffetch {

void add_mirror_command(CLI::App& app, MirrorArgs& a) {
  auto* mirror = app.add_subcommand("mirror", "serve pinned commits to other nodes from one nginx");
  mirror->require_subcommand(1);
  a.export_cmd = mirror->add_subcommand(
      "export", "write a static Hub tree (and its nginx configuration) for the manifests' files from a verified cache");
  a.export_cmd->add_option("--to", a.to, "the directory to write (absent, empty, or an earlier export)")->required();
}

int run_mirror_export(const MirrorArgs& a, Output& out) {
  SignalWatch watch(out, Output::Stopped::mirror_export, 0);
  std::vector<hub::Manifest> manifests;
  for (const auto& m : a.manifests) manifests.push_back(hub::Manifest::load(m));
  auto r = hub::mirror::export_tree(manifests,
                                    a.cache_dir.empty() ? hub::hfcache::default_hub_cache()
                                                        : hub::fs::path(a.cache_dir),
                                    a.to);
  for (const auto& f : r.files)
    out.event("export", "OK", f.path, std::string(f.linked ? "linked" : "copied") + " and verified", false,
              hub::mirror::to_json(f));
  out.summary(0, std::nullopt, hub::mirror::to_json(r),
              "exported " + std::to_string(r.files.size()) + " verified files (" + human_bytes(r.bytes) + ", " +
                  std::to_string(r.linked) + " hard-linked, " + std::to_string(r.copied) + " copied) to " +
                  provkit::util::printable(r.root.string()) + "; serve it with: server { listen PORT; include " +
                  provkit::util::printable(r.nginx_conf.string()) + "; }",
              false);
  return 0;
}

}  // namespace hffetch
