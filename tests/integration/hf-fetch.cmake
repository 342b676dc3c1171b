# hf-fetch against the Hub simulator (tests/hubsim): one ctest per behaviour.
# Every "def test_..." in the script is registered, so none can be forgotten.
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/integration/hf-fetch/test_hf_fetch.py HF_FETCH_DEFS REGEX "^def test_[a-z0-9_]+\\(")
set(HF_FETCH_TESTS "")
foreach(line ${HF_FETCH_DEFS})
  string(REGEX REPLACE "^def (test_[a-z0-9_]+)\\(.*" "\\1" t "${line}")
  list(APPEND HF_FETCH_TESTS ${t})
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/hf-fetch/test_hf_fetch.py)
foreach(t ${HF_FETCH_TESTS})
  string(REGEX REPLACE "^test_" "" name ${t})
  add_test(NAME "hf-fetch: ${name}"
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/integration/hf-fetch/test_hf_fetch.py ${t})
  set_tests_properties("hf-fetch: ${name}" PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 120 LABELS hf-fetch)
endforeach()

# The demo (README's first command) end to end, with the tools already built here.
add_test(NAME "hf-fetch: demo script"
         COMMAND ${CMAKE_SOURCE_DIR}/scripts/demo.sh)
set_tests_properties("hf-fetch: demo script" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV};PROVKIT_BUILD=${CMAKE_BINARY_DIR};PROVKIT_DEMO_SKIP_BUILD=1;PROVKIT_DEMO_CLEANUP=1" TIMEOUT 120 LABELS hf-fetch)
