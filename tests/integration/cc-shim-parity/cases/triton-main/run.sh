#!/usr/bin/env bash
# Triton's launcher built as upstream main's triton/runtime/build.py writes the
# command: CC SRC -O3 -shared -fPIC -Wno-psabi -o SO -l:libcuda.so.1 -L... -I...
# (see ../../triton.sh for what is compared).
source "$(dirname "$0")/../../lib.sh"
FLAVOUR=main
source "$PARITY_DIR/triton.sh"
