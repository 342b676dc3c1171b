"""scripts/check-duplicates.py on small fixture trees: a block of six lines of real code written twice is
found (across files and within one), and what is not real code (comments, blank lines, lone braces,
#include and namespace lines) or differs in one line is not."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import SOURCE, check, main, run  # noqa: E402

SCRIPT = os.path.join(SOURCE, "scripts", "check-duplicates.py")

BLOCK = [
    "int total = 0;",
    "for (int i = 0; i < n; ++i) {",
    "  total += weights[i] * values[i];",
    "  if (total > limit) return limit;",
    "  seen.push_back(i);",
    "  last = i;",
    "}",
    "return total;",
]


def write(root, rel, lines):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def check_duplicates(root):
    return run([sys.executable, SCRIPT, "--root", root], expect=None)


def test_a_block_in_two_files_is_found(tmp):
    write(tmp, "lib/src/a/one.cpp", ["#include <vector>", "int one() {"] + BLOCK + ["}"])
    # The same code laid out otherwise: other indentation, a comment and a blank line inside, its own includes.
    write(tmp, "tests/unit/a/test_two.cpp", ["#include <map>", "", "int two() {", "    // the sum"]
          + ["      " + line for line in BLOCK[:3]] + [""] + BLOCK[3:] + ["}"])
    r = check_duplicates(tmp)
    check(r.rc == 1, "a duplicated block was not reported", r.out + r.err)
    check(r.out.strip() == "lib/src/a/one.cpp:3-10 ~ tests/unit/a/test_two.cpp:5-13", "wrong pair", r.out)


def test_a_block_twice_in_one_file_is_found(tmp):
    write(tmp, "shims/x/main.c", ["void a(void) {"] + BLOCK + ["}", "void b(void) {"] + BLOCK + ["}"])
    r = check_duplicates(tmp)
    check(r.rc == 1, "a block written twice in one file was not reported", r.out + r.err)
    check(r.out.strip() == "shims/x/main.c:2-9 ~ shims/x/main.c:12-19", "wrong pair", r.out)


def test_one_line_changed_is_not_a_duplicate(tmp):
    near = list(BLOCK)
    near[3] = "  if (total > cap) return cap;"  # the block's fourth line differs: 3 and 4 lines alike, never 6
    write(tmp, "lib/src/a/one.cpp", ["int one() {"] + BLOCK + ["}"])
    write(tmp, "tools/t/two.hpp", ["int two() {"] + near + ["}"])
    r = check_duplicates(tmp)
    check(r.rc == 0 and r.out == "", "a near-duplicate was reported", r.out + r.err)


def test_what_is_not_code_does_not_count(tmp):
    # Five lines of code alike, padded to six and more by comments, braces, includes and namespaces.
    filler = ["namespace provkit::a {", "// a comment", "/* a block", "   comment */", "#include <string>",
              "}", "};", "int x = 1;", "int y = 2;", "int z = 3;", "int w = 4;", "int v = 5;",
              "}  // namespace provkit::a"]
    write(tmp, "lib/include/provkit/a/one.hpp", filler)
    write(tmp, "lib/src/a/two.h", filler)
    # Files outside lib/, tools/, shims/ and tests/unit/, or of other kinds, are not read.
    write(tmp, "tests/integration/x/one.cpp", BLOCK)
    write(tmp, "lib/src/a/copy.py", BLOCK)
    write(tmp, "lib/src/a/three.cpp", BLOCK)
    r = check_duplicates(tmp)
    check(r.rc == 0 and r.out == "", "lines that are not code were counted", r.out + r.err)


if __name__ == "__main__":
    main()
