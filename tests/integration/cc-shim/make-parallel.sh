#!/usr/bin/env bash
# A small multi-file C project built with make -j through the shim, all jobs
# sharing one zig cache: first with CC=<path to cc-shim>, then with the links
# of `cc-shim install DIR` on PATH and make's default CC=cc.
source "$(dirname "$0")/lib.sh"
n=12
for i in $(seq 1 $n); do
  printf '#include "common.h"\nint f%d(int x) { return x * %d + COMMON; }\n' "$i" "$i" > "f$i.c"
done
echo "#define COMMON $RANDOM" > common.h   # new sources each run: every job really compiles
common=$(sed 's/.* //' common.h)
{
  echo '#include <stdio.h>'
  for i in $(seq 1 $n); do echo "int f$i(int);"; done
  echo 'int main(void) { long s = 0;'
  for i in $(seq 1 $n); do echo "  s += f$i(1);"; done
  echo '  printf("%ld\n", s); return 0; }'
} > main.c
cat > Makefile <<'MK'
SRCS := main.c $(sort $(wildcard f*.c))
OBJS := $(SRCS:.c=.o)
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c common.h
	$(CC) -O2 -Wall -c $< -o $@
clean:
	rm -f $(OBJS) prog
MK
want=$(( n * (n + 1) / 2 + n * common ))

make -j2 CC="$SHIM" >make.log 2>&1 || { cat make.log; fail "make -j2 CC=cc-shim failed"; }
expect_eq "prog (CC=cc-shim)" "$(./prog)" "$want"
ok "make -j2 CC=$SHIM"

"$SHIM" install "$WORK/bin" || fail "cc-shim install failed"
make clean >/dev/null
echo "#define COMMON $((common + 1))" > common.h
PATH=$WORK/bin:$PATH make -j4 >make.log 2>&1 || { cat make.log; fail "make -j4 with the installed cc failed"; }
grep -q '^cc ' make.log || fail "make did not call cc: $(cat make.log)"
expect_eq "prog (cc link)" "$(./prog)" "$(( want + n ))"
ok "make -j4 with cc from 'cc-shim install'"
