#include "provkit/util/size.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "provkit/error.hpp"

namespace provkit::util {

std::uint64_t parse_size(std::string_view text) {
  auto bad = [&]() {
    return Error(Reason::invalid_input,
                 "'" + std::string(text) + "' is not a size (expected e.g. 500M, 24G, 24GiB, 80GB, 1.5T)");
  };
  std::size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  std::string number(text.substr(0, i));
  std::string unit(text.substr(i));
  if (number.empty() || number.front() == '.' || number.back() == '.' || number.find('.') != number.rfind('.'))
    throw bad();
  double value = 0;
  try {
    value = std::stod(number);
  } catch (const std::out_of_range&) {  // hundreds of digits: no size, and no std exception out of the library
    throw bad();
  }
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  static const std::string letters = "KMGTP";
  double scale = 1;
  if (!unit.empty() && unit != "B") {
    char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0])));
    auto power = letters.find(letter);
    if (power == std::string::npos) throw bad();
    std::string rest = unit.substr(1);
    double base;
    if (rest.empty() || rest == "i" || rest == "iB") base = 1024;
    else if (rest == "B") base = 1000;
    else throw bad();
    scale = std::pow(base, static_cast<double>(power + 1));
  }
  double bytes = value * scale;
  if (bytes >= 1.8e19) throw bad();
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string format_size(std::uint64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace provkit::util
