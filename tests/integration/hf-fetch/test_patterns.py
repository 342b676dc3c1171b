"""Issue 42 items 5-6: --include/--exclude, inspect --include and --assemble OUT=GLOB select what huggingface_hub's
filter_repo_objects selects (what `hf download --include/--exclude` uses). The verdicts are huggingface_hub's own:
tests/data/hf-patterns/filter_repo_objects.json, written by generate.py there from v1.28.0's _paths.py, every
(pattern, path) pair of its lists. The fnmatch part of those verdicts is judged once more by this machine's Python.

Run one: python3 test_patterns.py test_NAME   (ctest runs each as its own test)
"""

import fnmatch
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import HubSim, check, main  # noqa: E402
from hf_fixtures import Repo, hf_fetch  # noqa: E402
import checkpoints as ck  # noqa: E402

TABLE_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "hf-patterns",
                          "filter_repo_objects.json")
with open(TABLE_PATH, encoding="utf-8") as _f:
    TABLE = json.load(_f)
# Paths the Hub can serve (a `\` in a repo path is refused by hf-fetch before any pattern sees it).
# An empty pattern is refused by the command line (exit 2, "was given an empty value"); the unit test has its rows.
ROWS = [r for r in TABLE["rows"] if "\\" not in r[1] and r[0]]
PATTERNS = list(dict.fromkeys(r[0] for r in ROWS))
PATHS = list(dict.fromkeys(r[1] for r in ROWS))


def expected(column):
    """pattern -> the set of paths filter_repo_objects included (column 2) or excluded (column 3)."""
    out = {p: set() for p in PATTERNS}
    for r in ROWS:
        if r[column]:
            out[r[0]].add(r[1])
    return out


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def content(path):
    if path.endswith(".gguf"):
        return ck.gguf({"general.architecture": "llama"}, [("output_norm.weight", 0, [64])])[0]
    if path.endswith(".safetensors"):
        return ck.safetensors([("w", "F32", [16])])
    return ("contents of " + path + "\n").encode()


def repo_of(paths):
    files = {p: content(p) for p in paths}
    return Repo(files, lfs={p for p in files if p.endswith((".gguf", ".safetensors"))})


def planned(repo, sim, *args):
    """The paths `hf-fetch REPO --dry-run` would fetch with these pattern options; None when it refuses because
    nothing matches."""
    r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--dry-run", "--json", *args)
    if r.rc == 2 and "matches the --include/--exclude patterns" in r.out + r.err:
        return None
    check(r.rc == 0, f"hf-fetch {args}: {r}")
    return {e["path"] for e in json_lines(r.out) if e.get("event") == "plan"}


def test_table_is_huggingface_hubs_and_python_agrees():
    check("huggingface_hub v1.28.0" in TABLE["origin"] and "_paths.py" in TABLE["origin"], TABLE["origin"])
    check(len(TABLE["rows"]) > 2000 and sum(r[2] for r in TABLE["rows"]) > 150, "the table selects and refuses")
    # Where huggingface_hub adds nothing to fnmatch (no trailing `/`, no `\`), its verdict is this Python's
    # fnmatch.fnmatchcase, and `--exclude` is the complement of `--include`.
    judged = 0
    for pattern, path, included, excluded in TABLE["rows"]:
        check(included == excluded, f"{pattern!r} {path!r}: include and exclude disagree")
        if pattern.endswith("/") or "\\" in pattern or "\\" in path:
            continue
        check(fnmatch.fnmatchcase(path, pattern) == included, f"{pattern!r} {path!r}: Python's fnmatch differs")
        judged += 1
    check(judged > 1500, f"only {judged} rows judged by fnmatch")
    # The rows the issue names.
    rows = {(r[0], r[1]): r[2] for r in TABLE["rows"]}
    check(rows[("original/", "original/params.json")] and not rows[("original/", "original.bin")], "original/")
    check(rows[("???.txt", "\u00fcn\u00ef.txt")] and rows[("[^c].txt", "c.txt")], "? and [^c]")
    check(rows[("data\\*.json", "data/file.json")], "backslash")


def test_include_as_hf_download():
    repo = repo_of(PATHS)
    want = expected(2)
    with HubSim(repo.repos_json) as sim:
        for pattern in PATTERNS:
            got = planned(repo, sim, "--include", pattern)
            check((got or set()) == want[pattern],
                  f"--include {pattern!r}: only hf-fetch {sorted((got or set()) - want[pattern])}, "
                  f"only huggingface_hub {sorted(want[pattern] - (got or set()))}")


def test_exclude_as_hf_download():
    repo = repo_of(PATHS)
    excluded = expected(3)
    with HubSim(repo.repos_json) as sim:
        for pattern in PATTERNS:
            want = set(PATHS) - excluded[pattern]
            got = planned(repo, sim, "--exclude", pattern) or set()
            check(got == want, f"--exclude {pattern!r}: only hf-fetch {sorted(got - want)}, "
                               f"only huggingface_hub {sorted(want - got)}")


def test_inspect_include_as_hf_download():
    # inspect judges checkpoint files only; these are whole ones.
    paths = [p for p in PATHS if p.endswith((".gguf", ".safetensors")) and "-of-" not in p]
    check(len(paths) >= 8, f"checkpoint rows: {paths}")
    repo = repo_of(paths)
    want = expected(2)
    with HubSim(repo.repos_json) as sim:
        for pattern in PATTERNS:
            r = hf_fetch("inspect", repo.repo_id, "--endpoint", sim.hub, "--include", pattern, "--json")
            report = (json_lines(r.out) or [{}])[-1]
            got = {f["path"] for f in report.get("files", [])}
            left_out = {n["path"] for n in report.get("not_read", []) if "include/exclude" in n.get("why", n.get("reason", ""))}
            if not want[pattern] & set(paths):
                check(r.rc == 2 and "no .safetensors or .gguf file to inspect" in r.out, f"inspect {pattern!r}: {r}")
                continue
            check(r.rc in (0, 1) and got | left_out == set(paths), f"inspect --include {pattern!r}: {r}")
            check(got == want[pattern] & set(paths), f"inspect --include {pattern!r}: read {sorted(got)}, "
                                                     f"huggingface_hub {sorted(want[pattern] & set(paths))}")


def test_assemble_glob_as_hf_download():
    repo = repo_of(PATHS)
    want = expected(2)
    globs = [p for p in PATTERNS if any(c in p for c in "*?[") or p.endswith("/")]
    check(len(globs) > 40, f"{len(globs)} globs")
    with HubSim(repo.repos_json) as sim:
        for pattern in globs:
            saved = os.path.join(repo.tmp, "saved.yaml")
            r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--dry-run", "--json",
                         "--assemble", "joined.out=" + pattern, "--save-manifest", saved)
            if not want[pattern]:
                check(r.rc == 2, f"--assemble ={pattern!r} matches nothing in huggingface_hub: {r}")
                continue
            if any(re.search(r"-\d{5,}-of-\d{5,}\.gguf$", p) for p in want[pattern]):
                # gguf-split parts are whole GGUF files, never joined (issue 43 item 5).
                check(r.rc == 2 and "gguf-split part" in r.all, f"--assemble ={pattern!r} of gguf-split parts: {r}")
                continue
            check(r.rc == 0, f"--assemble ={pattern!r}: {r}")
            with open(saved, encoding="utf-8") as f:
                text = f.read()
            # The saved manifest's assembly: its parts, one `- "path"` line each.
            body = text[text.index("\nassemble:"):]
            got = {json.loads(line.strip()[2:]) for line in body.splitlines() if line.strip().startswith('- "')}
            check(got == want[pattern], f"--assemble ={pattern!r}: parts {sorted(got)}, "
                                        f"huggingface_hub {sorted(want[pattern])}")


if __name__ == "__main__":
    main()
