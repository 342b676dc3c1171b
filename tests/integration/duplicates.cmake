# No block of six or more lines of real code written twice in lib/, tools/, shims/ and tests/unit/
# (scripts/check-duplicates.py); the script's own tests on small fixture trees are the
# "def test_..."s of duplicates/test_check_duplicates.py.
add_test(NAME "layout: no block of six lines of code written twice" COMMAND ${Python3_EXECUTABLE}
         ${CMAKE_SOURCE_DIR}/scripts/check-duplicates.py)
set_tests_properties("layout: no block of six lines of code written twice" PROPERTIES LABELS layout TIMEOUT 60)
provkit_python_tests(duplicates TIMEOUT 60 SCRIPTS
  ${CMAKE_CURRENT_SOURCE_DIR}/integration/duplicates/test_check_duplicates.py)
