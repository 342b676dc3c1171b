#!/usr/bin/env bash
# Issue 11 items 13 and 14: hostile file-system objects and argument lists.
# Every run is under `timeout`: hanging or running for minutes is the failure.
source "$(dirname "$0")/lib.sh"
printf 'int cuInit(unsigned); int main(void) { return cuInit(0) == 0 ? 0 : 0; }\n' > c.c

# 13. A FIFO named like the library in an earlier -L dir: never opened.
mkdir fifo
mkfifo fifo/libcuda.so.1
set +e; timeout 30 "$SHIM" c.c -o c -Lfifo -L"$HELPERS/cuda64" -l:libcuda.so.1 2>shim.err; rc=$?; set -e
[[ $rc -ne 124 ]] || fail "-l:libcuda.so.1 hung on the FIFO in the first -L dir"
expect_eq "exit status with a FIFO in the -L dirs" "$rc" 0
expect_contains "DT_NEEDED" "$(readelf -d c)" "[libcuda.so.1]"
ok "-l: past a FIFO of that name"

# 14a. A response file longer than exec can take (1.5 x ARG_MAX): gcc takes it.
printf 'static int unused_here;\n' > e.c
"$SHIM" -c e.c -o e.o
arg_max=$(getconf ARG_MAX)
python3 - "$arg_max" <<'PY'
import sys
path = "./" * 45 + "e.o"   # one object, named many ways; lld keeps the first
with open("objs.rsp", "w") as f:
    for _ in range(int(sys.argv[1]) * 3 // 2 // (len(path) + 1) + 1):
        f.write(path + "\n")
PY
printf 'int lib(void) { return 7; }\n' > l.c
set +e; timeout 120 "$SHIM" @objs.rsp l.c -shared -fPIC -o "l out.so" 2>shim.err; rc=$?; set -e
expect_eq "exit status with a $(stat -c %s objs.rsp)-byte response file" "$rc" 0
[[ -s "l out.so" ]] || fail "no output from the long command line: $(cat shim.err)"
CC_SHIM_DEBUG=1 timeout 120 "$SHIM" @objs.rsp l.c -shared -fPIC -o l2.so 2>debug.err
expect_contains "zig's command line" "$(cat debug.err)" " cc @/proc/self/fd/"
# What zig's response-file reader must carry unchanged: spaces, double quotes, backslashes.
printf '#include <stdio.h>\nint main(void) { puts(MSG); return 0; }\n' > msg.c
timeout 120 "$SHIM" @objs.rsp '-DMSG="sp ace \"q\" back\\slash"' msg.c -o msg 2>shim.err || fail "msg: $(cat shim.err)"
expect_eq "a quoted define through the shim's response file" "$(./msg)" 'sp ace "q" back\slash'
ok "$(stat -c %s objs.rsp)-byte response file (ARG_MAX $arg_max) reaches zig in a response file of the shim's"

# 14b. 30 levels of files each including the next twice: stopped at gcc's 2000.
for i in $(seq 0 29); do printf '@f%d @f%d\n' $((i + 1)) $((i + 1)) > f$i; done
printf -- '-DLEAF\n' > f30
set +e; timeout 30 "$SHIM" @f0 -c e.c -o e2.o 2>shim.err; rc=$?; set -e
[[ $rc -ne 124 ]] || fail "the response-file fan-out ran for more than 30 s"
expect_eq "exit status for the fan-out" "$rc" 2
expect_contains "message" "$(cat shim.err)" "too many @-files encountered"
ok "nested fan-out refused: $(cat shim.err)"
