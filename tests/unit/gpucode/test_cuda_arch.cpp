// gpucode/cuda_arch: which CUDA code runs on which compute capability, and the PTX ISA each toolkit introduced.
#include <catch2/catch.hpp>

#include "provkit/error.hpp"
#include "provkit/gpucode/cuda_arch.hpp"

using namespace provkit;
using gpucode::Version;

TEST_CASE("arch list: cubins run on the same major with an equal or higher minor", "[gpucode]") {
  auto list = gpucode::parse_arch_list("sm_80,sm_90,sm_120");
  CHECK(gpucode::best_match(list, {8, 6})->text == "sm_80");
  CHECK(gpucode::best_match(list, {12, 1})->text == "sm_120");
  CHECK_FALSE(gpucode::best_match(list, {7, 5}));                               // older major: nothing
  CHECK_FALSE(gpucode::best_match(list, {10, 0}));                              // sm_90 cubin does not run on 10.0
  CHECK_FALSE(gpucode::best_match(gpucode::parse_arch_list("sm_86"), {8, 0}));  // higher minor does not run
}

TEST_CASE("arch list: PTX runs on anything newer, 'a' targets only on their own", "[gpucode]") {
  auto list = gpucode::parse_arch_list("['sm_80', 'compute_90']");
  CHECK(gpucode::best_match(list, {10, 0})->text == "compute_90");
  CHECK(gpucode::best_match(list, {10, 0})->ptx);
  CHECK(gpucode::best_match(list, {9, 0})->text == "compute_90");
  auto arch_specific = gpucode::parse_arch_list("sm_90a");
  CHECK(gpucode::best_match(arch_specific, {9, 0}));
  CHECK_FALSE(gpucode::best_match(gpucode::parse_arch_list("sm_120a"), {12, 1}));
  CHECK(gpucode::best_match(gpucode::parse_arch_list("sm_120f"), {12, 1}));
  auto torch_style = gpucode::parse_arch_list("8.0 8.6 9.0+PTX");
  CHECK(gpucode::best_match(torch_style, {12, 0})->text == "9.0+PTX");
  CHECK(gpucode::parse_arch("sm_103")->arch == Version{10, 3});
  CHECK_THROWS_AS(gpucode::parse_arch_list("sm_80,ampere"), Error);
  CHECK_THROWS_AS(gpucode::parse_arch_list(""), Error);
}

TEST_CASE("capability minimums", "[gpucode]") {
  CHECK(*gpucode::capability_minimum("fp8") == Version{8, 9});
  CHECK(*gpucode::capability_minimum("nvfp4") == Version{10, 0});
  CHECK_FALSE(gpucode::capability_minimum("int4"));
}

TEST_CASE("gpucode: PTX ISA versions map to the toolkit release that introduced them", "[gpucode]") {
  CHECK(gpucode::cuda_for_ptx_isa("9.0") == gpucode::Version{13, 0});
  CHECK(gpucode::cuda_for_ptx_isa("8.8") == gpucode::Version{12, 9});
  CHECK(gpucode::cuda_for_ptx_isa("8.7") == gpucode::Version{12, 8});
  CHECK(gpucode::cuda_for_ptx_isa("7.8") == gpucode::Version{11, 8});
  CHECK_FALSE(gpucode::cuda_for_ptx_isa("99.0"));
}

TEST_CASE("arch list: the runtime's pick is the newest cubin that runs, in any list order", "[gpucode]") {
  using gpucode::best_match, gpucode::parse_arch_list;
  CHECK(best_match(parse_arch_list("sm_80,sm_86"), {8, 6})->text == "sm_86");
  CHECK(best_match(parse_arch_list("sm_86,sm_80"), {8, 6})->text == "sm_86");
  CHECK(best_match(parse_arch_list("sm_80,sm_86,sm_89"), {8, 7})->text == "sm_86");  // 8.9 is above 8.7
  CHECK(best_match(parse_arch_list("compute_80,sm_80"), {8, 6})->text == "sm_80");   // a cubin before PTX
  CHECK(best_match(parse_arch_list("compute_75,compute_86,sm_70"), {9, 0})->text == "compute_86");
  CHECK(best_match(parse_arch_list("sm_90,sm_90a"), {9, 0})->text == "sm_90a");
}
