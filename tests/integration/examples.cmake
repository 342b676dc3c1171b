# examples/deploy-fleet.sh (issue 21) against the Hub simulator: seed, mirror fallback, four nodes.
provkit_python_tests(examples SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/examples/test_deploy_fleet.py TIMEOUT 300)
# examples/serve-gguf-amd.sh (issue 43 item 10): the AMD box's gates, fetch, fit and start.
provkit_python_tests(examples SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/examples/test_serve_gguf_amd.py TIMEOUT 300)
