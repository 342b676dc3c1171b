"""Small hostile servers on loopback for the hf-fetch tests of issue 11: a Hub that answers as a test tells it
(lying trees, endless bodies, endless pages, 1 byte per second), standard library only.

    with HostileHub(repo_handler(files, tree)) as hub:   # hub.url, hub.requests
        hf_fetch("--manifest", m, "--endpoint", hub.url, ...)
"""

import http.server
import json
import threading
import time
import urllib.parse


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.server.hub.requests.append({"path": self.path, "headers": dict(self.headers.items())})
        try:
            self.server.hub.handler(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class HostileHub:
    """A ThreadingHTTPServer on 127.0.0.1 whose every GET goes to handler(request_handler)."""

    def __init__(self, handler):
        self.handler = handler
        self.requests = []

    def __enter__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.hub = self
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def send(h, status, body, headers=None):
    h.send_response(status)
    for k, v in (headers or {}).items():
        h.send_header(k, str(v))
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def send_json(h, obj, headers=None):
    send(h, 200, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})})


def send_file(h, data):
    """A file's bytes, honouring one "bytes=a-b" range."""
    rng = h.headers.get("Range")
    if rng and rng.startswith("bytes="):
        a, _, b = rng[6:].partition("-")
        start, end = int(a), int(b) if b else len(data) - 1
        end = min(end, len(data) - 1)
        return send(h, 206, data[start:end + 1], {"Content-Range": f"bytes {start}-{end}/{len(data)}",
                                                  "Accept-Ranges": "bytes"})
    send(h, 200, data, {"Accept-Ranges": "bytes"})


def send_chunks_forever(h, first, chunk):
    """A chunked 200 body that never ends, as fast as the client reads it."""
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    for piece in [first] + [chunk] * 1_000_000:
        h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))


def send_dripping(h, body, bytes_per_second=1):
    """A 200 with a correct Content-Length whose body comes at `bytes_per_second`, never falling silent."""
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    for i in range(len(body)):
        h.wfile.write(body[i:i + 1])
        h.wfile.flush()
        time.sleep(1.0 / bytes_per_second)


def repo_handler(files, tree, repo_id="org/model", tree_answer=None):
    """The Hub's tree endpoint answering `tree` (a list of entries, as the test wants it; or
    tree_answer(h) doing the answering), and resolve URLs answering files[path] directly (200/206)."""
    def handle(h):
        path = urllib.parse.urlsplit(h.path).path
        if path.startswith(f"/api/models/{repo_id}/tree/"):
            return tree_answer(h) if tree_answer else send_json(h, tree)
        prefix = f"/{repo_id}/resolve/"
        if path.startswith(prefix):
            rel = urllib.parse.unquote(path[len(prefix):].partition("/")[2])
            if rel in files:
                return send_file(h, files[rel])
        send(h, 404, b'{"error": "not here"}', {"X-Error-Code": "EntryNotFound"})
    return handle


def tree_entry(path, data, oid, lfs_oid=None):
    """A tree entry with the ids given (as a lying Hub sends them); lfs when lfs_oid is given."""
    e = {"type": "file", "path": path, "size": len(data) if lfs_oid is None else 134}
    if oid is not None:
        e["oid"] = oid
    if lfs_oid is not None:
        e["lfs"] = {"oid": lfs_oid, "size": len(data), "pointerSize": 134}
    return e
