# The fleet mirror: hf-fetch mirror export served by nginx in a network namespace, three clients in
# three other namespaces (needs root: CI runs as root; without namespaces the test fails, it never skips).
add_test(NAME "mirror: three namespaced clients from one nginx"
         COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/integration/mirror/test_mirror.py)
set_tests_properties("mirror: three namespaced clients from one nginx" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 120 LABELS mirror)
