"""hf-fetch inspect of split checkpoints (issue 21 item 8): gguf-split sets as llama.cpp's gguf-split writes
them, byte-split parts named by a manifest's assemble, the files not read listed with why, and the GGUF file type
and quantization scheme as fields.

gguf-split's layout (llama.cpp tools/gguf-split): parts named PREFIX-%05d-of-%05d.gguf from 00001, each a whole
GGUF file holding its own tensors; every part has split.no (UINT16, from 0), split.count (UINT16) and
split.tensors.count (INT32, all the set's tensors); only the first part has the model's other keys.

Run one: python3 test_inspect_split.py test_gguf_split_set_as_llama_cpp_writes_it
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import hf_fetch  # noqa: E402
import checkpoints as ck  # noqa: E402
from test_inspect import GGUF_META, GGUF_TENSORS, REPO, gguf_bytes, inspect, serve  # noqa: E402

README = b"# tiny\nsplit with gguf-split\n"


def split_set(prefix, parts):
    """gguf-split's output for GGUF_TENSORS cut into `parts` (lists of tensors)."""
    files = {}
    for i, tensors in enumerate(parts):
        meta = {"split.no": ("u16", i), "split.count": ("u16", len(parts)), "split.tensors.count": ("i32", len(GGUF_TENSORS))}
        if i == 0:
            meta = {**GGUF_META, **meta}
        files[f"{prefix}-{i + 1:05d}-of-{len(parts):05d}.gguf"] = ck.gguf(meta, tensors)[0]
    return files


def check_scheme(report):
    q = report["quantization"]
    check(q["scheme"] == "gguf Q4_K_M" and q["method"] == "gguf" and q["format"] == "Q4_K_M" and q["weight_type"] == "Q4_K"
          and q["block_size"] == [256] and q["checked"] is False, "the GGUF file type as the scheme", q)


def test_gguf_split_set_as_llama_cpp_writes_it():
    files = split_set("Q4_K_M/tiny-Q4_K_M", [GGUF_TENSORS[:3], GGUF_TENSORS[3:5], GGUF_TENSORS[5:]])
    files["README.md"] = README
    parts_bytes = sum(len(v) for k, v in files.items() if k.endswith(".gguf"))
    with HubSim(serve(files)[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
        plain = hf_fetch("inspect", REPO, "--endpoint", sim.hub)
    check(r.rc == 0 and report["gguf_split_problems"] == [], f"a whole set: exit {r.rc}", r)
    check(report["total"]["files"] == 3 and report["total"]["file_bytes"] == parts_bytes
          and report["total"]["bytes_by_dtype"] == gguf_bytes(), "the whole set's bytes", report["total"])
    check(report["listed_bytes"] == parts_bytes + len(README), "every listed byte", report)
    check(report["not_read"] == [{"path": "README.md", "size": len(README), "why": "not a safetensors or GGUF file"}],
          "the file not read, with why", report["not_read"])
    first = report["files"][0]
    check(first["path"].endswith("-00001-of-00003.gguf") and first["file_type"] == "Q4_K_M", "the first part's file type", first)
    check(all(f["file_type"] is None for f in report["files"][1:]), "the other parts carry no file type", report["files"])
    check_scheme(report)
    check(plain.rc == 0 and "file type Q4_K_M" in plain.out and "quantization: gguf Q4_K_M (method gguf, format Q4_K_M, "
          "block size [256])" in plain.out and "NOT READ" in plain.out + plain.err and "README.md" in plain.out + plain.err,
          "the plain output names the file type, the scheme and the file not read", plain)


def test_gguf_split_number_out_of_range():
    files = split_set("tiny", [GGUF_TENSORS[:4], GGUF_TENSORS[4:]])
    # A second part that calls itself split.no 2 of 2 (they count from 0): the set has no part 1.
    meta = {"split.no": ("u16", 2), "split.count": ("u16", 2), "split.tensors.count": ("i32", len(GGUF_TENSORS))}
    files["tiny-00002-of-00002.gguf"] = ck.gguf(meta, GGUF_TENSORS[4:])[0]
    with HubSim(serve(files)[0]) as sim:
        r, report = inspect(REPO, "--endpoint", sim.hub)
    check(r.rc == 1 and any("split.no 2 of split.count 2" in p for p in report["gguf_split_problems"]), "split.no past the count", report)


def byte_split(data, cuts):
    """`data` cut at `cuts` (offsets), as `split -b` / a repo's .partNofM files."""
    edges = [0, *cuts, len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


def test_byte_split_parts_named_by_a_manifest():
    data, header_end = ck.gguf(GGUF_META, GGUF_TENSORS)
    # The first part shorter than the header: reading it takes bytes of the second.
    check(header_end > 5000, f"the fixture's header ({header_end} bytes) must outgrow the first part")
    pieces = byte_split(data, [5000, len(data) // 2])
    files = {f"tiny-Q4_K_M.gguf.part{i + 1}of3": p for i, p in enumerate(pieces)}
    files["README.md"] = README
    repos, sha = serve(files, lfs=set(files) - {"README.md"})
    tmp = tempdir("inspect-split-")
    manifest = os.path.join(tmp, "m.yaml")
    with HubSim(repos) as sim:
        r = hf_fetch("manifest", "create", REPO, "--endpoint", sim.hub, "-o", manifest, "--assemble", "tiny-Q4_K_M.gguf=tiny-Q4_K_M.gguf.part*")
        check(r.rc == 0, "manifest create --assemble", r)
        r, report = inspect("--manifest", manifest, "--endpoint", sim.hub)
        by_repo = hf_fetch("inspect", REPO, "--endpoint", sim.hub)
        cache = os.path.join(tmp, "cache")
        check(hf_fetch("--manifest", manifest, "--endpoint", sim.hub, "--cache-dir", cache).rc == 0, "fetch")
    check(r.rc == 0 and [f["path"] for f in report["files"]] == ["tiny-Q4_K_M.gguf"], f"the assembled file read: exit {r.rc}", r)
    f = report["files"][0]
    check(f["size"] == len(data) and f["header_bytes"] == header_end and f["file_type"] == "Q4_K_M"
          and f["bytes_by_dtype"] == gguf_bytes(), "its header from the parts' leading bytes", f)
    check(report["total"]["file_bytes"] == len(data), "the whole file's bytes", report["total"])
    why = {n["path"]: n["why"] for n in report["not_read"]}
    check(why == {**{p: "a part of tiny-Q4_K_M.gguf, read as that file" for p in files if ".part" in p},
                  "README.md": "not a safetensors or GGUF file"}, "the parts listed with why", report["not_read"])
    check_scheme(report)
    # By repo id there is no assemble to go by: no checkpoint file, exit 2 (never a report with a short total).
    check(by_repo.rc == 2 and "no .safetensors or .gguf file" in by_repo.err, "by repo id", by_repo)
    # On disk: the assembled file in the snapshot is read whole; the parts are listed as not read.
    snap = os.path.join(cache, "models--org--model", "snapshots", sha)
    r, local = inspect(snap)
    check(r.rc == 0 and [f["path"] for f in local["files"]] == ["tiny-Q4_K_M.gguf"] and local["files"][0]["size"] == len(data),
          "the snapshot's assembled file", local)


def test_local_split_set():
    tmp = tempdir("inspect-split-local-")
    files = split_set("tiny", [GGUF_TENSORS[:2], GGUF_TENSORS[2:]])
    files["README.md"] = README
    for name, data in files.items():
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    r, report = inspect(tmp)
    check(r.rc == 0 and report["total"]["file_bytes"] == sum(len(v) for k, v in files.items() if k.endswith(".gguf"))
          and [n["path"] for n in report["not_read"]] == ["README.md"], "a split set on disk", report)
    check_scheme(report)
    os.unlink(os.path.join(tmp, "tiny-00002-of-00002.gguf"))
    r, report = inspect(tmp)
    check(r.rc == 1 and "1 of the 2 gguf-split parts" in report["gguf_split_problems"][0], "a part missing on disk", report)


if __name__ == "__main__":
    main()
