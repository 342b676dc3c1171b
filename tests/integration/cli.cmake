# The command-line convention of every tool (tools/common/cmdline.hpp), on the real binaries and the man
# pages built beside them. Every "def test_..." in the script is registered, so none can be forgotten.
set(CLI_TEST_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/integration/cli/test_cli.py)
file(STRINGS ${CLI_TEST_SCRIPT} CLI_TEST_DEFS REGEX "^def test_[a-z0-9_]+\\(")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CLI_TEST_SCRIPT})
foreach(line ${CLI_TEST_DEFS})
  string(REGEX REPLACE "^def test_([a-z0-9_]+)\\(.*" "\\1" name "${line}")
  add_test(NAME "cli: ${name}" COMMAND python3 ${CLI_TEST_SCRIPT} test_${name})
  set_tests_properties("cli: ${name}" PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 180 LABELS cli)
endforeach()
