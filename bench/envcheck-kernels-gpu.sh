#!/bin/bash
# Run on the GPU host: put envcheck (bench/device/pack.sh) in $D/pack and tests/data/kernels/libk_*.so in $D/data.
# envcheck --kernels on the GPU host, beside cuobjdump. Writes into $OUT.
set -u
D=$(dirname "$0"); OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
SP=/opt/torch/.venv/lib/python3.12/site-packages
export LD_LIBRARY_PATH=$D/pack/lib
EC=$D/pack/bin/envcheck
CUOBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
timed() {  # timed LABEL CMD...: wall seconds and blocks read from disk, via python
  python3 - "$@" <<'PY'
import resource,subprocess,sys,time
t=time.perf_counter(); p=subprocess.run(sys.argv[2:],stdout=subprocess.DEVNULL); w=time.perf_counter()-t
r=resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{sys.argv[1]}: rc={p.returncode} wall={w:.3f} s, read from disk {r.ru_inblock*512/2**20:.1f} MiB, user {r.ru_utime:.2f} s sys {r.ru_stime:.2f} s")
PY
}
{
echo "== host"; nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader; echo "cuobjdump: $CUOBJ"; $CUOBJ --version | tail -1
du -sh $SP; find $SP -type f \( -name '*.so' -o -name '*.so.*' \) -printf '%s\n' | awk '{s+=$1; n++} END {printf "%d shared objects, %.2f GB\n", n, s/1e9}'
for i in 1 2; do
  sync; echo 3 > /proc/sys/vm/drop_caches && c="page cache dropped" || c="page cache NOT dropped"
  timed "cold ($c) --kernels site-packages" $EC --kernels $SP --json
done
for i in 1 2 3; do timed "warm --kernels site-packages" $EC --kernels $SP --json; done
timed "warm --kernels torch/lib/libtorch_cuda.so" $EC --kernels $SP/torch/lib/libtorch_cuda.so
$EC --kernels $SP --json > "$OUT/kernels_sp.json"; echo "exit $? (site-packages)"
echo "== table"; $EC --kernels $SP | cut -c1-400
echo "== test libraries"
for l in libk_multi.so libk_no_sm90.so libk_compressed.so libk_rdc.so; do
  $EC --kernels $D/data/$l; echo "exit $?"
  echo "-- cuobjdump --list-elf --list-ptx $l"; $CUOBJ --list-elf --list-ptx $D/data/$l 2>&1
done
echo "== libcufft: sections, and fatbin magics per section"
readelf -SW $SP/nvidia/cu13/lib/libcufft.so.12 | grep -E "^\s+\[" | cut -c1-100
} > "$OUT/transcript.txt" 2>&1
python3 - $SP/nvidia/cu13/lib/libcufft.so.12 >> "$OUT/transcript.txt" 2>&1 <<'PY'
import sys,struct,subprocess,re,mmap
p=sys.argv[1]; f=open(p,'rb'); m=mmap.mmap(f.fileno(),0,access=mmap.ACCESS_READ)
out=subprocess.run(["readelf","-SW",p],capture_output=True,text=True).stdout
for line in out.splitlines():
    mm=re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)",line)
    if not mm: continue
    name,off,size=mm.group(1),int(mm.group(2),16),int(mm.group(3),16)
    if size<1<<20: continue
    sec=m[off:off+size]; n=0; i=sec.find(b"\x50\xed\x55\xba")
    kinds={}
    while i>=0 and n<100000:
        n+=1
        if name==".nv_fatbin" or n<=3:
            hs=struct.unpack_from("<H",sec,i+6)[0]; fs=struct.unpack_from("<Q",sec,i+8)[0]
            e=i+hs
            while e+64<=min(i+hs+fs,len(sec)):
                k,_,eh,pl=struct.unpack_from("<HHIQ",sec,e); arch=struct.unpack_from("<I",sec,e+28)[0]; fl=struct.unpack_from("<Q",sec,e+40)[0]
                kinds[(name,k,arch,hex(fl))]=kinds.get((name,k,arch,hex(fl)),0)+1
                if eh<64: break
                e+=eh+pl
        i=sec.find(b"\x50\xed\x55\xba",i+4)
    print(name, size, "fatbin magics:", n)
    for k,v in sorted(kinds.items()): print("   kind/arch/flags", k, v)
PY
python3 - "$OUT/kernels_sp.json" > "$OUT/libs.txt" <<'PY'
import json,sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["name"].startswith("kernels ") and c["data"].get("images") is not None: print(c["data"]["path"])
PY
mkdir -p /tmp/cuobj
python3 - "$OUT/libs.txt" "$CUOBJ" >> "$OUT/transcript.txt" <<'PY'
import sys,time,subprocess,hashlib,concurrent.futures as cf
libs=open(sys.argv[1]).read().split(); t=time.perf_counter()
def one(p):
    out=subprocess.run([sys.argv[2],"--list-elf","--list-ptx",p],capture_output=True,text=True)
    open("/tmp/cuobj/"+hashlib.md5(p.encode()).hexdigest()+".txt","w").write(out.stdout+out.stderr)
with cf.ThreadPoolExecutor(16) as ex: list(ex.map(one,libs))
print(f"cuobjdump --list-elf --list-ptx on the {len(libs)} libraries envcheck lists, 16 at a time: {time.perf_counter()-t:.1f} s")
PY
find $SP -type f \( -name '*.so' -o -name '*.so.*' \) | sort > "$OUT/all_so.txt"
python3 - "$OUT/kernels_sp.json" /tmp/cuobj "$OUT/all_so.txt" "$CUOBJ" > "$OUT/compare.txt" 2>&1 <<'PY'
import json,sys,os,re,hashlib,subprocess,collections
j=json.load(open(sys.argv[1])); d=sys.argv[2]; cuobj=sys.argv[4]
ours={c["data"]["path"]:c for c in j["checks"] if c["name"].startswith("kernels ") and "images" in c["data"]}
bad=0; tt=0; to=0; archs_theirs=set(); archs_ours=set()
strip=lambda t: t[:-1] if t.endswith("f") else t  # cuobjdump names a family cubin sm_100, not sm_100f
for path,c in sorted(ours.items()):
    txt=open(os.path.join(d,hashlib.md5(path.encode()).hexdigest()+".txt")).read()
    cub=collections.Counter(re.findall(r"^ELF file\s+\d+: .*\.(sm_\d+a?)\.cubin$",txt,re.M))
    ptx=collections.Counter("compute_"+m[3:] for m in re.findall(r"^PTX file\s+\d+: .*\.(sm_\d+a?)\.ptx$",txt,re.M))
    n=sum(cub.values())+sum(ptx.values()); tt+=n; to+=c["data"]["images"]
    oc=sorted(set(strip(t) for t in c["data"]["cubins"])); op=sorted(set(strip(p["target"]) for p in c["data"]["ptx"]))
    archs_theirs|=set(cub)|set(ptx); archs_ours|=set(oc)|set(op)
    same = sorted(cub)==oc and sorted(ptx)==op and n==c["data"]["images"]
    bad+= not same
    print("SAME" if same else "DIFF", c["status"], path, "| cuobjdump", n, dict(sorted(cub.items())), dict(sorted(ptx.items())), "| envcheck", c["data"]["images"], c["data"]["cubins"], [p["target"]+"/"+p["isa"] for p in c["data"]["ptx"]], "reloc", c["data"]["relocatable"]["images"], "other", c["data"]["other_entries"])
print(f"libraries compared: {len(ours)}, differing: {bad}; images: cuobjdump {tt}, envcheck {to}")
print("archs cuobjdump names that envcheck does not:", sorted(archs_theirs-archs_ours), "; envcheck's that cuobjdump does not:", sorted(archs_ours-archs_theirs))
missed=0; checked=0
for p in open(sys.argv[3]).read().split():
    if p in ours: continue
    checked+=1
    out=subprocess.run([cuobj,"--list-elf","--list-ptx",p],capture_output=True,text=True).stdout
    if re.search(r"^(ELF|PTX) file",out,re.M): missed+=1; print("MISSED", p, out[:300])
print(f"of the {checked} other shared objects, cuobjdump finds kernels in {missed}")
PY
