#!/usr/bin/env python3
"""Names and messages from outside on their way out (issue 20): a Hub error message cut in the middle of a
UTF-8 character, a GGUF whose tensor name and architecture are not UTF-8 and hold a newline and an escape
sequence, an environment whose file names hold a newline, a control byte and bytes that are not UTF-8.
What the tools print (plain: util::printable; --json: util::json_dump, \\udcNN for each byte that is not
UTF-8) and what they write (a captured wheel's RECORD, its lock) can never be made to hold a line, a cursor
move or a JSON document the outside chose."""
import base64
import csv
import glob
import hashlib
import io
import json
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hf-fetch"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "envbuild"))
from common import HubSim, check, check_json_lines, main, make_repo, run, tempdir, tool  # noqa: E402
from hf_fixtures import HF_FETCH, Repo, clean_env  # noqa: E402
import checkpoints as ck  # noqa: E402
from envbuild_fixtures import PYTHON, write_lock  # noqa: E402
from make_wheels import pure_wheel  # noqa: E402

ESC = "\x1b[2J\x1b[31m"  # clear the screen, then red: what a terminal would obey
FORGED = "hf-fetch: done, all files verified"  # a line a script reading the output must never see start a line


def hf_fetch(*args):
    """hf-fetch, its output read as os.fsdecode would (bytes that are not UTF-8 as \\udcNN, so that the
    checks below, not the decoding, say what reached the output)."""
    return run([HF_FETCH, *args], expect=None, env=clean_env(), timeout=120, errors="surrogateescape")


def envbuild(*args):
    return run([tool("envbuild"), *args], expect=None, errors="surrogateescape")


def no_forgery(text, forged, shown):
    """Plain output: no escape byte reaches the terminal, and no line starts with the forged text."""
    check("\x1b" not in text, "an escape sequence reached the output unescaped", shown)
    check(not any(0xDC80 <= ord(c) <= 0xDCFF for c in text), "a byte that is not UTF-8 reached the output", shown)
    for line in text.splitlines():
        check(not line.startswith(forged), f"a line the outside wrote: {line!r}", shown)


# ---- (a) a Hub error message longer than 200 bytes, cut in the middle of a character ------------------------

def hub_message():
    """A message whose 200th byte, once the Hub client has escaped it as util::printable does (ESC and each
    byte that is not UTF-8 as the four characters \\xNN), is the first byte of a 2-byte character (é); with an
    escape sequence and two bytes that are not UTF-8 before it. Sent as raw bytes (the simulator's
    raw_headers)."""
    prefix = b"e" * 150 + ESC.encode() + b"\xff\xfe"
    escaped = len(prefix) + 3 * (prefix.count(b"\x1b") + 2)
    return prefix + b"x" * (199 - escaped) + "é".encode() * 40


def failing_hub(status):
    """The simulator over a one-file repo, every Hub request answered `status` with the long message."""
    repo = Repo({"config.json": b"{}"})
    sim = HubSim(repo.repos_json)
    return repo, sim, [{"kind": "status", "origin": "hub", "code": status, "times": -1,
                        "headers": {"X-Error-Code": "ServerTrouble"},
                        "raw_headers": {"X-Error-Message": hub_message().hex()}}]


def json_summary(r, what):
    """Every stdout line parses as JSON of docs/json.md's shape; the summary (the last line)."""
    try:
        lines = [json.loads(x) for x in r.out.splitlines() if x.strip()]
    except ValueError as e:
        check(False, f"{what}: stdout is not JSON lines ({e})", r)
    check_json_lines(lines, r)
    return lines[-1]


def hub_commands(repo, sim):
    common = ["--endpoint", sim.hub, "--retries", "1"]
    return {
        "fetch": ["--manifest", repo.manifest, "--cache-dir", repo.cache, *common],
        "manifest create": ["manifest", "create", f"{repo.repo_id}@main", "-o", os.path.join(repo.tmp, "m.yaml"),
                            *common],
        "inspect": ["inspect", f"{repo.repo_id}@main", *common],
    }


def test_hub_error_message_cut_mid_character_json():
    repo, sim, faults = failing_hub(503)
    with sim:
        sim.set_faults(faults)
        for what, args in hub_commands(repo, sim).items():
            r = hf_fetch(*args, "--json")
            check(r.rc == 3, f"{what}: HTTP 503 is a network failure (exit 3), not exit {r.rc}", r)
            summary = json_summary(r, what)
            check(summary["exit_code"] == 3 and summary["reason"] == "network", f"{what}: summary", summary)
            message = summary.get("message", "")
            check("HTTP 503" in message, f"{what}: the message names the status", summary)
            # One escaper (util::printable) for both outputs: the JSON message holds the plain line's text, the
            # ESC and the two bytes that were never UTF-8 as \\xNN; the cut character's lone first byte (or
            # nothing of it) comes as \\udcNN, given back by os.fsencode; never a raw ESC, a U+FFFD or a failed dump.
            check("\x1b" not in message and "\ufffd" not in message, f"{what}: an escape byte or U+FFFD", summary)
            quoted = os.fsencode(message.split("HTTP 503 (", 1)[-1].rsplit(")", 1)[0])
            check(b"\\x1b[2J" in quoted and b"\\xff\\xfe" in quoted, f"{what}: escaped as the plain line", summary)
            check(len(quoted) <= 200 and quoted.startswith(b"e" * 150), f"{what}: the Hub's text, cut at 200 bytes: "
                  f"{len(quoted)}", summary)
            check(quoted.endswith(b"\xc3") or quoted.endswith("é".encode()), f"{what}: the cut", quoted[-8:])


def test_hub_error_message_cut_mid_character_plain():
    repo, sim, faults = failing_hub(503)
    with sim:
        sim.set_faults(faults)
        for what, args in hub_commands(repo, sim).items():
            r = hf_fetch(*args)
            check(r.rc == 3, f"{what}: HTTP 503 is exit 3, not {r.rc}", r)
            no_forgery(r.all, FORGED, r)
            check("HTTP 503" in r.err and "\\xff\\xfe" in r.err and "\\x1b" in r.err, f"{what}: the message, escaped", r)


def test_hub_refusal_with_long_message_is_exit_4():
    repo, sim, faults = failing_hub(403)
    with sim:
        sim.set_faults(faults)
        for what, args in hub_commands(repo, sim).items():
            r = hf_fetch(*args, "--json")
            check(r.rc == 4, f"{what}: HTTP 403 is an access refusal (exit 4), not exit {r.rc}", r)
            summary = json_summary(r, what)
            check(summary["exit_code"] == 4 and summary["reason"] == "auth", f"{what}: summary", summary)


# ---- (a2) Hub file names with bidi and other format characters (issue 41) -------------------------------

# U+202E (right-to-left override) shows "model<RLO>fdp.gguf" as "modelfgug.pdf"; U+2066/U+2069 isolate, U+200B
# hides a character. The names are the repo's own; printed, each is escaped as a control is.
BIDI_NAMES = ["model\u202efdp.gguf", "cfg\u2066x\u2069\u200b.json"]


def test_hub_names_with_bidi_controls_plain():
    repo = Repo({"config.json": b"{}\n", BIDI_NAMES[0]: b"gguf" * 100, BIDI_NAMES[1]: b"{}\n"}, lfs={BIDI_NAMES[0]})
    with HubSim(repo.repos_json) as sim:
        r = hf_fetch(repo.repo_id, "--endpoint", sim.hub, "--cache-dir", repo.cache, "--progress", "none")
        created = hf_fetch("manifest", "create", repo.repo_id, "--endpoint", sim.hub, "-o",
                           os.path.join(repo.tmp, "m.yaml"))
    check(r.rc == 0 and created.rc == 0, "fetch and manifest create of names with format characters", (r, created))
    for run_ in (r, created):
        for ch in "\u202e\u2066\u2069\u200b":
            check(ch not in run_.all, f"U+{ord(ch):04X} reached the output raw", run_)
    check("model\\xe2\\x80\\xaefdp.gguf" in r.out and "cfg\\xe2\\x81\\xa6x\\xe2\\x81\\xa9\\xe2\\x80\\x8b.json" in r.out,
          "the names, escaped, in the FETCH/OK lines", r)
    check("model\\xe2\\x80\\xaefdp.gguf" in created.all, "manifest create's ADDED line", created)
    for name in BIDI_NAMES:  # the files themselves are the repo's names
        with open(repo.snapshot(name), "rb") as f:
            check(f.read() == repo.files[name], f"{name!r}: wrong bytes")


# ---- (b) a GGUF whose names are not UTF-8 ------------------------------------------------------------------

ARCH = b"llama\nhf-fetch: done, all files verified\x1b[2J\xff"
TENSOR = b"blk.0.attn_q\xc3\nhf-fetch: done, all files verified\x1b[31m.weight"


def hostile_gguf(tmp):
    meta = {"general.architecture": ARCH, "general.name": b"tiny\x07\x1b]0;owned\x07",
            "general.file_type": ("u32", 15)}
    data, _ = ck.gguf(meta, [(TENSOR, 0, [256]), ("output.weight", 0, [256])])
    path = os.path.join(tmp, "hostile.gguf")
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_gguf_names_not_utf8_inspect_json(tmp):
    path = hostile_gguf(tmp)
    r = hf_fetch("inspect", path, "--json")
    check(r.rc in (0, 1), f"inspect of a readable GGUF: exit {r.rc}", r)
    check("terminate" not in r.err and "abort" not in r.err.lower(), "inspect aborted", r)
    report = json_summary(r, "inspect")
    f = report["files"][0]
    arch = f["architecture"]
    check(os.fsencode(arch) == ARCH, f"architecture: {arch!r} is not the file's bytes through \\udcNN", f)
    check("\udcff" in arch, "the byte that is not UTF-8 as \\udcff", f)
    # The tensor name is nowhere read back as a line of its own: the JSON text holds it escaped or not at all.
    check(FORGED not in r.out.splitlines(), "a JSON line the GGUF wrote", r)


def test_gguf_names_not_utf8_inspect_plain(tmp):
    path = hostile_gguf(tmp)
    r = hf_fetch("inspect", path)
    check(r.rc in (0, 1), f"inspect of a readable GGUF: exit {r.rc}", r)
    no_forgery(r.all, FORGED, r)
    check("\x07" not in r.all and "\xff" not in r.all and "\ufffd" not in r.all, "a control byte or a byte that "
          "is not UTF-8 in plain output", r)
    check("\\xff" in r.out and "\\n" in r.out, "the architecture, escaped", r)


# ---- (c) envbuild capture and verify of an environment with hostile file names -----------------------------

NAME = b"demopure/evil\nenvbuild: captured 0 distributions\x01\x1b[2J\xff.txt"
FORGED_ENVBUILD = "envbuild: captured 0 distributions"


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def hostile_env(tmp):
    """An environment made by envbuild, then given a file of that name, listed in its RECORD (quoted as the
    csv module quotes), and a RECORD row that points outside the prefix under a hostile name too."""
    wheels = os.path.join(tmp, "wheels")
    os.makedirs(wheels)
    lock = write_lock(os.path.join(tmp, "lock.txt"), [pure_wheel(wheels, "1.0")])
    env = os.path.join(tmp, "env")
    run([tool("envbuild"), "--cache-dir", os.path.join(tmp, "cache"), "create", env, "--python", PYTHON, "--lock",
         lock, "-f", wheels, "--link-mode", "copy"])
    site = glob.glob(os.path.join(env, "lib", "python3.*", "site-packages"))[0]
    content = b"hostile name\n"
    with open(os.path.join(os.fsencode(site), NAME), "wb") as f:
        f.write(content)
    record = os.path.join(site, "demopure-1.0.dist-info", "RECORD")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([os.fsdecode(NAME), record_hash(content), len(content)])
    w.writerow([os.fsdecode(b"../../../../../outside\nenvbuild: captured 0 distributions\x1b[2J\xfe"),
                record_hash(content), len(content)])
    with open(record, "ab") as f:
        f.write(os.fsencode(out.getvalue()))
    return env, site


def test_capture_of_hostile_file_names(tmp):
    env, _ = hostile_env(tmp)
    house, lock = os.path.join(tmp, "house"), os.path.join(tmp, "pylock.toml")
    r = envbuild("capture", env, "--wheelhouse", house, "--lock", lock)
    check(r.rc == 0, f"capture of an environment with odd names: exit {r.rc}", r)
    no_forgery(r.all, FORGED_ENVBUILD, r)
    check("\x01" not in r.all and "\ufffd" not in r.all, "a control byte in plain output", r)
    check("left out" in r.err and "\\x1b" in r.err, "the row outside the prefix, named escaped", r)
    # The written lock: every line is TOML's own, none the file name's.
    text = open(lock, "rb").read()
    check(b"\x1b" not in text and b"captured 0" not in text, "the lock holds a name from the environment", text)
    import tomllib
    tomllib.loads(text.decode())
    # The captured wheel's RECORD: the csv module reads back exactly the files packed, the odd name as one row.
    wheel = glob.glob(os.path.join(house, "demopure-*.whl"))[0]
    with zipfile.ZipFile(wheel) as z:
        names = [i.orig_filename for i in z.infolist()]
        record = z.read("demopure-1.0.dist-info/RECORD")
    rows = list(csv.reader(io.StringIO(os.fsdecode(record)), strict=True))
    check(all(len(row) == 3 for row in rows), "a RECORD row that is not path,hash,size", rows)
    paths = [os.fsencode(row[0]) for row in rows]
    check(NAME in paths, "the odd name is not one row of the new RECORD", rows)
    check(not any(p.startswith(b"envbuild:") for p in paths), "a RECORD row made of the name's second line", rows)
    check(len(rows) == len(names), f"{len(rows)} RECORD rows for {len(names)} entries", (rows, names))


def test_verify_of_hostile_file_names(tmp):
    env, site = hostile_env(tmp)
    with open(os.path.join(os.fsencode(site), NAME), "ab") as f:
        f.write(b"changed\n")
    r = envbuild("verify", env)
    check(r.rc == 1, f"a modified file is drift (exit 1), not exit {r.rc}", r)
    no_forgery(r.all, FORGED_ENVBUILD, r)
    check("\x01" not in r.all and "\\x01" in r.out and "modified" in r.out, "the modified file, named escaped", r)
    r = envbuild("verify", env, "--json")
    check(r.rc == 1, f"verify --json: exit {r.rc}", r)
    summary = json_summary(r, "verify")
    demo = [d for d in summary["distributions"] if d["name"] == "demopure"][0]
    check(NAME.decode("utf-8", "surrogateescape") in demo["modified"], "the name through \\udcNN", demo)
    check(any("\udcfe" in p for p in demo["outside"]), "the outside row through \\udcNN", demo)


if __name__ == "__main__":
    main()
