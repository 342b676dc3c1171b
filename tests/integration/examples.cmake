# examples/deploy-fleet.sh (issue 21) against the Hub simulator: seed, mirror fallback, four nodes.
provkit_python_tests(examples SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/examples/test_deploy_fleet.py TIMEOUT 300)
