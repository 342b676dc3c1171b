# envbuild integration tests: wheels built by the tests (zipfile + gcc),
# Debian's pip/setuptools wheels, a real python3 and pip, a simple index
# served on loopback, a standalone CPython archive made from the local Python.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(ENVBUILD_TEST_DIR ${CMAKE_CURRENT_SOURCE_DIR}/integration/envbuild)
foreach(script install index_capture locks)
  add_test(NAME "envbuild: ${script}" COMMAND ${Python3_EXECUTABLE} ${ENVBUILD_TEST_DIR}/test_${script}.py)
  set_tests_properties("envbuild: ${script}" PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 300)
endforeach()
