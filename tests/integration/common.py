"""The one harness of the Python integration tests (standard library only).

A test script is a module of `def test_NAME(): ...` functions ending in `main()`:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from common import check, main, run, tool

    def test_version():
        check(run([tool("envcheck"), "--version"]).out.startswith("envcheck "), "no version")

    if __name__ == "__main__":
        main()

tests/integration/discover.cmake registers every `def test_NAME(` of a script as the ctest
"LABEL: NAME" (`python3 SCRIPT test_NAME`), so a new case cannot be left out. `main()` runs the
tests named on the command line, or all of them in the order they are written; a test that takes
one argument without a default is given a fresh temporary directory. A failed `check` ends its
test; `skip()` ends it as skipped (exit 77, ctest's SKIP_RETURN_CODE, when every test run skipped).
"""

import atexit
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.environ.get("PROVKIT_SOURCE_DIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD = os.environ.get("PROVKIT_BUILD_DIR") or os.path.join(SOURCE, "build")
BIN = os.environ.get("PROVKIT_BIN") or os.path.join(BUILD, "bin")
SKIPPED = 77  # the exit status ctest reads as "skipped" (SKIP_RETURN_CODE)

# The Hub simulator (tests/hubsim): `with HubSim(repos_json) as sim:` serves sim.hub and sim.cdn.
sys.path.insert(0, os.path.join(SOURCE, "tests", "hubsim"))
from simctl import DEMO_REPO, DEMO_SHA, HubSim, demo_files, make_demo, make_repo  # noqa: E402,F401


def tool(name):
    """The path of a built binary (hf-fetch, envbuild, envcheck, cc-shim) in $PROVKIT_BIN."""
    return os.path.join(BIN, name)


class Failed(AssertionError):
    pass


class Skipped(Exception):
    pass


def check(cond, what, detail=""):
    """Ends the test with `what` (and `detail`, indented) unless `cond` holds."""
    if not cond:
        raise Failed(what + (("\n    " + str(detail).replace("\n", "\n    ")) if detail else ""))


def skip(why):
    """Ends the test as skipped: what it needs does not exist on this machine."""
    raise Skipped(why)


_failed = []  # the tests of this process that failed: their temporary directories are kept


def tempdir(prefix="provkit-test-"):
    """A fresh temporary directory, removed when the test process exits (kept, and named, when a test
    failed, to look at)."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(_remove_unless_failed, d)
    return d


def _remove_unless_failed(d):
    if _failed:
        print(f"kept {d}")
    else:
        shutil.rmtree(d, True)


class Run:
    """What a command did: rc, out, err (also under subprocess's names returncode, stdout, stderr)."""

    def __init__(self, args, proc):
        self.args = [str(a) for a in args]
        self.rc, self.out, self.err = proc.returncode, proc.stdout, proc.stderr

    returncode = property(lambda self: self.rc)
    stdout = property(lambda self: self.out)
    stderr = property(lambda self: self.err)

    @property
    def all(self):
        return self.out + self.err

    def json(self):
        """The summary (the last JSON line), every line checked against docs/json.md's schema."""
        return self.json_events()[-1]

    def json_events(self):
        """Every stdout line as JSON, checked against docs/json.md's schema: events, then one summary."""
        lines = [json.loads(line) for line in self.out.splitlines() if line.strip()]
        check_json_lines(lines, self)
        return lines

    def __str__(self):
        return f"rc={self.rc}\n--- stdout\n{self.out}\n--- stderr\n{self.err}"

    __repr__ = __str__


_schema = None


def json_schema():
    """The JSON Schema in docs/json.md (its one ```json block)."""
    global _schema
    if _schema is None:
        text = open(os.path.join(SOURCE, "docs", "json.md"), encoding="utf-8").read()
        _schema = json.loads(text.split("```json", 1)[1].split("```", 1)[0])
    return _schema


def check_json_lines(lines, shown=""):
    """Fails the test unless `lines` are JSON lines of docs/json.md: each valid against the schema, the
    last one, and only it, a summary."""
    import jsonschema  # python3-jsonschema (scripts/deps.sh)
    check(lines, "no JSON line", shown)
    for line in lines:
        try:
            jsonschema.validate(line, json_schema())
        except jsonschema.ValidationError as e:
            check(False, f"a JSON line does not match docs/json.md's schema: {e.message}", f"{line}\n{shown}")
    summaries = [i for i, line in enumerate(lines) if line["event"] == "summary"]
    check(summaries == [len(lines) - 1], "not exactly one summary, last", shown)


def run(args, expect=0, env=None, cwd=None, timeout=300, input=None, **popen):
    """Runs `args` (stdin empty unless `input`), capturing text output. An exit status other than
    `expect` fails the test, showing the command and its output; expect=None accepts any."""
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout, input=input, stdin=None if input is not None else subprocess.DEVNULL,
                          **popen)
    r = Run(args, proc)
    if expect is not None and r.rc != expect:
        raise Failed(f"{' '.join(r.args)}: exit {r.rc}, expected {expect}\nstdout: {r.out}\nstderr: {r.err}")
    return r


def start_index(directory):
    """A PEP 503/691 simple index over the wheels in `directory` on loopback (tests/integration/envbuild/
    index_server.py): returns (process, origin); the process is ended when the test process exits."""
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "envbuild", "index_server.py"), directory],
                              stdout=subprocess.PIPE, text=True)
    atexit.register(_stop, server)
    return server, f"http://127.0.0.1:{int(server.stdout.readline())}"


def _stop(process):
    if process.poll() is None:
        process.terminate()
        process.wait()


def registered_tests(module):
    """The test registry: the module's test_* functions by name, in the order they are written."""
    found = [(name, fn) for name, fn in vars(module).items()
             if name.startswith("test_") and inspect.isfunction(fn) and fn.__module__ == module.__name__]
    return dict(sorted(found, key=lambda item: item[1].__code__.co_firstlineno))


def main():
    """Runs the tests named on the command line (all when none), each to its end; exits 1 if one
    failed, 77 if every one was skipped, else 0."""
    tests = registered_tests(sys.modules["__main__"])
    unknown = [n for n in sys.argv[1:] if n not in tests]
    if unknown:
        sys.exit(f"{sys.argv[0]}: no test {', '.join(unknown)}; the tests are: {' '.join(tests)}")
    failed, skipped = _failed, []
    names = sys.argv[1:] or list(tests)
    for name in names:
        fn, start = tests[name], time.monotonic()
        try:
            required = [p for p in inspect.signature(fn).parameters.values() if p.default is p.empty]
            if required:
                fn(tempdir(name + "-"))
            else:
                fn()
            print(f"PASS {name} ({time.monotonic() - start:.1f} s)", flush=True)
        except Skipped as e:
            print(f"SKIP {name}: {e}", flush=True)
            skipped.append(name)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its cause
            traceback.print_exc()
            print(f"FAIL {name}: {e}", flush=True)
            failed.append(name)
    if failed:
        print(f"{len(failed)} failed: {', '.join(failed)}")
        sys.exit(1)
    sys.exit(SKIPPED if len(skipped) == len(names) else 0)
