"""AdmissionReview `admission.k8s.io/v1`: reading a request and writing the response exactly as
the API server requires (k8s.io/api/admission/v1 types; apiserver
pkg/admission/plugin/webhook/request/admissionreview.go verifies them): the response echoes
`request.uid`, carries `allowed`, a `status` with code and message when denied, `warnings`
(each under 120 characters, or the apiserver truncates it), and a JSONPatch only from a
mutating webhook."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..model.pods import mapping

API_VERSION = "admission.k8s.io/v1"
WARNING_LIMIT = 120  # characters; apiserver's admission warning limit

#: a JSON escape of a UTF-16 surrogate: the only way a lone one gets into a decoded string
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ReviewError(ValueError):
    """A body that is no AdmissionReview this webhook can answer (HTTP 400, said in one line)."""


@dataclass
class Request:
    uid: str
    kind: dict  # {group, version, kind} of `object`, after conversion to the version registered
    operation: str
    namespace: str
    name: str
    object: dict | None
    old_object: dict | None
    dry_run: bool
    user: str = ""  # request.userInfo.username: who is asking
    resource: tuple[str, str] = ("", "")  # request.resource (group, plural) the request is routed by
    sub_resource: str = ""  # request.subResource: "scale", "ephemeralcontainers", "" for the resource itself

    @property
    def group_kind(self) -> tuple[str, str]:
        return str(self.kind.get("group", "")), str(self.kind.get("kind", ""))


def parse(body: bytes | bytearray) -> Request:
    try:
        review = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReviewError(f"the body is not JSON ({exc})") from None
    except RecursionError:
        raise ReviewError("the body nests too deeply to be an AdmissionReview") from None
    if _SURROGATE_ESCAPE.search(body):
        review = _as_go_decodes(review)
    if not isinstance(review, dict) or review.get("kind") != "AdmissionReview":
        raise ReviewError("the body is not an AdmissionReview")
    if review.get("apiVersion") != API_VERSION:
        raise ReviewError(f"AdmissionReview {review.get('apiVersion')!r} is not supported: register the webhook with "
                          f"admissionReviewVersions: [v1]")
    request = review.get("request")
    if not isinstance(request, dict) or not isinstance(request.get("uid"), str) or not request["uid"]:
        raise ReviewError("the AdmissionReview has no request.uid")
    obj, old = request.get("object"), request.get("oldObject")
    kind = mapping(request.get("kind"))
    user = mapping(request.get("userInfo"))
    resource = mapping(request.get("resource"))
    return Request(request["uid"], kind, str(request.get("operation", "")), str(request.get("namespace") or ""),
                   str(request.get("name") or ""), obj if isinstance(obj, dict) else None,
                   old if isinstance(old, dict) else None, request.get("dryRun") is True,
                   str(user.get("username") or ""),
                   (str(resource.get("group") or ""), str(resource.get("resource") or "")),
                   str(request.get("subResource") or ""))


def _as_go_decodes(value: object) -> object:
    """`value` with every lone UTF-16 surrogate replaced by U+FFFD, as Go's encoding/json
    decodes one (decode.go `unquote`: an invalid surrogate becomes unicode.ReplacementChar), so
    the webhook judges the text the API server would store. Python's json keeps it, and no
    string holding one can be encoded, compiled by the CEL engine or written to a log."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_as_go_decodes(item) for item in value]
    if isinstance(value, dict):
        return {_as_go_decodes(key): _as_go_decodes(item) for key, item in value.items()}
    return value


def response(uid: str, allowed: bool, message: str = "", warnings: Sequence[str] = (), patch: list | None = None,
             code: int = 403) -> dict:
    body: dict = {"uid": uid, "allowed": allowed}
    if not allowed:
        body["status"] = {"code": code, "reason": "Forbidden" if code == 403 else "BadRequest", "message": message}
    if warnings:
        body["warnings"] = [short(w) for w in warnings]
    if patch:
        body["patchType"] = "JSONPatch"
        body["patch"] = base64.b64encode(json.dumps(patch, separators=(",", ":")).encode()).decode()
    return {"apiVersion": API_VERSION, "kind": "AdmissionReview", "response": body}


def short(text: str) -> str:
    """A warning the apiserver passes on whole: under WARNING_LIMIT characters, one line."""
    text = " ".join(text.split())
    return text if len(text) < WARNING_LIMIT else text[:WARNING_LIMIT - 2] + "…"
