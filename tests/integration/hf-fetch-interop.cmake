# Issue 6, real clients side by side: @huggingface/hub's snapshotDownload and hf-fetch, from one Hub
# simulator, write the same blobs, bytes and snapshot links (the JS client comes from hubsim.cmake's fixture).
provkit_python_tests(hf-fetch TIMEOUT 60 PROPERTIES FIXTURES_REQUIRED hubsim_js_client
                     SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/hf-fetch-interop/test_js_compare.py)
