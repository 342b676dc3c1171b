#!/usr/bin/env python3
"""Fails on a block of six or more lines of real code written twice (Python 3 standard library only).

Reads every .cpp, .hpp, .h and .c file under lib/, tools/, shims/, tests/unit/ and tests/fuzz/ of ROOT (default: the
repository this script is in). Each line is normalised: white space stripped at both ends and runs of it
inside made one space; blank lines, comment-only lines (// and /* ... */), lines of lone punctuation
(`}`, `};`, `});`, also with a comment after them), `#include` lines and `namespace` lines are skipped. Every run of MIN (default 6) or more
consecutive normalised lines that appears twice, within a file or across files, is printed once as

    file:first-last ~ file:first-last

(the original line numbers of the run's first and last lines) and the exit status is 1; 0 when there is none.
"""

import argparse
import os
import re
import sys

DIRS = ("lib", "tools", "shims", os.path.join("tests", "unit"), os.path.join("tests", "fuzz"))
EXTENSIONS = (".cpp", ".hpp", ".h", ".c")
PUNCTUATION_ONLY = re.compile(r"^[^\w\"']*$")
SKIPPED_PREFIXES = ("#include", "namespace ")


def normalised_lines(path):
    """The (line number, text) of each line of real code in `path`."""
    out = []
    in_block = False
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, raw in enumerate(f, start=1):
            line = " ".join(raw.split())
            if in_block:
                end = line.find("*/")
                if end < 0:
                    continue
                in_block = False
                line = line[end + 2 :].strip()
            if line.startswith("/*"):
                end = line.find("*/", 2)
                if end < 0:
                    in_block = True
                    continue
                line = line[end + 2 :].strip()
            # Lone punctuation, with or without a comment after it: "}", "});", "}  // namespace x".
            if not line or line.startswith("//") or PUNCTUATION_ONLY.match(line.split("//", 1)[0]):
                continue
            if line.startswith(SKIPPED_PREFIXES):
                continue
            out.append((number, line))
    return out


def source_files(root):
    for top in DIRS:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(EXTENSIONS):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def find_duplicates(root, min_lines):
    """[(file_a, first_a, last_a, file_b, first_b, last_b)], each maximal duplicated run once."""
    files = {rel: normalised_lines(os.path.join(root, rel)) for rel in source_files(root)}
    windows = {}
    for rel, lines in files.items():
        texts = [t for _, t in lines]
        for i in range(len(texts) - min_lines + 1):
            windows.setdefault(tuple(texts[i : i + min_lines]), []).append((rel, i))
    pairs = []
    for places in windows.values():
        for x in range(len(places)):
            for y in range(x + 1, len(places)):
                (fa, ia), (fb, ib) = places[x], places[y]
                a, b = files[fa], files[fb]
                # Only the start of a run: the pair one line earlier does not match.
                if ia > 0 and ib > 0 and a[ia - 1][1] == b[ib - 1][1] and (fa != fb or ia - 1 + min_lines <= ib - 1):
                    continue
                n = min_lines
                while ia + n < len(a) and ib + n < len(b) and a[ia + n][1] == b[ib + n][1]:
                    n += 1
                if fa == fb and ia + n > ib:
                    n = ib - ia  # a run that overlaps its own copy counts up to where the copy starts
                    if n < min_lines:
                        continue
                pairs.append((fa, a[ia][0], a[ia + n - 1][0], fb, b[ib][0], b[ib + n - 1][0]))
    return sorted(set(pairs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    parser.add_argument("--min", type=int, default=6, help="the shortest run reported (default 6)")
    args = parser.parse_args()
    pairs = find_duplicates(args.root, args.min)
    for fa, a1, a2, fb, b1, b2 in pairs:
        print(f"{fa}:{a1}-{a2} ~ {fb}:{b1}-{b2}")
    if pairs:
        print(f"check-duplicates: {len(pairs)} block(s) of {args.min} or more lines written twice", file=sys.stderr)
    return 1 if pairs else 0


if __name__ == "__main__":
    sys.exit(main())
