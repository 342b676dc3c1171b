# Issue 6, real clients side by side: @huggingface/hub's snapshotDownload and hf-fetch, from one Hub
# simulator, write the same blobs, bytes and snapshot links (the JS client comes from hubsim.cmake's fixture).
add_test(NAME "hf-fetch: same cache as @huggingface/hub"
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/hf-fetch-interop/test_js_compare.py)
set_tests_properties("hf-fetch: same cache as @huggingface/hub" PROPERTIES
  ENVIRONMENT "${PROVKIT_TEST_ENV}" TIMEOUT 60 LABELS hf-fetch FIXTURES_REQUIRED hubsim_js_client)
