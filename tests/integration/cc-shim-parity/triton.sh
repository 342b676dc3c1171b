# Sourced by cases/triton-* after lib.sh, with FLAVOUR=main|cpu|lcuda:
# Triton's launcher build (triton_launcher.py reproduces the command line of
# that flavour's build.py) with CC=gcc and with CC=cc-shim, against the
# stand-in libcuda.so.1 (built by gcc, cc-shim.cmake), twice:
#  - path:     TRITON_LIBCUDA_PATH names the stand-in's directory;
#  - ldconfig: the directories come from `ldconfig -p` lines that list a
#              32-bit decoy first, as on hosts with the driver's 32-bit
#              libraries: libcuda.so.1 and the libcuda.so link (what -lcuda
#              finds), both to the 32-bit decoy of cc-shim.cmake.
# For each of $PYTHONS (lib.sh). Compared: the exit status, the libraries
# needed and the run path of the result, what the imported launcher returns
# (it calls the stand-in linked and through dlopen), and stderr: gcc is silent in "path" and the shim must be
# too; in "ldconfig" GNU ld notes that it skipped the decoy, and the shim,
# which picks the right file itself, prints nothing (docs/cc-shim.md).
: "${FLAVOUR:?set by the case}"
decoy=$WORK/lib32 real=$HELPERS/cuda64
mkdir "$decoy"
ln -s "$HELPERS/cuda32/libcuda.so.1" "$decoy/libcuda.so.1"
ln -s libcuda.so.1 "$decoy/libcuda.so"
[[ $(readelf -h "$decoy/libcuda.so" | awk '/Class:/{print $2}') == ELF32 ]] || fail "the decoy is not ELF32"
[[ $(readelf -h "$real/libcuda.so" | awk '/Class:/{print $2}') == ELF64 ]] || fail "the stand-in is not ELF64"
if [[ $FLAVOUR == lcuda ]]; then searched="$decoy/libcuda.so when searching for -lcuda"
else searched="$decoy/libcuda.so.1 when searching for -l:libcuda.so.1"; fi
printf '2 libs found in cache `/etc/ld.so.cache'"'"'\n\tlibcuda.so.1 (libc6) => %s\n\tlibcuda.so.1 (libc6,x86-64) => %s\n' \
  "$decoy/libcuda.so.1" "$real/libcuda.so.1" >ldconfig-p.txt

for i in "${!PYTHONS[@]}"; do
  py=${PYTHONS[i]}
  for scenario in path ldconfig; do
    if [[ $scenario == path ]]; then where=(--libcuda-path "$real"); else where=(--ldconfig "$PWD/ldconfig-p.txt"); fi
    what="$py, $scenario" run=py$i-$scenario
    for c in "${COMPILERS[@]}"; do
      use_compiler "$c"
      out=$run-$c
      "$py" "$PARITY_DIR/triton_launcher.py" build --flavour "$FLAVOUR" --cc "$CC" \
        --backend "$PWD/triton/backends/nvidia" "${where[@]}" --out "$PWD/$out" || fail "triton_launcher.py build ($out) failed"
      echo "$out: $(tr '\n' ' ' <"$out/argv")"
      so=$(ls "$out"/__triton_launcher*.so 2>/dev/null || true)
      {
        echo "rc=$(cat "$out/rc")"
        [[ $(cat "$out/rc") == 0 ]] || { echo "stderr:"; cat "$out/stderr"; }
        if [[ -n $so ]]; then
          echo "needed: $(readelf -d "$so" | awk '/\(NEEDED\)/{print $NF}' | tr -d '[]' | sort | tr '\n' ' ')"
          echo "runpath: $(readelf -d "$so" | awk '/\((RUNPATH|RPATH)\)/{print $1 $2 $NF}' | tr -d '[]')"
          # triton-cpu's result must find libcuda.so.1 through its run path; the
          # others have none, and the loader finds it as ld.so.cache would.
          load_rc=0
          if [[ $FLAVOUR == cpu ]]; then
            env -u LD_LIBRARY_PATH "$py" "$PARITY_DIR/triton_launcher.py" load "$so" 2>&1 || load_rc=$?
          else
            LD_LIBRARY_PATH=$(sed -n 's/.* => \(.*\)\/libcuda.so.1$/\1/p' ldconfig-p.txt | paste -sd:) \
              "$py" "$PARITY_DIR/triton_launcher.py" load "$so" 2>&1 || load_rc=$?
          fi
          echo "load exit: $load_rc"
        fi
      } >"$out.result"
    done
    expect_line "gcc's build ($what)" "$run-gcc.result" "rc=0"
    expect_line "gcc's build ($what)" "$run-gcc.result" "launch: (45, 50, 15872, 49168, 28, 1025, 1)"
    expect_same "$what: exit status, needed libraries, run path, launcher results" "$run-gcc.result" "$run-shim.result"
    if [[ $scenario == path ]]; then
      expect_quiet_like_gcc "$what: compiler stderr" "$run-gcc/stderr" "$run-shim/stderr"
      continue
    fi
    # gcc's only output in "ldconfig" is GNU ld's note about the decoy...
    [[ -s $run-gcc/stderr ]] || fail "$what: GNU ld did not mention the decoy; the case no longer puts it first"
    while IFS= read -r line; do
      [[ $line == *"skipping incompatible $searched" ]] ||
        fail "$what: gcc printed more than ld's note about the decoy: $line"
    done <"$run-gcc/stderr"
    # ...which the shim does not imitate: it never hands ld the decoy.
    if [[ -s $run-shim/stderr ]]; then
      differ "$what: gcc printed only ld's note about the decoy, cc-shim printed: $(cat "$run-shim/stderr")"
    else
      ok "$what: gcc printed only ld's note about the decoy, cc-shim nothing"
    fi
  done
done
