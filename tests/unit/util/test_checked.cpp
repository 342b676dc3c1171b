#include <catch2/catch.hpp>
#include <limits>

#include "provkit/error.hpp"
#include "provkit/util/checked.hpp"

using namespace provkit;

namespace {
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
}

TEST_CASE("checked_add and checked_mul: nothing where 64 bits cannot hold the result", "[util][checked]") {
  CHECK(util::checked_add(1, 2) == 3u);
  CHECK(util::checked_add(kMax - 1, 1) == kMax);
  CHECK_FALSE(util::checked_add(kMax, 1));
  CHECK_FALSE(util::checked_add(1ull << 63, 1ull << 63));  // 2^64 wraps to 0
  CHECK(util::checked_mul(1ull << 31, 1ull << 32) == 1ull << 63);
  CHECK_FALSE(util::checked_mul(1ull << 32, 1ull << 32));
  CHECK(util::checked_mul(0, kMax) == 0u);
  CHECK(util::saturating_add(kMax - 1, 5) == kMax);
  CHECK(util::saturating_add(2, 5) == 7u);
  CHECK(util::saturating_mul(1ull << 40, 1ull << 40) == kMax);
  CHECK(util::saturating_mul(3, 5) == 15u);
}

TEST_CASE("CheckedSum: sixteen sizes of 2^60 + 256 are refused at the sixteenth, named", "[util][checked]") {
  util::CheckedSum sum("the sizes of the files");
  const std::uint64_t each = (1ull << 60) + 256;
  for (int i = 0; i < 15; ++i) sum.add(each, "f" + std::to_string(i));
  CHECK(sum.value() == 15 * each);
  try {
    sum.add(each, "f15\x1b[2J");
    FAIL("a wrapped total was taken: " << sum.value());
  } catch (const Error& e) {
    CHECK(e.is(util::SumRefusal::overflow));
    CHECK(e.code() == ExitCode::usage);
    CHECK(e.reason().name() == "invalid_input");
    std::string what = e.what();
    CHECK(what.rfind("f15\\x1b[2J: the sizes of the files go past 2^64 - 1", 0) == 0);
    CHECK(what.find(std::to_string(each)) != std::string::npos);
  }
  CHECK(sum.value() == 15 * each);  // unchanged by the refused add
  util::CheckedSum from("bytes", kMax);
  CHECK(from.add(0, "zero").value() == kMax);
  CHECK_THROWS_AS(from.add(1, "one"), Error);
}
