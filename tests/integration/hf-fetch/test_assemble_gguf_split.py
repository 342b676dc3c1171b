"""--assemble of gguf-split parts (issue 43 item 5): each part of a gguf-split set is a whole GGUF file, and the
parts joined byte by byte make a file llama.cpp cannot load ("invalid split file name"). The parts here are
written by Debian's gguf-py (GGUFWriter split_max_tensors, as convert_hf_to_gguf.py --split-max-tensors writes
them) and llama.cpp itself judges: it loads the first part of the set, and refuses the joined file. hf-fetch
refuses the assembly (exit 2 before a byte when the parts carry gguf-split's names; exit 1 with nothing written
when they are renamed), and inspect of a joined file says what it is in words.

Run one: python3 test_assemble_gguf_split.py TEST_NAME
"""

import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import BUILD, SOURCE, HubSim, check, main, tempdir  # noqa: E402
from hf_fixtures import Repo, hf_fetch, resolves  # noqa: E402

sys.path.insert(0, os.path.join(SOURCE, "tests", "llamacpp"))
from judge import Judge  # noqa: E402

CACHE = os.path.join(BUILD, "llamacpp-judge")
LOADS = "llama-completion -c 100"


def split_set():
    """(judge, {name: bytes}) of a tiny llama model cut into 4 gguf-split parts by gguf-py."""
    try:
        j = Judge(CACHE)
    except Exception as e:  # no network, a package gone: the judge is missing, and that is a failure
        check(False, "llama.cpp could not be made ready as the judge", e)
    d = tempdir("gguf-split-")
    j.make_model("llama", os.path.join(d, "tiny.gguf"), max_tensors=10)
    parts = sorted(glob.glob(os.path.join(d, "tiny-*-of-*.gguf")))
    check(len(parts) == 4, "gguf-py wrote a 4-part set", parts)
    tensors, error = j.allocate(parts[0], LOADS)
    check(error is None, "llama.cpp loads the set from its first part", error)
    out = {}
    for p in parts:
        with open(p, "rb") as f:
            out[os.path.basename(p)] = f.read()
    joined = os.path.join(d, "joined.gguf")
    with open(joined, "wb") as f:
        f.write(b"".join(out.values()))
    tensors, error = j.allocate(joined, LOADS)
    check(tensors is None and "invalid split file name" in error, "llama.cpp refuses the parts joined", error)
    return j, out


def test_assemble_of_gguf_split_names_refused_before_a_byte():
    _, parts = split_set()
    repo = Repo({f"Q4/{k}": v for k, v in parts.items()}, lfs={f"Q4/{k}" for k in parts})
    local = tempdir("hf-fetch-local-")
    with HubSim(repo.repos_json) as sim:
        sim.clear_requests()
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--assemble", "tiny.gguf=Q4/*.gguf")
        asked = resolves(sim.requests())
    check(r.rc == 2, f"an assembly of gguf-split parts is a usage error: {r}")
    check("gguf-split parts" in r.err and "llama-gguf-split --merge Q4/tiny-00001-of-00004.gguf tiny.gguf" in r.err
          and "llama-server -m Q4/tiny-00001-of-00004.gguf" in r.err, "the reason and what to do instead", r.err)
    check(not asked, "no file was requested", asked)
    check(not os.path.exists(os.path.join(local, "tiny.gguf")), "no output written")
    # The flag is named by the tool, once (the library's sentence names none); --json says the manifest domain's
    # shared reason, as any malformed manifest entry, and which refusal it is in detail.refusal.
    check(r.err.count("--assemble") == 1 and "--assemble tiny.gguf: " in r.err, "the flag named once", r.err)
    with HubSim(repo.repos_json) as sim:
        j = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--assemble", "tiny.gguf=Q4/*.gguf",
                     "--json")
    done = [e for e in j.json_events() if e.get("reason")]
    check(j.rc == 2 and done and done[-1]["reason"] == "invalid_input"
          and done[-1].get("detail") == {"refusal": "gguf_split_parts"}, "reason invalid_input, the refusal named", j.out)


def test_assemble_of_renamed_gguf_split_parts_refused_with_nothing_written():
    _, parts = split_set()
    # The same parts under byte-split names: only their bytes say what they are.
    renamed = {f"tiny.gguf.part{i}of4": v for i, v in enumerate(parts.values(), 1)}
    repo = Repo(renamed, lfs=set(renamed))
    local = tempdir("hf-fetch-local-")
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--local-dir", local, "--assemble",
                     "tiny.gguf=tiny.gguf.part*", "--json")
    events = [e for e in r.json_events() if e["event"] == "assemble"]
    check(r.rc == 1, f"the assembly fails the run: {r}")
    check(len(events) == 1 and events[0]["status"] == "GGUF SPLIT PARTS"
          and "tiny.gguf.part2of4 is a whole GGUF file" in events[0]["detail"]
          and "llama-gguf-split --merge tiny.gguf.part1of4 tiny.gguf" in events[0]["detail"], "the reason", events)
    check(sorted(os.listdir(local)) == [".cache"] + sorted(renamed), "nothing but the parts written",
          os.listdir(local))


def test_inspect_of_joined_parts_says_what_they_are():
    _, parts = split_set()
    d = tempdir("gguf-joined-")
    joined = os.path.join(d, "tiny.gguf")
    with open(joined, "wb") as f:
        f.write(b"".join(parts.values()))
    r = hf_fetch("inspect", joined)
    check(r.rc == 1, f"a contradiction: {r}")
    check("is part 1 of a 4-part gguf-split set by its metadata (split.no 0, split.count 4) but is one file" in r.err
          and "llama.cpp cannot load it" in r.err and "llama-gguf-split --merge" in r.err, "the sentence", r.err)
    q = hf_fetch("inspect", joined, "--quiet")
    check(q.rc == 1 and "llama.cpp cannot load it" in q.err, "--quiet says it too", q)


if __name__ == "__main__":
    main()
