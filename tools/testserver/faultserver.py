#!/usr/bin/env python3
"""tartil's fault-injecting HTTP server, for tests only. Serves files from ROOT on 127.0.0.1, with the fault
named by the first path segment:  GET /<fault>/<path under ROOT>.

  ok                 the file, honouring Range: bytes=A-B (206 with exactly bytes A to B, or to the file's end when
                     B is past it; Content-Range says so), bytes=A- and bytes=-N; 416 for a range that starts past
                     the file's end; a Range it cannot read (bytes=B-A, several ranges) is ignored: 200, the file
  status-NNN         status NNN with a short body (e.g. status-503, status-404)
  status-NNN-retry   status NNN with Retry-After: 1
  flaky-N            the first N requests for each path get 503, then the file (as ok serves it)
  reset              half the body, then a TCP reset
  reset-once         a reset on the first request for each path, then the file (as ok serves it)
  truncate           Content-Length of the whole file, half the body, then a clean close
  bitflip            the file with one bit flipped in the middle
  bitflip-once       a bit flipped in the middle on the first request for each path (the whole file, whatever
                     Range asks), then the file (as ok serves it)
  html               200 text/html, an error page
  stall              headers and 1 KiB, then silence (for at most 60 s; logged before the silence)
  trickle            one byte every 0.2 s (for at most 60 s)
  oversize           the file followed by 1 MiB more, with a Content-Length that says so
  lying-length       Content-Length 1000 more than the file, the file, then a close
  redirect-loop      302 to itself, forever
  redirect-ftp       302 to an ftp:// URL
  ignore-range       always 200 with the whole file, whatever Range asks, written 16 KiB at a time (logged with the
                     bytes written before the client closed the connection, so a client that stops reading once it
                     has the part it wanted is not counted the whole file)
  wide-range         a Range (bytes=A-B or bytes=A-) answered 206 with more than asked: from 1000 bytes before A
                     (or the file's start) to the end of the file, its Content-Range saying so
  other-ayah         another ayah's file (the next file in the folder, in name order), honouring Range
  early-change       the file with one byte changed an eighth of the way in (not in the last 16 KiB), honouring Range
  append             the file followed by 2000 bytes that are not audio, with a Content-Length that says so
  redirect-http-PORT 302 to the same path under /ok/ on http://127.0.0.1:PORT (an https mirror's downgrade)

  slow               the file at about 64 KiB/s, honouring Range as ok does (for interrupting downloads midway)

  Replies that are not HTTP, or that no client should take in (messages must say what happened):
  http09             the file's bytes with no status line and no header (an HTTP/0.9 reply), then a close
  huge-header        200 with one header line of 200 KiB (past libcurl's 100 KiB limit), then the file
  huge-status        a status line with a 30-digit status (HTTP/1.1 200000000000000000000000000000 OK), then the file
  bad-status         a status line whose status is not three digits (HTTP/1.1 2x0 OK), then the file
  huge-length        200 with a 30-digit Content-Length, then the file and a close
  huge-range         206 with a Content-Range of 30-digit numbers, then the file

Usage: faultserver.py ROOT [--port N] [--port-file FILE] [--exit-on-eof] [--tls DIR] [--log FILE]
Port 0 (the default) takes any free port; it is printed and written to FILE. With --tls DIR it serves HTTPS
(HTTP/1.1) with DIR/server.pem and DIR/server.key, made by tools/testserver/test-ca DIR (trust DIR/ca.pem); each
connection's TLS handshake runs on its own thread, so every fault behaves as over plain HTTP. Every request is bounded in time;
the server runs until it is killed or, with --exit-on-eof, until its standard input closes (so a test process
that dies takes its server with it). With --log FILE each answer is logged as one line: `STATUS BODY_BYTES PATH
RANGE` (RANGE `-` without one), so tests can count requests and bytes.
"""
import argparse
import collections
import os
import socket
import ssl
import struct
import subprocess
import threading
import time
import serving
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNTS = collections.Counter()
COUNTS_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."
    log_path = None

    def record(self, status, body_bytes):
        if not Handler.log_path:
            return
        with COUNTS_LOCK:
            with open(Handler.log_path, "a") as log:
                log.write(f"{status} {body_bytes} {self.path} {self.headers.get('Range') or '-'}\n")

    def log_message(self, *args):
        pass

    def count(self):
        with COUNTS_LOCK:
            COUNTS[self.path] += 1
            return COUNTS[self.path]

    def send_plain(self, status, body=b"", headers=()):
        self.record(status, len(body))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reset(self):
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def send_tail(self, data, start, end=None):
        """206 with the file from byte `start` to byte `end` (inclusive; its last byte by default), its Content-Range
        saying so."""
        end = len(data) - 1 if end is None else end
        self.record(206, end + 1 - start)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end + 1 - start))
        self.send_header("Content-Type", "audio/mpeg")
        self.end_headers()
        self.wfile.write(data[start:end + 1])

    def requested_range(self, size):
        """The bytes the request's Range asks of a file of `size` bytes, as (first, last) inclusive: bytes=A-B (to
        the file's end at most), bytes=A- or bytes=-N; "unsatisfiable" for a range that starts past the file's end;
        None without a Range, or with one this server does not read (bytes=B-A, several ranges): the whole file."""
        requested = self.headers.get("Range") or ""
        if not requested.startswith("bytes="):
            return None
        first, _, last = requested[len("bytes="):].partition("-")
        if first == "" and last.isdigit():
            return (max(0, size - int(last)), size - 1) if int(last) > 0 and size > 0 else "unsatisfiable"
        if not first.isdigit() or not (last == "" or (last.isdigit() and int(last) >= int(first))):
            return None
        if int(first) >= size:
            return "unsatisfiable"
        return (int(first), min(int(last), size - 1) if last else size - 1)

    def serve_file(self, data, honour_range=True):
        wanted = self.requested_range(len(data)) if honour_range else None
        if wanted == "unsatisfiable":
            return self.send_plain(416, headers=[("Content-Range", f"bytes */{len(data)}")])
        if wanted:
            return self.send_tail(data, wanted[0], wanted[1])
        self.record(200, len(data))
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Type", "audio/mpeg")
        self.end_headers()
        self.wfile.write(data)

    def send_whole_paced(self, data):
        """200 with the whole file, 16 KiB at a time with a pause of a millisecond between writes, so little is in
        the sockets' buffers when the client closes; logged afterwards with the bytes written until then."""
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Type", "audio/mpeg")
        self.end_headers()
        sent = 0
        try:
            for offset in range(0, len(data), 16384):
                self.wfile.write(data[offset:offset + 16384])
                self.wfile.flush()
                sent = min(len(data), offset + 16384)
                time.sleep(0.001)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        self.record(200, sent)

    def send_raw(self, fault, data):
        """Writes a reply byte for byte (http.server would fix up what these faults break), then closes."""
        length = str(len(data)).encode()
        head = {
            "http09": b"",
            "huge-header": b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * (200 << 10) + b"\r\nContent-Length: " + length + b"\r\n\r\n",
            "huge-status": b"HTTP/1.1 2" + b"0" * 29 + b" OK\r\nContent-Length: " + length + b"\r\n\r\n",
            "bad-status": b"HTTP/1.1 2x0 OK\r\nContent-Length: " + length + b"\r\n\r\n",
            "huge-length": b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 30 + b"\r\n\r\n",
            "huge-range": b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + b"9" * 30 + b"-" + b"9" * 30 + b"/" + b"9" * 30
            + b"\r\nContent-Length: " + length + b"\r\n\r\n",
        }[fault]
        try:
            self.wfile.write(head + data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_GET(self):
        parts = self.path.lstrip("/").split("/", 1)
        if len(parts) != 2:
            return self.send_plain(404, b"no fault named\n")
        fault, rest = parts
        path = os.path.realpath(os.path.join(self.root, rest))
        if not path.startswith(os.path.realpath(self.root) + os.sep) or not os.path.isfile(path):
            return self.send_plain(404, b"not found\n")
        with open(path, "rb") as f:
            data = f.read()
        half = len(data) // 2

        if fault == "ok":
            return self.serve_file(data)
        if fault.startswith("status-"):
            fields = fault.split("-")
            headers = [("Retry-After", "1")] if fields[-1] == "retry" else []
            return self.send_plain(int(fields[1]), b"fault injected\n", headers)
        if fault.startswith("flaky-"):
            if self.count() <= int(fault.split("-")[1]):
                return self.send_plain(503, b"try again\n")
            return self.serve_file(data)
        if fault in ("reset", "reset-once"):
            if fault == "reset-once" and self.count() > 1:
                return self.serve_file(data)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:half])
            return self.reset()
        if fault == "truncate":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:half])
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "bitflip" or (fault == "bitflip-once" and self.count() == 1):
            flipped = bytearray(data)
            flipped[half] ^= 0x10
            return self.serve_file(bytes(flipped), honour_range=False)
        if fault == "bitflip-once":
            return self.serve_file(data)
        if fault == "html":
            page = b"<!DOCTYPE html><html><head><title>Error</title></head><body><h1>Service unavailable</h1></body></html>\n" * 4
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        if fault == "stall":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:1024])
            self.wfile.flush()
            self.record(200, 1024)  # logged before the silence, so tests can count the requests
            time.sleep(60)
            self.close_connection = True
            return
        if fault == "trickle":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            deadline = time.time() + 60
            for byte in data:
                if time.time() > deadline:
                    break
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.2)
            self.close_connection = True
            return
        if fault == "oversize":
            body = data + os.urandom(1 << 20)
            return self.serve_file(body, honour_range=False)
        if fault == "lying-length":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data) + 1000))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
            self.close_connection = True
            return
        if fault == "redirect-loop":
            return self.send_plain(302, b"", [("Location", self.path)])
        if fault == "redirect-ftp":
            return self.send_plain(302, b"", [("Location", "ftp://127.0.0.1/" + rest)])
        if fault == "slow":
            wanted = self.requested_range(len(data))
            if wanted == "unsatisfiable":
                return self.send_plain(416, headers=[("Content-Range", f"bytes */{len(data)}")])
            start, end = wanted or (0, len(data) - 1)
            self.record(206 if wanted else 200, end + 1 - start)
            self.send_response(206 if wanted else 200)
            if wanted:
                self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            self.send_header("Content-Length", str(end + 1 - start))
            self.end_headers()
            for offset in range(start, end + 1, 4096):
                self.wfile.write(data[offset:min(end + 1, offset + 4096)])
                self.wfile.flush()
                time.sleep(4096 / 65536)
            return
        if fault == "other-ayah":
            folder = os.path.dirname(path)
            names = sorted(n for n in os.listdir(folder) if n.endswith(".mp3"))
            other = names[(names.index(os.path.basename(path)) + 1) % len(names)]
            with open(os.path.join(folder, other), "rb") as f:
                return self.serve_file(f.read())
        if fault == "early-change":
            changed = bytearray(data)
            changed[len(data) // 8] ^= 0x01
            return self.serve_file(bytes(changed))
        if fault == "append":
            return self.serve_file(data + b"\x55" * 2000, honour_range=False)
        if fault.startswith("redirect-http-"):
            port = int(fault[len("redirect-http-"):])
            return self.send_plain(302, b"", [("Location", f"http://127.0.0.1:{port}/ok/" + rest)])
        if fault in ("http09", "huge-header", "huge-status", "bad-status", "huge-length", "huge-range"):
            return self.send_raw(fault, data)
        if fault == "ignore-range":
            return self.send_whole_paced(data)
        if fault == "wide-range":
            requested = self.headers.get("Range") or ""
            if not requested.startswith("bytes=") or "-" not in requested or requested.startswith("bytes=-"):
                return self.serve_file(data, honour_range=False)
            return self.send_tail(data, max(0, int(requested[len("bytes="):].split("-")[0]) - 1000))
        return self.send_plain(404, b"unknown fault\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--exit-on-eof", action="store_true")
    parser.add_argument("--tls")
    parser.add_argument("--log")
    args = parser.parse_args()
    Handler.root = args.root
    Handler.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.tls:
        subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-ca"), args.tls], check=True)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(args.tls, "server.pem"), os.path.join(args.tls, "server.key"))
        context.set_alpn_protocols(["http/1.1"])
        # The handshake happens on the handler's thread, at its first read: a client that never completes it
        # holds up only its own connection.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    serving.serve(server, args.port_file, args.exit_on_eof)


main()
