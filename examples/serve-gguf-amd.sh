#!/usr/bin/env bash
# The serve script an operator keeps for one AMD box: a Strix Halo (gfx1151) beside two Radeon AI PRO R9700s
# (gfx1201), llama.cpp's llama-server built for both targets, serving a gated GGUF that the Hub ships as a
# gguf-split set, with its MTP head and mmproj. Each step is a gate that stops the script with the tool's own
# sentence and exit code before the engine starts; no jq, no awk over the tools' output.
#
#   serve-gguf-amd.sh -- llama-server -m "$MODELS/Q4_K_M/model-Q4_K_M-00001-of-00003.gguf" -c 65536 ...
#   (the engine's command line as the unit file keeps it; llama.cpp loads a split set from its first part)
#
# Environment [defaults]:
#   REPO [org/model-GGUF]  REVISION [main]  QUANT [Q4_K_M]  HF_TOKEN_FILE [/run/secrets/hf_token]
#   MODELS [/models/gguf]  where the files go; STATE [/var/lib/serve-gguf]: the pinned manifest is kept there
#   GFX_TARGETS [gfx1151,gfx1201]  the --offload-arch list llama.cpp was built with
#   GPU_MEMORY [96G,32G,32G]       each card's memory, in llama.cpp's device order, for the fit
#   VRAM_FREE [24G] free VRAM every GPU must have; PORT [8080]; WAIT [120]: seconds to wait for a restarting
#                   seat to let go of the GPU or the port
#   HF_FETCH, ENVCHECK: the binaries [on PATH]
# Exit: the engine's own status once started; else the failing tool's (1 check failed / does not fit /
# no space, 2 usage, 3 network, 4 auth, 5 upstream moved while the copy here verifies).
set -euo pipefail

hf_fetch=${HF_FETCH:-hf-fetch}
envcheck=${ENVCHECK:-envcheck}
repo=${REPO:-org/model-GGUF}
revision=${REVISION:-main}
quant=${QUANT:-Q4_K_M}
token_file=${HF_TOKEN_FILE:-/run/secrets/hf_token}
models=${MODELS:-/models/gguf}
state=${STATE:-/var/lib/serve-gguf}
manifest=$state/model.manifest

say() { echo "serve-gguf-amd: $*" >&2; }
fail() { rc=$1; shift; say "$* (exit $rc); the engine is not started"; exit "$rc"; }

[[ ${1:-} == -- ]] && shift
(($# > 0)) || { say "usage: serve-gguf-amd.sh -- ENGINE COMMAND..."; exit 2; }

# 1. The box: every GPU loads one of the build's targets, has the VRAM free (a failure names the processes
#    holding it and how to stop them), and the port is free; a seat being restarted gets WAIT seconds.
"$envcheck" --gfx "${GFX_TARGETS:-gfx1151,gfx1201}" --vram-free "${VRAM_FREE:-24G}" \
  --port-free "${PORT:-8080}" --wait "${WAIT:-120}" || fail $? "the box check failed"

# 2. The files: the first run pins what it fetched in a manifest; every later run fetches (or only verifies)
#    exactly that, never a moved branch. The disk gate comes before a byte.
mkdir -p "$state"
if [[ -s $manifest ]]; then
  "$hf_fetch" --manifest "$manifest" --token-file "$token_file" --local-dir "$models" --progress lines ||
    fail $? "$repo: the pinned files"
else
  "$hf_fetch" "$repo@$revision" --token-file "$token_file" --include "$quant/*" --include "*mmproj*" \
    --include "mtp*" --local-dir "$models" --save-manifest "$manifest" --progress lines ||
    fail $? "$repo: the fetch"
fi

# 3. The fit: the engine's own command line planned on these cards (weights by its layer split, the KV cache,
#    recurrent state) before minutes of loading end in an out-of-memory error.
"$hf_fetch" inspect "$models" --engine-args "${*@Q}" --gpu-memory "${GPU_MEMORY:-96G,32G,32G}" --quiet ||
  fail $? "the plan for: $*"

say "gates passed; starting: $*"
exec "$@"
