# envcheck end to end. The NVIDIA driver cannot exist on test hosts, so two
# stand-in driver libraries are built here under the real sonames and dlopen'd
# by envcheck through ENVCHECK_NVML_LIB / ENVCHECK_CUDA_LIB, answering from a
# description file the test writes ($PROVKIT_FAKE_GPU).
set(ENVCHECK_FAKE_DRIVER_DIR ${CMAKE_BINARY_DIR}/envcheck-fake-driver)
add_library(envcheck-fake-nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/envcheck/fake_nvml.c)
add_library(envcheck-fake-cuda SHARED ${CMAKE_CURRENT_LIST_DIR}/envcheck/fake_cuda.c)
target_link_libraries(envcheck-fake-nvml PRIVATE ${CMAKE_DL_LIBS})
# No VERSION/SOVERSION: the file name (libnvidia-ml.so.1, libcuda.so.1) is the soname.
set_target_properties(envcheck-fake-nvml PROPERTIES OUTPUT_NAME nvidia-ml SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${ENVCHECK_FAKE_DRIVER_DIR})
set_target_properties(envcheck-fake-cuda PROPERTIES OUTPUT_NAME cuda SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${ENVCHECK_FAKE_DRIVER_DIR})
# ctest does not build: make `envcheck` pull its stand-ins in, so building the tool builds them.
if(TARGET envcheck)
  add_dependencies(envcheck envcheck-fake-nvml envcheck-fake-cuda)
endif()

# Every "def test_..." of the script is a ctest "envcheck: NAME" (discover.cmake); no case list to keep.
provkit_python_tests(envcheck TIMEOUT 120 SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_envcheck.py
  ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_links.py ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_kernels.py ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_gates.py
  ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_visibility.py)
