# examples/provision-box.sh against the Hub simulator, a local wheelhouse and the stand-in driver
# libraries of the envcheck tests: the happy path and each gate made to fail, every "def test_..." a ctest.
provkit_python_tests(provision SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/provision/test_provision.py)
# The box with no compiler but zig: cc-shim is installed and the rest of the gates pass through it.
set_tests_properties("provision: no_compiler_cc_shim" PROPERTIES TIMEOUT 300
                     FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm")
