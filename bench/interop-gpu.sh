#!/usr/bin/env bash
# Issue 6 interop: a cache written by hf-fetch, read by huggingface_hub itself. Run where huggingface_hub
# is installed (the GPU host: Ubuntu 24.04, python3 + huggingface_hub; no network, no node needed).
#
#   bench/interop-gpu.sh HF_FETCH_BINARY            (run from anywhere; LD_LIBRARY_PATH as the binary needs)
# LD_LIBRARY_PATH is given to hf-fetch only: python3 and huggingface_hub run with the host's own libraries
# (carried Debian libssl/libcurl must not replace the ones Ubuntu's python was built against).
#
# Starts the Hub simulator (tests/hubsim) with the demo repository on loopback and runs two fetches into
# fresh caches:
#   A. `hf-fetch manifest create provkit/demo-model@<commit>` + `hf-fetch --manifest` (exactly the repo's
#      files), then tests/hubsim/check_python_client.py --cache-dir A (the simulator engineer's checks:
#      scan_cache_dir lists repo + revision with no warnings and exactly the repo's files,
#      try_to_load_from_cache finds each file with the right bytes and blob name, verify_repo_checksums
#      against a simulator serving the same demo: no mismatches);
#   B. `hf-fetch --manifest manifests/demo.manifest` (the demo as users run it: with the assembled
#      model-UD-IQ4_XS.gguf, a regular file in the snapshot that is not in the repo), then the checks below
#      against this script's simulator: scan_cache_dir (no warnings, repo and revision listed),
#      try_to_load_from_cache for every repo file, HfApi(endpoint=sim).verify_repo_checksums (no mismatch,
#      nothing missing; extra paths printed), `hf cache verify` when the CLI is there, and, with
#      HF_HUB_OFFLINE=1 in a fresh interpreter, snapshot_download(repo id, local_files_only=True) with and
#      without the revision, and hf_hub_download of config.json by repo id alone.
# HF_FETCH_FLAGS (default "--connections 4 --min-split-size 64K") go to both fetches.
# The transcript goes to stdout and to $OUT/interop.txt (OUT defaults to the current directory).
# Exit 0 when every check passed, 1 when one failed, 2 on a usage or set-up error.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
[[ $# -ge 1 && -x $1 ]] || { echo "usage: bench/interop-gpu.sh HF_FETCH_BINARY (got: ${1:-nothing})" >&2; exit 2; }
bin=$(realpath "$1")
out_dir=${OUT:-$PWD}
mkdir -p "$out_dir"
transcript=$out_dir/interop.txt
exec > >(tee "$transcript") 2>&1
tee_pid=$!
hf_fetch_ld=${LD_LIBRARY_PATH:-}
unset LD_LIBRARY_PATH
hf_fetch() { LD_LIBRARY_PATH=$hf_fetch_ld "$bin" "$@"; }
# The demo's shards are small: a low split size makes them go as parallel ranges (sidecar, prefix hash).
read -r -a fetch_flags <<<"${HF_FETCH_FLAGS:---connections 4 --min-split-size 64K}"

work=$(mktemp -d /tmp/provkit-interop.XXXXXX)
sim_pid=
cleanup() {
  [[ -n $sim_pid ]] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failed=0
step() { echo; echo "== $*"; }
run_check() {  # run_check LABEL COMMAND...: runs it, prints its output, counts a non-zero exit as a failure
  local label=$1; shift
  echo "\$ ${*/#$work/\$WORK}"
  "$@"
  local rc=$?
  if ((rc == 0)); then echo "PASS: $label"; else echo "FAIL: $label (exit $rc)"; failed=1; fi
  return $rc
}

# No token, endpoint, proxy or offline switch from this machine.
unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_TOKEN_PATH HF_ENDPOINT HF_HUB_OFFLINE HF_HUB_CACHE \
  HTTP_PROXY HTTPS_PROXY http_proxy https_proxy
export NO_PROXY=127.0.0.1,127.0.0.2 no_proxy=127.0.0.1,127.0.0.2 HF_HUB_DISABLE_TELEMETRY=1
export HF_HOME=$work/hf-home

step "environment"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(uname -srm); $(. /etc/os-release && echo "$PRETTY_NAME")"
echo "python: $(python3 --version 2>&1); huggingface_hub: $(python3 -c 'import huggingface_hub as h; print(h.__version__)' 2>&1)"
echo "hf-fetch: $bin ($(hf_fetch --version 2>&1)); LD_LIBRARY_PATH for it: ${hf_fetch_ld:-none}"
python3 -c 'import huggingface_hub' 2>/dev/null || { echo "huggingface_hub is not importable here"; exit 2; }

step "simulator with the demo repository"
python3 "$src/tests/hubsim/hubsim.py" make-demo "$work/sim" >/dev/null || { echo "make-demo failed"; exit 2; }
python3 "$src/tests/hubsim/hubsim.py" --repos "$work/sim/repos.json" --ready-file "$work/ready.json" \
  --log "$work/requests.jsonl" >"$work/hubsim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do [[ -s $work/ready.json ]] && break; sleep 0.1; done
[[ -s $work/ready.json ]] || { echo "the simulator did not start:"; cat "$work/hubsim.log"; exit 2; }
hub=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hub"])' "$work/ready.json")
repo=provkit/demo-model
commit=$(python3 -c "import sys; sys.path.insert(0, '$src/tests/hubsim'); import hubsim; print(hubsim.DEMO_SHA)")
echo "hub $hub, repo $repo @ $commit"

step "A. hf-fetch manifest create + fetch (the repo's files only)"
run_check "hf-fetch manifest create" hf_fetch manifest create "$repo@$commit" --endpoint "$hub" -o "$work/a.manifest"
run_check "hf-fetch --manifest (A)" hf_fetch --manifest "$work/a.manifest" --cache-dir "$work/cache-a" --endpoint "$hub" \
  "${fetch_flags[@]}"
step "A. huggingface_hub reads the cache (tests/hubsim/check_python_client.py --cache-dir)"
run_check "check_python_client.py --cache-dir (A)" \
  python3 "$src/tests/hubsim/check_python_client.py" --cache-dir "$work/cache-a" --repo "$repo" --revision "$commit"

step "B. hf-fetch --manifest manifests/demo.manifest (with the assembled GGUF)"
run_check "hf-fetch --manifest (B)" hf_fetch --manifest "$src/manifests/demo.manifest" --cache-dir "$work/cache-b" --endpoint "$hub" \
  "${fetch_flags[@]}"
echo "cache layout:"
(cd "$work/cache-b" && find . -printf '%y %p%l\n' | sed 's/^l \(.*\)/l \1/' | sort | sed "s|^|  |")

step "B. huggingface_hub reads the cache"
run_check "huggingface_hub checks (B)" python3 - "$src" "$work/cache-b" "$repo" "$commit" "$hub" <<'PY'
import hashlib, os, sys
src, cache, repo, commit, hub = sys.argv[1:]
sys.path.insert(0, os.path.join(src, "tests", "hubsim"))
from hubsim import demo_files
import huggingface_hub
from huggingface_hub import HfApi, scan_cache_dir, try_to_load_from_cache

failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)

files, lfs = demo_files()
info = scan_cache_dir(cache)
check(not info.warnings, f"scan_cache_dir: no warnings {[str(w) for w in info.warnings]}")
repos = {r.repo_id: r for r in info.repos}
check(repo in repos, f"scan_cache_dir lists {repo} ({sorted(repos)})")
if repo in repos:
    revs = {r.commit_hash: r for r in repos[repo].revisions}
    check(commit in revs, f"scan_cache_dir lists revision {commit}, refs {sorted(revs[commit].refs) if commit in revs else '-'}")
    if commit in revs:
        cached = sorted(os.path.relpath(f.file_path, revs[commit].snapshot_path) for f in revs[commit].files)
        print(f"     files: {cached}")
        check(set(files) <= set(cached), "scan_cache_dir: every repo file is in the revision")
for path, data in sorted(files.items()):
    found = try_to_load_from_cache(repo, path, cache_dir=cache, revision=commit)
    ok = isinstance(found, str) and open(found, "rb").read() == data
    check(ok, f"try_to_load_from_cache({path}) -> {'right bytes' if ok else found}")
    want = hashlib.sha256(data).hexdigest() if path in lfs else hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    blob = os.path.basename(os.path.realpath(found)) if isinstance(found, str) else None
    check(blob == want, f"{path}: blob named {want}")
api = HfApi(endpoint=hub)
if hasattr(api, "verify_repo_checksums"):
    try:
        v = api.verify_repo_checksums(repo_id=repo, revision=commit, cache_dir=cache)
        print(f"     verify_repo_checksums: {v!r}")
        check(not getattr(v, "mismatches", None), "verify_repo_checksums: no mismatches")
        check(not getattr(v, "missing_paths", None), "verify_repo_checksums: nothing missing")
        print(f"     extra paths (hf-fetch's assembled output, expected): {getattr(v, 'extra_paths', None)}")
        check(getattr(v, "checked_count", len(files)) >= len(files), f"verify_repo_checksums checked {getattr(v, 'checked_count', '?')} files")
    except Exception as e:
        check(False, f"verify_repo_checksums raised {e!r}")
else:
    check(False, f"huggingface_hub {huggingface_hub.__version__} has no HfApi.verify_repo_checksums")
print(f"{len(failures)} failure(s)" if failures else "all checks passed")
sys.exit(1 if failures else 0)
PY

step "B. hf cache verify (the CLI)"
if command -v hf >/dev/null && hf cache verify --help >/dev/null 2>&1; then
  run_check "hf cache verify" env HF_ENDPOINT="$hub" hf cache verify "$repo" --revision "$commit" --cache-dir "$work/cache-b"
else
  echo "(no 'hf cache verify' CLI here: HfApi.verify_repo_checksums above is the same check)"
fi

step "B. offline loading by repo id (HF_HUB_OFFLINE=1, fresh interpreter)"
run_check "offline loading" env HF_HUB_OFFLINE=1 HF_HUB_CACHE="$work/cache-b" HF_ENDPOINT=http://127.0.0.1:9 \
  python3 - "$repo" "$commit" "$work/cache-b" <<'PY'
import os, sys
repo, commit, cache = sys.argv[1:]
from huggingface_hub import constants, hf_hub_download, snapshot_download
failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
check(constants.HF_HUB_OFFLINE, "huggingface_hub sees HF_HUB_OFFLINE=1")
want = os.path.join(cache, "models--" + repo.replace("/", "--"), "snapshots", commit)
for kwargs in ({}, {"revision": commit}):
    try:
        got = snapshot_download(repo, local_files_only=True, **kwargs)
        check(os.path.realpath(got) == os.path.realpath(want), f"snapshot_download({repo!r}, local_files_only=True, {kwargs}) -> {got}")
    except Exception as e:
        check(False, f"snapshot_download({repo!r}, {kwargs}) raised {e!r}")
try:
    got = hf_hub_download(repo, "config.json")
    check(os.path.realpath(os.path.dirname(got)) == os.path.realpath(want) and open(got).read().startswith("{"),
          f"hf_hub_download({repo!r}, 'config.json') by repo id -> {got}")
except Exception as e:
    check(False, f"hf_hub_download by repo id raised {e!r}")
sys.exit(1 if failures else 0)
PY

step "requests the simulator saw (origin method path status)"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    print("  %-4s %-4s %s %s" % (r["origin"], r["method"], r["path"].split("?")[0], r["status"]))' "$work/requests.jsonl" | sort | uniq -c

echo
if ((failed)); then echo "RESULT: some checks FAILED"; else echo "RESULT: all checks passed"; fi
exec >/dev/null 2>&1  # close the pipe, so that interop.txt is complete when the script exits
wait "$tee_pid" 2>/dev/null
exit $failed
