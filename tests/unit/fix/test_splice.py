"""Edits spliced into the original text: each kind of edit in block and flow style, and the
text around it kept byte for byte (comments, quotes, CRLF, document markers, indentation)."""

from __future__ import annotations

import pytest
import yaml

from draguard.core.fixes import EditError, add_document, append, remove, set_value
from draguard.fix.splice import Changes, NotSpliceable, apply_fix, apply_fixes
from support.byteminimal import untouched_lines_lost

TEXT = """\
# header comment, before the first document
---
apiVersion: apps/v1   # trailing comment
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 3
  template:
    spec:
      containers:
        - name: "server"      # quoted, indented sequence
          image: 'nginx'
          env:
            - {name: A, value: "1"}
            - name: B
              value: "2"
          resources:
            limits:
              nvidia.com/gpu: 1
      volumes: [{name: data, emptyDir: {}}]
# between documents
---
kind: ConfigMap
apiVersion: v1
metadata:
  name: other
"""


def fix(text, *edits, document=0):
    changes = Changes()
    after, _ = apply_fix(text, document, list(edits), changes)
    assert untouched_lines_lost(text, after, changes.original_regions()) == []
    return after


def data(text, document=0):
    return list(yaml.safe_load_all(text))[document]


def test_setting_a_scalar_replaces_its_token_only():
    after = fix(TEXT, set_value(("spec", "replicas"), 1))
    assert "  replicas: 1\n" in after and after.count("\n") == TEXT.count("\n")


def test_a_new_key_goes_after_its_mapping_at_its_indentation():
    after = fix(TEXT, set_value(("spec", "template", "spec", "terminationGracePeriodSeconds"), 60))
    assert "      volumes: [{name: data, emptyDir: {}}]\n      terminationGracePeriodSeconds: 60\n" in after


def test_missing_parents_are_created_in_the_files_sequence_style():
    after = fix(TEXT, set_value(("spec", "strategy", "rollingUpdate", "maxSurge"), 0))
    assert "  strategy:\n    rollingUpdate:\n      maxSurge: 0\n" in after
    after = fix(TEXT, append(("spec", "template", "spec", "resourceClaims"), {"name": "gpu"}))
    assert "      resourceClaims:\n        - name: gpu\n" in after  # indented, as the file writes lists


def test_append_to_block_and_flow_sequences():
    after = fix(TEXT, append(("spec", "template", "spec", "containers", 0, "env"), {"name": "C", "value": "3"}))
    assert '              value: "2"\n            - name: C\n              value: \'3\'\n' in after
    after = fix(TEXT, append(("spec", "template", "spec", "volumes"), {"name": "shm"}))
    assert "volumes: [{name: data, emptyDir: {}}, {name: shm}]" in after


def test_set_in_a_flow_mapping_keeps_it_flow():
    after = fix(TEXT, set_value(("metadata", "namespace"), "team-a"))
    assert "metadata: {name: web, labels: {app: web}, namespace: team-a}\n" in after


def test_remove_a_block_entry_a_flow_item_and_a_last_item():
    after = fix(TEXT, remove(("spec", "template", "spec", "containers", 0, "env", 1)))
    assert "name: B" not in after and '- {name: A, value: "1"}' in after
    after = fix(TEXT, remove(("spec", "template", "spec", "containers", 0, "env", 0)))
    assert "name: A" not in after and "- name: B" in after
    after = fix(TEXT, remove(("spec", "template", "spec", "volumes", 0)))
    assert "      volumes: []\n" in after  # the data says [], so does the text
    after = fix(TEXT, remove(("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")))
    assert data(after)["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {}}


def test_a_fix_with_several_edits_and_a_new_document():
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"}}
    after = fix(TEXT, add_document(template),
                append(("spec", "template", "spec", "resourceClaims"), {"name": "gpu", "resourceClaimTemplateName": "t"}),
                append(("spec", "template", "spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
                remove(("spec", "template", "spec", "containers", 0, "resources", "limits")))
    documents = list(yaml.safe_load_all(after))
    assert [d["kind"] for d in documents] == ["Deployment", "ResourceClaimTemplate", "ConfigMap"]
    assert "# between documents\n---\nkind: ConfigMap" in after
    assert after.startswith("# header comment, before the first document\n---\n")


def test_crlf_files_stay_crlf():
    crlf = TEXT.replace("\n", "\r\n")
    after = fix(crlf, set_value(("spec", "template", "spec", "hostIPC"), False), append(
        ("spec", "template", "spec", "containers", 0, "env"), {"name": "C"}))
    assert "\n" not in after.replace("\r\n", "")


def test_edits_without_an_exact_text_form_are_refused_not_forced():
    with pytest.raises(EditError):  # a list item that is not there
        apply_fix("a: 1\nb: [x, y]\n", 0, [set_value(("b", 5, "c"), 1)])
    with pytest.raises(NotSpliceable):  # the only key of a flow item... in block style, on the dash line
        apply_fix("items:\n- name: x\n  value: 1\n- 3\n", 0, [remove(("items", 0, "name")),
                                                                 remove(("items", 0, "value"))])


def test_the_first_key_of_a_sequence_item_goes_and_the_next_moves_up():
    after = fix("items:\n- name: x   # gone with it\n  value: 1\n", remove(("items", 0, "name")))
    assert after == "items:\n- value: 1\n"


def test_documents_that_are_not_there_are_refused():
    with pytest.raises(NotSpliceable):
        apply_fix(TEXT, 7, [set_value(("a",), 1)])


POD_END = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
      - name: server
        resources:
          limits:
            nvidia.com/gpu: 1
---
kind: ConfigMap
apiVersion: v1
"""

THE_ROUND = [  # the fixes one round applies to the Deployment: each ends at the document's last line
    [set_value(("spec", "strategy", "rollingUpdate", "maxSurge"), 0),  # one mapping made by two sets
     set_value(("spec", "strategy", "rollingUpdate", "maxUnavailable"), 1)],
    [set_value(("spec", "template", "spec", "containers", 0, "lifecycle", "preStop"), {"sleep": {"seconds": 5}})],
    [set_value(("spec", "template", "spec", "terminationGracePeriodSeconds"), 30)],
    [add_document({"kind": "ResourceClaimTemplate", "metadata": {"name": "llm-gpu"}}),
     append(("spec", "template", "spec", "resourceClaims"), {"name": "gpu"}),
     append(("spec", "template", "spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
     remove(("spec", "template", "spec", "containers", 0, "resources", "limits"))],  # `resources` keeps `claims`
    [add_document({"kind": "PodDisruptionBudget", "metadata": {"name": "llm"}})],
]


def test_a_documents_fixes_are_located_together_and_land_as_spliced_one_by_one(monkeypatch):
    import draguard.fix.splice as splice

    spliced = splice._spliced

    def together_only(text, planned, starts, newline, together):
        assert together, "the fixes were spliced one by one"
        return spliced(text, planned, starts, newline, together)
    monkeypatch.setattr(splice, "_spliced", together_only)
    changes = Changes()
    together, _ = apply_fixes(POD_END, [(0, edits) for edits in THE_ROUND], changes)
    assert untouched_lines_lost(POD_END, together, changes.original_regions()) == []
    assert together == """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      containers:
      - name: server
        resources:
          claims:
          - name: gpu
        lifecycle:
          preStop:
            sleep:
              seconds: 5
      terminationGracePeriodSeconds: 30
      resourceClaims:
      - name: gpu
  strategy:
    rollingUpdate:
      maxSurge: 0
      maxUnavailable: 1
---
kind: PodDisruptionBudget
metadata:
  name: llm
---
kind: ResourceClaimTemplate
metadata:
  name: llm-gpu
---
kind: ConfigMap
apiVersion: v1
"""

    def refuse(*_):
        raise NotSpliceable("one by one, for the comparison")
    monkeypatch.setattr(splice, "_spliced", spliced)
    monkeypatch.setattr(splice, "_splice_together", refuse)
    one_by_one, _ = apply_fixes(POD_END, [(0, edits) for edits in THE_ROUND])
    assert one_by_one == together


def test_edits_that_meet_are_spliced_one_after_another():
    # both removals empty `limits` only together: located on one composition they would leave
    # `limits:` null; spliced one by one the second sees one key left and writes {}
    text = "spec:\n  limits:\n    a: 1\n    b: 2\n"
    after, _ = apply_fixes(text, [(0, [remove(("spec", "limits", "a")), remove(("spec", "limits", "b"))])])
    assert after == "spec:\n  limits: {}\n"


def test_documents_are_composed_from_their_own_first_line_and_directives_from_the_start():
    text = "a: 1\n--- # the second\nkind: x\nlist:\n- 1\n"
    after = fix(text, append(("list",), 2), document=1)
    assert after == "a: 1\n--- # the second\nkind: x\nlist:\n- 1\n- 2\n"
    with_directive = "%YAML 1.1\n---\na: 1\n...\n%YAML 1.1\n---\nkind: x\n"
    after = fix(with_directive, set_value(("kind",), "y"), document=1)
    assert after == with_directive.replace("kind: x", "kind: y")


JSON_POD = """\
{
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"name": "p", "labels": {"app": "p"}},
  "spec": {
    "containers": [
      {
        "name": "c",
        "env": [
          {"name": "A", "value": "1"},
          {"name": "B", "value": "2"}
        ],
        "resources": {"limits": {"nvidia.com/gpu": 1}}
      }
    ]
  }
}
"""


@pytest.mark.parametrize("edits", [
    [set_value(("spec", "terminationGracePeriodSeconds"), 60)],
    [set_value(("spec", "containers", 0, "lifecycle", "preStop"), {"sleep": {"seconds": 10}})],
    [append(("spec", "resourceClaims"), {"name": "gpu", "resourceClaimTemplateName": "t"})],
    [set_value(("metadata", "name"), "q"), set_value(("metadata", "labels", "app"), "it's")],
    [remove(("spec", "containers", 0, "env", 0))],
    [remove(("spec", "containers", 0, "env", 1))],
    [remove(("spec", "containers", 0, "resources"))],  # the last key: the comma before it goes
])
def test_a_json_document_stays_json(edits):
    import json
    after = fix(JSON_POD, *edits)
    assert json.loads(after) == data(after)


def test_a_json_file_gets_no_second_object():
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"}}
    with pytest.raises(NotSpliceable, match="a JSON file holds JSON values only: write ResourceClaimTemplate 't'"):
        apply_fix(JSON_POD, 0, [add_document(template)])
    with pytest.raises(NotSpliceable, match="a JSON file holds JSON values only"):  # concatenated values too
        apply_fix(JSON_POD + JSON_POD, 0, [add_document(template)])


def test_a_flow_document_of_a_yaml_stream_gets_its_new_document_as_json():
    """A YAML stream whose documents are written as JSON (`---` between them) was refused as
    if it were a JSON file; the new document goes after it, as JSON too."""
    import json
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"}}
    stream = JSON_POD + "---\n" + JSON_POD
    after, _ = apply_fix(stream, 0, [add_document(template)])
    documents = after.split("---\n")
    assert len(documents) == 3 and json.loads(documents[1]) == template
    assert documents[0] == JSON_POD and documents[2] == JSON_POD


def test_new_flow_entries_go_after_the_last_one_and_before_a_trailing_comma():
    after = fix("a: {b: 1,}\nc: [x, y,]\n", set_value(("a", "d"), 2), append(("c",), "z"))
    assert after == "a: {b: 1, d: 2,}\nc: [x, y, z,]\n"


def test_a_replaced_string_keeps_its_quotes():
    after = fix("a: \"x\"\nb: 'y'\nc: z\n", set_value(("a",), "v1"), set_value(("b",), "it's"), set_value(("c",), "w"))
    assert after == "a: \"v1\"\nb: 'it''s'\nc: w\n"


@pytest.mark.parametrize("text, path, fixed", [
    ("a:\n  b:\n  c: 1\n", ("a", "b"), "a:\n  b: x\n  c: 1\n"),
    ("a:\n  b:   # none yet\n", ("a", "b"), "a:\n  b: x\n"),
    ("a:\n- b:\n  c: 1\n", ("a", 0, "b"), "a:\n- b: x\n  c: 1\n"),
    ("a:\n  b: ''\n", ("a", "b"), "a:\n  b: 'x'\n"),  # quoted: its token replaced
])
def test_an_empty_value_is_replaced_by_its_entrys_line(text, path, fixed):
    """An empty value (`key:`) has no token to replace: written at its place, the new one made
    `key:x`, one plain scalar, which no splice verified (a rollout fix of `maxUnavailable:`
    was left unchanged)."""
    assert fix(text, set_value(path, "x")) == fixed


@pytest.mark.parametrize("text", [
    "a: &r {x: 1}\nb: *r\nc: {d: 1}\n",
    "base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n",
])
def test_a_document_that_repeats_nodes_through_aliases_is_refused_with_the_reason(text):
    with pytest.raises(NotSpliceable, match="repeats nodes through YAML aliases"):
        apply_fix(text, 0, [set_value(("c", "z"), 3)])


def test_a_star_in_text_is_no_alias():
    assert fix("schedule: '0 0 * * *'\nb: 1\n", set_value(("b",), 2)) == "schedule: '0 0 * * *'\nb: 2\n"


def test_new_block_entries_and_documents_take_the_documents_indentation():
    text = "spec:\n    template:\n        spec:\n            containers:\n                -   name: a\n"
    after = fix(text, set_value(("spec", "template", "spec", "lifecycle"), {"preStop": {"sleep": {"seconds": 5}}}),
                add_document({"kind": "PodDisruptionBudget", "spec": {"maxUnavailable": 1}}))
    assert "        spec:\n            containers:\n                -   name: a\n" \
           "            lifecycle:\n                preStop:\n                    sleep:\n" in after
    assert "---\nkind: PodDisruptionBudget\nspec:\n    maxUnavailable: 1\n" in after


def test_a_new_document_goes_after_the_indented_comments_that_end_the_last_one():
    text = "a:\n  b: 1\n  # about b\n# about what follows\n---\nc: 1\n"
    after = fix(text, add_document({"kind": "X"}))
    assert after == "a:\n  b: 1\n  # about b\n---\nkind: X\n# about what follows\n---\nc: 1\n"


def test_a_string_of_several_lines_is_written_as_a_literal_block():
    text = "sel:\n  - cel:\n      expression: |\n        a &&\n        b\n    name: x\n"
    after = fix(text, set_value(("sel", 0, "cel", "expression"), "a &&\nc\n"))
    assert after == "sel:\n  - cel:\n      expression: |\n        a &&\n        c\n    name: x\n"
    moved = fix(text, set_value(("sel", 0, "cel"), {"expression": "a &&\nc"}))
    assert "  - cel:\n      expression: |-\n        a &&\n        c\n    name: x\n" in moved


@pytest.mark.parametrize("indented", [False, True])
def test_a_value_read_from_the_manifest_is_written_as_plain_data(indented):
    """A fix that moves a field carries the loader's positioned YMap/YSeq, which the safe
    dumpers refused as unknown types (an internal error of `fix`)."""
    from draguard.sources.yamlpos import parse_stream

    text = "spec:\n  source:\n    name: [1, {a: 2}]\n" if not indented else "spec:\n  source:\n    name:\n      - 1\n"
    moved = parse_stream(text)[0][0].data["spec"]["source"]["name"]
    after = fix(text, set_value(("spec", "name"), moved), set_value(("spec", "block"), {"k": moved}))
    assert data(after)["spec"]["name"] == data(text)["spec"]["source"]["name"]
    assert data(after)["spec"]["block"] == {"k": data(text)["spec"]["source"]["name"]}


@pytest.mark.parametrize("edit, fixed", [
    (set_value(("spec", "replicas"), 3), "spec:\n  replicas: 3\n  args: [a, b]\n  env: {x: 1}\n"),
    (set_value(("spec", "args"), ["c"]), "spec:\n  replicas: 1\n  args:\n  - c\n  env: {x: 1}\n"),
    (set_value(("spec", "env", "x"), [2]), "spec:\n  replicas: 1\n  args: [a, b]\n  env: {x: [2]}\n"),
    (remove(("spec", "args", 0)), "spec:\n  replicas: 1\n  args: [b]\n  env: {x: 1}\n"),
])
def test_an_entry_is_replaced_from_its_nodes_marks(monkeypatch, edit, fixed):
    """A replaced or removed entry's place is read from its nodes' marks, not from spans.Entry's
    spans (a Span and two Points made of both ends of a node, for one index)."""
    from draguard.sources.spans import Entry

    def spans(_):
        raise AssertionError("an entry's spans were made")
    monkeypatch.setattr(Entry, "key", property(spans))
    monkeypatch.setattr(Entry, "value", property(spans))
    assert apply_fix("spec:\n  replicas: 1\n  args: [a, b]\n  env: {x: 1}\n", 0, (edit,))[0] == fixed
