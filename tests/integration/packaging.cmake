# The .deb: built with cpack from this build tree, its file list and Depends
# checked, installed into a fresh root with dpkg --root, each tool run there.
add_test(NAME "packaging: deb builds, installs into a fresh root, tools run"
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/packaging/test_deb.sh)
set_tests_properties("packaging: deb builds, installs into a fresh root, tools run" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 600 RUN_SERIAL TRUE)
