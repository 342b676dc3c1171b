"""The Hub simulator's fault rules and request log, shared by both origins.

Part of hubsim.py (see README.md beside this file).
"""

import base64
import json
import threading

# ----------------------------------------------------------------------------------------------
# Faults and the request log (shared by both origins)

FAULT_KINDS = {
    "close_mid_body", "ignore_range", "wrong_bytes", "truncate", "status", "stall", "expire_url",
    "redirect_loop", "redirect_other_origin", "rate_limit", "throttle", "relative_redirect", "headers",
    "revision_sha",
}


class Faults:
    def __init__(self):
        self.lock = threading.Lock()
        self.rules = []

    def set(self, rules):
        if not isinstance(rules, list):
            raise ValueError("faults must be a JSON list of rules")
        checked = []
        for r in rules:
            if not isinstance(r, dict) or r.get("kind") not in FAULT_KINDS:
                raise ValueError(f"unknown fault rule {r!r}; kinds: {sorted(FAULT_KINDS)}")
            r = dict(r)
            r.setdefault("origin", "any")
            r.setdefault("path_contains", "")
            r.setdefault("times", 1)
            r.setdefault("fired", 0)
            checked.append(r)
        with self.lock:
            self.rules = checked

    def get(self):
        with self.lock:
            return [dict(r) for r in self.rules]

    def take(self, kinds, origin, method, path):
        """The first rule of one of `kinds` matching this request with uses left, consumed; else None."""
        with self.lock:
            for r in self.rules:
                if r["kind"] not in kinds or r["times"] == 0:
                    continue
                if r["origin"] not in ("any", origin):
                    continue
                if r["path_contains"] not in path:
                    continue
                if "method" in r and r["method"].upper() != method:
                    continue
                if r["times"] > 0:
                    r["times"] -= 1
                r["fired"] += 1
                return dict(r)
        return None


class RequestLog:
    def __init__(self, log_path):
        self.lock = threading.Lock()
        self.entries = []
        self.log_file = open(log_path, "a", buffering=1) if log_path else None

    def start(self, record):
        with self.lock:
            self.entries.append(record)

    def finish(self, record):
        if self.log_file:
            with self.lock:
                self.log_file.write(json.dumps(record) + "\n")

    def snapshot(self):
        with self.lock:
            return [dict(e) for e in self.entries]

    def clear(self):
        with self.lock:
            self.entries = []

