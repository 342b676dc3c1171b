#!/usr/bin/env bash
# Every gcc spelling the shim translates, against the real zig: plain `zig cc`
# rejects or misreads it, the shim builds with it. If a zig update starts
# accepting one, this test says so and the translation can go.
source "$(dirname "$0")/lib.sh"
printf 'int main(void) { return 0; }\n' > m.c
printf 'int lib(void) { return 1; }\n' > l.c

# check KIND ARGS...: KIND exe links m.c, so links l.c as a shared object, obj compiles only
check() {
  local kind=$1; shift
  local base=(m.c -o out)
  case $kind in
    so) base=(l.c -shared -fPIC -o out.so) ;;
    obj) base=(-c m.c -o out.o) ;;
  esac
  if "$ZIG" cc -fno-sanitize=all "${base[@]}" "$@" >zig.log 2>&1; then
    fail "plain zig cc accepts '$*' now: the translation is no longer needed"
  fi
  "$SHIM" "${base[@]}" "$@" >shim.log 2>&1 || fail "shim fails on '$*': $(cat shim.log)"
  ok "'$*': zig alone: $(grep -m1 -v '^ ' zig.log | cut -c1-90)"
}

# CPU flags compile only: a link for another CPU would build zig's compiler_rt for it (~20 s).
check obj -march=x86-64
check obj -march=x86-64-v2
check obj -mtune=generic
check exe -Wl,-stats
check exe -Wl,--stats
check exe -Wl,--no-undefined-version
check exe -Wl,--fatal-warnings
check exe -Wl,--warn-common
check exe -Wl,--enable-new-dtags
check so -Wl,-O1,-Bsymbolic-functions
check exe -Wl,--no-add-needed
check exe -Wl,--no-copy-dt-needed-entries
check exe -Wl,--threads=2
check exe -Wl,--no-threads
check exe -Wl,-plugin-opt=O2
check exe -Wl,--icf=all
check exe -Wl,-rpath-link,/usr/lib
check exe -Wl,-rpath-link=/usr/lib
check exe -Wl,-z,separate-code
check exe -Wl,-z,noseparate-code
check exe -Wl,-z,combreloc
check exe -Wl,-z,pack-relative-relocs
check obj -fno-gnu-unique
check obj -fvar-tracking-assignments
check obj -fno-var-tracking-assignments
check obj -fipa-pta
check obj -flto-partition=none
check exe -static-libgcc -Werror
check exe -shared-libgcc -Werror
check exe -static-libstdc++ -Werror
check exe -fuse-ld=gold -Werror

# -u SYM: zig reads SYM as a file; the shim makes the linker pull SYM's member out of an archive.
printf 'int forced_symbol(void) { return 7; }\n' > forced.c
"$SHIM" -c forced.c -o forced.o && ar rcs libforced.a forced.o
check exe -u forced_symbol libforced.a
nm out | grep -q ' T forced_symbol' || fail "-u forced_symbol did not pull the archive member in"
ok "-u: forced_symbol linked in from the archive"

# -Wp,-MD,FILE (kbuild style): zig looks for the dependency file where it asked for it.
check obj -Wp,-MD,dep.d
grep -q 'm.c' dep.d || fail "-Wp,-MD,dep.d wrote no dependency file"
# zig alone accepts this one with a warning and writes no dependency file (misread)
"$ZIG" cc -fno-sanitize=all -c m.c -o out.o -Wp,-MMD,dep2.d,-MT,custom-target >zig.log 2>&1 || true
[[ ! -e dep2.d ]] || fail "plain zig wrote dep2.d now: the -Wp translation may be unneeded"
"$SHIM" -c m.c -o out.o -Wp,-MMD,dep2.d,-MT,custom-target || fail "shim fails on -Wp,-MMD,dep2.d,-MT,custom-target"
grep -q '^custom-target:' dep2.d || fail "-MT from -Wp was lost: $(cat dep2.d)"
ok "-Wp,-MD/-MMD dependency files written"

# response files, nested: expanded first, so the rules apply to their contents
# too (zig 0.11 expands nested ones itself, but after its own parsing).
echo '-DINNER=1 -march=x86-64' > inner.rsp
echo '-O2 @inner.rsp' > outer.rsp
printf '#ifndef INNER\n#error not expanded\n#endif\nint main(void) { return 0; }\n' > rsp.c
"$ZIG" cc -c rsp.c -o out.o @outer.rsp >zig.log 2>&1 && fail "plain zig accepts -march=x86-64 from a response file now"
"$SHIM" -c rsp.c -o out.o @outer.rsp || fail "shim failed with nested response files"
ok "nested response files: expanded and translated"
