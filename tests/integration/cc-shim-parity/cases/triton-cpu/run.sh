#!/usr/bin/env bash
# Triton's launcher built as triton-cpu's triton/runtime/build.py writes the
# command: main's, plus -lgcc after the libraries (twice by the launcher: see
# triton_launcher.py) and "-Wl,-rpath" DIR, two arguments, for each library
# dir (see ../../triton.sh for what is compared).
source "$(dirname "$0")/../../lib.sh"
FLAVOUR=cpu
source "$PARITY_DIR/triton.sh"
