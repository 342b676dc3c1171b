#include <catch2/catch.hpp>

#include "checkpoint/builders.hpp"
#include "provkit/hub/inspect.hpp"
#include "support/temp_dir.hpp"

using namespace provkit;
using namespace checkpoint_test;

TEST_CASE("inspect: the header bytes held at once stay within the budget, whatever --jobs is", "[hub]") {
  test::TempDir dir("inspect-budget");
  std::vector<StTensor> tensors;
  for (int t = 0; t < 2000; ++t) tensors.push_back({"model.layers." + std::to_string(t) + ".weight", "U8", {4}});
  std::string file = safetensors_of(tensors);  // a header of about 130 KB
  for (int f = 0; f < 12; ++f) dir.write("m-" + std::to_string(f) + ".safetensors", file);
  std::uint64_t header = file.size() - 2000 * 4;

  hub::InspectOptions o;
  o.jobs = 12;
  o.header_budget = 2 * header;
  auto bounded = hub::inspect_paths({dir.path}, o);
  CHECK(bounded.files.size() == 12);
  CHECK(bounded.header_bytes_peak >= header);
  CHECK(bounded.header_bytes_peak <= o.header_budget + header);

  o.header_budget = 1;  // smaller than any header: one at a time, each let through alone
  auto one = hub::inspect_paths({dir.path}, o);
  CHECK(one.files.size() == 12);
  CHECK(one.header_bytes_peak == header);
}
