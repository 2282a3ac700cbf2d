"""`draguard mcp` over stdio: the SDK's transport, with every line it cannot read answered.

The SDK's stdio transport hands a line that is not a JSON-RPC message to the server as an
exception, and the server drops it (python-sdk issue #2751, open): a client that sent a
request with a lone surrogate escape, or a request missing its `method`, waits forever for
its answer. JSON-RPC 2.0 (section 5.1) asks for an error response instead: -32700 "Parse
error" for text that is not JSON, -32600 "Invalid Request" for JSON that is not a message,
with the request's `id` where it can be read, else null. This relay sits between the
transport and the server and writes those answers; every other message passes unchanged."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def serve(server) -> None:
    """Run the `MCPServer` on stdin and stdout until the client closes stdin."""
    import anyio

    # the SDK's MCPServer.run_stdio_async with a relay in the read stream; the low-level
    # server has no public accessor (mcp 2.x)
    lowlevel = getattr(server, "_lowlevel_server", None)
    if lowlevel is None:
        sys.stderr.write("draguard: WARNING: this mcp SDK has no low-level server to relay: a line that is not "
                         "a JSON-RPC message goes unanswered\n")
        server.run("stdio")
        return
    anyio.run(_serve, lowlevel)


async def _serve(lowlevel) -> None:
    import anyio
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        relay: tuple[MemoryObjectSendStream[SessionMessage], MemoryObjectReceiveStream[SessionMessage]]
        relay = anyio.create_memory_object_stream(0)
        relay_send, relay_receive = relay

        async def forward() -> None:
            async with relay_send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        await write_stream.send(answer(item))
                    else:
                        await relay_send.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(forward)
            await lowlevel.run(relay_receive, write_stream, lowlevel.create_initialization_options())


def answer(error: Exception) -> SessionMessage:
    """The JSON-RPC error response to a line the transport could not read as a message."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    details = _errors(error)
    if not details or any(detail.get("type") == "json_invalid" for detail in details):
        code, message = PARSE_ERROR, "Parse error: the line is not JSON text (UTF-8, no lone surrogate escape)"
    else:
        code, message = INVALID_REQUEST, "Invalid Request: the JSON is not a JSON-RPC 2.0 message"
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=_request_id(details),
                                             error=types.ErrorData(code=code, message=message)))


def _errors(error: Exception) -> list[dict[str, Any]]:
    """What validation said of the line (pydantic's details); none for any other failure."""
    errors = getattr(error, "errors", None)
    return errors() if callable(errors) else []


def _request_id(details: list[dict[str, Any]]) -> int | str | None:
    """The `id` of the message that failed validation, where it is a valid id (a string or an
    integer, not a boolean); else None, as section 5 asks when it cannot be detected. Only
    an error about the message itself (its kind, or a member it lacks) carries the message
    as its input; any other carries a member's value, such as `params`, which may hold an
    `id` of its own."""
    for detail in details:
        loc, given = detail.get("loc", ()), detail.get("input")
        whole = len(loc) == 1 or (len(loc) == 2 and detail.get("type") == "missing")
        if whole and isinstance(given, dict) and "id" in given:
            request_id = given["id"]
            if isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool)):
                return request_id
            return None
    return None
