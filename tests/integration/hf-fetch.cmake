# hf-fetch against the Hub simulator (tests/hubsim): one ctest per behaviour, every "def test_..." of the
# scripts registered (discover.cmake), so none can be forgotten.
file(GLOB HF_FETCH_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/hf-fetch/test_*.py)
provkit_python_tests(hf-fetch SCRIPTS ${HF_FETCH_TEST_SCRIPTS})

# The demo (README's first command) end to end, with the tools already built here.
add_test(NAME "hf-fetch: demo script"
         COMMAND ${CMAKE_SOURCE_DIR}/scripts/demo.sh)
set_tests_properties("hf-fetch: demo script" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV};PROVKIT_BUILD=${CMAKE_BINARY_DIR};PROVKIT_DEMO_SKIP_BUILD=1;PROVKIT_DEMO_CLEANUP=1" TIMEOUT 120 LABELS hf-fetch)
