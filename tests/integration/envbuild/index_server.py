#!/usr/bin/env python3
"""A simple repository (PEP 503 HTML and PEP 691 JSON) over a wheel directory,
on 127.0.0.1 and an ephemeral port (printed as the first line of stdout).

  /simple/<project>/   HTML with #sha256= fragments, or JSON when asked for
                       application/vnd.pypi.simple.v1+json
  /files/<wheel>       the wheel
  /flaky/<wheel>       503 on the first request for each wheel, then the wheel
  /private/...         401
Usage: index_server.py WHEELDIR
"""
import hashlib
import http.server
import json
import os
import re
import sys
import urllib.parse

ROOT = sys.argv[1]
failed_once = set()


def normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def wheels_for(project):
    out = []
    for n in sorted(os.listdir(ROOT)):
        if n.endswith(".whl") and normalize(n.split("-")[0]) == project:
            with open(os.path.join(ROOT, n), "rb") as f:
                data = f.read()
            out.append((n, hashlib.sha256(data).hexdigest(), len(data)))
    return out


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body=b"", ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = urllib.parse.unquote(self.path.split("?")[0])
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["private"]:
            return self.send(401, b"no")
        if len(parts) == 3 and parts[:2] == ["nohash", "simple"]:  # PEP 503 without hash fragments
            files = wheels_for(normalize(parts[2]))
            links = "".join(f'<a href="/files/{n}">{n}</a>\n' for n, h, s in files)
            return self.send(200 if files else 404, links.encode(), "text/html")
        if len(parts) == 2 and parts[0] == "simple":
            files = wheels_for(normalize(parts[1]))
            if not files:
                return self.send(404, b"not found")
            if "application/vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
                body = json.dumps({"meta": {"api-version": "1.1"}, "name": parts[1], "files": [
                    {"filename": n, "url": f"../../files/{n}", "hashes": {"sha256": h}, "size": s} for n, h, s in files]})
                return self.send(200, body.encode(), "application/vnd.pypi.simple.v1+json")
            links = "".join(f'<a href="/files/{urllib.parse.quote(n)}#sha256={h}" data-requires-python="&gt;=3">{n}</a><br>\n'
                            for n, h, s in files)
            return self.send(200, f"<!DOCTYPE html><html><body>\n{links}</body></html>".encode(), "text/html")
        if len(parts) == 2 and parts[0] in ("files", "flaky"):
            if parts[0] == "flaky" and parts[1] not in failed_once:
                failed_once.add(parts[1])
                return self.send(503, b"try again")
            try:
                with open(os.path.join(ROOT, os.path.basename(parts[1])), "rb") as f:
                    return self.send(200, f.read(), "application/octet-stream")
            except OSError:
                return self.send(404, b"no such file")
        self.send(404, b"not found")


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
