# The house style: every C++ file as .clang-format lays it out, and no clang-tidy finding (.clang-tidy) beyond
# those recorded in scripts/lint-baseline.txt (scripts/lint.sh).
add_test(NAME "lint: clang-format and clang-tidy" COMMAND ${CMAKE_SOURCE_DIR}/scripts/lint.sh)
set_tests_properties("lint: clang-format and clang-tidy" PROPERTIES
  ENVIRONMENT "PROVKIT_BUILD=${CMAKE_BINARY_DIR};PROVKIT_LINT_JOBS=2"
  LABELS lint
  TIMEOUT 1800)
