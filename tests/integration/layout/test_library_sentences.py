"""No library sentence names a flag of ours (issue 44 item 1): the library takes typed values and returns typed
results; only a tool knows which of its flags gave a value, so only a tool's words name one. The flags are the
tools' own (`--help-all` of hf-fetch, envcheck and envbuild); every string literal under lib/ is searched.
Where a flag's name is the library's subject and not advice, the file is listed below with why.

Run one: python3 test_library_sentences.py test_no_library_string_names_a_flag_of_ours
"""
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from common import BIN, check, main  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
# Files whose subject is a command line or a file format that has these options of its own.
SUBJECT = {
    "lib/src/cli/": "the tools' command-line convention itself (--json's shape)",
    "lib/src/ccshim/": "gcc's and ld's options, which cc-shim takes as gcc does",
    "lib/src/pyspec/lock.cpp": "a requirements file's own options (--hash, --index-url, --find-links)",
    "lib/src/pyspec/pylock.cpp": "uv's pip compile options, the command that writes such a lock",
    "lib/src/fit/engine.cpp": "the engines' own command lines (llama.cpp's --offline, vLLM's --revision), read as they read them",
    "lib/src/util/environment.cpp": "the registry of variables says which flag each one stands in for",
}
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def our_flags():
    flags = set()
    for tool in ("hf-fetch", "envcheck", "envbuild"):
        # hf-fetch and envbuild list their subcommands' options under --help-all; envcheck has one --help.
        asked = subprocess.run([os.path.join(BIN, tool), "--help-all"], capture_output=True, text=True)
        if asked.returncode != 0:
            asked = subprocess.run([os.path.join(BIN, tool), "--help"], capture_output=True, text=True)
        out = asked.stdout
        flags |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", out))
    return flags - {"--help", "--help-all", "--version"}


def sentences_naming(flags):
    found = []
    files = glob.glob(os.path.join(ROOT, "lib", "**", "*.[ch]pp"), recursive=True)
    for path in sorted(files):
        rel = os.path.relpath(path, ROOT)
        if any(rel.startswith(prefix) for prefix in SUBJECT):
            continue
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if line.lstrip().startswith("//"):
                    continue
                for lit in LITERAL.findall(line):
                    for flag in FLAG.findall(lit):
                        if flag in flags:
                            found.append(f"{rel}:{n}: {flag} in \"{lit[:70]}\"")
    return found


def test_no_library_string_names_a_flag_of_ours():
    flags = our_flags()
    check(len(flags) > 40 and all(f in flags for f in ("--gpu-memory", "--assemble", "--wait", "--nccl-lib", "--link-test")),
          "the tools' flags read from their help", sorted(flags))
    found = sentences_naming(flags)
    check(not found, "library strings that name a flag of ours (the tool should say it)", "\n".join(found))


def test_the_search_finds_a_flag_in_a_sentence():
    # The search itself, on a line as the library would write one: a check that can fail.
    line = 'throw Error(Reason::usage, "8 ranks but --gpu-memory names " + n + " cards");'
    hits = [flag for lit in LITERAL.findall(line) for flag in FLAG.findall(lit)]
    check(hits == ["--gpu-memory"], "a flag inside a literal is found", hits)
    check(FLAG.findall('"--gpu-memory-utilization 0.9"') == ["--gpu-memory-utilization"],
          "a longer flag (vLLM's) is read whole, not as ours", None)


if __name__ == "__main__":
    main()
