"""The attacker sweep's table (issue 20): rows are the places a tool reads or writes that a user or another job
can plant something in, columns are the plants, and each cell runs the real tool on a fresh copy of its row's
setup with one plant in place. A cell holds when the tool

- ends by itself within its timeout with an exit status of the README's table (0-4; never a signal),
- changed nothing outside the root: the canary file (content and mtime) and the canary directory are as they
  were, and nothing new appeared next to them,
- forged no line: no raw ESC, no byte that is not UTF-8 and no line starting with the planted name's second
  line reached stdout or stderr,
- and, run with --json, printed JSON lines that docs/json.md's schema accepts (common.check_json_lines).

A cell that does not apply to its row is skipped with the reason in the row, never silently. Each test prints
its table (docs/reliability.md, "The attacker sweep", records it) and fails naming every cell that did not hold.
"""

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import check, check_json_lines  # noqa: E402

PLANTS = ("link-file", "link-dir", "fifo", "device", "oversized", "odd-name")
EXIT_CODES = {0, 1, 2, 3, 4}  # README, "Exit codes (every tool)"
FORGED = "sweep: FORGED LINE"
# A name as another job could make it: a newline that would start a forged line, an escape sequence that
# clears the terminal, and bytes that are not UTF-8.
ODD_NAME = b"odd\n" + FORGED.encode() + b"\x1b[2J\xff\xfe"
CANARY = b"the canary: nothing may write here\n"
# Two more tables with their own columns (issue 41). Names a tool makes from metadata it reads (a METADATA
# Name or Version, a WHEEL tag, an entry point): ".." climbing from where the name is joined into the canary
# directory, the canary directory's absolute path, a "/" inside, an escape sequence, 300 bytes. The row writes
# the value (name_plant) where its tool reads it.
NAME_PLANTS = ("dotdot", "absolute", "slash", "escape", "long")
# Another run on the same place at the same time: one that holds the place's lock exclusively (a create), one
# that holds it shared (a verify), and two real runs started together (hold_lock.py runs each).
CONCURRENT_PLANTS = ("create-holds", "verify-holds", "two-at-once")
HOLD_LOCK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hold_lock.py")
TIMEOUT = 15  # seconds per run: a FIFO that is opened blocks forever, so any run this long has hung


class Cell:
    """One cell's sandbox: `root` (what the row's tool is pointed at, made by the row's setup) and `outside`
    (a canary file and a canary directory that no run may change)."""

    def __init__(self, base, tmp):
        self.tmp = tmp
        os.makedirs(tmp)
        self.root = os.path.join(self.tmp, "root")
        self.outside = os.path.join(self.tmp, "outside")
        os.makedirs(os.path.join(self.outside, "canary-dir"))
        self.canary = os.path.join(self.outside, "canary")
        self.canary_dir = os.path.join(self.outside, "canary-dir")
        with open(self.canary, "wb") as f:
            f.write(CANARY)
        with open(os.path.join(self.canary_dir, "inside"), "wb") as f:
            f.write(CANARY)
        # Old mtimes: a write, even of the same bytes, moves them.
        for p in (self.canary, os.path.join(self.canary_dir, "inside"), self.canary_dir):
            os.utime(p, ns=(10**18, 10**18))
        if base:
            shutil.copytree(base, self.root, symlinks=True)
        self.before = outside_state(self.outside)

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def plant(self, where, kind, size=None):
        """Puts `kind` at `where` (a path below the root; parents made, whatever was there removed).
        odd-name plants a regular file of the odd name beside `where` and returns its path (bytes)."""
        parent = os.path.dirname(where)
        os.makedirs(parent, exist_ok=True)
        if kind == "odd-name":
            odd = os.path.join(os.fsencode(parent), ODD_NAME)
            with open(odd, "wb") as f:
                f.write(b"odd\n")
            return odd
        remove(where)
        if kind == "link-file":
            os.symlink(self.canary, where)
        elif kind == "link-dir":
            os.symlink(self.canary_dir, where)
        elif kind == "fifo":
            os.mkfifo(where)
        elif kind == "device":
            try:
                os.mknod(where, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # what /dev/zero is
            except PermissionError:
                os.symlink("/dev/zero", where)
        elif kind == "oversized":
            with open(where, "wb") as f:
                f.truncate(size)  # sparse: no disk, but a reader that reads it all reads every byte
        else:
            raise ValueError(kind)
        return where

    def odd_path(self, directory):
        """A path below `directory` named ODD_NAME (bytes), for the rows that take the name as an argument."""
        os.makedirs(directory, exist_ok=True)
        return os.path.join(os.fsencode(directory), ODD_NAME)


def name_plant(cell, plant, base, prefix_components=1):
    """The hostile value of a NAME_PLANTS column for a name joined below the directory `base`; the tool puts
    `prefix_components` components' worth of its own text before the value ("demopure-" + a version), which
    "dotdot" climbs out of first."""
    if plant == "dotdot":
        return "../" * prefix_components + os.path.relpath(os.path.join(cell.canary_dir, "x"), base)
    if plant == "absolute":
        return os.path.join(cell.canary_dir, "x")
    if plant == "slash":
        return "a/b"
    if plant == "escape":
        return "odd\x1b[2J" + FORGED
    if plant == "long":
        return "a" * 300
    raise ValueError(plant)


def held(lock_file, mode, argv):
    """The command that runs `argv` while hold_lock.py holds `lock_file` (mode "exclusive" or "shared")."""
    return [sys.executable, HOLD_LOCK, mode, lock_file, "--", *argv]


def together(first, second):
    """The command that starts `first` and `second` at once (hold_lock.py): its exit status is the larger of
    theirs, its stdout the first's (so --json still ends in one summary), its stderr both."""
    return [sys.executable, HOLD_LOCK, "together", json.dumps(second), "--", *first]


def remove(p):
    if os.path.islink(p) or (os.path.lexists(p) and not os.path.isdir(p)):
        os.unlink(p)
    elif os.path.isdir(p):
        shutil.rmtree(p)


def outside_state(d):
    """Every path below `d` with its type, bytes' hash and mtime."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(d):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            digest = None
            if stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            out[os.path.relpath(p, d)] = (stat.S_IFMT(st.st_mode), digest, st.st_mtime_ns)
    return out


class Row:
    """One place a tool reads or writes. `setup(cell, plant)` plants into a fresh cell and returns the
    command (argv, optional env and cwd: a dict); `base(tmp)` makes, once per test, the tree each cell
    starts from (copied to cell.root). `skips` maps a plant to the reason it does not apply. `json_args`:
    what --json is spelled as (None: the tool has no --json; cc-shim). `rc`: the exit statuses this row may
    end with (default EXIT_CODES). `known` maps a plant to the reason a hole is left open: the cell still
    runs (KNOWN_TIMEOUT at most) and shows as a known hole, and the test fails once it holds, so the entry
    goes when the hole is closed."""

    def __init__(self, name, setup, skips=None, base=None, json_args=("--json",), rc=None, timeout=TIMEOUT,
                 known=None):
        self.name, self.setup, self.skips, self.base = name, setup, dict(skips or {}), base
        self.json_args, self.rc, self.timeout = json_args, rc or EXIT_CODES, timeout
        self.known = dict(known or {})


KNOWN_TIMEOUT = 5


def run_cell(cmd, timeout):
    """Runs one command in its own process group (killed as a group on timeout, so a child cannot outlive
    it); returns (rc, out, err, hung)."""
    env = cmd.get("env")
    p = subprocess.Popen([os.fsencode(a) if isinstance(a, bytes) else str(a) for a in cmd["argv"]],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         cwd=cmd.get("cwd"), start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        hung = True
    return p.returncode, out.decode("utf-8", "surrogateescape"), err.decode("utf-8", "surrogateescape"), hung


def forged(text):
    """What in `text` a planted name forged, or None."""
    if "\x1b" in text:
        return "a raw ESC"
    if any(0xDC80 <= ord(c) <= 0xDCFF for c in text):
        return "a byte that is not UTF-8"
    for line in text.splitlines():
        if line.startswith(FORGED) or line.lstrip().startswith(FORGED):
            return f"a forged line {line!r}"
    return None


def judge(row, cell, cmd, mode, timeout):
    """('' when the cell held, else why not; its exit status; whether it ended in the tool's catch of last
    resort, an "internal error")."""
    rc, out, err, hung = run_cell(cmd, timeout)
    problems = []
    if hung:
        problems.append(f"hung (killed after {timeout} s)")
    elif rc < 0:
        problems.append(f"killed by signal {-rc}")
    elif rc not in row.rc:
        problems.append(f"exit {rc}, not one of {sorted(row.rc)}")
    after = outside_state(cell.outside)
    if after != cell.before:
        changed = sorted(k for k in set(after) | set(cell.before) if after.get(k) != cell.before.get(k))
        problems.append(f"changed outside the root: {changed}")
    why = forged(out + err)
    if why:
        problems.append(f"{why} in the output")
    if mode == "json" and not hung:
        try:
            lines = [json.loads(x) for x in out.splitlines() if x.strip()]
            check_json_lines(lines, "")
        except (ValueError, AssertionError) as e:
            problems.append(f"--json: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
    internal = "internal error" in out + err
    if internal:  # the catch of last resort: the tool held, but a typed error with its sentence is missing
        problems.append("ended in the tool's catch of last resort (an internal error, no typed error)")
    if problems:
        shown = (out + err).strip().replace("\n", " | ")[:300]
        return "; ".join(problems) + f" [{shown!r}]", rc, internal
    return "", rc, internal


def sweep(rows, tmp, plants=PLANTS):
    """Runs every cell of `rows` (plain, and --json where the tool has it) for every one of `plants` (the
    columns); prints the table and fails the test naming every cell that did not hold."""
    failures, table, bases = [], [], {}
    for row in rows:
        base = None
        if row.base:
            if row.base not in bases:  # made once per test, copied into each cell
                bases[row.base] = os.path.join(tmp, f"base-{len(bases)}")
                row.base(bases[row.base])
            base = bases[row.base]
        cells = []
        for plant in plants:
            if plant in row.skips:
                cells.append(f"skip ({row.skips[plant]})")
                continue
            modes = ["plain"] + (["json"] if row.json_args is not None else [])
            got, holes, internal = [], [], False
            known = row.known.get(plant)
            for mode in modes:
                cell = Cell(base, os.path.join(tmp, f"cell-{len(table)}-{plant}-{mode}"))
                cmd = row.setup(cell, plant)
                if mode == "json":
                    cmd = dict(cmd, argv=[*cmd["argv"], *row.json_args])
                why, rc, last_resort = judge(row, cell, cmd, mode, min(row.timeout, KNOWN_TIMEOUT) if known else
                                             row.timeout)
                got.append(str(rc))
                internal |= last_resort
                if why:
                    holes.append(f"{row.name} x {plant} ({mode}): {why}")
            if known:
                cells.append(f"known hole ({known})" if holes else "FAIL")
                if not holes:
                    failures.append(f"{row.name} x {plant}: the known hole holds now; take it out of `known`")
                else:
                    print("known:", *holes, sep="\n  ")
                continue
            failures += holes
            cells.append("FAIL" if holes else "held, exit " + "/".join(dict.fromkeys(got)) +
                         (" (internal error)" if internal else ""))
        table.append((row.name, cells))
    print("| row | " + " | ".join(plants) + " |")
    print("| --- " * (len(plants) + 1) + "|")
    for name, cells in table:
        print(f"| {name} | " + " | ".join(cells) + " |")
    check(not failures, f"{len(failures)} cells did not hold", "\n".join(failures))


def sweep_inputs(cls, rows, tmp):
    """The class tables (issue 41): each row one hostile input of the class `cls` ("wrapped sums", ...), run
    on a fresh cell (its canary outside, nothing planted: `setup(cell, cls)` makes what the row needs below
    cell.tmp), plain and with --json, judged as a plant's cell is, its exit status one of the row's `rc`
    (the refusal the class expects, not merely any of the README's). Prints the table and fails the test
    naming every row that did not hold."""
    failures, table = [], []
    for row in rows:
        got, holes = [], []
        for mode in ["plain"] + (["json"] if row.json_args is not None else []):
            cell = Cell(None, os.path.join(tmp, f"input-{len(table)}-{mode}"))
            cmd = row.setup(cell, cls)
            if mode == "json":
                cmd = dict(cmd, argv=[*cmd["argv"], *row.json_args])
            why, rc, _ = judge(row, cell, cmd, mode, row.timeout)
            got.append(str(rc))
            if why:
                holes.append(f"{cls}: {row.name} ({mode}): {why}")
        failures += holes
        table.append((row.name, "FAIL" if holes else "held, exit " + "/".join(dict.fromkeys(got))))
    print(f"| {cls} | outcome |")
    print("| --- | --- |")
    for name, outcome in table:
        print(f"| {name} | {outcome} |")
    check(not failures, f"{len(failures)} rows did not hold", "\n".join(failures))
