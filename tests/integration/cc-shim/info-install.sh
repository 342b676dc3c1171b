#!/usr/bin/env bash
# --shim-info (text and --json) for each way of finding zig, and
# `cc-shim install DIR`.
source "$(dirname "$0")/lib.sh"
version=$("$ZIG" version)

info=$("$SHIM" --shim-info)
expect_contains "--shim-info" "$info" "zig: $ZIG (found via CC_SHIM_ZIG)"
expect_contains "--shim-info" "$info" "zig version: $version"
expect_contains "--shim-info" "$info" "global cache: $ZIG_GLOBAL_CACHE_DIR"
expect_contains "--shim-info" "$info" "local cache: $ZIG_LOCAL_CACHE_DIR"
"$SHIM" --shim-info --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["zig"] == sys.argv[1] and j["found_via"] == "CC_SHIM_ZIG" and j["version"] == sys.argv[2], j
assert j["mode"] == "cc" and j["global_cache"] == sys.argv[3], j' "$ZIG" "$version" "$ZIG_GLOBAL_CACHE_DIR" \
  || fail "--shim-info --json"
ok "--shim-info via CC_SHIM_ZIG"

# zig on PATH
mkdir pathdir && ln -s "$ZIG" pathdir/zig
info=$(env -u CC_SHIM_ZIG PATH="$WORK/pathdir:/usr/bin:/bin" "$SHIM" --shim-info)
expect_contains "--shim-info" "$info" "zig: $WORK/pathdir/zig (found via PATH)"

# the ziglang package of a venv holding the shim in its bin/
mkdir -p venv/bin venv/lib/python3.11/site-packages/ziglang
ln -s "$ZIG" venv/lib/python3.11/site-packages/ziglang/zig
ln -s "$SHIM" venv/bin/cc
info=$(env -u CC_SHIM_ZIG PATH=/usr/bin:/bin "$WORK/venv/bin/cc" --shim-info)
expect_contains "--shim-info" "$info" "zig: $WORK/venv/lib/python3.11/site-packages/ziglang/zig (found via ziglang package)"
printf 'int main(void) { return 0; }\n' > v.c
env -u CC_SHIM_ZIG PATH=/usr/bin:/bin "$WORK/venv/bin/cc" v.c -o v && ./v || fail "compile via the venv's ziglang failed"
ok "zig found on PATH and in a venv's ziglang package"

# none found (json form)
set +e; out=$(env -u CC_SHIM_ZIG PATH=/nonexistent "$SHIM" --shim-info --json); rc=$?; set -e
expect_eq "--shim-info --json without zig: exit" "$rc" 2
echo "$out" | python3 -c 'import json,sys; j=json.load(sys.stdin); assert j["zig"] is None and j["looked"][0] == "zig on PATH (/nonexistent)", j' \
  || fail "--shim-info --json without zig: $out"

# install DIR
"$SHIM" install "$WORK/links" || fail "install failed"
for name in cc gcc c++ g++; do
  [[ -L links/$name && $(readlink -f links/$name) == $(readlink -f "$SHIM") ]] || fail "links/$name is not a link to the shim"
done
"$SHIM" install "$WORK/links" || fail "a second install into the same DIR failed"
expect_contains "--shim-info as g++" "$(links/g++ --shim-info)" "mode: zig c++"
mkdir other && touch other/gcc
set +e; out=$("$SHIM" install "$WORK/other" 2>&1); rc=$?; set -e
expect_eq "install over a foreign gcc: exit" "$rc" 2
expect_contains "install over a foreign gcc" "$out" "other/gcc already exists and is not a link to cc-shim"
[[ ! -e other/cc ]] || fail "install changed DIR although it refused"
ok "install DIR"

# The shim's own options (the tool's, shims/cc-shim/commands.cpp): help, version, usage errors; and the
# refusals that come before them.
expect_contains "--shim-help" "$("$SHIM" --shim-help)" "cc-shim install DIR"
expect_contains "--shim-version" "$("$SHIM" --shim-version)" "cc-shim (provkit) "
for usage in "--shim-info --yaml|cc-shim: usage: cc-shim --shim-info [--json]" \
             "--shim-warm --yaml|cc-shim: usage: cc-shim --shim-warm [--json]" \
             "install|cc-shim: usage: cc-shim install DIR"; do
  set +e; err=$("$SHIM" ${usage%%|*} 2>&1 >/dev/null); rc=$?; set -e
  expect_eq "${usage%%|*}: exit" "$rc" 2
  expect_eq "${usage%%|*}" "$err" "${usage#*|}"
done
set +e; err=$(CC_SHIM_ACTIVE=/opt/zig "$SHIM" --shim-help 2>&1 >/dev/null); rc=$?; set -e
expect_eq "--shim-help from within zig: exit" "$rc" 2
expect_contains "--shim-help from within zig" "$err" "called again from within the zig it started (/opt/zig)"
ok "the shim's own options"
