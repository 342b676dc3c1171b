# The fleet mirror: hf-fetch mirror export served by nginx in a network namespace, three clients in
# three other namespaces (needs root: CI runs as root; without namespaces the test fails, it never skips).
provkit_python_tests(mirror SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/integration/mirror/test_mirror.py)
