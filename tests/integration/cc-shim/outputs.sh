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

# The dependency file (-MF) where it is no regular file: gcc writes into /dev/stdout and a FIFO as into a
# file; the shim gives zig a file of its own for it (zig's clang wrote through a link planted at the name
# and waited on a FIFO with no reader). A link to a file is replaced by the file, never written through.
mkdir deps && cd deps
printf '#include "h.h"\nint x(void) { return H; }\n' >d.c
printf '#define H 1\n' >h.h
"$SHIM" -MD -MF /dev/stdout -c d.c -o d.o >stdout.d
expect_contains "-MF /dev/stdout" "$(cat stdout.d)" "d.o:"
expect_contains "-MF /dev/stdout" "$(cat stdout.d)" "h.h"
echo "the canary: nothing may write here" >../canary
ln -s ../canary link.d
"$SHIM" -MD -MF link.d -c d.c -o d.o
expect_eq "the file a planted -MF link pointed at" "$(cat ../canary)" "the canary: nothing may write here"
[[ -f link.d && ! -L link.d ]] || fail "-MF link.d: the link was not replaced by the dependency file"
expect_contains "the dependency file that replaced the link" "$(cat link.d)" "h.h"
mkfifo deps.fifo
set +e; timeout 60 "$SHIM" -MD -MF deps.fifo -c d.c -o d.o 2>fifo.err; rc=$?; set -e
expect_eq "-MF into a FIFO that nothing reads (exit, never a wait)" "$rc" 1
expect_contains "what the shim says of it" "$(cat fifo.err)" "nothing reads from it"
cat deps.fifo >fifo.d &
"$SHIM" -MD -MF deps.fifo -c d.c -o d.o
wait
expect_contains "the dependency file through a FIFO with a reader" "$(cat fifo.d)" "h.h"
cd ..
ok "-MF into /dev/stdout, a FIFO and a planted link: gcc's bytes, nothing written through the link"

# An @file that cannot be read: gcc's exit 1 for the missing input, the name made printable (zig echoed it raw).
set +e; "$SHIM" -c "$(printf '@odd\nFORGED\033[2J')" t.c -o t.o 2>odd.err; rc=$?; set -e
expect_eq "exit status for an @file that cannot be read" "$rc" 1
expect_eq "lines the shim printed for it" "$(wc -l <odd.err)" 1
[[ $(cat odd.err) != *$'\033'* ]] || fail "the escape sequence of the @file's name reached stderr raw"
ok "an unreadable @file: exit 1, one line, the name printable"
