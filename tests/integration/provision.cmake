# examples/provision-box.sh against the Hub simulator, a local wheelhouse and the stand-in driver
# libraries of the envcheck tests: the happy path and each gate made to fail.
foreach(case happy driver_too_old no_fp8 disk_too_small hub_unreachable upstream_changed lock_mismatch
             verify_drift no_compiler_no_zig)
  add_test(NAME "provision: ${case}"
           COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/integration/provision/test_provision.py ${case})
  set_tests_properties("provision: ${case}" PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 120 LABELS provision)
endforeach()
# The box with no compiler but zig: cc-shim is installed and the rest of the gates pass through it.
add_test(NAME "provision: no_compiler_cc_shim"
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/integration/provision/test_provision.py no_compiler_cc_shim)
set_tests_properties("provision: no_compiler_cc_shim" PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 300
                     LABELS provision FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm")
