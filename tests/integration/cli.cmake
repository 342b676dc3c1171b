# The command-line convention of every tool (provkit/cli/convention.hpp), on the real binaries and the man
# pages built beside them. Every "def test_..." in the script is registered (discover.cmake).
provkit_python_tests(cli TIMEOUT 180 SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/cli/test_cli.py
  ${CMAKE_CURRENT_SOURCE_DIR}/integration/cli/test_output.py)
