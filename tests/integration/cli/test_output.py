"""The one output shape (docs/json.md) of hf-fetch, envcheck and envbuild with names that hold newlines,
escape sequences and bytes that are not UTF-8: every --json line parses and matches the schema, and no
plain line is forged (provkit/cli/output.hpp, util/text.hpp)."""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, check_json_lines, main, run, tool  # noqa: E402

# A name from outside: a newline forging a row, an escape sequence, a byte that is not UTF-8.
HOSTILE = os.fsdecode(b"evil\nOK   forged\x1b[2J\xff.so")


def json_run(args, expect):
    r = run(args, expect=expect)
    lines = [json.loads(line) for line in r.out.splitlines() if line.strip()]
    check_json_lines(lines, r)
    return r, lines


def plain_clean(r):
    check("\x1b" not in r.all and "forged" not in "".join(l for l in r.all.splitlines() if l.startswith("OK")),
          "a plain line is forged or drives the terminal", r)
    check(not any(l.startswith("OK") for l in r.all.splitlines()), "a name started a line", r)


def test_envcheck_names(tmp):
    r, lines = json_run([tool("envcheck"), "--lib", HOSTILE, "--json"], 1)
    s = lines[-1]
    check(s["tool"] == "envcheck" and s["reason"] == "check_failed", "summary", r)
    check(os.fsencode(s["checks"][0]["name"]) == b"lib " + os.fsencode(HOSTILE), "the name does not come back as its bytes", r)
    plain_clean(run([tool("envcheck"), "--lib", HOSTILE], expect=1))


def test_hf_fetch_errors_and_inspect(tmp):
    r, lines = json_run([tool("hf-fetch"), "--manifest", os.path.join(tmp, HOSTILE), "--json"], 2)
    check(lines[-1]["reason"] == "invalid_input" and "message" in lines[-1], "summary", r)
    plain_clean(run([tool("hf-fetch"), "--manifest", os.path.join(tmp, HOSTILE)], expect=2))
    # A safetensors file whose name and tensor name are hostile.
    header = json.dumps({"t\n\x1b[2Jforged": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}},
                        ensure_ascii=False).encode("utf-8", "surrogateescape")
    path = os.path.join(tmp, HOSTILE + ".safetensors")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"abcd")
    r, lines = json_run([tool("hf-fetch"), "inspect", path, "--json"], 0)
    check(lines[-1]["tool"] == "hf-fetch" and lines[-1]["exit_code"] == 0, "summary", r)
    check(any(os.fsencode(e.get("path", "")) == os.fsencode(path) for e in lines), "the path does not come back", r)
    plain_clean(run([tool("hf-fetch"), "inspect", path], expect=0))


def test_envbuild_errors(tmp):
    r, lines = json_run([tool("envbuild"), "verify", os.path.join(tmp, HOSTILE), "--json"], None)
    check(lines[-1]["tool"] == "envbuild" and lines[-1]["exit_code"] != 0 and "reason" in lines[-1], "summary", r)
    r, lines = json_run([tool("envbuild"), "diff", os.path.join(tmp, HOSTILE), os.path.join(tmp, "b"), "--json"], None)
    check(lines[-1]["exit_code"] != 0, "summary", r)


def test_usage_errors_and_option_values(tmp):
    for t, argv in [("hf-fetch", ["--manifest", "m.yaml", "--cache-dir", "--offline", "--json"]),
                    ("hf-fetch", ["--manifest", "m.yaml", "--cache-dir=", "--offline", "--json"]),
                    ("envbuild", ["verify", "DIR", "--lock", "--json"]),
                    ("envcheck", ["--cuda=", "--json"]),
                    ("envcheck", ["--no-such-" + HOSTILE, "--json"])]:
        r, lines = json_run([tool(t)] + argv, 2)
        check(lines[-1]["reason"] == "usage", f"{t} {argv}: not a usage summary", r)
    r = run([tool("hf-fetch"), "--manifest", "m.yaml", "--cache-dir", "--offline"], expect=2)
    check("--cache-dir" in r.err and "'--offline'" in r.err, "the sentence names both", r)
    check(not os.path.exists("--offline"), "a directory named --offline was made")


if __name__ == "__main__":
    main()
