"""`draguard mcp --http`: the SDK's streamable HTTP app behind a guard. A loopback port is
reachable by every local process and, through DNS rebinding or a plain fetch, by any page a
local browser shows: each request must carry the server's bearer token (401 otherwise), and
one with an Origin header that is not a loopback origin is refused (403) before the token
is looked at. The SDK adds its own Host and Origin checks on a loopback bind. The SDK's auth
is built for OAuth (an authorization server's issuer); one static token needs only this."""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import sys
from urllib.parse import urlsplit

from ..core.errors import UsageError

TOKEN_VARIABLE = "DRAGUARD_MCP_TOKEN"


def serve(server, host: str, port: int, token: str | None) -> None:
    import uvicorn

    token = _token(token)
    if not loopback(host):
        sys.stderr.write(f"draguard: WARNING: --host {host} is not a loopback address: whoever reaches it on the "
                         "network may call the tools, guarded by the token alone, over unencrypted HTTP\n")
    uvicorn.run(Guard(server.streamable_http_app(host=host), token), host=host, port=port)


def _token(given: str | None) -> str:
    """--token, else $DRAGUARD_MCP_TOKEN, else a new one said once on stderr (no log gets it)."""
    token = given if given is not None else os.environ.get(TOKEN_VARIABLE)
    if token is None:
        token = secrets.token_urlsafe(32)
        sys.stderr.write("draguard: every request must carry this header (a new token each start; "
                         f"--token or ${TOKEN_VARIABLE} sets one):\n  Authorization: Bearer {token}\n")
    elif not token.strip() or token != token.strip():
        raise UsageError(f"the bearer token (--token or ${TOKEN_VARIABLE}) is empty or has spaces around it")
    return token


def loopback(host: str) -> bool:
    """`host` (a name or an address, IPv6 in brackets or not) is this machine's loopback."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _loopback_origin(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and loopback(parts.hostname or "")


class Guard:
    """ASGI middleware: Origin, then the bearer token, on every HTTP request."""

    def __init__(self, app, token: str):
        self.app, self.token = app, token.encode()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            refusal = self._refusal(scope)
            if refusal is not None:
                return await refusal(scope, receive, send)
        await self.app(scope, receive, send)

    def _refusal(self, scope):
        from starlette.datastructures import Headers
        from starlette.responses import PlainTextResponse

        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and not _loopback_origin(origin):
            return PlainTextResponse("draguard: requests from a page of another origin are refused\n", 403)
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), self.token):
            return PlainTextResponse("draguard: a bearer token is required (Authorization: Bearer <token>)\n", 401,
                                     headers={"WWW-Authenticate": 'Bearer realm="draguard"'})
        return None
