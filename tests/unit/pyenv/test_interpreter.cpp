// What of an interpreter its wheel tags depend on. Asking a real python3 its facts is tested in
// tests/integration/envbuild/test_locks.py and test_uv_locks.py; where one is found, in tests/unit/pyfind.
#include <catch2/catch.hpp>

#include "provkit/pyenv/interpreter.hpp"

using namespace provkit::pyenv;

TEST_CASE("tag_inputs carries the interpreter's tag facts and its sys_platform marker", "[envbuild]") {
  Interpreter it;
  it.implementation = "cpython";
  it.major = 3;
  it.minor = 13;
  it.micro = 1;
  it.abiflags = "t";
  it.machine = "aarch64";
  it.glibc = "2.39";
  it.is_64bit = false;
  auto in = tag_inputs(it);
  CHECK(in.implementation == "cpython");
  CHECK(in.major == 3);
  CHECK(in.minor == 13);
  CHECK(in.abiflags == "t");
  CHECK(in.machine == "aarch64");
  CHECK(in.glibc == "2.39");
  CHECK_FALSE(in.is_64bit);
  CHECK_FALSE(in.sys_platform.has_value());
  CHECK(provkit::pyspec::compatible_tags(in).front() == "cp313-cp313t-manylinux_2_39_aarch64");

  it.markers["sys_platform"] = "darwin";
  in = tag_inputs(it);
  CHECK(in.sys_platform == "darwin");
  CHECK(provkit::pyspec::compatible_tags(in).front() == "cp313-none-any");  // no Linux platform tags
}
