#pragma once
// Every environment variable provkit reads, in one table (uv's uv-static env_vars.rs is the model): the library
// reads the environment only through here, so what provkit honours is the table, and docs/environment.md lists
// the same names (a unit test compares the two).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provkit::util {

enum class EnvVar {
  // The Hub and its cache, as huggingface_hub reads them.
  hf_home,
  hf_hub_cache,
  llama_cache,
  hf_hub_offline,
  hf_endpoint,
  hf_token,
  hugging_face_hub_token,
  hf_token_path,
  // TLS trust, as curl and OpenSSL read them.
  curl_ca_bundle,
  ssl_cert_dir,
  ssl_cert_file,
  // The user's folders and search paths.
  home,
  path,
  tmpdir,
  xdg_cache_home,
  xdg_data_home,
  xdg_bin_home,
  ld_library_path,
  library_path,
  cc,
  // Interpreters.
  pyenv_root,
  uv_python_install_dir,
  uv_python_bin_dir,
  conda_prefix,
  envbuild_cache_dir,
  envbuild_python_dir,
  // GPUs and toolkits, as the drivers and runtimes read them.
  cuda_home,
  rocm_path,
  cuda_visible_devices,
  rocr_visible_devices,
  hip_visible_devices,
  hsa_xnack,
  envcheck_nvml_lib,
  envcheck_cuda_lib,
  envcheck_nvidia_smi,
  envcheck_sysfs_root,
  envcheck_cuda_root,
  // cc-shim and the zig under it.
  cc_shim_zig,
  cc_shim_debug,
  cc_shim_zig_object_cache,
  cc_shim_active,
  zig_global_cache_dir,
  zig_local_cache_dir,
  zig_libc,
  zig_is_detecting_libc_paths,
  // provkit itself.
  provkit_log,
  provkit_fs_resolve,
};

struct EnvEntry {
  EnvVar variable;
  std::string_view name;     // as set in the environment
  std::string_view read_by;  // the tools that honour it
  std::string_view meaning;  // one sentence, as docs/environment.md says it
};

// The table, in the order docs/environment.md lists it.
const std::vector<EnvEntry>& env_variables();
const EnvEntry& env_entry(EnvVar variable);
// The variable the table names so; std::logic_error for a name not in it (a programming error, not input).
EnvVar env_by_name(std::string_view name);

// The value, or nullopt when the variable is unset (set and empty is "").
std::optional<std::string> env_get(EnvVar variable);
// The value, "" when unset.
std::string env_value(EnvVar variable);
// env_value(env_by_name(name)): for a reader that takes its variables by name (pyfind::Environment::read).
std::string env_value_named(const char* name);

// A variable a user's input names: `${NAME}` in a requirements file, which pip expands from the environment.
// The one read of a name not in the table, kept here so that it is visible.
std::optional<std::string> env_named_in_input(std::string_view name);

}  // namespace provkit::util
