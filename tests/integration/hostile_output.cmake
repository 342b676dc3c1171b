# Names and messages from outside on their way to a terminal, a script or a written file (issue 20): every
# tool's plain and --json output, and the files envbuild capture writes. Every "def test_..." is a ctest.
file(GLOB HOSTILE_OUTPUT_TEST_SCRIPTS CONFIGURE_DEPENDS
     ${CMAKE_CURRENT_SOURCE_DIR}/integration/hostile_output/test_*.py)
provkit_python_tests(hostile-output TIMEOUT 180 SCRIPTS ${HOSTILE_OUTPUT_TEST_SCRIPTS})
