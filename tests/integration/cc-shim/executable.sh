#!/usr/bin/env bash
# An executable through the shim (silent on success, exit status passed
# through), and C++ mode: by --shim-cxx and by a g++ name.
source "$(dirname "$0")/lib.sh"
printf '#include <stdio.h>\nint main(int argc, char** argv) { printf("hello %%d\\n", argc); return 3; }\n' > hello.c
"$SHIM" -O2 hello.c -o hello >out.txt 2>err.txt || fail "build failed: $(cat err.txt)"
[[ ! -s out.txt && ! -s err.txt ]] || fail "the shim printed something on success: $(cat out.txt err.txt)"
set +e; got=$(./hello a b); rc=$?; set -e
expect_eq "hello output" "$got" "hello 3"
expect_eq "hello exit status" "$rc" 3
ok "executable"

# zig's exit status comes back unchanged (exec, no wrapper process)
printf 'int main(void) { return undeclared_thing; }\n' > bad.c
set +e; "$SHIM" bad.c -o bad 2>bad.err; rc=$?; set -e
"$ZIG" cc -fno-sanitize=all bad.c -o bad 2>direct.err && fail "zig compiled bad.c"
expect_eq "exit status of a failed compile" "$rc" 1
expect_eq "stderr of a failed compile" "$(cat bad.err)" "$(cat direct.err)"
ok "failed compile: zig's status and words"

# C++: a template and a mangled name prove zig c++ compiled it (compile only;
# warm-cache.sh links a C++ program).
printf 'template <typename T> T twice(T x) { return x + x; }\nint use(int v) { return twice(v); }\n' > t.cpp
"$SHIM" --shim-cxx -c -x c++ t.cpp -o t1.o || fail "--shim-cxx compile failed"
nm t1.o | grep -q '_Z3usei' || fail "--shim-cxx did not compile as C++: $(nm t1.o)"
ln -s "$SHIM" g++
./g++ -c t.cpp -o t2.o || fail "g++ link compile failed"
nm t2.o | grep -q '_Z3usei' || fail "g++ name did not compile as C++"
set +e; "$SHIM" -c -x c t.cpp -o t3.o 2>/dev/null; rc=$?; set -e
[[ $rc -ne 0 ]] || fail "the same file compiled as C (the C++ checks would prove nothing)"
ok "C++ mode by --shim-cxx and by the name g++"
