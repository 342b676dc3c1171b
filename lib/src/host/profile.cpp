// envcheck profiles: a YAML mapping whose keys are envcheck's options
// (schema in docs/envcheck.md). Every mistake is reported as FILE:LINE.
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>

#include "provkit/error.hpp"
#include "provkit/host/envcheck.hpp"
#include "provkit/util/fs.hpp"
#include "provkit/util/strings.hpp"
#include "provkit/util/text.hpp"
#include "provkit/util/yaml.hpp"

namespace provkit::host {

namespace {

// No lambda captures a structured binding: clang before 16 (the fuzz build) refuses them.
class ProfileReader {
 public:
  ProfileReader(const std::string& file, Request& into) : file_(file), r_(into) {}

  void read(std::string_view text) {
    YAML::Node root = util::load_single_yaml_document(text, file_);
    if (!root.IsMap())
      throw input_error(file_, line(root), "a profile is a mapping of check names to values (see docs/envcheck.md)");
    std::map<std::string, std::function<void(const YAML::Node&)>> keys = {
        {"envcheck",
         [&](const YAML::Node& n) {
           if (scalar(n, "envcheck") != "1") throw input_error(file_, line(n), "this envcheck reads profile version 1");
         }},
        {"description", [&](const YAML::Node& n) { scalar(n, "description"); }},
        {"cuda", [&](const YAML::Node& n) { at(n, "cuda", [&] { set_cuda(r_, scalar(n, "cuda")); }); }},
        {"strict", [&](const YAML::Node& n) { r_.strict = boolean(n, "strict"); }},
        {"gpus",
         [&](const YAML::Node& n) {
           for (const auto& s : list(n, "gpus")) r_.gpus.push_back(s.first);
         }},
        {"need",
         [&](const YAML::Node& n) {
           for (const auto& item : list(n, "need")) at(item.second, "need", [&] { add_need(r_, item.first); });
         }},
        {"min_cc", [&](const YAML::Node& n) { at(n, "min_cc", [&] { set_min_cc(r_, scalar(n, "min_cc")); }); }},
        {"arch_list",
         [&](const YAML::Node& n) {
           std::string joined;
           for (const auto& [v, l] : list(n, "arch_list")) joined += v + ",";
           at(n, "arch_list", [&] { set_arch_list(r_, joined); });
         }},
        {"vram_free",
         [&](const YAML::Node& n) { at(n, "vram_free", [&] { set_vram_free(r_, scalar(n, "vram_free")); }); }},
        {"cc", [&](const YAML::Node& n) { r_.cc = boolean(n, "cc"); }},
        {"nvcc", [&](const YAML::Node& n) { r_.nvcc = boolean(n, "nvcc"); }},
        {"python",
         [&](const YAML::Node& n) {
           auto v = scalar(n, "python");
           if (v == "true") r_.python = "";
           else if (v != "false") at(n, "python", [&] { set_python(r_, v); });
         }},
        {"libs",
         [&](const YAML::Node& n) {
           for (const auto& s : list(n, "libs")) r_.libs.push_back(s.first);
         }},
        {"elf",
         [&](const YAML::Node& n) {
           for (const auto& s : list(n, "elf")) r_.elfs.push_back(s.first);
         }},
        {"kernels",
         [&](const YAML::Node& n) {
           for (const auto& s : list(n, "kernels")) r_.kernels.push_back(s.first);
         }},
        {"allow_no_gpu_code", [&](const YAML::Node& n) { r_.allow_no_gpu_code = boolean(n, "allow_no_gpu_code"); }},
        {"gfx",
         [&](const YAML::Node& n) {
           for (const auto& item : list(n, "gfx")) at(item.second, "gfx", [&] { add_gfx(r_, item.first); });
         }},
        {"disk",
         [&](const YAML::Node& n) {
           for (const auto& entry : mapping(n, "disk"))
             at(entry.second, "disk", [&] { add_disk(r_, entry.first, scalar(entry.second, "disk: " + entry.first)); });
         }},
        {"severity",
         [&](const YAML::Node& n) {
           for (const auto& entry : mapping(n, "severity"))
             at(entry.second, "severity",
                [&] { set_severity(r_, entry.first, scalar(entry.second, "severity: " + entry.first)); });
         }},
        {"ports_free",
         [&](const YAML::Node& n) {
           for (const auto& item : list(n, "ports_free"))
             at(item.second, "ports_free", [&] { add_port(r_, item.first); });
         }},
        {"files",
         [&](const YAML::Node& n) {
           for (const auto& entry : mapping(n, "files"))
             at(entry.second, "files", [&] {
               add_file(r_, entry.first, entry.second.IsNull() ? "" : scalar(entry.second, "files: " + entry.first));
             });
         }},
        {"rocm", [&](const YAML::Node& n) { r_.rocm = boolean(n, "rocm"); }},
        {"link_test",
         [&](const YAML::Node& n) {
           auto v = scalar(n, "link_test");
           if (v != "false") at(n, "link_test", [&] { set_link_test(r_, v == "true" ? "" : v); });
         }},
        {"min_pcie", [&](const YAML::Node& n) { at(n, "min_pcie", [&] { set_min_pcie(r_, scalar(n, "min_pcie")); }); }},
        {"min_h2d", [&](const YAML::Node& n) { at(n, "min_h2d", [&] { set_min_h2d(r_, scalar(n, "min_h2d")); }); }},
        {"pcie_atomics", [&](const YAML::Node& n) { r_.pcie_atomics = boolean(n, "pcie_atomics"); }},
        {"nccl_test", [&](const YAML::Node& n) { r_.nccl_test = boolean(n, "nccl_test") || r_.nccl_test; }},
        {"wait", [&](const YAML::Node& n) { at(n, "wait", [&] { set_wait(r_, scalar(n, "wait")); }); }},
        {"roce",
         [&](const YAML::Node& n) {
           auto v = scalar(n, "roce");
           if (v == "true") r_.roce = "";
           else if (v != "false") r_.roce = v;
         }},
    };
    for (Field f : {Field::nccl_lib, Field::hidden_size, Field::layers, Field::min_busbw, Field::max_allreduce_us,
                    Field::nccl_timeout})
      keys.emplace(field_key(f), [this, f](const YAML::Node& n) {
        at(n, field_key(f), [&] { set_nccl(r_, f, scalar(n, field_key(f))); });
      });
    std::map<std::string, int> first_line;
    for (const auto& kv : root) {
      auto key = scalar(kv.first, "a key");
      if (auto [it, fresh] = first_line.emplace(key, line(kv.first)); !fresh)
        throw input_error(file_, line(kv.first),
                          "'" + key + "' is given twice (first at line " + std::to_string(it->second) + ")");
      auto handler = keys.find(key);
      if (handler == keys.end()) {
        std::string known;
        for (const auto& [k, _] : keys) known += (known.empty() ? "" : ", ") + k;
        throw input_error(file_, line(kv.first), util::concat({"unknown key '", key, "' (known: ", known, ")"}));
      }
      handler->second(kv.second);
    }
  }

 private:
  static int line(const YAML::Node& n) { return util::yaml_line(n); }

  // Runs a setter and puts this node's place in front of its message; a
  // value the field cannot take is named by the profile's key for it.
  template <class F>
  void at(const YAML::Node& n, const std::string& key, F&& f) {
    at(line(n), key, std::forward<F>(f));
  }
  template <class F>
  void at(int line_no, const std::string& key, F&& f) {
    try {
      f();
    } catch (const InvalidValue& e) {
      throw input_error(file_, line_no, e.sentence("'" + key + "'"));
    } catch (const Error& e) {
      throw input_error(file_, line_no, e.what());
    }
  }

  std::string scalar(const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar()) throw input_error(file_, line(n), "'" + key + "' wants a single value");
    return n.Scalar();
  }
  bool boolean(const YAML::Node& n, const std::string& key) {
    auto v = scalar(n, key);
    if (v == "true") return true;
    if (v == "false") return false;
    throw input_error(file_, line(n), "'" + key + "' wants true or false, not '" + v + "'");
  }
  // A list of scalars (or one scalar), each with its line.
  std::vector<std::pair<std::string, int>> list(const YAML::Node& n, const std::string& key) {
    std::vector<std::pair<std::string, int>> out;
    if (n.IsScalar()) return {{n.Scalar(), line(n)}};
    if (!n.IsSequence()) throw input_error(file_, line(n), "'" + key + "' wants a list");
    for (const auto& item : n) out.emplace_back(scalar(item, key), line(item));
    return out;
  }
  std::vector<std::pair<std::string, YAML::Node>> mapping(const YAML::Node& n, const std::string& key) {
    if (!n.IsMap()) throw input_error(file_, line(n), "'" + key + "' wants a mapping of paths to values");
    std::vector<std::pair<std::string, YAML::Node>> out;
    std::map<std::string, int> first_line;
    for (const auto& kv : n) {
      std::string name = scalar(kv.first, key);
      if (auto [it, fresh] = first_line.emplace(name, line(kv.first)); !fresh)
        throw input_error(file_, line(kv.first),
                          util::concat({"'", key, ": ", name, "' is given twice (first at line ",
                                        std::to_string(it->second), ")"}));
      out.emplace_back(std::move(name), kv.second);
    }
    return out;
  }

  std::string file_;
  Request& r_;
};

}  // namespace

void parse_profile(std::string_view text, const std::string& file, Request& into) {
  ProfileReader(file, into).read(text);
}

void load_profile(const fs::path& file, Request& into) {
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const Error&) {
    throw Error(ExitCode::usage, util::printable(file.string()) + ": cannot read the profile");
  }
  parse_profile(text, file.string(), into);
}

}  // namespace provkit::host
