"""scripts/list-untested-modules.sh judges the ledger (tests/unit/modules-tested-elsewhere.txt), not only its
presence (issue 44 item 5): a line naming a unit test file that never uses the module's functions, nor the entry
point the line says it is tested through, is no credit; a named file that does not exist is none either.
Run on a tree made here, with a copy of the real script.

Run one: python3 test_ledger.py test_a_credit_must_reach_the_module
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from common import check, main, tempdir  # noqa: E402

SCRIPT = os.path.join(HERE, "..", "..", "..", "scripts", "list-untested-modules.sh")


def tree(ledger_line, test_source):
    root = tempdir("ledger-")
    os.makedirs(os.path.join(root, "scripts"))
    shutil.copy(SCRIPT, os.path.join(root, "scripts"))
    for d in ("lib/src/dom", "tests/unit/dom", "tests/integration/dom"):
        os.makedirs(os.path.join(root, d))
    with open(os.path.join(root, "lib/src/dom/mod.cpp"), "w") as f:
        f.write("namespace x {\nint frobnicate(int v) {\n  return v + 1;\n}\n}  // namespace x\n")
    with open(os.path.join(root, "tests/unit/dom/test_other.cpp"), "w") as f:
        f.write(test_source)
    with open(os.path.join(root, "tests/integration/dom/test_mod.py"), "w") as f:
        f.write("# the tool's behaviour\n")
    with open(os.path.join(root, "tests/unit/modules-tested-elsewhere.txt"), "w") as f:
        f.write("# the ledger\n" + ledger_line + "\n")
    return subprocess.run([os.path.join(root, "scripts", "list-untested-modules.sh")], capture_output=True, text=True)


def test_a_credit_must_reach_the_module():
    r = tree("dom/mod   dom/test_other.cpp (frobnication)", "TEST_CASE(\"other\") { CHECK(unrelated() == 1); }\n")
    check(r.returncode == 1 and "none of tests/unit/dom/test_other.cpp uses a function of lib/src/dom/mod.cpp (frobnicate)"
          in r.stderr, "a unit file that never calls the module", r.stderr)
    r = tree("dom/mod   dom/test_other.cpp (frobnication)", "TEST_CASE(\"other\") { CHECK(x::frobnicate(1) == 2); }\n")
    check(r.returncode == 0, "a unit file that calls it", r.stderr)
    r = tree("dom/mod   dom/test_other.cpp through x::entry (frobnication)", "TEST_CASE(\"o\") { CHECK(x::entry()); }\n")
    check(r.returncode == 0, "tested through the entry point the line names", r.stderr)
    r = tree("dom/mod   dom/test_other.cpp through x::entry (frobnication)", "TEST_CASE(\"o\") { CHECK(other()); }\n")
    check(r.returncode == 1 and "uses x::entry" in r.stderr, "an entry point the file never calls", r.stderr)
    r = tree("dom/mod   tests/integration/dom/test_mod.py (the tool)", "")
    check(r.returncode == 0, "an integration test that exists", r.stderr)
    r = tree("dom/mod   tests/integration/dom/test_gone.py (the tool)", "")
    check(r.returncode == 1 and "tests/integration/dom/test_gone.py does not exist" in r.stderr, "a file that is not there",
          r.stderr)


if __name__ == "__main__":
    main()
