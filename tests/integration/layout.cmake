# The test layout: every library module has tests/unit/<domain>/test_<module>.cpp, or a line in
# tests/unit/modules-tested-elsewhere.txt saying where its behaviours are tested (scripts/list-untested-modules.sh).
add_test(NAME "layout: every library module has its unit tests" COMMAND ${CMAKE_SOURCE_DIR}/scripts/list-untested-modules.sh)
set_tests_properties("layout: every library module has its unit tests" PROPERTIES LABELS layout TIMEOUT 60)
# The library reads the environment only through util/environment's table (docs/environment.md).
add_test(NAME "layout: the environment is read only through its registry"
  COMMAND ${CMAKE_SOURCE_DIR}/scripts/list-environment-reads.sh)
set_tests_properties("layout: the environment is read only through its registry" PROPERTIES LABELS layout TIMEOUT 60)
# The ledger's judge itself, on trees made for it.
provkit_python_tests(layout SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/layout/test_ledger.py TIMEOUT 60)
# No library sentence names a flag of ours: the tools say which flag gave a value.
provkit_python_tests(layout SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/layout/test_library_sentences.py TIMEOUT 60)
