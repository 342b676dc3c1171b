#include "provkit/gpucode/cuda_arch.hpp"

#include <cctype>
#include <map>

#include "provkit/error.hpp"
#include "provkit/util/strings.hpp"

namespace provkit::gpucode {

namespace {

// At most 6 digits: a version part, never a number that needs more.
std::optional<int> parse_int(std::string_view s) {
  std::uint64_t v = 0;
  if (s.size() > 6 || !util::parse_u64(s, v)) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace

std::optional<Version> parse_version(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto major = parse_int(text.substr(0, dot));
  auto minor = parse_int(text.substr(dot + 1));
  if (!major || !minor || *major > 99 || *minor > 99) return std::nullopt;
  return Version{*major, *minor};
}

Version from_cuda_int(int encoded) { return {encoded / 1000, (encoded % 1000) / 10}; }

std::optional<ArchTarget> parse_arch(std::string_view text) {
  ArchTarget t;
  t.text = std::string(text);
  std::string_view s = text;
  auto digits_to_version = [](std::string_view d) -> std::optional<Version> {
    if (d.size() < 2 || d.size() > 3) return std::nullopt;
    for (char c : d)
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    return Version{*parse_int(d.substr(0, d.size() - 1)), d.back() - '0'};
  };
  auto take_variant = [&](std::string_view& rest) {
    if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
      t.variant = rest.back();
      rest.remove_suffix(1);
    }
  };
  if (s.starts_with("sm_") || s.starts_with("compute_")) {
    t.ptx = s.starts_with("compute_");
    s.remove_prefix(t.ptx ? 8 : 3);
    take_variant(s);
    auto v = digits_to_version(s);
    if (!v) return std::nullopt;
    t.arch = *v;
    return t;
  }
  // TORCH_CUDA_ARCH_LIST style: "8.6", "8.6+PTX", "9.0a".
  if (s.ends_with("+PTX")) {
    t.ptx = true;
    s.remove_suffix(4);
  }
  take_variant(s);
  auto v = parse_version(s);
  if (!v || v->minor > 9) return std::nullopt;
  t.arch = *v;
  return t;
}

std::vector<ArchTarget> parse_arch_list(std::string_view text) {
  std::vector<ArchTarget> out;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    auto t = parse_arch(token);
    if (!t)
      throw Error(ExitCode::usage,
                  "'" + token + "' is not a CUDA architecture (expected sm_90, sm_90a, compute_90 or 9.0+PTX)");
    out.push_back(*t);
    token.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c))) flush();
    else if (c == '[' || c == ']' || c == '\'' || c == '"') continue;
    else token += c;
  }
  flush();
  if (out.empty()) throw Error(ExitCode::usage, "the architecture list is empty");
  return out;
}

bool runs_on(const ArchTarget& target, Version cc) {
  if (target.variant == 'a') return target.arch == cc;
  if (target.ptx) return cc >= target.arch;
  return target.arch.major == cc.major && target.arch.minor <= cc.minor;
}

std::optional<ArchTarget> best_match(const std::vector<ArchTarget>& list, Version cc) {
  // As the CUDA runtime chooses: the newest cubin that runs (an arch-specific one before its plain twin), in
  // whatever order the list names them; PTX, the newest that runs, only when no cubin does.
  std::optional<ArchTarget> cubin, ptx;
  auto newer = [](const ArchTarget& t, const std::optional<ArchTarget>& best) {
    return !best || t.arch > best->arch || (t.arch == best->arch && t.variant != 0 && best->variant == 0);
  };
  for (const auto& t : list) {
    if (!runs_on(t, cc)) continue;
    auto& best = t.ptx ? ptx : cubin;
    if (newer(t, best)) best = t;
  }
  return cubin ? cubin : ptx;
}

std::optional<Version> capability_minimum(std::string_view need) {
  if (need == "fp8") return Version{8, 9};
  if (need == "nvfp4") return Version{10, 0};
  return std::nullopt;
}

std::optional<Version> cuda_for_ptx_isa(const std::string& isa) {
  auto v = parse_version(isa);
  if (!v) return std::nullopt;
  // From the PTX ISA's release notes: each toolkit release and the ISA it introduced.
  static const std::map<std::pair<int, int>, Version> table = {
      {{6, 0}, {9, 0}},  {{6, 1}, {9, 1}},  {{6, 2}, {9, 2}},  {{6, 3}, {10, 0}}, {{6, 4}, {10, 1}}, {{6, 5}, {10, 2}},
      {{7, 0}, {11, 0}}, {{7, 1}, {11, 1}}, {{7, 2}, {11, 2}}, {{7, 3}, {11, 3}}, {{7, 4}, {11, 4}}, {{7, 5}, {11, 5}},
      {{7, 6}, {11, 6}}, {{7, 7}, {11, 7}}, {{7, 8}, {11, 8}}, {{8, 0}, {12, 0}}, {{8, 1}, {12, 1}}, {{8, 2}, {12, 2}},
      {{8, 3}, {12, 3}}, {{8, 4}, {12, 4}}, {{8, 5}, {12, 5}}, {{8, 6}, {12, 7}}, {{8, 7}, {12, 8}}, {{8, 8}, {12, 9}},
      {{9, 0}, {13, 0}}, {{9, 1}, {13, 1}}, {{9, 2}, {13, 2}},
  };
  auto it = table.find({v->major, v->minor});
  if (it == table.end()) return std::nullopt;
  return it->second;
}

}  // namespace provkit::gpucode
