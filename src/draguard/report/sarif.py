"""SARIF 2.1.0 as GitHub code scanning reads it: rules with help, repo-relative URIs,
1-based regions (columns in Unicode code points, as the run declares) and partial
fingerprints that survive lines moving. A finding's fix is a SARIF `fixes[]` entry when each
of its edits maps to a region of the file's text."""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import PurePath
from urllib.parse import quote

from .. import __version__
from ..core.finding import Severity
from ..core.fixes import Op
from ..rules.custom import catalog
from ..sources.spans import may_map, text_replacement
from .lines import SourceLines
from .pieces import each, made_in_part, shown
from .prose import paragraph, with_help

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _repo_root(start: str) -> str:
    directory = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.abspath(start)
        directory = parent


def artifact_uri(file: str, root: str) -> str:
    """A URI reference (SARIF 2.1.0 3.4.3: RFC 3986), relative to the repository root where
    the file is inside it: a space, '%' or '#' in a path is percent-encoded, or a reader
    takes '#c.yaml' for a fragment."""
    if file == "-":
        return "stdin"
    rel = os.path.relpath(os.path.abspath(file), root)
    if rel.startswith(".."):
        return PurePath(os.path.abspath(file)).as_uri()
    return quote(rel.replace(os.sep, "/"))


def _root_uri(root: str) -> str:
    return PurePath(root).as_uri().rstrip("/") + "/"


def _rule_descriptor(rule) -> dict:
    full = paragraph(rule.rationale)
    help_text = f"{rule.summary}\n\n{full}"
    if rule.upstream_note:
        help_text += "\n\nUpstream vs. guideline documents: " + " ".join(rule.upstream_note.split())
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": full},
        "help": {"text": help_text},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"category": rule.category, "tags": ["draguard", rule.category],
                       "needs": str(rule.needs), "fixable": str(rule.fixable)},
    }


def _fingerprint(finding, uri: str, seen: dict) -> str:
    base = "\x1f".join((finding.rule, uri, str(finding.obj), finding.message))
    occurrence = seen.get(base, 0)
    seen[base] = occurrence + 1
    return hashlib.sha256(f"{base}\x1f{occurrence}".encode()).hexdigest()[:32]


def _artifact(uri: str) -> dict:
    return {"uri": uri, "uriBaseId": "%SRCROOT%"} if not uri.startswith("file://") else {"uri": uri}


def _fixes(finding, artifact: dict, lines: SourceLines) -> list | None:
    """The fix as text replacements, when every edit maps to a region of the file (a set of
    a scalar, a removal: sources.spans.text_replacement); the document is composed only
    for a fix whose edits all may."""
    fix, document = finding.fix, finding.location.document
    if fix is None or document is None or not all(may_map(edit) for edit in fix.edits) \
            or _key_not_written(finding.file, document, fix.edits, lines):
        return None
    found = lines.document(finding.file, document)
    if found is None:
        return None
    text, node, above = found
    replacements = []
    for edit in fix.edits:
        made = text_replacement(text, 0, edit, [node])
        if made is None:
            return None
        start, end = made.span.start, made.span.end
        replacements.append({"deletedRegion": {"startLine": start.line + above, "startColumn": start.column,
                                               "endLine": end.line + above, "endColumn": end.column},
                             "insertedContent": {"text": made.text}})
    return [{"description": {"text": f"{fix.title} ({fix.applicability})"},
             "artifactChanges": [{"artifactLocation": artifact, "replacements": replacements}]}]


def _key_not_written(file: str, document: int, edits, lines: SourceLines) -> bool:
    """Whether a set's key is nowhere in the document's text, so that it has no scalar there
    to replace and the fix does not map (text_replacement): told without composing the
    document (the 2,125-file tree's fixes that set a grace period or a surge, 1,547 of the
    1,768 composed, map to none). Only for a key that no other text can spell: no
    whitespace or quote (a folded or a single-quoted key), in a document without a backslash
    (an escape in a double-quoted key)."""
    span = lines.document_span(file, document)
    text = lines.text(file)
    if span is None or text is None:
        return False
    start, end, _ = span
    return any(edit.op is Op.SET and edit.path and isinstance(edit.path[-1], str)
               and _SPELLED_ONE_WAY.fullmatch(edit.path[-1]) is not None and text.find(edit.path[-1], start, end) < 0
               for edit in edits) and text.find("\\", start, end) < 0


#: a key a document can write only as itself (_key_not_written)
_SPELLED_ONE_WAY = re.compile(r"[^\s'\"\\]+")


class _Piece:
    """A finding's SARIF result as its JSON text (report.pieces), in two pieces around its
    fingerprint, which counts the findings before it with the same rule, file, object and
    message (_fingerprint): only the whole report knows them, and joins the pieces with it."""

    def __init__(self, sources, config, root: str):
        self.index = {rule.id: i for i, rule in enumerate(catalog(config))}
        self.lines = SourceLines(sources)
        self.uri_of = lru_cache(maxsize=None)(lambda file: artifact_uri(file, root))  # once per file

    def __call__(self, finding, suppressed: bool) -> tuple[str, str]:
        artifact = _artifact(self.uri_of(finding.file))
        physical: dict = {"artifactLocation": artifact}
        if finding.location.line:
            physical["region"] = {"startLine": finding.line, "startColumn": finding.column}
        head: dict = {
            "ruleId": finding.rule,
            "ruleIndex": self.index[finding.rule],
            "level": _LEVELS[finding.severity],
            "message": {"text": with_help(finding.message, finding.help)},
            "locations": [{"physicalLocation": physical}],
        }
        if finding.location.path is not None:
            head["locations"][0]["logicalLocations"] = [{"fullyQualifiedName": finding.location.dotted or "(root)",
                                                         "kind": "element"}]
        tail: dict = {}
        fixes = _fixes(finding, artifact, self.lines)
        if fixes:
            tail["fixes"] = fixes
        if finding.obj.kind:
            tail["properties"] = {"object": finding.obj.as_json()}
        if suppressed:
            tail["suppressions"] = [{"kind": "inSource", "justification": finding.suppressed_by or ""}]
        # the bytes json.dumps gives the whole result, its fingerprint between: compact, a
        # nested value is encoded as it is alone
        return _dumps(head)[:-1] + ',"partialFingerprints":{"draguardFinding/v1":"', \
            '"}' + ("," + _dumps(tail)[1:] if tail else "}")


def _dumps(value) -> str:
    # compact: with an indent, json encodes in Python, and that was most of the report's cost
    # (1.9x the text report on 2,000 files); SARIF readers take any whitespace
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def pieces(findings, suppressed, sources, *, config, show_suppressed: bool = False, root: str | None = None, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces)."""
    return made_in_part(findings, suppressed, sources, _Piece(sources, config, root or _repo_root(os.getcwd())),
                        show_suppressed)


def render(result, *, show_suppressed: bool = False, root: str | None = None, **_) -> str:
    root = root or _repo_root(os.getcwd())
    rules = catalog(result.config)
    piece = _Piece(result.sources, result.config, root)
    findings = shown(result, show_suppressed)
    seen: dict = {}
    results = [head + _fingerprint(finding, piece.uri_of(finding.file), seen) + tail
               for (finding, _), (head, tail) in zip(findings, each(result, findings, piece))]
    document = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "draguard",
                "version": __version__,
                "informationUri": "https://github.com/draguard/draguard",
                "rules": [_rule_descriptor(rule) for rule in rules],
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _root_uri(root)}},
            "columnKind": "unicodeCodePoints",
            "results": [],
        }],
    }
    empty = _dumps(document)  # its results last: the joined results go between its brackets
    return empty[:-len("]}]}")] + ",".join(results) + "]}]}\n"
