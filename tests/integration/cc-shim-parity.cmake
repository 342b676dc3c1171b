# gcc-parity suite for cc-shim: every directory under cc-shim-parity/cases/ is
# one project built twice, with gcc and with CC=cc-shim (zig 0.11 from npm,
# through the cc-shim fixtures), its results compared. One ctest per case,
# found by glob, so a new case cannot be left unregistered; a case directory
# without run.sh stops the configure.
set(CC_SHIM_PARITY_DIR ${CMAKE_CURRENT_SOURCE_DIR}/integration/cc-shim-parity)
file(GLOB CC_SHIM_PARITY_CASES LIST_DIRECTORIES true CONFIGURE_DEPENDS ${CC_SHIM_PARITY_DIR}/cases/*)
if(NOT CC_SHIM_PARITY_CASES)
  message(FATAL_ERROR "no gcc-parity cases found in ${CC_SHIM_PARITY_DIR}/cases")
endif()
foreach(case_dir ${CC_SHIM_PARITY_CASES})
  get_filename_component(case ${case_dir} NAME)
  if(NOT IS_DIRECTORY ${case_dir} OR NOT EXISTS ${case_dir}/run.sh)
    message(FATAL_ERROR "gcc-parity case ${case_dir} is not a directory with a run.sh")
  endif()
  add_test(NAME "cc-shim-parity: ${case}" COMMAND bash ${case_dir}/run.sh)
  # The stand-in libcuda.so.1 and its 32-bit decoy are cc-shim.cmake's targets.
  set_tests_properties("cc-shim-parity: ${case}" PROPERTIES
    ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm" TIMEOUT 300)
endforeach()
