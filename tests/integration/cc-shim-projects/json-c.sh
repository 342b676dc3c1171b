#!/usr/bin/env bash
# json-c 0.16 (Debian's source): CMake with its own -Werror and
# -Wstrict-prototypes, then its ctest suite, with gcc and with cc-shim.
# Before the shim mapped clang's -Wstrict-prototypes off, the shim's build
# stopped at json_util_get_last_err() ("-Werror,-Wstrict-prototypes").
source "$(dirname "$0")/lib.sh"
command -v cmake >/dev/null || fail "cmake is not installed (scripts/deps.sh)"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack json-c "$c.src"
  step "json-c cmake ($c)" 240 "$c.configure" cmake -S "$c.src" -B "$c" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  step "json-c build ($c)" 600 "$c.make" ninja -C "$c" -j2
  step "json-c ctest ($c)" 300 "$c.test" ctest --test-dir "$c" -j2
done
grep -q -- ' -Werror .*-Wstrict-prototypes' gcc/build.ninja ||
  fail "json-c's build does not use its own -Werror and -Wstrict-prototypes (the case needs them)"
# What CMake's probes found: the HAVE_* / SIZEOF_* results and the generated headers.
for c in "${COMPILERS[@]}"; do grep -E '^(HAVE_|SIZEOF_|JSON_C_HAVE|HAS_)' "$c/CMakeCache.txt" | sort >"$c.probes"; done
expect_line "gcc's probes" gcc.probes "HAVE_STDINT_H:INTERNAL=1"
expect_same "CMake's probe results" gcc.probes shim.probes
expect_same "config.h" gcc/config.h shim/config.h
expect_same "json_config.h" gcc/json_config.h shim/json_config.h
expect_warnings_like_gcc "json-c build" gcc.make shim.make
for c in "${COMPILERS[@]}"; do grep -E 'tests passed|tests failed' "$c.test" >"$c.result" || true; done
expect_line "gcc's ctest" gcc.result "100% tests passed, 0 tests failed out of 23"
expect_same "ctest result" gcc.result shim.result
