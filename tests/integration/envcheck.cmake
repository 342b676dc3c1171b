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
# The stand-in libnccl.so.2 (the engine's NCCL, found by path, in a Python environment or by the loader).
add_library(envcheck-fake-nccl SHARED ${CMAKE_CURRENT_LIST_DIR}/envcheck/fake_nccl.c)
set_target_properties(envcheck-fake-nccl PROPERTIES OUTPUT_NAME nccl SUFFIX .so.2
  LIBRARY_OUTPUT_DIRECTORY ${ENVCHECK_FAKE_DRIVER_DIR}/nccl)
# The same stand-in as a driver older than 510, without the _v3 process lists.
add_library(envcheck-fake-nvml-v2 SHARED ${CMAKE_CURRENT_LIST_DIR}/envcheck/fake_nvml.c)
target_compile_definitions(envcheck-fake-nvml-v2 PRIVATE FAKE_NVML_NO_V3)
target_link_libraries(envcheck-fake-nvml-v2 PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(envcheck-fake-nvml-v2 PROPERTIES OUTPUT_NAME nvidia-ml SUFFIX .so.1
  LIBRARY_OUTPUT_DIRECTORY ${ENVCHECK_FAKE_DRIVER_DIR}/pre-510)
# ctest does not build: make `envcheck` pull its stand-ins in, so building the tool builds them.
if(TARGET envcheck)
  add_dependencies(envcheck envcheck-fake-nvml envcheck-fake-nvml-v2 envcheck-fake-cuda envcheck-fake-nccl)
endif()
# hf-fetch inspect --gpus local reads the same stand-in driver.
if(TARGET hf-fetch)
  add_dependencies(hf-fetch envcheck-fake-nvml envcheck-fake-cuda)
endif()

# Every "def test_..." of every test_*.py here is a ctest "envcheck: NAME" (discover.cmake); no case list to keep.
file(GLOB ENVCHECK_TEST_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/envcheck/test_*.py)
provkit_python_tests(envcheck TIMEOUT 120 SCRIPTS ${ENVCHECK_TEST_SCRIPTS})
