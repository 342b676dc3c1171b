#!/usr/bin/env bash
# Failure paths: an unresolvable -l: keeps zig's own error (the shim adds
# nothing), no zig found, and the recursion guards.
source "$(dirname "$0")/lib.sh"
printf 'int main(void) { return 0; }\n' > m.c

# 1. -l: that resolves nowhere: passed through, zig's (lld's) sentence unchanged.
set +e
"$SHIM" m.c -o m -l:libprovkit-nope.so.7 -L"$WORK" >shim.out 2>shim.err; rc=$?
"$ZIG" cc -fno-sanitize=all m.c -o m -l:libprovkit-nope.so.7 -L"$WORK" >zig.out 2>zig.err; zrc=$?
set -e
expect_eq "exit status" "$rc" "$zrc"
[[ $rc -ne 0 ]] || fail "linking a missing -l: succeeded"
expect_eq "stderr" "$(cat shim.err)" "$(cat zig.err)"
expect_contains "zig's error" "$(cat shim.err)" "unable to find library -l:libprovkit-nope.so.7"
ok "unresolvable -l: gives zig's own error: $(head -1 shim.err)"

# 2. No zig anywhere: one sentence saying where it looked, exit 2.
mkdir empty
set +e; out=$(env -u CC_SHIM_ZIG PATH="$WORK/empty" "$SHIM" m.c -o m 2>&1); rc=$?; set -e
expect_eq "exit status without zig" "$rc" 2
expect_eq "lines of the message" "$(printf '%s\n' "$out" | wc -l)" 1
expect_contains "message" "$out" "cc-shim: no zig found (looked at: zig on PATH ($WORK/empty)"
expect_contains "message" "$out" "site-packages/ziglang/zig"
ok "missing zig: $out"
set +e; out=$(CC_SHIM_ZIG=$WORK/nothing-here "$SHIM" m.c 2>&1); rc=$?; set -e
expect_eq "exit status with a bad CC_SHIM_ZIG" "$rc" 2
expect_contains "message" "$out" "CC_SHIM_ZIG=$WORK/nothing-here (not an executable file)"

# 3. zig's libc detection calls the shim: it fails at once, never starting zig.
cat > spy-zig <<SPY
#!/bin/sh
echo started >> "$WORK/spy.log"
exec "$ZIG" "\$@"
SPY
chmod +x spy-zig
set +e
ZIG_IS_DETECTING_LIBC_PATHS=1 CC_SHIM_ZIG=$WORK/spy-zig "$SHIM" -E -Wp,-v -xc /dev/null >det.out 2>det.err; rc=$?
set -e
expect_eq "exit status under ZIG_IS_DETECTING_LIBC_PATHS" "$rc" 1
[[ ! -e spy.log ]] || fail "the shim started zig during zig's libc detection"
expect_contains "detection message" "$(cat det.err)" "ZIG_IS_DETECTING_LIBC_PATHS"
ok "libc detection: refused without starting zig"

# ...and a real compile where zig's detection runs the shim (CC=shim, and cc on PATH is the shim) works.
"$SHIM" install "$WORK/bin"
CC=$SHIM PATH=$WORK/bin:$PATH timeout 120 "$SHIM" m.c -o m 2>guard.err || fail "compile with CC=cc-shim and cc=cc-shim failed: $(cat guard.err)"
./m || fail "the program built under the guard does not run"
ok "compile with CC and cc both the shim: no loop"

# 4. A "zig" that runs the shim again: refused on the second entry, no loop.
cat > loop-zig <<LOOP
#!/bin/sh
shift  # drop "cc", as a wrapper would
exec "$SHIM" "\$@"
LOOP
chmod +x loop-zig
set +e; out=$(CC_SHIM_ZIG=$WORK/loop-zig timeout 20 "$SHIM" m.c -o m 2>&1); rc=$?; set -e
expect_eq "exit status for a zig that runs cc-shim" "$rc" 2
expect_contains "message" "$out" "refusing to recurse"
ok "zig wrapper around the shim: $out"

# 5. CC_SHIM_ZIG naming the shim itself, and a zig on PATH that is the shim.
set +e; out=$(CC_SHIM_ZIG=$SHIM "$SHIM" m.c -o m 2>&1); rc=$?; set -e
expect_eq "exit status for CC_SHIM_ZIG=cc-shim" "$rc" 2
expect_contains "message" "$out" "that is cc-shim itself"
mkdir selfpath && ln -s "$SHIM" selfpath/zig
mkdir realpath && ln -s "$ZIG" realpath/zig
env -u CC_SHIM_ZIG PATH="$WORK/selfpath:$WORK/realpath:/usr/bin:/bin" "$SHIM" m.c -o m || fail "zig after a self link on PATH not used"
info=$(env -u CC_SHIM_ZIG PATH="$WORK/selfpath:$WORK/realpath:/usr/bin:/bin" "$SHIM" --shim-info)
expect_contains "--shim-info" "$info" "zig: $WORK/realpath/zig (found via PATH)"
ok "a zig that is the shim itself is never run"
