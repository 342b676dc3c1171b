# The test layout: every library module has tests/unit/<domain>/test_<module>.cpp, or a line in
# tests/unit/modules-tested-elsewhere.txt saying where its behaviours are tested (scripts/list-untested-modules.sh).
add_test(NAME "layout: every library module has its unit tests" COMMAND ${CMAKE_SOURCE_DIR}/scripts/list-untested-modules.sh)
set_tests_properties("layout: every library module has its unit tests" PROPERTIES LABELS layout TIMEOUT 60)
