# Sourced by the gcc-parity cases (cases/*/run.sh): the cc-shim test set-up
# (shim, zig 0.11 from npm, shared warm cache, scratch dir as $WORK), plus the
# comparisons. Every case does one build with gcc and the same build with
# CC=cc-shim, each in its own directory, and compares what came out.
# A failed comparison is reported and counted, and the case goes on to its
# other comparisons (so one run names every difference); it then exits 1.
# A build that fails, or a gcc result that is not what the case expects,
# stops the case at once (fail).

# The case's own directory, before the cc-shim set-up moves into $WORK.
CASE_DIR=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
source "$PROVKIT_SOURCE_DIR/tests/integration/cc-shim/lib.sh"
PARITY_FAILURES=0
parity_exit() {
  local rc=$?
  rm -rf "$WORK"
  if ((rc == 0 && PARITY_FAILURES > 0)); then
    echo "FAIL: $PARITY_FAILURES comparison(s) between gcc and cc-shim differ (above)" >&2
    exit 1
  fi
  exit "$rc"
}
trap parity_exit EXIT
# differ MESSAGE: one comparison failed; the case goes on.
differ() { echo "FAIL: $*" >&2; PARITY_FAILURES=$((PARITY_FAILURES + 1)); }

PARITY_DIR=$PROVKIT_SOURCE_DIR/tests/integration/cc-shim-parity
GCC=$(command -v gcc) || fail "gcc (the reference compiler) is not on PATH"
COMPILERS=(gcc shim)
# Nothing from the caller's environment may steer one build and not the other.
unset CFLAGS CPPFLAGS LDFLAGS LIBS LDSHARED CXX CPP CCSHARED
unset TRITON_LIBCUDA_PATH TRITON_CUDACRT_PATH TRITON_CUDART_PATH

# The Pythons that extension modules are built for: Debian's python3 (its
# pyconfig.h is in the multiarch dir /usr/include/x86_64-linux-gnu, found only
# through the compiler's own system header dirs), and python3 on PATH when
# that is another one (a standalone build such as pyenv's or uv's, with the
# headers in its own prefix).
PYTHONS=() python_prefixes=()
for py in /usr/bin/python3 "$(command -v python3 || true)"; do
  [[ -n $py && -x $py ]] || continue
  prefix=$("$py" -c 'import sys; print(sys.base_prefix)') || fail "$py does not run"
  [[ " ${python_prefixes[*]} " == *" $prefix "* ]] && continue
  PYTHONS+=("$py") python_prefixes+=("$prefix")
done
((${#PYTHONS[@]})) || fail "no python3 found (scripts/deps.sh installs Debian's)"
unset python_prefixes prefix py

# use_compiler gcc|shim: exports CC for the build of that name. In the shim's
# build CC names the shim in every compiler's environment too, as Triton sets
# it and as on a host whose only C compiler is the shim: zig's libc detection
# then meets the shim's guard instead of finding this host's gcc.
use_compiler() {
  case $1 in
    gcc) CC=$GCC ;;
    shim) CC=$SHIM ;;
    *) fail "use_compiler: unknown compiler '$1'" ;;
  esac
  export CC
}

# expect_same WHAT FILE_GCC FILE_SHIM: byte-identical, else the diff.
expect_same() {
  if diff -u --label "$1 (gcc)" --label "$1 (cc-shim)" "$2" "$3" >&2; then
    ok "$1: same with gcc and cc-shim"
  else
    differ "$1 differs between gcc and cc-shim (diff above)"
  fi
}

# expect_quiet_like_gcc WHAT FILE_GCC FILE_SHIM: gcc printed nothing (checked,
# so the case really is a silent one) and neither did the shim.
expect_quiet_like_gcc() {
  [[ ! -s $2 ]] || fail "$1: gcc itself printed on stderr, this case expects a silent build: $(cat "$2")"
  if [[ -s $3 ]]; then
    differ "$1: gcc is silent, cc-shim printed: $(cat "$3")"
  else
    ok "$1: silent with gcc and cc-shim"
  fi
}

# expect_line WHAT FILE LINE: FILE has exactly this line (a sanity check on
# gcc's side, so that two empty or two broken results never compare equal).
expect_line() {
  grep -qxF -- "$3" "$2" || fail "$1: no line '$3' in $2: $(cat "$2")"
}

# known_difference WHAT FILE_GCC LINE_GCC FILE_SHIM LINE_SHIM: a difference
# the shim cannot remove (docs/cc-shim.md, "gcc parity"). gcc's file must have
# LINE_GCC and the shim's LINE_SHIM, exactly (so a change on either side shows
# up here); both lines are then taken out, and the rest is compared as usual.
known_difference() {
  expect_line "$1 (gcc)" "$2" "$3"
  if grep -qxF -- "$5" "$4"; then
    ok "$1: the known difference, exactly"
  else
    differ "$1: the shim's result is no longer the known '$5' (docs/cc-shim.md, gcc parity)"
  fi
  grep -vxF -- "$3" "$2" >"$2.rest" || true; mv "$2.rest" "$2"
  grep -vxF -- "$5" "$4" >"$4.rest" || true; mv "$4.rest" "$4"
}

# without_progress_bars FILE: FILE without the progress bars meson draws on
# stderr when python3-tqdm is installed ("Generating targets:  50%|...| 1/2
# [00:00<00:00, 9.1it/s]", redrawn with carriage returns): what remains is
# what the tools said, to compare with gcc's.
without_progress_bars() {
  tr '\r' '\n' <"$1" | sed -E 's/\x1b\[[0-9;]*[A-Za-z]//g' |
    grep -v -E '^[^|]*: *[0-9]+%\|.*\| *[0-9]+/[0-9]+ \[[^]]*\] *$' | grep -v -E '^ *$' || true
}
