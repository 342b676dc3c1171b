# envcheck end to end. The NVIDIA driver cannot exist on test hosts, so two
# stand-in driver libraries are built here under the real sonames and dlopen'd
# by envcheck through ENVCHECK_NVML_LIB / ENVCHECK_CUDA_LIB, answering from a
# description file the test writes ($PROVKIT_FAKE_GPU).
find_program(PROVKIT_PYTHON3 python3 REQUIRED)

set(ENVCHECK_FAKE_DRIVER_DIR ${CMAKE_BINARY_DIR}/envcheck-fake-driver)
add_library(envcheck-fake-nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/envcheck/fake_nvml.c)
add_library(envcheck-fake-cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/envcheck/fake_cuda.c)
# No VERSION/SOVERSION: the file name (libnvidia-ml.so.1, libcuda.so.1) is the soname.
set_target_properties(envcheck-fake-nvml PROPERTIES OUTPUT_NAME nvidia-ml SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${ENVCHECK_FAKE_DRIVER_DIR})
set_target_properties(envcheck-fake-cuda PROPERTIES OUTPUT_NAME cuda SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${ENVCHECK_FAKE_DRIVER_DIR})
# ctest does not build: make `envcheck` pull its stand-ins in, so building the tool builds them.
if(TARGET envcheck)
  add_dependencies(envcheck envcheck-fake-nvml envcheck-fake-cuda)
endif()

# Every "def case_..." in the script is registered, so none can be forgotten.
set(ENVCHECK_TEST_PY ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_envcheck.py)
file(STRINGS ${ENVCHECK_TEST_PY} ENVCHECK_CASE_DEFS REGEX "^def case_[a-z0-9_]+\\(")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${ENVCHECK_TEST_PY})
foreach(line ${ENVCHECK_CASE_DEFS})
  string(REGEX REPLACE "^def case_([a-z0-9_]+)\\(.*" "\\1" case "${line}")
  add_test(NAME "envcheck: ${case}"
    COMMAND ${PROVKIT_PYTHON3} ${ENVCHECK_TEST_PY} ${case})
  set_tests_properties("envcheck: ${case}" PROPERTIES
    ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 120 SKIP_RETURN_CODE 77)
endforeach()
