#include "driver.hpp"

#include "target.hpp"

namespace provkit::ccshim {

std::optional<std::string> answer_query(const Invocation& inv, const SearchContext& ctx) {
  if (!(inv.asks_dumpmachine || inv.asks_multiarch) || inv.names_target) return std::nullopt;
  if (!ctx.glibc_version || !ctx.glibc_version()) return std::nullopt;
  // gcc -dumpmachine names the compiler's own machine whatever -m32 says;
  // -print-multiarch names the target's directory triple.
  auto triple = multiarch_triple(inv.asks_dumpmachine ? ctx.host : target_identity(inv, ctx.host));
  if (triple.empty()) return std::nullopt;
  return triple + "\n";
}

std::string gcc_driver_warnings(const Invocation& inv, bool cxx) {
  if (cxx || inv.rtti.empty()) return "";
  int c_sources = 0;
  for (const auto& in : inv.inputs) {
    const auto& x = in.language;
    if (in.path == "-") c_sources += x == "c";  // stdin is C only when -x says so
    else c_sources += x.empty() || x == "none" ? in.path.ends_with(".c") : x == "c";
  }
  std::string out;
  for (int n = 0; n < c_sources; ++n)
    for (const auto& r : inv.rtti)
      out += "cc1: warning: command-line option '" + r + "' is valid for C++/D/ObjC++ but not for C\n";
  return out;
}

}  // namespace provkit::ccshim
