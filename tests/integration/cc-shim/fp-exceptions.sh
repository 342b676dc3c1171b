#!/usr/bin/env bash
# gcc's default -ftrapping-math against clang's default: a guarded division
# (pixman's float combiners) vectorised by clang divides every lane, and with
# FE_DIVBYZERO unmasked that is a SIGFPE gcc's build never raises (pixman's
# combiner-test died so). The shim gives clang gcc's semantics
# (-ffp-exception-behavior=maytrap) unless the caller chooses its own.
source "$(dirname "$0")/lib.sh"
cp "$HERE/fp_trap.c" .
GCC=$(command -v gcc) || fail "gcc (the reference) is not on PATH"
"$GCC" -O2 fp_trap.c -o by-gcc -lm || fail "gcc did not build fp_trap.c"
expect_eq "gcc's program" "$(./by-gcc)" "0.250 0.750"
"$ZIG" cc -O2 fp_trap.c -o by-zig -lm 2>zig.err || fail "zig cc did not build fp_trap.c: $(cat zig.err)"
set +e; ./by-zig >zig.out 2>&1; rc=$?; set -e
[[ $rc -ne 0 ]] || fail "plain zig cc's program ran (the rule would not be needed): $(cat zig.out)"
ok "plain zig cc -O2: the program dies (status $rc, SIGFPE is 136)"
for opt in -O2 -O3; do
  "$SHIM" "$opt" fp_trap.c -o by-shim -lm 2>shim.err || fail "the shim did not build fp_trap.c ($opt): $(cat shim.err)"
  [[ ! -s shim.err ]] || fail "the shim printed on a clean build ($opt): $(cat shim.err)"
  expect_eq "the shim's program ($opt)" "$(./by-shim)" "0.250 0.750"
done
ok "through the shim the program runs as gcc's does, silently built"
# A caller's own choice of FP semantics wins, with no clang warning about an overridden option.
for opt in -ffast-math -fno-trapping-math -ffp-exception-behavior=ignore -ffp-model=fast -Ofast; do
  CC_SHIM_DEBUG=1 "$SHIM" -O2 "$opt" -c fp_trap.c -o own.o 2>own.err || fail "the shim failed with $opt: $(cat own.err)"
  cmd=$(sed -n 's/^cc-shim: exec //p' own.err)
  [[ -n $cmd ]] || fail "CC_SHIM_DEBUG printed no command line: $(cat own.err)"
  [[ $cmd != *maytrap* ]] || fail "with $opt the shim still added its FP default: $cmd"
  ! grep -v '^cc-shim: exec ' own.err >&2 || fail "with $opt the compile printed the lines above"
done
ok "a caller's -ffast-math, -fno-trapping-math, -ffp-exception-behavior=, -ffp-model=, -Ofast: no shim default"
