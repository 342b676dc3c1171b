#pragma once
// The reason of the provkit::Error that `f` throws, for tests that assert why something was refused rather
// than how the sentence reads; nullopt when it throws none.
#include <functional>
#include <optional>

#include "provkit/error.hpp"

namespace provkit::test {

inline std::optional<ReasonId> reason_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.reason();
  }
  return std::nullopt;
}

}  // namespace provkit::test
