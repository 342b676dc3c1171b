# The Hub simulator (tests/hubsim): its self-test (every test_*.py here but the JS client's; each test starts
# its own simulator), and interop with the official JS client.
file(GLOB HUBSIM_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/hubsim/test_*.py)
list(FILTER HUBSIM_TEST_SCRIPTS EXCLUDE REGEX "/test_hf_js_client\\.py$")  # registered below, with its npm fixture
provkit_python_tests(hubsim TIMEOUT 60 SCRIPTS ${HUBSIM_TEST_SCRIPTS})

# @huggingface/hub is installed with npm into the build tree at test time (reused when present).
add_test(NAME "hubsim: npm install @huggingface/hub"
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/hubsim/npm_install.sh ${CMAKE_BINARY_DIR}/npm/hf-hub)
set_tests_properties("hubsim: npm install @huggingface/hub" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 400 FIXTURES_SETUP hubsim_js_client LABELS hubsim)

provkit_python_tests(hubsim TIMEOUT 180 PROPERTIES FIXTURES_REQUIRED hubsim_js_client
                     SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/hubsim/test_hf_js_client.py)
