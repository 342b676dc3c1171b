# cc-shim integration tests: a real zig 0.11 from npm (installed into the
# build tree by the fixture), real builds through the shim, real loading.
set(CC_SHIM_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/integration/cc-shim)
set(CC_SHIM_HELPERS ${CMAKE_BINARY_DIR}/tests/cc-shim)

# Stand-in libcuda.so.1 (soname libcuda.so.1), built by the host compiler.
add_library(ccshim-fake-cuda SHARED ${CC_SHIM_TEST_DIR}/fake_cuda.c)
set_target_properties(ccshim-fake-cuda PROPERTIES
  OUTPUT_NAME cuda SOVERSION 1 LIBRARY_OUTPUT_DIRECTORY ${CC_SHIM_HELPERS}/cuda64)

# A 32-bit decoy of the same name, as /lib/i386-linux-gnu may hold. gcc -m32
# needs multilib (absent on Debian by default); clang builds it without libc.
find_program(CC_SHIM_CLANG NAMES clang clang-14 REQUIRED)
add_custom_command(
  OUTPUT ${CC_SHIM_HELPERS}/cuda32/libcuda.so.1
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CC_SHIM_HELPERS}/cuda32
  COMMAND ${CC_SHIM_CLANG} --target=i386-linux-gnu -nostdlib -shared -fPIC -Wl,-soname,libcuda.so.1
          -o ${CC_SHIM_HELPERS}/cuda32/libcuda.so.1 ${CC_SHIM_TEST_DIR}/fake_cuda.c
  DEPENDS ${CC_SHIM_TEST_DIR}/fake_cuda.c
  COMMENT "32-bit decoy libcuda.so.1 for the cc-shim tests")
add_custom_target(ccshim-decoy-cuda ALL DEPENDS ${CC_SHIM_HELPERS}/cuda32/libcuda.so.1)

add_test(NAME "cc-shim: install zig (npm)" COMMAND bash ${CC_SHIM_TEST_DIR}/install-zig.sh)
set_tests_properties("cc-shim: install zig (npm)" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_SETUP cc-shim-zig TIMEOUT 600)

# A cache warmed by `cc-shim --shim-warm` alone, for warm-up.sh: minutes the first time (libc++), so it is kept
# in the build tree and reused by later runs (shim-warm-cache.sh).
add_test(NAME "cc-shim: warm a cache with --shim-warm" COMMAND bash ${CC_SHIM_TEST_DIR}/shim-warm-cache.sh)
set_tests_properties("cc-shim: warm a cache with --shim-warm" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_REQUIRED cc-shim-zig FIXTURES_SETUP cc-shim-shim-warm TIMEOUT 2400)

# The shared cache every other test uses starts as a copy of that one, so libc++ is built once per build tree.
add_test(NAME "cc-shim: warm zig cache" COMMAND bash ${CC_SHIM_TEST_DIR}/warm-cache.sh)
set_tests_properties("cc-shim: warm zig cache" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_REQUIRED "cc-shim-zig;cc-shim-shim-warm" FIXTURES_SETUP cc-shim-warm
  TIMEOUT 300)

# Every other *.sh here is a test (lib.sh is sourced by them; the three above are its fixtures), found by
# glob so that a new script cannot be left out.

file(GLOB CC_SHIM_TEST_SCRIPTS CONFIGURE_DEPENDS ${CC_SHIM_TEST_DIR}/*.sh)
list(REMOVE_ITEM CC_SHIM_TEST_SCRIPTS ${CC_SHIM_TEST_DIR}/lib.sh ${CC_SHIM_TEST_DIR}/install-zig.sh
     ${CC_SHIM_TEST_DIR}/warm-cache.sh ${CC_SHIM_TEST_DIR}/shim-warm-cache.sh)
foreach(script ${CC_SHIM_TEST_SCRIPTS})
  get_filename_component(test ${script} NAME_WE)
  add_test(NAME "cc-shim: ${test}" COMMAND bash ${script})
  set_tests_properties("cc-shim: ${test}" PROPERTIES
    ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm" TIMEOUT 300)
endforeach()
# outputs.sh checks that no run directory is left in the shared zig cache: no other compile may be running.
set_tests_properties("cc-shim: outputs" PROPERTIES RUN_SERIAL TRUE)
# warm-up.sh uses the --shim-warm cache itself (after warm-cache.sh copied it, so never while it is copied); its
# fresh-cache side runs until zig writes libc++'s first object.
set_tests_properties("cc-shim: warm-up" PROPERTIES FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm;cc-shim-shim-warm"
                                                   TIMEOUT 900)
