# Sourced by the real-projects cases (one script per project): the gcc-parity
# set-up (cc-shim-parity/lib.sh: shim, zig, $WORK, the comparisons), the
# project's own source from the fixture cc-shim-sources, steps under a time
# limit that grows with the machine's load, and the comparisons a real
# project's two builds get: its own test results, the compiler's warnings
# (against gcc's own stderr, never against silence), what its configure
# found, and the files each build left.
source "$PROVKIT_SOURCE_DIR/tests/integration/cc-shim-parity/lib.sh"
SOURCES=$PROVKIT_BUILD_DIR/tests/cc-shim-projects/sources

# The multiplier for every step's time limit: the 1-minute load average per
# core, rounded up, at least 1 and at most 8 (a loaded 2-core CI box gets
# more time, an idle one still catches a hang).
load_factor() {
  local load cores
  read -r load _ </proc/loadavg
  cores=$(nproc)
  awk -v l="$load" -v c="$cores" 'BEGIN { f = int(l / c + 0.999); if (f < 1) f = 1; if (f > 8) f = 8; print f }'
}

# step NAME SECONDS LOG CMD...: CMD with stdout and stderr in LOG, given
# SECONDS times load_factor; a failure or a timeout stops the case, naming
# the step and showing the end of its log.
step() {
  local name=$1 seconds=$2 log=$3 factor rc=0
  shift 3
  factor=$(load_factor)
  local t0=$SECONDS
  timeout --kill-after=10 $((seconds * factor)) "$@" >"$log" 2>&1 || rc=$?
  if ((rc == 124 || rc == 137)); then
    tail -n 30 "$log" >&2
    fail "$name: no end after $((seconds * factor)) s (${seconds} s x load factor $factor)"
  elif ((rc != 0)); then
    tail -n 40 "$log" >&2
    fail "$name exited $rc (log above: $log)"
  fi
  echo "step: $name: $((SECONDS - t0)) s"
}

# unpack PACKAGE DIR: the orig tarball of Debian source package PACKAGE, its
# top directory stripped, into DIR.
unpack() {
  local tarball
  # The tarball, not its detached signature (xz-utils ships .orig.tar.xz.asc beside it).
  tarball=$(compgen -G "$SOURCES/$1/*.orig.tar.*" | grep -v '\.asc$' | head -n 1) ||
    fail "no source of $1 in $SOURCES (fixture cc-shim-sources)"
  mkdir -p "$2"
  tar -xf "$tarball" -C "$2" --strip-components=1
}

# warnings LOG: the compiler's warnings and errors in a build log, one
# "file:line: kind" a line (paths reduced to the file name, sorted), so two
# compilers' diagnostics of the same code compare by where they point.
warnings() {
  sed -n -E 's#^([^ :]*/)?([^/ :]+):([0-9]+):([0-9]+:)? (warning|error):.*#\2:\3: \5#p' "$1" | sort
}

# expect_warnings_like_gcc WHAT LOG_GCC LOG_SHIM
expect_warnings_like_gcc() {
  warnings "$2" >"$2.w"
  warnings "$3" >"$3.w"
  echo "warnings: $1: gcc $(wc -l <"$2.w"), cc-shim $(wc -l <"$3.w")"
  if diff -u --label "$1 (gcc)" --label "$1 (cc-shim)" "$2.w" "$3.w" >&2; then
    ok "$1: the same diagnostics as gcc ($(wc -l <"$2.w"))"
  else
    grep -E '(warning|error):' "$3" | head -n 20 >&2
    differ "$1: the compiler's diagnostics differ from gcc's (diff and the shim's first lines above)"
  fi
  # lld's own lines never appear where GNU ld printed nothing
  if ! grep -q 'ld: warning' "$2" && grep -q 'ld.lld: warning' "$3"; then
    grep 'ld.lld: warning' "$3" | head -n 5 >&2
    differ "$1: lld warned where GNU ld was silent"
  fi
}

# expect_same_files WHAT DIR_GCC DIR_SHIM: the same file names in both trees
# (no stray ./-.o, ./a.out, ./t.o), and none of those strays in either.
expect_same_files() {
  # zstd names its object dir by a hash of CC and the flags (obj/conf_<md5>): the same dir, spelled alike.
  (cd "$2" && find . -type f | sed -E 's#/conf_[0-9a-f]{32}/#/conf_HASH/#' | sort) >"$WORK/files.gcc"
  (cd "$3" && find . -type f | sed -E 's#/conf_[0-9a-f]{32}/#/conf_HASH/#' | sort) >"$WORK/files.shim"
  if diff -u --label "$1 (gcc)" --label "$1 (cc-shim)" "$WORK/files.gcc" "$WORK/files.shim" >&2; then
    ok "$1: the same $(wc -l <"$WORK/files.gcc") files"
  else
    differ "$1: the builds left different files (diff above)"
  fi
  if grep -E '/(-\.o|a\.out)$' "$WORK/files.shim" >&2; then differ "$1: stray outputs (above)"; fi
}

# normalised LOG: LOG with the compiler's path spelled CC (configure scripts
# print the compiler they use).
normalised() { sed -e "s#$SHIM#CC#g" -e "s#$GCC#CC#g" -e 's#\bgcc\b#CC#g' "$1"; }
