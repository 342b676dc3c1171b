#!/usr/bin/env bash
# Lua 5.4.4 (Debian's lua5.4 source): its own Makefile (make linux), then
# the interpreter run on a script exercising the language, the string,
# table, math and coroutine libraries and errors, with gcc and with cc-shim.
# (The upstream test suite is a separate tarball Debian does not ship; the
# script's output is compared byte for byte.)
source "$(dirname "$0")/lib.sh"
cat >check.lua <<'LUA'
local t = {}
for i = 1, 1000 do t[i] = (i * 7919) % 1009 end
table.sort(t)
print(t[1], t[500], t[1000], #t)
print(string.format("%.14g %5.2f %x %q", math.pi, 1/3, 255, "a\nb"))
print(("hello world"):gsub("o", "0"), ("x=1, y=22"):match("y=(%d+)"))
local co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
print(co(1), co(21))
print(pcall(error, {code = 42}), select("#", pcall(error)))
print(math.maxinteger, math.mininteger, 7 // 2, 7.0 // 2, 2^53, 1e308 * 10)
print(utf8.char(72, 228, 8364), utf8.len("Hä€"), string.pack("<i4", 1):byte(1, -1))
local ok, msg = pcall(function() local x = nil; return x.y end)
print(ok, (msg:gsub("^.-:%d+: ", "")))
collectgarbage(); print(collectgarbage("count") > 0)
LUA
for c in "${COMPILERS[@]}"; do
  use_compiler "$c"
  unpack lua5.4 "$c"
  step "lua make linux ($c)" 600 "$c.make" make -C "$c" -j2 linux CC="$CC -std=gnu99"
  step "lua check script ($c)" 60 "$c.run" "$c/src/lua" check.lua
  "$c/src/lua" -v >"$c.version" 2>&1
done
expect_warnings_like_gcc "lua build" gcc.make shim.make
expect_line "gcc's lua" gcc.run "true"
expect_same "lua -v" gcc.version shim.version
expect_same "the check script's output" gcc.run shim.run
expect_same_files "lua tree" gcc shim
