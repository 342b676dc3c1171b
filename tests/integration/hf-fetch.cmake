# hf-fetch against the Hub simulator (tests/hubsim): one ctest per behaviour.
# Every "def test_..." in the scripts is registered, so none can be forgotten.
foreach(script test_hf_fetch test_faults test_spend test_ranges test_hostile)
  set(py ${CMAKE_CURRENT_SOURCE_DIR}/integration/hf-fetch/${script}.py)
  file(STRINGS ${py} HF_FETCH_DEFS REGEX "^def test_[a-z0-9_]+\\(")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${py})
  foreach(line ${HF_FETCH_DEFS})
    string(REGEX REPLACE "^def test_([a-z0-9_]+)\\(.*" "\\1" name "${line}")
    add_test(NAME "hf-fetch: ${name}" COMMAND python3 ${py} test_${name})
    set_tests_properties("hf-fetch: ${name}" PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 120 LABELS hf-fetch)
  endforeach()
endforeach()

# The demo (README's first command) end to end, with the tools already built here.
add_test(NAME "hf-fetch: demo script"
         COMMAND ${CMAKE_SOURCE_DIR}/scripts/demo.sh)
set_tests_properties("hf-fetch: demo script" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV};PROVKIT_BUILD=${CMAKE_BINARY_DIR};PROVKIT_DEMO_SKIP_BUILD=1;PROVKIT_DEMO_CLEANUP=1" TIMEOUT 120 LABELS hf-fetch)
