#!/usr/bin/env bash
# provision-box.sh: make one inference box ready and start the engine, each
# step a gate. A failing step stops the script with the tool's own sentence
# (on stderr) and the tool's exit code (0 ok, 1 check failed, 2 bad input,
# 3 network, 4 access refused).
#
#   provision-box.sh -- ENGINE COMMAND...
#
# Settings (environment):
#   MANIFEST      hf-fetch manifest of the checkpoint (required)
#   LOCK          the engine's hashed lock (requirements with --hash, or pylock.toml) (required)
#   WHEELHOUSE    directory of wheels the lock's hashes name (required: this box is offline)
#   VENV          where the engine's environment goes (default /opt/engine/venv)
#   PYTHON        interpreter for it (default python3)
#   PROFILE       envcheck profile (default provision-profile.yaml beside this script)
#   HF_HUB_CACHE  the checkpoint's cache (default ~/.cache/huggingface/hub)
#   HF_ENDPOINT   the Hub or a fleet mirror (http://mirror:8080); default the Hub
#   SHIM_DIR      where cc-shim is installed when the box has no compiler (default ~/.local/provkit-bin)
#   HF_FETCH_OPTS extra hf-fetch options, e.g. "--retries 2"
set -uo pipefail

say() { echo "provision-box: $*" >&2; }
# Runs one gate; on failure the tool has said why, and its exit code is ours.
gate() {
  local what=$1; shift
  "$@"
  local rc=$?
  if ((rc != 0)); then
    say "$what failed (exit $rc); stopping before anything else runs"
    exit "$rc"
  fi
}

[[ ${1:-} == -- ]] && shift
(($# > 0)) || { say "usage: provision-box.sh -- ENGINE COMMAND..."; exit 2; }
: "${MANIFEST:?set MANIFEST to the checkpoint's manifest}" "${LOCK:?set LOCK to the engine's lock}"
: "${WHEELHOUSE:?set WHEELHOUSE to the wheel directory}"
VENV=${VENV:-/opt/engine/venv}
PYTHON=${PYTHON:-python3}
PROFILE=${PROFILE:-$(dirname "$0")/provision-profile.yaml}
export HF_HUB_CACHE=${HF_HUB_CACHE:-$HOME/.cache/huggingface/hub}
SHIM_DIR=${SHIM_DIR:-$HOME/.local/provkit-bin}
read -r -a hf_fetch_opts <<<"${HF_FETCH_OPTS:-}"

# 1. The box: driver for the wanted CUDA and FP8. (The disk is step 3's: every fetch weighs its plan, the files
#    still to fetch and the assembled outputs, against the free space before a byte, and refuses in one sentence.)
[[ -r $MANIFEST ]] || { say "cannot read the manifest $MANIFEST"; exit 2; }
mkdir -p "$HF_HUB_CACHE" || exit 2
gate "the box check" envcheck --profile "$PROFILE"

# 2. A C compiler (Triton builds launchers at start-up), else cc-shim over zig first on PATH.
if ! envcheck --cc --quiet; then
  say "no working C compiler; installing cc-shim into $SHIM_DIR"
  gate "installing cc-shim" cc-shim install "$SHIM_DIR"
  export PATH="$SHIM_DIR:$PATH" CC=cc
  gate "the compiler check (with cc-shim)" envcheck --cc
fi

# 3. The checkpoint: exactly the manifest's files, every byte verified.
gate "fetching the checkpoint" hf-fetch --manifest "$MANIFEST" "${hf_fetch_opts[@]}"

# 4. The engine's environment from its lock, then proof it holds exactly that.
gate "building the environment" envbuild create "$VENV" --python "$PYTHON" --lock "$LOCK" --find-links "$WHEELHOUSE"
gate "verifying the environment" envbuild verify "$VENV" --lock "$LOCK"

# 5. Start the engine, offline, on what was verified.
say "box provisioned; starting: $*"
export HF_HUB_OFFLINE=1 VIRTUAL_ENV=$VENV PATH="$VENV/bin:$PATH"
exec "$@"
