#!/usr/bin/env bash
# Issue 41 (16): an -o that is one of the inputs (a Makefile typo, `-c a.c -o a.c`) replaced the source with
# the object, exit 0; an empty -MF was accepted. Judged by gcc itself: every command line below runs through
# real gcc and through the shim on fresh copies of the same files; the exit statuses must agree, and where gcc
# leaves the source untouched the shim must too.
source "$(dirname "$0")/lib.sh"
command -v gcc >/dev/null || fail "gcc is needed to judge the shim by"
SOURCE='int main(void) { return 0; }'
printf '%s\n' "$SOURCE" > "$WORK/orig.c"

fresh() {  # a directory with a.c, b.c, a link s.c -> a.c, a hard link h.c of a.c, an object a.o, a response file
  rm -rf "$WORK/t" && mkdir -p "$WORK/t/sub" && cd "$WORK/t"
  cp "$WORK/orig.c" a.c && cp a.c b.c && ln -s a.c s.c && ln a.c h.c
  gcc -c b.c -o a.o
  printf '%s' '-c a.c -o a.c' > args.rsp
}

# Each case: the arguments as shell words ('' is an empty argument).
refused=(
  "-c a.c -o a.c" "-E a.c -o a.c" "-S a.c -o a.c" "a.c -o a.c" "-c a.c -o ./a.c" "-c a.c -o sub/../a.c"
  "-c a.c -o$WORK/t/a.c" "-c s.c -o a.c" "-c a.c -o s.c" "a.o -o a.o" "-c a.c -o a.o -o a.c" "@args.rsp"
  "-c a.c -MD -MF ''" "-c a.c -MF ''" "-c a.c -MD -MF a.d -MF ''" "-c a.c -o ''"
)
went_on=("-c a.c -o a.c -o a.o" "-c a.c -MD -MF '' -MF a.d" "-c a.c -o b.o")

run_both() {  # run_both WORDS: sets g_rc, s_rc, g_same, s_same (the source untouched: 1), s_err
  eval "set -- $1"
  fresh
  set +e; gcc "$@" >/dev/null 2>&1; g_rc=$?; set -e
  g_same=0; cmp -s a.c "$WORK/orig.c" && g_same=1
  fresh
  set +e; "$SHIM" "$@" >/dev/null 2>shim.err; s_rc=$?; set -e
  s_err=$(cat shim.err)
  s_same=0; cmp -s a.c "$WORK/orig.c" && s_same=1
  cd "$WORK"
}

for c in "${refused[@]}"; do
  run_both "$c"
  [[ $g_rc -ne 0 ]] || fail "gcc $c: exit 0; the case is not one gcc refuses"
  expect_eq "exit status of cc-shim $c (gcc's: $g_rc)" "$s_rc" "$g_rc"
  expect_eq "the source after cc-shim $c" "$s_same" "$g_same"
  expect_eq "the source after gcc $c" "$g_same" 1
  [[ $s_err == "cc-shim: fatal error: "* ]] || fail "cc-shim $c: not the shim's own refusal: $s_err"
  ok "cc-shim $c: exit $s_rc as gcc, the source untouched: $(head -1 <<<"$s_err")"
done
expect_contains "the message" "$(run_both "-c a.c -o a.c"; echo "$s_err")" \
  "cc-shim: fatal error: input file 'a.c' is the same as output file"

for c in "${went_on[@]}"; do
  run_both "$c"
  expect_eq "gcc $c" "$g_rc" 0
  expect_eq "exit status of cc-shim $c (gcc's: 0)" "$s_rc" 0
  expect_eq "the source after cc-shim $c" "$s_same" 1
  ok "cc-shim $c: goes on as gcc does"
done

# A hard link: gcc 12 compares names (after resolving symlinks), not files, so `-E a.c -o h.c` exits 0 and
# overwrites the source through its other name; the shim compares st_dev and st_ino and refuses.
run_both "-E a.c -o h.c"
expect_eq "the shim with -o a hard link of the input" "$s_rc" 1
expect_eq "the source after cc-shim -E a.c -o h.c" "$s_same" 1
expect_contains "the message" "$s_err" "input file 'a.c' is the same as output file 'h.c'"
ok "a hard link refused (gcc: exit $g_rc, source untouched: $g_same)"
