#!/usr/bin/env bash
# expat 2.5.0 (Debian's source): CMake, C and C++ (its runtests_cxx), ctest,
# with gcc/g++ and with cc-shim as cc and c++. Compared: CMake's probe
# results and expat_config.h, the diagnostics, the ctest results, and the
# tools CMake found beside the compiler (docs/cc-shim.md: CMake takes the
# shim for clang and looks for llvm-ar and ld.lld first).
source "$(dirname "$0")/lib.sh"
"$SHIM" install "$WORK/shim-bin" || fail "cc-shim install failed"
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  if [[ $c == gcc ]]; then export CXX=$(command -v g++); else export CXX=$WORK/shim-bin/c++; fi
  unpack expat "$c.src"
  step "expat cmake ($c)" 600 "$c.configure" cmake -S "$c.src/expat" -B "$c" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DEXPAT_BUILD_DOCS=OFF -DEXPAT_BUILD_EXAMPLES=OFF
  step "expat build ($c)" 600 "$c.make" ninja -C "$c" -j2
  step "expat ctest ($c)" 300 "$c.test" ctest --test-dir "$c" -j2
done
for c in "${COMPILERS[@]}"; do grep -E '^(HAVE_|SIZEOF_|WORDS_|BYTEORDER)' "$c/CMakeCache.txt" | sort >"$c.probes"; done
expect_line "gcc's probes" gcc.probes "HAVE_GETRANDOM:INTERNAL=1"
expect_same "CMake's probe results" gcc.probes shim.probes
expect_same "expat_config.h" gcc/expat_config.h shim/expat_config.h
expect_warnings_like_gcc "expat build" gcc.make shim.make
for c in "${COMPILERS[@]}"; do grep -E 'tests passed|tests failed' "$c.test" >"$c.result" || true; done
expect_line "gcc's ctest" gcc.result "100% tests passed, 0 tests failed out of 2"
expect_same "ctest result" gcc.result shim.result
for c in "${COMPILERS[@]}"; do grep -E '^CMAKE_(AR|RANLIB|NM|LINKER|OBJCOPY|OBJDUMP|STRIP|READELF|ADDR2LINE):' "$c/CMakeCache.txt" >"$c.tools"; done
echo "CMake's tools with cc-shim:"; cat shim.tools
