#!/usr/bin/env bash
# The deploy script an operator keeps for a small fleet: a gated GGUF shipped as byte-split parts plus
# its MTP head and mmproj, and a 12-shard FP8 checkpoint. One seed node fetches from the Hub by repo id
# (pinning what it got in manifests); every node then fetches the pinned manifests from the LAN mirrors
# first, falling back to the Hub. No jq, no awk over hf-fetch's output: exit codes and its own flags.
#
#   deploy-fleet.sh seed   # on the seed: fetch by repo id, save the manifests, export the mirror tree
#   deploy-fleet.sh node   # on every node: fetch the saved manifests, mirrors first
#
# Environment (defaults in brackets):
#   GGUF_REPO [org/model-GGUF], GGUF_QUANT [Q4_K_M], FP8_REPO [org/model-FP8], REVISION [main]
#   HF_TOKEN_FILE   the token for the gated repo [/run/secrets/hf_token]
#   HF_ENDPOINT     the Hub (hf-fetch reads it) ; MIRRORS: mirror URLs, space-separated, in order []
#   STATE           where the manifests are kept (shared with the nodes) [/srv/deploy]
#   MODELS          where the models go [/models]   MIRROR_DIR: the seed's export [$STATE/mirror]
#   HF_FETCH        the hf-fetch binary [hf-fetch on PATH]   ENVCHECK: the envcheck binary [envcheck on PATH]
#   ROCE_DEVICE     on a node: the RDMA device NCCL is to use (mlx5_0); its NCCL settings are written to
#                   NCCL_ENV_FILE [$MODELS/nccl.env] for the engine's unit (EnvironmentFile=). Unset: no RoCE.
# Exit: 0 deployed; otherwise the tool's code (1 check failed or no space, 2 usage, 3 network, 4 auth,
# 5 upstream moved while the copy here verifies).
set -euo pipefail

hf_fetch=${HF_FETCH:-hf-fetch}
envcheck=${ENVCHECK:-envcheck}
gguf_repo=${GGUF_REPO:-org/model-GGUF}
quant=${GGUF_QUANT:-Q4_K_M}
fp8_repo=${FP8_REPO:-org/model-FP8}
revision=${REVISION:-main}
token_file=${HF_TOKEN_FILE:-/run/secrets/hf_token}
state=${STATE:-/srv/deploy}
models=${MODELS:-/models}
mirror_dir=${MIRROR_DIR:-$state/mirror}

say() { echo "deploy-fleet: $*" >&2; }
fail() { rc=$1; shift; say "$* (exit $rc)"; exit "$rc"; }

# hf-fetch with the plan checked first: --dry-run exits 1 when the files (and assembly outputs) cannot
# fit, before a byte is fetched; the fetch itself checks the same plan again.
fetch() {
  local what=$1; shift
  "$hf_fetch" "$@" --dry-run --quiet || fail $? "$what: the plan does not fit or cannot be made"
  "$hf_fetch" "$@" --progress lines || fail $? "$what: the fetch failed"
  say "$what: verified"
}

seed() {
  mkdir -p "$state"
  # The GGUF: parts joined in natural order, the whole file checked against the repo's own SHA256SUMS.
  fetch "$gguf_repo" "$gguf_repo@$revision" --token-file "$token_file" \
    --include "$quant/*" --include "*mmproj*" --include "mtp*" --include "*.json" \
    --assemble "model-$quant.gguf=$quant/*.part*:SHA256SUMS" \
    --local-dir "$models/gguf" --save-manifest "$state/gguf.manifest"
  fetch "$fp8_repo" "$fp8_repo@$revision" --include "*.safetensors" --include "*.json" \
    --save-manifest "$state/fp8.manifest"
  # The mirror serves the cache's blobs: the GGUF's manifest again into the cache for the export.
  "$hf_fetch" --manifest "$state/gguf.manifest" --token-file "$token_file" --quiet ||
    fail $? "$gguf_repo: into the cache for the mirror"
  "$hf_fetch" mirror export --manifest "$state/gguf.manifest" --manifest "$state/fp8.manifest" \
    --to "$mirror_dir" --quiet || fail $? "mirror export"
  say "seeded: manifests in $state, mirror tree in $mirror_dir (serve it with nginx; see docs/hf-fetch.md)"
}

node() {
  local mirror_args=() m nccl
  if [[ -n ${ROCE_DEVICE:-} ]]; then
    # Before a byte is fetched: a port DOWN or without this node's address stops the node here (exit 1), and
    # NCCL gets the exact HCA, GID index and interface, never a stale or "null" index.
    nccl=$("$envcheck" --roce "$ROCE_DEVICE" --print nccl_env) || fail $? "$ROCE_DEVICE: RoCE is not usable"
    mkdir -p "$(dirname "${NCCL_ENV_FILE:-$models/nccl.env}")"
    printf '%s\n' "$nccl" >"${NCCL_ENV_FILE:-$models/nccl.env}"
    say "$ROCE_DEVICE: NCCL settings in ${NCCL_ENV_FILE:-$models/nccl.env}"
  fi
  for m in ${MIRRORS:-}; do mirror_args+=(--mirror "$m"); done
  fetch "$gguf_repo" --manifest "$state/gguf.manifest" --token-file "$token_file" "${mirror_args[@]}" \
    --local-dir "$models/gguf"
  fetch "$fp8_repo" --manifest "$state/fp8.manifest" "${mirror_args[@]}"
  say "node ready: $models/gguf/model-$quant.gguf and $fp8_repo in the Hugging Face cache"
}

case ${1:-} in
  seed) seed ;;
  node) node ;;
  *) echo "usage: deploy-fleet.sh seed|node" >&2; exit 2 ;;
esac
