"""A `draguard webhook --offline --self-signed` server on loopback for tests: its URL, the
CA bundle it logged, and a client that posts AdmissionReviews to it."""

from __future__ import annotations

import base64
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_webhook(*extra: str, kubeconfig=None, command=(sys.executable, "-m", "draguard")):
    """Yields (base URL, CA bundle PEM bytes, the process): offline, or with the cluster cache
    of `kubeconfig` (ready once the cache has synced). `command` runs draguard (an image's
    entrypoint, say)."""
    port = free_port()
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
    mode = ["--kubeconfig", str(kubeconfig)] if kubeconfig else ["--offline"]
    process = subprocess.Popen([*command, "webhook", *mode, "--self-signed",
                                "--host", "127.0.0.1", "--port", str(port), *extra],
                               stdout=subprocess.DEVNULL, stderr=log)
    try:
        ca = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and ca is None:
            time.sleep(0.1)
            text = open(log.name).read()
            found = re.search(r'"caBundle":"([^"]+)"', text)
            ready = '"event":"serving"' in text and (not kubeconfig or '"event":"cache synced"' in text)
            if process.poll() is not None:
                raise RuntimeError(f"webhook exited: {text}")
            if found and ready:
                ca = base64.b64decode(found.group(1))
        if ca is None:
            raise RuntimeError(f"webhook did not start: {open(log.name).read()}")
        process.log_path = log.name
        yield f"https://127.0.0.1:{port}", ca, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        os.unlink(log.name)


def context_for(ca: bytes) -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.load_verify_locations(cadata=ca.decode())
    return context


def post(url: str, ca: bytes, body, path: str = "/validate") -> tuple[int, dict | str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context_for(ca)) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        text = exc.read().decode()
        try:
            return exc.code, json.loads(text)
        except ValueError:
            return exc.code, text


def get(url: str, ca: bytes, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url + path, timeout=10, context=context_for(ca)) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def review(obj: dict, operation: str = "CREATE", namespace: str = "team-a", uid: str = "7c9b8f0e-1", **extra) -> dict:
    api = obj.get("apiVersion", "v1")
    group, _, version = api.rpartition("/")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid, "kind": {"group": group, "version": version, "kind": obj.get("kind")},
        "resource": {"group": group, "version": version, "resource": obj.get("kind", "").lower() + "s"},
        "operation": operation, "namespace": namespace, "name": obj.get("metadata", {}).get("name", ""),
        "object": obj, "oldObject": None, "dryRun": False, "userInfo": {"username": "alice"}, **extra}}


#: a Deployment from before the webhook: one GPU through the device plugin, one replica (the
#: ratchet's tests grow it)
LEGACY_DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "infer", "namespace": "team-a"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "infer"}}, "template": {
        "metadata": {"labels": {"app": "infer"}},
        "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6",
                                 "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
