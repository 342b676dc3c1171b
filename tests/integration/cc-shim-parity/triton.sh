# Sourced by cases/triton-main and cases/triton-cpu after lib.sh, with
# FLAVOUR=main|cpu: Triton's launcher build (triton_launcher.py reproduces the
# command line of that flavour's build.py) with CC=gcc and with CC=cc-shim,
# against the stand-in libcuda.so.1 (built by gcc, cc-shim.cmake), twice:
#  - path:     TRITON_LIBCUDA_PATH names the stand-in's directory;
#  - ldconfig: the directories come from `ldconfig -p` lines that list the
#              32-bit decoy libcuda.so.1 first, as on hosts with both.
# Compared: the exit status, the libraries needed and the run path of the
# result, what the imported launcher returns (it calls the stand-in linked and
# through dlopen), and stderr: gcc is silent in "path" and the shim must be
# too; in "ldconfig" GNU ld notes that it skipped the decoy, and the shim,
# which picks the right file itself, prints nothing (docs/cc-shim.md).
: "${FLAVOUR:?set by the case}"
decoy=$HELPERS/cuda32 real=$HELPERS/cuda64
[[ $(readelf -h "$decoy/libcuda.so.1" | awk '/Class:/{print $2}') == ELF32 ]] || fail "the decoy is not ELF32"
[[ $(readelf -h "$real/libcuda.so.1" | awk '/Class:/{print $2}') == ELF64 ]] || fail "the stand-in is not ELF64"
printf '2 libs found in cache `/etc/ld.so.cache'"'"'\n\tlibcuda.so.1 (libc6) => %s\n\tlibcuda.so.1 (libc6,x86-64) => %s\n' \
  "$decoy/libcuda.so.1" "$real/libcuda.so.1" >ldconfig-p.txt

for scenario in path ldconfig; do
  if [[ $scenario == path ]]; then where=(--libcuda-path "$real"); else where=(--ldconfig "$PWD/ldconfig-p.txt"); fi
  for c in "${COMPILERS[@]}"; do
    use_compiler "$c"
    out=$scenario-$c
    python3 "$PARITY_DIR/triton_launcher.py" build --flavour "$FLAVOUR" --cc "$CC" \
      --backend "$PWD/triton/backends/nvidia" "${where[@]}" --out "$PWD/$out" || fail "triton_launcher.py build ($out) failed"
    echo "$out: $(tr '\n' ' ' <"$out/argv")"
    so=$(ls "$out"/__triton_launcher*.so 2>/dev/null || true)
    {
      echo "rc=$(cat "$out/rc")"
      [[ $(cat "$out/rc") == 0 ]] || { echo "stderr:"; cat "$out/stderr"; }
      if [[ -n $so ]]; then
        echo "needed: $(readelf -d "$so" | awk '/\(NEEDED\)/{print $NF}' | tr -d '[]' | sort | tr '\n' ' ')"
        echo "runpath: $(readelf -d "$so" | awk '/\((RUNPATH|RPATH)\)/{print $1 $2 $NF}' | tr -d '[]')"
        # main's result has no run path: the loader finds libcuda.so.1 the way
        # ld.so.cache would. triton-cpu's must find it through its run path.
        if [[ $FLAVOUR == main ]]; then
          LD_LIBRARY_PATH=$(sed -n 's/.* => \(.*\)\/libcuda.so.1$/\1/p' ldconfig-p.txt | paste -sd:) \
            python3 "$PARITY_DIR/triton_launcher.py" load "$so" 2>&1
        else
          env -u LD_LIBRARY_PATH python3 "$PARITY_DIR/triton_launcher.py" load "$so" 2>&1
        fi
        echo "load exit: $?"
      fi
    } >"$out.result"
  done
  expect_line "gcc's $scenario build" "$scenario-gcc.result" "rc=0"
  expect_line "gcc's $scenario build" "$scenario-gcc.result" "launch: (45, 50, 15872, 49168, 28, 1025, 1)"
  expect_same "$scenario: exit status, needed libraries, run path, launcher results" "$scenario-gcc.result" "$scenario-shim.result"
done

expect_quiet_like_gcc "path: compiler stderr" path-gcc/stderr path-shim/stderr
# gcc's only output in "ldconfig" is GNU ld's note about the decoy...
[[ -s ldconfig-gcc/stderr ]] || fail "ldconfig: GNU ld did not mention the decoy; the case no longer puts it first"
while IFS= read -r line; do
  [[ $line == *"skipping incompatible $decoy/libcuda.so.1 when searching for -l:libcuda.so.1" ]] ||
    fail "ldconfig: gcc printed more than ld's note about the decoy: $line"
done <ldconfig-gcc/stderr
# ...which the shim does not imitate: it never hands ld the decoy.
if [[ -s ldconfig-shim/stderr ]]; then
  differ "ldconfig: gcc printed only ld's note about the decoy, cc-shim printed: $(cat ldconfig-shim/stderr)"
else
  ok "ldconfig: gcc printed only ld's note about the decoy, cc-shim nothing"
fi
