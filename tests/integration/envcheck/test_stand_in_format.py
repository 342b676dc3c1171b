"""The stand-in NVIDIA driver's description file (tests/integration/envcheck/fake_gpu_desc.h) is documented for
users in docs/envcheck.md (issue 43 item 9: it was documented only in the header): every key the stand-in reads is
a row of the table there, and every row is a key it reads.

Run one: python3 test_stand_in_format.py TEST_NAME
"""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import SOURCE, check, main  # noqa: E402


def keys_read():
    """The keys fake_desc_load compares against, spelled as the docs spell them (gpu.N.name, p2p.A.B)."""
    with open(os.path.join(SOURCE, "tests", "integration", "envcheck", "fake_gpu_desc.h")) as f:
        text = f.read()
    loader = text[text.index("static int fake_desc_load"):]
    keys = set(re.findall(r'strcmp\(key, "([a-z_0-9]+)"\)', loader))
    keys |= {p.replace("%d.%d", "A.B") for p in re.findall(r'sscanf\(key, "([a-z_0-9]+\.%d\.%d)"', loader)}
    keys |= {p.replace("gpu.%d.", "gpu.N.").replace("%d", "K")
             for p in re.findall(r'sscanf\(key, "(gpu\.%d\.[a-z_]+\.%d)"', loader)}
    mig = loader[loader.index('"gpu.%d.mig.%d.%63s"'):loader.index('"gpu.%d.%63s"')]
    gpu = loader[loader.index('"gpu.%d.%63s"'):]
    keys |= {"gpu.N.mig.K." + k for k in re.findall(r'strcmp\(field, "([a-z_]+)"\)', mig)}
    keys |= {"gpu.N." + k for k in re.findall(r'strcmp\(field, "([a-z_]+)"\)', gpu)}
    return keys


def keys_documented():
    with open(os.path.join(SOURCE, "docs", "envcheck.md")) as f:
        text = f.read()
    start = text.index("The stand-in driver's file:")
    table = text[start:text.index("\n\n", text.index("| key |", start))]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return {k for line in rows for k in re.findall(r"`([a-zA-Z_.0-9]+)`", line.split("|")[1])}


def test_every_stand_in_key_is_documented():
    read, documented = keys_read(), keys_documented()
    check(len(read) >= 20, "the keys the stand-in reads were found", sorted(read))
    check(read == documented, "docs/envcheck.md's table is the stand-in's keys",
          f"not documented: {sorted(read - documented)}; not read: {sorted(documented - read)}")


if __name__ == "__main__":
    main()
