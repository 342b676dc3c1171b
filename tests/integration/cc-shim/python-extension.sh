#!/usr/bin/env bash
# A CPython extension module built the way distutils/setuptools do it with
# CC=cc-shim: this python's own sysconfig CFLAGS/CCSHARED/LDSHARED (distro
# flags included), the compiler word replaced by the shim; then imported.
source "$(dirname "$0")/lib.sh"
cp "$HERE/spam.c" .
mapfile -t cmd < <(python3 - "$SHIM" <<'PY'
import shlex, sys, sysconfig
shim = sys.argv[1]
v = sysconfig.get_config_var
inc = sysconfig.get_paths()["include"]
compile_cmd = [shim] + shlex.split(v("CFLAGS") or "") + shlex.split(v("CCSHARED") or "") + ["-I" + inc, "-c", "spam.c", "-o", "spam.o"]
link_cmd = [shim] + shlex.split(v("LDSHARED"))[1:] + ["spam.o", "-o", "spam" + v("EXT_SUFFIX")]
print(shlex.join(compile_cmd)); print(shlex.join(link_cmd))
PY
)
echo "compile: ${cmd[0]}"; echo "link: ${cmd[1]}"
eval "${cmd[0]}" || fail "compiling the extension failed"
eval "${cmd[1]}" || fail "linking the extension failed"
got=$(python3 -c 'import spam; print(spam.add(40, 2))')
expect_eq "spam.add(40, 2)" "$got" 42
ok "python3 imports the extension built by cc-shim"
