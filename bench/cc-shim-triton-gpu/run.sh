#!/bin/bash
# Triton 3.6 builds its launcher with $CC: run one kernel with gcc and with each cc-shim given, no other
# compiler on PATH, and show stderr, the glibc the program sees and -dumpmachine. Run on the GPU host from a
# folder holding this script, kernel.py, the cc-shim binaries (static: build/bin/cc-shim, stripped) as
# cc-shim-old / cc-shim-new, and zig.tar.xz: the npm package's zig-linux-x64 folder from the build tree
# (build/npm/zig/node_modules/@ryoppippi/), packed without doc/ and the Windows, macOS and WASI libc trees
# (about 40 MB with xz).
here=$(cd "$(dirname "$0")" && pwd)
tar xJf "$here/zig.tar.xz" -C /tmp
export CC_SHIM_ZIG=/tmp/zig-linux-x64/zig
py=$(command -v python3); mkdir -p /tmp/nocc; echo "== host ($py; compilers on the test PATH: $(PATH=/tmp/nocc:/usr/sbin:/sbin command -v gcc cc clang || echo none))"; ldd --version | head -1; python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
for cc in /opt/gcc/bin/gcc "$here/cc-shim-old" "$here/cc-shim-new"; do
  name=$(basename $cc)
  echo "== CC=$name"
  export TRITON_CACHE_DIR=/tmp/tcache-$name ZIG_GLOBAL_CACHE_DIR=/tmp/zc-$name ZIG_LOCAL_CACHE_DIR=/tmp/zc-$name
  rm -rf $TRITON_CACHE_DIR
  # No compiler on PATH besides CC: gcc and cc hidden for this run.
  testpath=/tmp/nocc:/usr/sbin:/sbin; [[ $name == gcc ]] && testpath=$PATH  # gcc needs as and ld from PATH
  CC=$cc PATH=$testpath "$py" "$here/kernel.py" > /tmp/out-$name 2> /tmp/err-$name; echo "exit $?"
  cat /tmp/out-$name; echo "-- stderr ($(wc -l < /tmp/err-$name) lines):"; head -c 3000 /tmp/err-$name
  echo "-- glibc macros and getrandom:"
  printf '#include <sys/random.h>\n#include <stdio.h>\nint main(void){char b[4]; printf("glibc %%d.%%d getrandom %%ld\\n", __GLIBC__, __GLIBC_MINOR__, (long)getrandom(b,4,0)); return 0;}\n' > /tmp/g.c
  $cc /tmp/g.c -o /tmp/g-$name 2>&1 | head -5 && /tmp/g-$name
  echo "-- -dumpmachine: $($cc -dumpmachine)"
done
