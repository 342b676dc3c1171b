# envbuild integration tests: wheels built by the tests (zipfile + gcc),
# Debian's pip/setuptools wheels, a real python3 and pip, a simple index
# served on loopback, a standalone CPython archive made from the local Python.
# One ctest per "def test_..." (discover.cmake), each its own process with its own temporary directory: a
# test that needs what another makes (an environment, a filled-in lock, a capture) makes it itself through
# the script's helper, so any one runs alone and in any order. Every test_*.py is found by glob.
file(GLOB ENVBUILD_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/envbuild/test_*.py)
provkit_python_tests(envbuild TIMEOUT 300 SCRIPTS ${ENVBUILD_TEST_SCRIPTS})
