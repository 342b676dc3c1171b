#!/usr/bin/env bash
# Triton's launcher built as upstream's build.py and driver.py wrote the
# command until November 2025, and so the releases before it: main's command
# with -lcuda instead of -l:libcuda.so.1 (see ../../triton.sh for what is
# compared).
source "$(dirname "$0")/../../lib.sh"
FLAVOUR=lcuda
source "$PARITY_DIR/triton.sh"
