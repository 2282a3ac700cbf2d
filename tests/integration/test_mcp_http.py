"""`draguard mcp --http`: a bearer token on every request (given, or generated and said once
on stderr), loopback by default, and a browser's page on another origin refused."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager

import pytest

pytest.importorskip("mcp")

TOKEN = "s3cret-token-for-the-test"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}).encode()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(tmp_path, *args, env=None):
    """`draguard mcp --http` on a free loopback port, once it answers: (port, what it said on
    stderr so far, a callable)."""
    port = free_port()
    env = {name: value for name, value in os.environ.items() if name != "DRAGUARD_MCP_TOKEN"} | (env or {})
    log = tmp_path / f"stderr-{port}"
    with open(log, "w") as stderr:
        server = subprocess.Popen([sys.executable, "-m", "draguard", "mcp", "--http", "--port", str(port), *args],
                                  stdout=subprocess.DEVNULL, stderr=stderr, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the server did not start: {log.read_text()}")
                time.sleep(0.1)
        yield port, log.read_text
    finally:
        server.terminate()
        server.wait(timeout=10)


def post(port: int, headers: dict) -> int:
    """The status of an MCP initialize request with `headers`."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=INITIALIZE, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_every_request_needs_the_token_and_a_loopback_origin(tmp_path):
    with serving(tmp_path, "--token", TOKEN) as (port, _):
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert post(port, {}) == 401
        assert post(port, {"Authorization": "Bearer wrong"}) == 401
        assert post(port, {"Authorization": "Bearer " + TOKEN + "é"}) == 401
        assert post(port, {"Authorization": TOKEN}) == 401
        assert post(port, bearer) == 200
        assert post(port, {**bearer, "Origin": "http://localhost:3000"}) == 200
        for hostile in ("https://evil.example", "null", "http://127.0.0.1.evil.example", "http://[::1"):
            assert post(port, {**bearer, "Origin": hostile}) == 403, hostile


def test_the_token_is_generated_and_said_once_on_stderr_when_not_given(tmp_path):
    with serving(tmp_path) as (port, said):
        [token] = [line.split("Bearer ", 1)[1].strip() for line in said().splitlines() if "Bearer " in line]
        assert len(token) >= 40
        assert post(port, {"Authorization": f"Bearer {token}"}) == 200
        assert post(port, {}) == 401


def test_the_token_may_come_from_the_environment_and_the_default_bind_is_loopback(tmp_path):
    from draguard.cli import mcp as command

    with serving(tmp_path, env={"DRAGUARD_MCP_TOKEN": TOKEN}) as (port, said):
        assert post(port, {"Authorization": f"Bearer {TOKEN}"}) == 200 and post(port, {}) == 401
        assert TOKEN not in said() and "127.0.0.1" in said()
    import argparse

    parser = argparse.ArgumentParser()
    command.arguments("mcp", parser)
    assert parser.parse_args(["--http"]).host == "127.0.0.1"


def test_loopback_is_this_machine_only():
    from draguard.cli.mcp_http import loopback

    assert all(map(loopback, ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"]))
    assert not any(map(loopback, ["0.0.0.0", "::", "10.0.0.1", "example.com", "localhost.example.com", ""]))


def test_the_sdk_s_client_with_the_token_calls_the_tools_within_its_roots(tmp_path):
    """Over HTTP as over stdio: the server asks the client for its roots (a request on the
    response's stream) and refuses a path outside them."""
    import asyncio

    from mcp import ClientSession, types
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    project = tmp_path / "project"
    project.mkdir()
    for path in (project / "x.yaml", tmp_path / "beside.yaml"):
        path.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n")

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=project.as_uri())])

    async def calls(port):
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write):
            async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                await session.initialize()
                return [await session.call_tool("lint", {"paths": [str(path)]})
                        for path in (project / "x.yaml", tmp_path / "beside.yaml")]
    with serving(tmp_path, "--token", TOKEN, "--root", str(tmp_path)) as (port, _):
        inside, beside = asyncio.run(calls(port))
    assert not inside.is_error, inside.content
    assert beside.is_error and f"outside the workspace ({project})" in beside.content[0].text, beside.content
