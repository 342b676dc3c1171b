#!/usr/bin/env python3
"""Writes tests/data/pep440/table.txt: packaging's own verdicts on tests/data/pep440/inputs.txt, the table
the C++ unit tests of pyspec/pep440 hold our parser to (so the expected answers are packaging's, never ours).

  scripts/pep440-table.py           write the table (run with the interpreter whose packaging is the judge)
  scripts/pep440-table.py --check   exit 1 when packaging here answers otherwise than the committed table

Lines (TAB-separated): V INPUT NORMALISED RANK (RANK orders the valid versions; equal versions share it),
V INPUT ! (packaging refuses it), S SPECIFIER ok|!, C SPECIFIER VERSION 1|0 (contains, pre-releases allowed).
"""
import os
import sys

from packaging.specifiers import InvalidSpecifier, Specifier
from packaging.version import InvalidVersion, Version

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
INPUTS = os.path.join(ROOT, "tests", "data", "pep440", "inputs.txt")
TABLE = os.path.join(ROOT, "tests", "data", "pep440", "table.txt")
# The versions every valid specifier is asked about: those of these releases (the rest only order and spell).
CONTAINS_RELEASES = ("1.0", "1.0.1", "2", "1!1.0")


def table():
    import packaging
    versions, specs = [], []
    with open(INPUTS, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            kind, text = line.split("\t", 1)
            (versions if kind == "V" else specs).append(text)
    parsed = {}
    for v in versions:
        try:
            parsed[v] = Version(v)
        except InvalidVersion:
            pass
    distinct = sorted(set(parsed.values()))
    rank = {v: i for i, v in enumerate(distinct)}
    out = [f"# packaging {packaging.__version__}'s verdicts on inputs.txt, written by scripts/pep440-table.py: do not edit"]
    for v in versions:
        out.append(f"V\t{v}\t{parsed[v]}\t{rank[parsed[v]]}" if v in parsed else f"V\t{v}\t!")
    asked = [v for v in versions if v in parsed and any(
        v.strip().lstrip("vV").startswith(r) for r in CONTAINS_RELEASES)]
    for s in specs:
        try:
            spec = Specifier(s)
        except InvalidSpecifier:
            out.append(f"S\t{s}\t!")
            continue
        out.append(f"S\t{s}\tok")
        for v in asked:
            out.append(f"C\t{s}\t{v}\t{int(spec.contains(v, prereleases=True))}")
    return "\n".join(out) + "\n"


def main():
    text = table()
    if sys.argv[1:] == ["--check"]:
        with open(TABLE, encoding="utf-8") as f:
            committed = f.read()
        ours, theirs = committed.splitlines()[1:], text.splitlines()[1:]
        if ours != theirs:
            differ = [f"  table: {a!r}\n  now:   {b!r}" for a, b in zip(ours, theirs) if a != b][:5]
            print(f"tests/data/pep440/table.txt differs from packaging's answers here ({len(ours)} lines committed, "
                  f"{len(theirs)} now); first differences:\n" + "\n".join(differ), file=sys.stderr)
            return 1
        return 0
    with open(TABLE, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
