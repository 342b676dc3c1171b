#!/bin/bash
# The release archive on the GPU host (Ubuntu 24.04), unchanged: ldd of every
# binary, release_check.py, then each tool's real work there with nothing of
# the archive's on LD_LIBRARY_PATH and no build tree anywhere:
#   envcheck against the real driver; hf-fetch of a tiny model (made there with
#   transformers, served by tests/hubsim) into an HF cache that transformers
#   loads offline; envbuild create of a small env from wheels found on the host;
#   cc-shim compiling Triton's launcher with gcc hidden and CC unset.
# Run from the repository root with the folder holding this script, the
# archive, release_check.py and zig.tar.xz (bench/cc-shim-triton-gpu/run.sh
# says how it is packed) as $1. Prints the transcript.
here=$(cd "$1" && pwd)
repo=$PWD
W=/tmp/pkrel; rm -rf $W; mkdir -p $W
run() { echo; echo "\$ $*"; "$@"; echo "[exit $?]"; }
venv=/opt/torch/.venv/bin/python3

echo "===== host"; head -2 /etc/os-release; ldd --version | head -1; uname -r
tar xzf "$here"/provkit-*.tar.gz -C $W; P=$(echo $W/provkit-*); echo "unpacked into $P"; du -sh $P
echo; echo "===== ldd"
for b in $P/bin/*; do echo "\$ ldd $b"; ldd $b; done
echo; echo "===== release_check.py"; python3 "$here/release_check.py" $P --floor 2.34
clean() { env -i HOME=$W/home PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LD_LIBRARY_PATH= "$@"; }
mkdir -p $W/home
echo; echo "===== --version (env -i, LD_LIBRARY_PATH empty)"
for t in hf-fetch envcheck envbuild; do run clean $P/bin/$t --version; done
run clean $P/bin/cc-shim --shim-version

echo; echo "===== envcheck against the real driver (the host's own environment: LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
run $P/bin/envcheck
run $P/bin/envcheck --cuda 13.0 --json

echo; echo "===== hf-fetch from the Hub simulator, then transformers offline"
$venv - $W/model <<'PY'
import sys, torch
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
LlamaForCausalLM(cfg).save_pretrained(sys.argv[1])
print("made a tiny Llama with transformers", __import__("transformers").__version__)
PY
ls -la $W/model
python3 - $W/model $W/hub <<PY
import os, sys
sys.path.insert(0, "$repo/tests/hubsim")
from simctl import make_repo
src, hub = sys.argv[1], sys.argv[2]
files = {n: open(os.path.join(src, n), "rb").read() for n in os.listdir(src)}
print("commit", make_repo(hub, "provkit/tiny-llama", files, lfs={n for n in files if n.endswith(".safetensors")}))
PY
python3 $repo/tests/hubsim/hubsim.py --repos $W/hub/repos.json --ready-file $W/ready.json 2>$W/hubsim.log &
sim=$!
for _ in $(seq 100); do [[ -s $W/ready.json ]] && break; sleep 0.1; done
hub=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hub"])' $W/ready.json)
echo "Hub simulator at $hub"
run clean $P/bin/hf-fetch manifest create provkit/tiny-llama@main --endpoint $hub -o $W/tiny.manifest
cat $W/tiny.manifest
run clean $P/bin/hf-fetch --manifest $W/tiny.manifest --endpoint $hub --cache-dir $W/hf/hub
run clean $P/bin/hf-fetch --manifest $W/tiny.manifest --cache-dir $W/hf/hub --verify-only --quiet
kill $sim
echo "\$ HF_HUB_OFFLINE=1 HF_HUB_CACHE=$W/hf/hub $venv (load provkit/tiny-llama, compare with the saved model)"
HF_HUB_OFFLINE=1 HF_HUB_CACHE=$W/hf/hub $venv - $W/model <<'PY'
import sys, torch
from transformers import AutoModelForCausalLM
got = AutoModelForCausalLM.from_pretrained("provkit/tiny-llama")
want = AutoModelForCausalLM.from_pretrained(sys.argv[1])
same = all(torch.equal(a, b) for a, b in zip(got.state_dict().values(), want.state_dict().values()))
ids = torch.tensor([[1, 2, 3, 4]])
print("loaded offline from", got.name_or_path, "| tensors identical:", same,
      "| logits identical:", torch.equal(got(ids).logits, want(ids).logits))
sys.exit(0 if same else 1)
PY
echo "[exit $?]"

echo; echo "===== envbuild create from wheels found on the host"
mkdir -p $W/wheels
find / -xdev \( -path /proc -o -path /sys -o -path $W \) -prune -o -name '*-py3-none-any.whl' -size -3M -print 2>/dev/null | head -200 > $W/found.txt
echo "py3-none-any wheels found on the host: $(wc -l < $W/found.txt)"; head -5 $W/found.txt
python3 - $W/found.txt $W/wheels $W/lock.txt <<'PY'
import hashlib, os, shutil, sys
picked = {}
for path in open(sys.argv[1]).read().split():
    name, version = os.path.basename(path).split("-")[:2]
    if name.lower() not in picked and len(picked) < 3:
        picked[name.lower()] = (name, version, path)
with open(sys.argv[3], "w") as lock:
    for name, version, path in picked.values():
        shutil.copy(path, sys.argv[2])
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        lock.write(f"{name.replace('_', '-')}=={version} --hash=sha256:{digest}\n")
PY
if [[ ! -s $W/lock.txt ]]; then echo "none found: the integration tests' wheels (make_wheels.py)"; python3 $repo/tests/integration/envbuild/make_wheels.py $W/wheels >/dev/null; fi
cat $W/lock.txt; ls $W/wheels
run clean $P/bin/envbuild create $W/env --python /usr/bin/python3 --lock $W/lock.txt --find-links $W/wheels --cache-dir $W/envcache
run clean $P/bin/envbuild verify $W/env --lock $W/lock.txt
run $W/env/bin/python -c "import sys, importlib.metadata as m; print(sys.prefix, sorted((d.metadata['Name'], d.version) for d in m.distributions()))"

echo; echo "===== cc-shim builds Triton's launcher, no compiler on the box"
tar xJf "$here/zig.tar.xz" -C /tmp
mkdir -p $W/nocc
echo "compilers on the test PATH: $(PATH=$W/nocc:/usr/sbin:/sbin command -v gcc cc clang || echo none)"
echo "\$ CC=$P/bin/cc-shim CC_SHIM_ZIG=/tmp/zig-linux-x64/zig PATH=$W/nocc:/usr/sbin:/sbin $venv bench/cc-shim-triton-gpu/kernel.py"
env -u CC CC=$P/bin/cc-shim CC_SHIM_ZIG=/tmp/zig-linux-x64/zig TRITON_CACHE_DIR=$W/tcache \
  ZIG_GLOBAL_CACHE_DIR=$W/zc ZIG_LOCAL_CACHE_DIR=$W/zc PATH=$W/nocc:/usr/sbin:/sbin \
  $venv $repo/bench/cc-shim-triton-gpu/kernel.py 2>$W/triton.err
echo "[exit $?]"; head -c 2000 $W/triton.err
echo "launcher built by: $(find $W/tcache -name '*.so' | head -3)"

echo; echo "===== apt's view of the source build's packages (no network: the image's lists)"
apt-cache policy catch2 libyaml-cpp-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libarchive-dev \
  libcurl4-openssl-dev nginx-light nginx libclang-rt-18-dev libclang-rt-dev 2>&1 | grep -E '^[a-z]|Candidate'
