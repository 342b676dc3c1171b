#!/usr/bin/env bash
# Deploy gate: start the inference engine only when envcheck says the box can
# run it, and say why not otherwise.
#
#   deploy-gate.sh [--gpu INDEX|UUID]... -- ENGINE COMMAND...
#   e.g. deploy-gate.sh --gpu GPU-6f1c... -- vllm serve /models/llama-fp8 --port 8000
#
# ENVCHECK_PROFILE: the profile (default: envcheck-profile.yaml beside this script).
# ENVCHECK: the envcheck binary (default: envcheck on PATH).
# Exit: the engine's own status once started; 1 when a check failed; 2 for a
# usage or profile error (envcheck names the file and line).
set -euo pipefail

envcheck=${ENVCHECK:-envcheck}
profile=${ENVCHECK_PROFILE:-$(dirname "$0")/envcheck-profile.yaml}

usage() {
  echo "usage: deploy-gate.sh [--gpu INDEX|UUID]... -- ENGINE COMMAND..." >&2
  exit 2
}

gpus=()
while (($# > 0)) && [[ $1 != -- ]]; do
  case $1 in
    --gpu) (($# >= 2)) || usage; gpus+=(--gpu "$2"); shift 2 ;;
    *) usage ;;
  esac
done
(($# > 0)) || usage
shift  # the --
(($# > 0)) || usage

rc=0
report=$("$envcheck" --profile "$profile" "${gpus[@]}") || rc=$?
case $rc in
  0)
    printf '%s\n' "$report" >&2
    echo "deploy-gate: all checks of $profile passed; starting: $*" >&2
    exec "$@"
    ;;
  1)
    printf '%s\n' "$report" >&2
    echo "deploy-gate: refusing to start $1: the FAIL lines above say what to fix" >&2
    exit 1
    ;;
  *)
    echo "deploy-gate: could not check $profile (envcheck exit $rc)" >&2
    exit "$rc"
    ;;
esac
