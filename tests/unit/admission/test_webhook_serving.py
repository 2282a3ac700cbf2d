"""What the webhook's server keeps doing for the API server: draining at SIGTERM (a request in
progress answered, idle connections closed) and serving a renewed certificate to new
connections without a restart."""

from __future__ import annotations

import json
import signal
import socket
import ssl
import subprocess
import sys
import time

from draguard.admission.certs import self_signed

from support.webhook import context_for, free_port, review, running_webhook

REVIEW = json.dumps(review({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})).encode()
REQUEST = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(REVIEW) + REVIEW


def _tls(port: int, ca: bytes) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    return context_for(ca).wrap_socket(raw, server_hostname="127.0.0.1")


def _read_all(sock: ssl.SSLSocket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_sigterm_answers_the_request_in_progress_and_closes_idle_connections():
    with running_webhook() as (url, ca, process):
        port = int(url.rsplit(":", 1)[1])
        idle = _tls(port, ca)
        idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert idle.recv(4096).startswith(b"HTTP/1.1 200")
        busy = _tls(port, ca)
        busy.sendall(REQUEST[:-10])  # the API server mid-request
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert _read_all(idle) == b""  # closed at once
        busy.sendall(REQUEST[-10:])
        answer = _read_all(busy)
        assert answer.startswith(b"HTTP/1.1 200") and b"\r\nConnection: close\r\n" in answer
        assert process.wait(timeout=10) == 0


def test_a_renewed_certificate_is_served_to_new_connections(tmp_path):
    cert, key = self_signed(str(tmp_path), ["127.0.0.1"])
    first = open(cert, "rb").read()
    port = free_port()
    log = open(tmp_path / "log", "w")
    process = subprocess.Popen([sys.executable, "-m", "draguard", "webhook", "--offline", "--tls-cert", cert,
                                "--tls-key", key, "--host", "127.0.0.1", "--port", str(port)], stderr=log)
    try:
        deadline = time.monotonic() + 30
        while '"event":"serving"' not in (tmp_path / "log").read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        with _tls(port, first) as sock:
            served = sock.getpeercert(binary_form=True)
        time.sleep(0.01)  # a new mtime
        self_signed(str(tmp_path), ["127.0.0.1"])  # cert-manager renews in place
        renewed = open(cert, "rb").read()
        with _tls(port, renewed) as sock:
            assert sock.getpeercert(binary_form=True) != served
            sock.sendall(REQUEST)
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert '"event":"certificate reloaded"' in (tmp_path / "log").read_text()
