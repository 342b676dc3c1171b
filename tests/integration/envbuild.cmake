# envbuild integration tests: wheels built by the tests (zipfile + gcc),
# Debian's pip/setuptools wheels, a real python3 and pip, a simple index
# served on loopback, a standalone CPython archive made from the local Python.
# One ctest per script (PER_SCRIPT): a script's tests build on the environments its earlier tests made
# and share one expensive setup, so they run in order in one process. Every test_*.py is found by glob.
file(GLOB ENVBUILD_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/envbuild/test_*.py)
provkit_python_tests(envbuild PER_SCRIPT TIMEOUT 300 SCRIPTS ${ENVBUILD_TEST_SCRIPTS})
