# The attacker sweep (issue 20): every place the four tools read or write that a user or another job can
# plant something in, against every plant (links out, a FIFO, a device node, an oversized file, a name with
# a newline, an escape and bytes that are not UTF-8), as one table (tests/integration/sweep/sweep_table.py).
# Every "def test_..." is a ctest "hostile-sweep: NAME".
file(GLOB SWEEP_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/integration/sweep/test_*.py)
provkit_python_tests(hostile-sweep TIMEOUT 300 SCRIPTS ${SWEEP_TEST_SCRIPTS})
# cc-shim's rows run the real zig that the cc-shim fixture installs (each cell with a zig cache of its own).
set_tests_properties("hostile-sweep: ccshim_rows" PROPERTIES FIXTURES_REQUIRED "cc-shim-zig")
