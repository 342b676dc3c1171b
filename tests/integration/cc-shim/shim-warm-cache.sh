#!/usr/bin/env bash
# Fixture cc-shim-shim-warm: a zig cache filled by `cc-shim --shim-warm` and
# by nothing else, for warm-up.sh, and the start of the shared cache
# (warm-cache.sh). Started from an empty directory; warming builds libc++ and
# libc++abi four times (debug, -O2, shared, -O2 objects linked), 4 minutes on
# an idle 2-core box and over 10 loaded, so the cache is kept in the build
# tree and reused by later runs. Every run still calls --shim-warm on it: on a warm
# cache that takes seconds, and when the shim's flags have changed it builds
# what they now need, so the cache is always the one --shim-warm leaves. The
# stamp says it was started empty and warmed; without it the cache is made
# again from nothing.
source "$(dirname "$0")/lib.sh"
CACHE=$PROVKIT_BUILD_DIR/tests/cc-shim/zig-cache-shim-warm
if [[ ! -f $CACHE.stamp ]]; then
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  echo "warming a fresh cache: $CACHE (minutes: libc++)"
fi
export ZIG_GLOBAL_CACHE_DIR=$CACHE
unset ZIG_LOCAL_CACHE_DIR
t0=$SECONDS
"$SHIM" --shim-warm >warm.out 2>&1 || { cat warm.out >&2; fail "cc-shim --shim-warm failed"; }
cat warm.out
[[ -f $CACHE.stamp ]] || echo "fresh cache warmed in $((SECONDS - t0)) s ($(date -u +%FT%TZ))" >"$CACHE.stamp"
ok "zig cache warmed by --shim-warm at $CACHE: $(cat "$CACHE.stamp")"
