#!/usr/bin/env python3
"""The attacker sweep's other run (sweep_table.CONCURRENT_PLANTS), as a wrapper around the tool's command:

  hold_lock.py exclusive|shared LOCK_FILE -- ARGV...   runs ARGV while holding LOCK_FILE with flock(2)
                                                       (its directory made), as a create or a verify would
  hold_lock.py together SECOND_JSON -- ARGV...         starts ARGV and the argv SECOND_JSON at once

Exits with ARGV's status (together: the larger of the two); stdout is ARGV's, stderr both runs'.
"""
import fcntl
import json
import os
import subprocess
import sys


def main():
    mode, rest = sys.argv[1], sys.argv[2:]
    split = rest.index("--")
    args, argv = rest[:split], rest[split + 1:]
    if mode == "together":
        second = json.loads(args[0])
        procs = [subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE),
                 subprocess.Popen(second, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)]
        out = procs[0].communicate()[0]
        procs[1].wait()
        sys.stdout.buffer.write(out)
        codes = [p.returncode for p in procs]
        sys.exit(max(codes) if min(codes) >= 0 else 128 - min(codes))  # a signal: never an exit of the table
    lock_file = args[0]
    os.makedirs(os.path.dirname(lock_file), exist_ok=True)
    with open(lock_file, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX if mode == "exclusive" else fcntl.LOCK_SH)
        sys.exit(subprocess.run(argv, stdin=subprocess.DEVNULL).returncode)


if __name__ == "__main__":
    main()
