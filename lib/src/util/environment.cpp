#include "provkit/util/environment.hpp"

#include <cstdlib>
#include <stdexcept>

namespace provkit::util {

namespace {
constexpr std::string_view hf_fetch = "hf-fetch";
constexpr std::string_view envcheck = "envcheck";
constexpr std::string_view envbuild = "envbuild";
constexpr std::string_view ccshim = "cc-shim";
constexpr std::string_view all = "all";
}  // namespace

const std::vector<EnvEntry>& env_variables() {
  using V = EnvVar;
  static const std::vector<EnvEntry> table = {
      {V::hf_home, "HF_HOME", "hf-fetch, envcheck",
       "The Hugging Face home; the cache is HF_HOME/hub unless HF_HUB_CACHE says otherwise."},
      {V::hf_hub_cache, "HF_HUB_CACHE", "hf-fetch, envcheck", "The Hub cache folder (models--ORG--NAME trees)."},
      {V::llama_cache, "LLAMA_CACHE", envcheck,
       "The cache llama.cpp's -hf reads instead of the Hub cache (the same models--ORG--NAME trees)."},
      {V::hf_hub_offline, "HF_HUB_OFFLINE", hf_fetch, "1/true/yes/on: no request is made, as --offline."},
      {V::hf_endpoint, "HF_ENDPOINT", hf_fetch, "The Hub's address when --endpoint is not given."},
      {V::hf_token, "HF_TOKEN", hf_fetch, "The Hub token, when no --token-file is given."},
      {V::hugging_face_hub_token, "HUGGING_FACE_HUB_TOKEN", hf_fetch,
       "The Hub token's older name, read after HF_TOKEN."},
      {V::hf_token_path, "HF_TOKEN_PATH", hf_fetch, "A file holding the Hub token (default HF_HOME/token)."},
      {V::curl_ca_bundle, "CURL_CA_BUNDLE", "hf-fetch, envbuild", "The CA bundle for TLS, before SSL_CERT_*."},
      {V::ssl_cert_dir, "SSL_CERT_DIR", "hf-fetch, envbuild", "A folder of CA certificates for TLS."},
      {V::ssl_cert_file, "SSL_CERT_FILE", "hf-fetch, envbuild", "A CA bundle file for TLS."},
      {V::home, "HOME", all, "The user's home: ~/.cache, ~/.pyenv, ~/.local/share."},
      {V::path, "PATH", all, "Where programs are looked for (python, zig, nvidia-smi, compilers)."},
      {V::tmpdir, "TMPDIR", envcheck, "Where the compiler check writes its scratch files."},
      {V::xdg_cache_home, "XDG_CACHE_HOME", all, "The cache root (default ~/.cache)."},
      {V::xdg_data_home, "XDG_DATA_HOME", "envbuild, envcheck",
       "The data root (default ~/.local/share): envbuild's and uv's interpreters."},
      {V::xdg_bin_home, "XDG_BIN_HOME", "envbuild, envcheck",
       "Where uv links its interpreters (default ~/.local/bin)."},
      {V::ld_library_path, "LD_LIBRARY_PATH", envcheck, "Searched first for shared libraries, as ld.so does."},
      {V::library_path, "LIBRARY_PATH", ccshim, "Searched for -l libraries at link time, as gcc does."},
      {V::cc, "CC", envcheck, "The C compiler the compiler check tries first."},
      {V::pyenv_root, "PYENV_ROOT", "envbuild, envcheck",
       "pyenv's root (default ~/.pyenv): its versions are interpreters."},
      {V::uv_python_install_dir, "UV_PYTHON_INSTALL_DIR", "envbuild, envcheck",
       "Where uv installs interpreters (default XDG_DATA_HOME/uv/python)."},
      {V::uv_python_bin_dir, "UV_PYTHON_BIN_DIR", "envbuild, envcheck",
       "Where uv links its interpreters by version (default XDG_BIN_HOME)."},
      {V::conda_prefix, "CONDA_PREFIX", "envbuild, envcheck",
       "The active conda environment: its python is a candidate."},
      {V::envbuild_cache_dir, "ENVBUILD_CACHE_DIR", envbuild,
       "envbuild's wheel cache (default XDG_CACHE_HOME/envbuild)."},
      {V::envbuild_python_dir, "ENVBUILD_PYTHON_DIR", envbuild, "Where envbuild keeps interpreters it installs."},
      {V::cuda_home, "CUDA_HOME", envcheck, "The CUDA toolkit's folder, for nvcc and the runtime libraries."},
      {V::rocm_path, "ROCM_PATH", envcheck, "The ROCm folder (default /opt/rocm)."},
      {V::cuda_visible_devices, "CUDA_VISIBLE_DEVICES", "envcheck, hf-fetch",
       "Which NVIDIA GPUs a process sees, as CUDA reads it."},
      {V::rocr_visible_devices, "ROCR_VISIBLE_DEVICES", envcheck, "Which AMD GPUs a process sees, as ROCr reads it."},
      {V::hip_visible_devices, "HIP_VISIBLE_DEVICES", envcheck, "Which AMD GPUs a process sees, as HIP reads it."},
      {V::hsa_xnack, "HSA_XNACK", envcheck, "1: the GPU code must be xnack+, as ROCm loads it."},
      {V::envcheck_nvml_lib, "ENVCHECK_NVML_LIB", "envcheck, hf-fetch",
       "The NVML library to load instead of libnvidia-ml.so.1."},
      {V::envcheck_cuda_lib, "ENVCHECK_CUDA_LIB", "envcheck, hf-fetch",
       "The CUDA driver library to load instead of libcuda.so.1."},
      {V::envcheck_nvidia_smi, "ENVCHECK_NVIDIA_SMI", "envcheck, hf-fetch", "The nvidia-smi to run instead of PATH's."},
      {V::envcheck_sysfs_root, "ENVCHECK_SYSFS_ROOT", envcheck, "The folder read as /sys (PCIe, RoCE, KFD)."},
      {V::envcheck_cuda_root, "ENVCHECK_CUDA_ROOT", envcheck,
       "The folder read as /usr/local: its cuda/ and cuda*/compat/."},
      {V::cc_shim_zig, "CC_SHIM_ZIG", ccshim, "The zig cc-shim runs (default: zig on PATH)."},
      {V::cc_shim_debug, "CC_SHIM_DEBUG", ccshim, "Not 0: each call's translated zig command line is printed."},
      {V::cc_shim_zig_object_cache, "CC_SHIM_ZIG_OBJECT_CACHE", ccshim, "1: zig's own object cache is kept."},
      {V::cc_shim_active, "CC_SHIM_ACTIVE", ccshim, "Set by cc-shim for the zig it runs, to refuse a loop back."},
      {V::zig_global_cache_dir, "ZIG_GLOBAL_CACHE_DIR", ccshim, "zig's global cache, kept when set."},
      {V::zig_local_cache_dir, "ZIG_LOCAL_CACHE_DIR", ccshim, "zig's local cache, kept when set."},
      {V::zig_libc, "ZIG_LIBC", ccshim, "A libc description for zig; cc-shim then writes none."},
      {V::zig_is_detecting_libc_paths, "ZIG_IS_DETECTING_LIBC_PATHS", ccshim,
       "Set by zig while it asks $CC for the native libc; cc-shim then declines."},
      {V::provkit_log, "PROVKIT_LOG", all, "debug: the debug trace on stderr, as --debug."},
      {V::provkit_fs_resolve, "PROVKIT_FS_RESOLVE", all,
       "walk: paths under a root are opened a component at a time, not with openat2."},
  };
  return table;
}

const EnvEntry& env_entry(EnvVar variable) {
  for (const auto& e : env_variables())
    if (e.variable == variable) return e;
  throw std::logic_error("environment variable missing from the table");
}

EnvVar env_by_name(std::string_view name) {
  for (const auto& e : env_variables())
    if (e.name == name) return e.variable;
  throw std::logic_error("environment variable " + std::string(name) + " missing from the table");
}

std::optional<std::string> env_get(EnvVar variable) { return env_named_in_input(env_entry(variable).name); }

std::string env_value(EnvVar variable) { return env_get(variable).value_or(""); }

std::string env_value_named(const char* name) { return env_value(env_by_name(name)); }

std::optional<std::string> env_named_in_input(std::string_view name) {
  const char* v = std::getenv(std::string(name).c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

}  // namespace provkit::util
