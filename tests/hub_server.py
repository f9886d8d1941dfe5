#!/usr/bin/env python3
"""hub_server.py - a Hub-shaped HTTP server on 127.0.0.1 for tests/test_remote.c.

Two ports, as the Hub and its CDN: the "hub" answers
  /api/models/ORG/NAME/revision/REV   -> {"id", "sha", "siblings": [{"rfilename"}]}
  /ORG/NAME/resolve/REV/FILE          -> 302 to the CDN, with X-Repo-Commit,
                                         X-Linked-Size, X-Linked-Etag, ETag
and the CDN serves /blob/ORG/NAME/FILE honouring Range (206, Content-Range).
Files live under ROOT/ORG/NAME/FILE. Misbehaviours, chosen by the ORG:
  gated      401 unless "Authorization: Bearer TOKEN" (--token)
  norange    the CDN ignores Range: 200 and the whole body
  slow       the CDN sends 1 byte, then stalls
  truncated  the CDN promises the range, sends half, closes
  badrange   the CDN answers 206 with a Content-Range for another range
  corrupt    the CDN flips the file's first byte (the content no longer
             hashes to the ETag: a download must refuse it)
Files named *.json, *.md, *.txt, *.jinja are kept in git, not LFS, as on the
Hub: /resolve/ serves them itself (200, or 206 for a Range) with the git
blob SHA-1 as ETag and no X-Linked-* headers.
Every body byte sent is logged to --log as "PATH BYTES" (what the client
cost the server). Bounded: the server exits after --lifetime seconds.
Prints "HUB_PORT CDN_PORT" on stdout once listening.
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import socketserver
import sys
import threading
import time

COMMIT = "c0ffee" + "0" * 34


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def make_handler(args, ports, log_lock):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):  # quiet
            pass

        def log_bytes(self, n):
            with log_lock, open(args.log, "a") as f:
                f.write("%s %d\n" % (self.path, n))

        def send_body(self, code, body, ctype="application/json", extra=None):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if not getattr(self, "head_only", False):
                self.wfile.write(body)
                self.log_bytes(len(body))

        def file_of(self, org, name, rel):
            p = os.path.realpath(os.path.join(args.root, org, name, rel))
            root = os.path.realpath(args.root)
            return p if p.startswith(root + os.sep) and os.path.isfile(p) else None

        def authorized(self, org):
            if org != "gated":
                return True
            return self.headers.get("Authorization") == "Bearer " + args.token

        def do_HEAD(self):  # huggingface_hub asks each file's metadata so
            self.head_only = True
            self.do_GET()

        def do_GET(self):
            if ports["role"](self) == "hub":
                self.hub()
            else:
                self.cdn()

        def hub(self):
            path = self.path.split("?", 1)[0]
            m = re.match(r"^/api/models/([^/]+)/([^/]+)/tree/([^/]+)$", path)
            if m:  # HfApi.list_repo_tree (recursive): what snapshot_download lists
                return self.tree(*m.groups())
            m = re.match(r"^/api/models/([^/]+)/([^/]+)/revision/([^/]+)$", path)
            if m:
                org, name, _ = m.groups()
                d = os.path.join(args.root, org, name)
                if not os.path.isdir(d):
                    return self.send_body(404, b'{"error":"Repository not found"}')
                if not self.authorized(org):
                    return self.send_body(401, b'{"error":"gated"}')
                files = sorted(os.path.relpath(os.path.join(r, f), d)
                               for r, _, fs in os.walk(d) for f in fs)
                body = json.dumps({"id": org + "/" + name, "sha": COMMIT,
                                   "siblings": [{"rfilename": f} for f in files]}).encode()
                return self.send_body(200, body)
            m = re.match(r"^/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$", self.path)
            if not m:
                return self.send_body(404, b"{}")
            org, name, _, rel = m.groups()
            p = self.file_of(org, name, rel)
            if not p:
                return self.send_body(404, b'{"error":"Entry not found"}',
                                      extra={"X-Error-Code": "EntryNotFound"})
            if not self.authorized(org):
                return self.send_body(401, b'{"error":"Access to this repo is restricted"}')
            size = os.path.getsize(p)
            if is_git_file(rel):
                return self.serve(p, org, {"X-Repo-Commit": COMMIT,
                                           "ETag": '"%s"' % git_sha1_of(p)})
            extra = {"Location": "http://127.0.0.1:%d/blob/%s/%s/%s" % (ports["cdn"], org, name, rel),
                     "X-Repo-Commit": COMMIT, "X-Linked-Size": str(size),
                     "X-Linked-Etag": '"%s"' % sha256_of(p), "ETag": '"%s"' % sha256_of(p)}
            self.send_body(302, b"", extra=extra)

        def tree(self, org, name, _rev):
            d = os.path.join(args.root, org, name)
            if not os.path.isdir(d):
                return self.send_body(404, b'{"error":"Repository not found"}')
            if not self.authorized(org):
                return self.send_body(401, b'{"error":"gated"}')
            out = []
            for r, _, fs in sorted(os.walk(d)):
                for f in sorted(fs):
                    p = os.path.join(r, f)
                    rel = os.path.relpath(p, d)
                    size = os.path.getsize(p)
                    e = {"type": "file", "path": rel, "size": size}
                    if is_git_file(rel):
                        e["oid"] = git_sha1_of(p)
                    else:  # the git blob is the LFS pointer
                        ptr = ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\n"
                               "size %d\n" % (sha256_of(p), size)).encode()
                        e["oid"] = hashlib.sha1(b"blob %d\0" % len(ptr) + ptr).hexdigest()
                        e["lfs"] = {"oid": sha256_of(p), "size": size, "pointerSize": len(ptr)}
                    out.append(e)
            self.send_body(200, json.dumps(out).encode())

        def cdn(self):
            m = re.match(r"^/blob/([^/]+)/([^/]+)/(.+)$", self.path)
            p = self.file_of(*m.groups()) if m else None
            if not p:
                return self.send_body(404, b"not found", "text/plain")
            self.serve(p, m.group(1), {})

        def serve(self, p, org, extra):
            size = os.path.getsize(p)
            rng = re.match(r"^bytes=(\d+)-(\d+)$", self.headers.get("Range", ""))
            if org == "norange" or not rng:
                return self.stream(p, 0, size, 200, extra, org)
            a, b = int(rng.group(1)), min(int(rng.group(2)), size - 1)
            if a >= size:
                return self.send_body(416, b"", "text/plain",
                                      dict(extra, **{"Content-Range": "bytes */%d" % size}))
            cr = "bytes %d-%d/%d" % (a, b, size)
            if org == "badrange":
                cr = "bytes %d-%d/%d" % (a + 1, b, size)
            self.stream(p, a, b + 1 - a, 206, dict(extra, **{"Content-Range": cr}), org)

        def stream(self, p, off, n, code, extra, org=""):
            self.send_response(code)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(n))
            self.send_header("Accept-Ranges", "none" if code == 200 else "bytes")
            for k, v in extra.items():
                self.send_header(k, v)
            self.end_headers()
            sent = 0
            limit = n // 2 if org == "truncated" else n
            if getattr(self, "head_only", False):
                limit = 0
            try:
                with open(p, "rb") as f:
                    f.seek(off)
                    while sent < limit:
                        chunk = f.read(min(65536, limit - sent))
                        if not chunk:
                            break
                        if org == "corrupt" and off + sent == 0 and chunk:
                            chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
                        if org == "slow" and sent > 0:
                            time.sleep(args.stall)
                        self.wfile.write(chunk if org != "slow" else chunk[:1])
                        sent += len(chunk) if org != "slow" else 1
                        if org == "slow" and sent >= 2:
                            break
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.log_bytes(sent)
            if org in ("truncated", "slow"):
                self.close_connection = True

    return Handler


_sha = {}


def is_git_file(rel):
    return rel.endswith((".json", ".md", ".txt", ".jinja"))


def git_sha1_of(p):
    """git hash-object: SHA-1 of "blob SIZE\\0" + content."""
    with open(p, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def sha256_of(p):
    if p not in _sha:
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
        _sha[p] = h.hexdigest()
    return _sha[p]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--token", default="secret-token")
    ap.add_argument("--lifetime", type=float, default=300)
    ap.add_argument("--stall", type=float, default=5)
    args = ap.parse_args()
    ports = {}
    lock = threading.Lock()
    handler = make_handler(args, ports, lock)
    hub = Server(("127.0.0.1", 0), handler)
    cdn = Server(("127.0.0.1", 0), handler)
    ports["cdn"] = cdn.server_address[1]
    hub_port = hub.server_address[1]
    ports["role"] = lambda h: "hub" if h.server.server_address[1] == hub_port else "cdn"
    for s in (hub, cdn):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("%d %d" % (hub_port, ports["cdn"]), flush=True)
    # the large files are hashed for their ETag once, before the test asks
    time.sleep(args.lifetime)  # bounded: then everything stops
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
