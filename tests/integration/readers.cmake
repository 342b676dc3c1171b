# Headers as their own readers read them (issue 42): hf-fetch inspect beside gguf-py's GGUFWriter/GGUFReader and
# tables and safetensors' own Rust reader (Debian unstable's python3-gguf and python3-safetensors, fetched once by the fixture).
set(READERS_TEST_DIR ${CMAKE_CURRENT_LIST_DIR}/readers)
add_test(NAME "readers: fetch gguf-py and safetensors (apt-get download)" COMMAND bash ${READERS_TEST_DIR}/fetch-readers.sh)
set_tests_properties("readers: fetch gguf-py and safetensors (apt-get download)" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" FIXTURES_SETUP readers LABELS readers TIMEOUT 300)
provkit_python_tests(readers TIMEOUT 180 PROPERTIES FIXTURES_REQUIRED readers
                     SCRIPTS ${READERS_TEST_DIR}/test_gguf_py.py ${READERS_TEST_DIR}/test_safetensors_rules.py)
