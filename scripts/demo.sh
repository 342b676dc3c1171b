#!/usr/bin/env bash
# The demo: start the bundled Hub simulator with a small generated repository
# on 127.0.0.1 (its "CDN" on 127.0.0.2), fetch manifests/demo.manifest into a
# fresh Hugging Face cache with hf-fetch, and say where the verified files are.
# No internet needed beyond Debian's archive for missing packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${PROVKIT_BUILD:-$root/build}

# ctest runs this with the tools already built (PROVKIT_DEMO_SKIP_BUILD=1).
if [[ -z ${PROVKIT_DEMO_SKIP_BUILD:-} ]]; then
  "$root/scripts/deps.sh"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)" --target hf-fetch
fi
hf_fetch=$build/bin/hf-fetch

work=$(mktemp -d "${TMPDIR:-/tmp}/provkit-demo.XXXXXX")
python3 "$root/tests/hubsim/hubsim.py" make-demo "$work/hub" >/dev/null
python3 "$root/tests/hubsim/hubsim.py" --repos "$work/hub/repos.json" --ready-file "$work/ready.json" \
  2>"$work/hubsim.log" &
sim=$!
trap 'kill "$sim" 2>/dev/null || true; wait "$sim" 2>/dev/null || true; if [[ -n ${PROVKIT_DEMO_CLEANUP:-} ]]; then rm -rf "$work"; fi' EXIT
for _ in $(seq 200); do
  [[ -s $work/ready.json ]] && break
  kill -0 "$sim" 2>/dev/null || { cat "$work/hubsim.log" >&2; echo "demo: the Hub simulator did not start" >&2; exit 1; }
  sleep 0.1
done
[[ -s $work/ready.json ]] || { echo "demo: the Hub simulator did not start within 20 s" >&2; exit 1; }
hub=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["hub"])' "$work/ready.json")
echo "demo: Hub simulator at $hub (CDN on 127.0.0.2)"

# A fresh HF_HOME: nothing of this machine's Hugging Face set-up (token, cache) is used.
export HF_HOME=$work/hf-home
unset HF_TOKEN HF_TOKEN_PATH HF_HUB_CACHE HF_ENDPOINT
cache=$HF_HOME/hub
echo "demo: hf-fetch --manifest manifests/demo.manifest --endpoint $hub --cache-dir $cache"
"$hf_fetch" --manifest "$root/manifests/demo.manifest" --endpoint "$hub" --cache-dir "$cache"

echo
echo "demo: checking the files again without any network (--verify-only):"
"$hf_fetch" --manifest "$root/manifests/demo.manifest" --cache-dir "$cache" --verify-only --quiet
commit=$(sed -n 's/^revision: *//p' "$root/manifests/demo.manifest")
cat <<MSG
demo: all files verified. They are in
  $cache/models--provkit--demo-model/snapshots/$commit/
(blobs named by sha256 / git id, snapshot entries are symlinks, refs/main holds the commit).
Point Hugging Face loaders at them, offline:
  export HF_HOME=$HF_HOME          # or: export HF_HUB_CACHE=$cache
  export HF_HUB_OFFLINE=1
  python3 -c 'from huggingface_hub import snapshot_download; print(snapshot_download("provkit/demo-model"))'
MSG
