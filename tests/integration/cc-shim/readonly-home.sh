#!/usr/bin/env bash
# With ZIG_*_CACHE_DIR unset zig would use $HOME/.cache/zig; the shim points
# both at a writable per-user directory, so a read-only home does not break a
# compile. The home is a read-only bind mount where unshare allows one, else
# a path that is not a directory at all (root can write through mode bits).
source "$(dirname "$0")/lib.sh"
unset ZIG_GLOBAL_CACHE_DIR ZIG_LOCAL_CACHE_DIR XDG_CACHE_HOME
printf 'int f(void) { return 1; }\n' > r.c
mkdir home
chmod 555 home

compile_in_readonly_home() {  # compile_in_readonly_home COMMAND...: run it with HOME read-only
  if unshare -rm true 2>/dev/null; then
    unshare -rm sh -c 'mount --bind -o ro "$1" "$1" 2>/dev/null || mount -o remount,bind,ro "$1"; shift; HOME=$WORK/home "$@"' sh "$WORK/home" "$@"
  else
    HOME=/dev/null "$@"
  fi
}
export WORK
set +e; compile_in_readonly_home "$ZIG" cc -c r.c -o direct.o 2>direct.err; rc=$?; set -e
[[ $rc -ne 0 ]] || fail "plain zig compiled with a read-only home: the test would prove nothing"
ok "plain zig cc fails: $(head -1 direct.err)"

compile_in_readonly_home "$SHIM" -c r.c -o r.o 2>shim.err || fail "shim compile with a read-only home failed: $(cat shim.err)"
[[ -s r.o ]] || fail "no object written"
info=$(compile_in_readonly_home "$SHIM" --shim-info)
expect_contains "--shim-info cache" "$info" "global cache: /tmp/provkit-$(id -u)/provkit/zig"
ok "shim compiles with a read-only home, cache in /tmp/provkit-$(id -u)"

# a writable XDG_CACHE_HOME is where the cache goes when one is set
XDG_CACHE_HOME=$WORK/xdg "$SHIM" -c r.c -o r2.o || fail "compile with XDG_CACHE_HOME failed"
# (the run's own local cache is made, and removed, under the global one)
[[ -d $WORK/xdg/provkit/zig/cc-shim-runs ]] || fail "zig cache not under XDG_CACHE_HOME/provkit/zig"
ok "default cache under \$XDG_CACHE_HOME/provkit/zig"
