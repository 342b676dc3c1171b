# provkit_python_tests(LABEL [TIMEOUT seconds] [PROPERTIES prop value...] SCRIPTS script.py...)
#
# Registers the Python integration tests of tests/integration/common.py's harness, so that no case list
# is written by hand: every "def test_NAME(" at the start of a line in a script becomes the ctest
# "LABEL: NAME", run as `python3 SCRIPT test_NAME`: its own process, so no test depends on another having
# run (one that needs another's result makes it itself, through a helper of its script).
# Each test gets the PROVKIT_* environment, the label LABEL, exit 77 read as skipped, TIMEOUT (default
# 120) and PROPERTIES (single values; a list-valued property: set_tests_properties afterwards). CMake re-runs when a script changes, so a new test is registered at once.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

function(provkit_python_tests label)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TIMEOUT" "PROPERTIES;SCRIPTS")
  if(NOT arg_SCRIPTS)
    message(FATAL_ERROR "provkit_python_tests(${label}): no SCRIPTS")
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 120)
  endif()
  set(names)
  foreach(script ${arg_SCRIPTS})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${script})
    file(STRINGS ${script} defs REGEX "^def test_[A-Za-z0-9_]+\\(")
    if(NOT defs)
      message(FATAL_ERROR "${script} has no \"def test_...(\": nothing to register")
    endif()
    foreach(line ${defs})
      string(REGEX REPLACE "^def test_([A-Za-z0-9_]+)\\(.*" "\\1" name "${line}")
      if("${label}: ${name}" IN_LIST names)
        message(FATAL_ERROR "${script}: test_${name} is registered twice under ${label}")
      endif()
      add_test(NAME "${label}: ${name}" COMMAND ${Python3_EXECUTABLE} ${script} test_${name})
      list(APPEND names "${label}: ${name}")
    endforeach()
  endforeach()
  set_tests_properties(${names} PROPERTIES ENVIRONMENT "${PROVKIT_TEST_ENV}" LABELS ${label}
                       TIMEOUT ${arg_TIMEOUT} SKIP_RETURN_CODE 77 ${arg_PROPERTIES})
endfunction()
