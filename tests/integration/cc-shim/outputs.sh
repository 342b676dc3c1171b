#!/usr/bin/env bash
# Issue 24 item 2 and issue 20 item 15: outputs as gcc writes them, and a
# response file read once. `-o /dev/null` (any -o that is no regular file)
# writes nothing else anywhere: zig 0.11 left ./a.out, ./t.o, ./-.o behind
# and printed `-E` output on stdout.
source "$(dirname "$0")/lib.sh"
GCC=$(command -v gcc) || fail "gcc is not on PATH"
mkdir run && cd run
printf 'int main(void) { return 0; }\n' >t.c
"$SHIM" t.c -o /dev/null
"$SHIM" -c t.c -o /dev/null
printf 'int main(void) { return 0; }\n' | "$SHIM" -x c -c - -o /dev/null
printf 'int main(void) { return 0; }\n' | "$SHIM" -x c - -o /dev/null
"$SHIM" -Oz -x c -c - -o /dev/null </dev/null  # zstd's HAVE_CC_OZ probe
"$SHIM" -E t.c -o /dev/null >e.out
expect_eq "stdout of -E -o /dev/null" "$(cat e.out)" ""
rm e.out
expect_eq "files left in the working directory" "$(ls -A)" "t.c"
expect_eq "run directories left in zig's cache" "$(ls -A "$ZIG_GLOBAL_CACHE_DIR/cc-shim-runs" 2>/dev/null)" ""
ok "-o /dev/null leaves nothing behind"

# Into a FIFO, as gcc writes into one: the reader gets the object.
mkfifo obj.fifo
cat obj.fifo >got.o &
"$SHIM" -c t.c -o obj.fifo
wait
expect_contains "what came through the FIFO" "$(readelf -h got.o)" "REL (Relocatable file)"
ok "-o FIFO gets the object"

# A pipe as response file: gcc cannot read one and fails loudly; the shim reads
# it once and keeps its arguments for every use (before: built without them, exit 0).
printf '#include <stdio.h>\nint main(void) {\n#ifdef NDEBUG\nputs("ndebug");\n#else\nputs("debug");\n#endif\nreturn 0; }\n' >nd.c
if "$GCC" @<(echo -DNDEBUG) nd.c -o nd-gcc 2>gcc.err; then fail "gcc read a pipe response file (expected its loud failure)"; fi
expect_contains "gcc on a pipe @file" "$(cat gcc.err)" "@/dev/fd/"
"$SHIM" @<(echo -DNDEBUG) nd.c -o nd-shim || fail "the shim failed on a pipe response file"
expect_eq "the program built with @<(echo -DNDEBUG)" "$(./nd-shim)" "ndebug"
"$SHIM" -O2 @<(echo -DNDEBUG) -c nd.c -o nd.o || fail "the shim failed on a pipe response file with -c"
ok "a pipe response file's arguments are used"
