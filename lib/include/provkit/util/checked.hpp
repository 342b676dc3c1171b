#pragma once
// Sums and products of sizes and counts that come from outside (a tree listing, a manifest, checkpoint
// headers, a zip's directory), computed with the compiler's overflow checks: a total that cannot be
// represented in 64 bits is a refusal naming the item that took it over, never a wrap (sixteen tensors of
// 2^60 + 256 bytes once added up to 4096 bytes, and four files of 2^62 bytes to none at all).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "provkit/error.hpp"

namespace provkit::util {

// a + b and a * b, or nullopt where the result does not fit in 64 bits.
std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b);
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);
// a + b and a * b, or UINT64_MAX where they do not fit: for bounds and limits, never for totals reported.
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);

// Why a total was refused: the numbers given cannot all be right. invalid_input, exit 2 (docs/json.md).
enum class SumRefusal { overflow };
std::string_view reason_name(SumRefusal r);
ExitCode exit_code(SumRefusal r);

// A running total of `what` ("the sizes of the manifest's files"). add() throws
// Error(SumRefusal::overflow) naming the item whose value took the total past 2^64 - 1.
class CheckedSum {
 public:
  explicit CheckedSum(std::string what, std::uint64_t start = 0) : what_(std::move(what)), total_(start) {}
  // `item` names where `n` came from (a file, a tensor); it is escaped in the sentence.
  CheckedSum& add(std::uint64_t n, std::string_view item);
  std::uint64_t value() const { return total_; }

 private:
  std::string what_;
  std::uint64_t total_;
};

// The refusal CheckedSum::add throws, for a caller that checks with checked_add itself.
Error sum_overflow(std::string_view what, std::string_view item, std::uint64_t total, std::uint64_t n);

}  // namespace provkit::util
