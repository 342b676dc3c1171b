# The .deb: built with cpack from this build tree, its file list and Depends
# checked, installed into a fresh root with dpkg --root, each tool run there.
add_test(NAME "packaging: deb builds, installs into a fresh root, tools run"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/packaging/test_deb.sh)
set_tests_properties("packaging: deb builds, installs into a fresh root, tools run" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 600 RUN_SERIAL TRUE)

# The release archive (scripts/release.sh): unpacked into a fresh directory,
# checked against docs/installing.md's glibc floor, each tool run there with
# an empty environment (a real command each; cc-shim through the npm zig).
add_test(NAME "packaging: release archive unpacks and runs with an empty environment"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/packaging/test_release.sh)
set_tests_properties("packaging: release archive unpacks and runs with an empty environment" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_REQUIRED "cc-shim-zig;cc-shim-warm" TIMEOUT 600 RUN_SERIAL TRUE)
