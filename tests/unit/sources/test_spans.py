"""Text spans of paths, and edits as text replacements (what SARIF fixes and the fixer use)."""

import pytest

from draguard.core.fixes import append, remove, set_value
from draguard.sources.spans import locate, scalar_text, text_replacement

TEXT = """\
# leading comment
apiVersion: v1
kind: Pod
---
apiVersion: apps/v1
kind: Deployment
spec:
  replicas: 3   # keep
  strategy: {rollingUpdate: {maxSurge: '25%', maxUnavailable: 0}}
  template:
    spec:
      hostIPC: true
      containers:
      - name: a
        env:
        - name: CUDA_VISIBLE_DEVICES
          value: "0"
        - {name: X, value: y}
      - name: b
      volumes:
        - name: dev
          hostPath:
            path: /dev

      dnsPolicy: ClusterFirst
"""


def apply(text, replacement):
    return text[:replacement.span.start.index] + replacement.text + text[replacement.span.end.index:]


def test_locate_finds_keys_and_items_in_the_right_document():
    entry = locate(TEXT, 1, ("spec", "template", "spec", "containers", 1, "name"))
    assert (entry.key.start.line, entry.key.start.column) == (19, 9)
    assert TEXT[entry.value.start.index:entry.value.end.index] == "b"
    assert locate(TEXT, 0, ("spec",)) is None and locate(TEXT, 5, ("kind",)) is None
    assert locate(TEXT, 1, ("spec", "template", "spec", "containers", 7)) is None


def test_duplicate_keys_resolve_to_the_last_as_loading_does():
    text = "a: 1\nb: 2\na: 3\n"
    assert text[locate(text, 0, ("a",)).value.start.index] == "3"


@pytest.mark.parametrize("path, value, expected", [
    (("spec", "replicas"), 1, "  replicas: 1   # keep\n"),
    (("spec", "strategy", "rollingUpdate", "maxSurge"), 0, "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 0}}\n"),
    (("spec", "template", "spec", "containers", 0, "env", 0, "value"), "1", "          value: '1'\n"),
])
def test_setting_a_scalar_replaces_its_token_only(path, value, expected):
    replacement = text_replacement(TEXT, 1, set_value(path, value))
    after = apply(TEXT, replacement)
    line = replacement.span.start.line
    assert after.splitlines(keepends=True)[line - 1] == expected
    assert after.splitlines()[:line - 1] == TEXT.splitlines()[:line - 1]


def test_removing_a_block_entry_removes_its_lines():
    after = apply(TEXT, text_replacement(TEXT, 1, remove(("spec", "template", "spec", "hostIPC"))))
    assert "hostIPC" not in after and after.count("\n") == TEXT.count("\n") - 1
    after = apply(TEXT, text_replacement(TEXT, 1, remove(("spec", "template", "spec", "containers", 0, "env", 0))))
    assert "CUDA_VISIBLE_DEVICES" not in after and "- {name: X, value: y}" in after
    assert after.count("\n") == TEXT.count("\n") - 2
    after = apply(TEXT, text_replacement(TEXT, 1, remove(("spec", "template", "spec", "volumes"))))
    assert "hostPath" not in after and "\n\n      dnsPolicy" in after  # the blank line stays


@pytest.mark.parametrize("edit", [
    remove(("spec", "strategy", "rollingUpdate", "maxSurge")),  # flow style
    remove(("spec", "template", "spec", "containers", 0, "name")),  # shares its line with "- "
    set_value(("spec", "template"), {"x": 1}),  # not a scalar
    set_value(("spec", "missing"), 1),  # nothing there to replace
    append(("spec", "template", "spec", "containers"), {"name": "c"}),
])
def test_edits_without_an_exact_region_are_declined(edit):
    assert text_replacement(TEXT, 1, edit) is None


def test_equal_scalars_written_apart_keep_their_own_tokens():
    """The tokens are remembered by value: 1, 1.0 and True are equal keys, and so are 0.0 and
    -0.0, of one type; each is written as YAML writes it, whichever was asked first."""
    for first, second, written in ((0.0, -0.0, "-0.0"), (-0.0, 0.0, "0.0"), (1, True, "true"), (True, 1.0, "1.0")):
        scalar_text(first)
        assert scalar_text(second) == written
