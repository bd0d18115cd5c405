#!/usr/bin/env python3
"""A small HTTP proxy for tests only: what a corporate network's proxy does, on 127.0.0.1.

  CONNECT host:port      a tunnel (how clients reach https:// URLs through a proxy)
  GET http://host/path   a forwarded request (how clients reach http:// URLs through a proxy), HTTP/1.1,
                         the answer streamed back as it comes

Each request is appended to the log file as one line, "CONNECT 127.0.0.1:4433" or "GET http://127.0.0.1:8080/a",
so a test can see that a client used the proxy. Only loopback destinations are allowed (403 otherwise).

Usage: proxy.py --log FILE [--port N] [--port-file FILE] [--exit-on-eof]
Port 0 (the default) takes any free port; it is printed and written to FILE. It runs until killed or, with
--exit-on-eof, until its standard input closes.
"""
import argparse
import os
import socket
import threading
import urllib.parse
import serving
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    log_path = None

    def log_message(self, *args):
        pass

    def record(self, line):
        with LOG_LOCK, open(self.log_path, "a") as log:
            log.write(line + "\n")

    def refuse(self, status, text):
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self):
        self.record(f"CONNECT {self.path}")
        host, _, port = self.path.rpartition(":")
        if host not in ("127.0.0.1", "localhost"):
            return self.refuse(403, "loopback only")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=10)
        except OSError as error:
            return self.refuse(502, str(error))
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        upstream.settimeout(None)
        self.connection.settimeout(None)

        def pump(source, target):
            try:
                while data := source.recv(65536):
                    target.sendall(data)
            except OSError:
                pass
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        other = threading.Thread(target=pump, args=(upstream, self.connection), daemon=True)
        other.start()
        pump(self.connection, upstream)
        other.join()
        upstream.close()
        self.close_connection = True

    def do_GET(self):
        self.record(f"GET {self.path}")
        url = urllib.parse.urlsplit(self.path)
        if url.scheme != "http" or url.hostname not in ("127.0.0.1", "localhost"):
            return self.refuse(403, "http to loopback only")
        try:
            upstream = socket.create_connection((url.hostname, url.port or 80), timeout=10)
        except OSError as error:
            return self.refuse(502, str(error))
        path = url.path + ("?" + url.query if url.query else "")
        headers = "".join(f"{name}: {value}\r\n" for name, value in self.headers.items()
                          if name.lower() not in ("proxy-connection", "connection", "keep-alive"))
        upstream.sendall(f"GET {path} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n".encode())
        # The answer goes back as it comes, and this client connection closes after it (so its end is the
        # upstream's end, whatever the framing).
        self.close_connection = True
        try:
            while data := upstream.recv(65536):
                self.wfile.write(data)
        except OSError:
            pass
        upstream.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--exit-on-eof", action="store_true")
    args = parser.parse_args()
    Handler.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    serving.serve(server, args.port_file, args.exit_on_eof)


main()
