#include "provkit/util/checked.hpp"
#include "provkit/util/text.hpp"

#include <limits>

namespace provkit::util {

std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return checked_add(a, b).value_or(std::numeric_limits<std::uint64_t>::max());
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return checked_mul(a, b).value_or(std::numeric_limits<std::uint64_t>::max());
}

std::string_view reason_name(SumRefusal) { return reason_name(Reason::invalid_input); }
ExitCode exit_code(SumRefusal) { return ExitCode::usage; }

Error sum_overflow(std::string_view what, std::string_view item, std::uint64_t total, std::uint64_t n) {
  return Error(SumRefusal::overflow, printable(item) + ": " + std::string(what) + " go past 2^64 - 1 with its " +
                                         std::to_string(n) + " (" + std::to_string(total) +
                                         " before it); numbers that large cannot all be right");
}

CheckedSum& CheckedSum::add(std::uint64_t n, std::string_view item) {
  auto sum = checked_add(total_, n);
  if (!sum) throw sum_overflow(what_, item, total_, n);
  total_ = *sum;
  return *this;
}

}  // namespace provkit::util
