#!/usr/bin/env python3
"""Writes filter_repo_objects.json: which repo paths huggingface_hub's own filter_repo_objects selects for each
pattern, as allow_patterns (`hf download --include`) and as ignore_patterns (`--exclude`). The verdicts are the real
function's, run from huggingface_hub's source (nothing of it is copied here):

  git -C <huggingface_hub clone> show v1.28.0:src/huggingface_hub/utils/_paths.py > /tmp/_paths.py
  python3 tests/data/hf-patterns/generate.py /tmp/_paths.py \
      "huggingface_hub v1.28.0 (b2da2d442c4165d9082a198cf247df3569140aee) src/huggingface_hub/utils/_paths.py" \
      > tests/data/hf-patterns/filter_repo_objects.json

Read by tests/unit/hub/test_patterns.cpp (every row through RepoPattern) and
tests/integration/hf-fetch/test_patterns.py (the rows through --include, --exclude, inspect --include and
--assemble OUT=GLOB, and the fnmatch part judged again by this machine's Python).
"""

import importlib.util
import json
import sys

PATHS = [
    "README.md", "readme.md", "config.json", ".gitattributes", "model.safetensors",
    "original/consolidated.00.pth", "original/params.json", "original/tokenizer.model", "original.bin",
    "originals/x.pth", "sub/original/x.pth",
    "Q4_K_M/model-Q4_K_M-00001-of-00002.gguf", "Q4_K_M/model-Q4_K_M-00002-of-00002.gguf", "Q8_0/model-Q8_0.gguf",
    "model-Q4_K_M.gguf", "data/file.json", "data/sub/file.json", "data\\win.json",
    "a.txt", "c.txt", "^.txt", "!.txt", "-.txt", "].txt", "[.txt", "&.txt", "ab.txt", "abc.txt", "a-b.txt",
    "\u00fcn\u00ef.txt", "\u65e5\u672c\u8a9e.txt", "\u00e4/b.bin", "x[1].bin", "x1.bin", "x[1.bin", "Aa.TXT",
    # checkpoints, for inspect (which judges only these)
    "original/model.safetensors", "sub/original/model.safetensors", "\u00fcn\u00ef.gguf", "c.gguf", "^.gguf",
    "a.gguf",
]

PATTERNS = [
    "original/", "original/*", "original", "original*", "original\\", "original\\*", "Q4_K_M/", "*Q4_K_M*",
    "Q4_K_M/*0001*", "*.gguf", "*/", "*", "*/*.pth", "sub/", "data/*.json", "data\\*.json", "data/", "*.JSON",
    "README*", "???.txt", "??.txt", "?.txt", "?/b.bin", "[^c].txt", "[!c].txt", "[!^].txt", "[]].txt", "[!]].txt",
    "[a-c].txt", "[c-a].txt", "[!c-a].txt", "[a-].txt", "[-a].txt", "[a--b].txt", "[!-a].txt", "[^-a].txt",
    "[[:alpha:]].txt", "[[].txt", "[&].txt", "[\u00fc]n\u00ef.txt", "\u00fc?\u00ef.txt", "[!a-z]??.txt",
    "x[1].bin", "x[[]1].bin", "x[1.bin", "x[!0-9].bin", "\u65e5\u672c?.txt", "*\u00ef.txt", "?", "",
    "*-0000[12]-of-*", "[!x]*.bin", "Aa.???", "?.gguf", "[^c].gguf", "[!c].gguf", "???.gguf", "*.safetensors",
]


def main():
    spec = importlib.util.spec_from_file_location("hf_paths", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = []
    for pattern in PATTERNS:
        allowed = set(module.filter_repo_objects(PATHS, allow_patterns=[pattern]))
        kept = set(module.filter_repo_objects(PATHS, ignore_patterns=[pattern]))
        for path in PATHS:
            rows.append([pattern, path, path in allowed, path not in kept])
    head = {"origin": sys.argv[2] + ": filter_repo_objects(paths, allow_patterns=[p]) and (ignore_patterns=[p])",
            "python": sys.version.split()[0], "columns": ["pattern", "path", "included", "excluded"]}
    # One row a line, so a change of verdict reads as a one-line diff.
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "rows": [\n'
    text += ",\n".join(json.dumps(r, ensure_ascii=False) for r in rows)
    sys.stdout.write(text + "\n]}\n")


if __name__ == "__main__":
    main()
