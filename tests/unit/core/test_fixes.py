import pytest

from draguard.core.fixes import Applicability, EditError, Fix, add_document, append, apply_edits, remove, set_value

DOC = {"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "hostIPC": True}}


def test_edits_apply_to_a_copy_and_create_missing_parents():
    [after] = apply_edits(DOC, [set_value(("spec", "strategy", "rollingUpdate", "maxSurge"), 0),
                                remove(("spec", "hostIPC"))])
    assert after["spec"]["strategy"] == {"rollingUpdate": {"maxSurge": 0}} and "hostIPC" not in after["spec"]
    assert DOC["spec"]["hostIPC"] is True  # the original is untouched


def test_every_path_names_the_document_as_it_was_before_the_fix():
    [after] = apply_edits(DOC, [remove(("spec", "containers", 0)), remove(("spec", "containers", 2)),
                                set_value(("spec", "containers", 1, "image"), "x"),
                                append(("spec", "containers"), {"name": "d"})])
    assert after["spec"]["containers"] == [{"name": "b", "image": "x"}, {"name": "d"}]


def test_added_documents_follow_the_edited_one():
    result = apply_edits(DOC, [add_document({"kind": "PodDisruptionBudget"})])
    assert result[1] == {"kind": "PodDisruptionBudget"} and result[0] == DOC


@pytest.mark.parametrize("edit", [remove(("spec", "nothing")), set_value(("spec", "containers", 9, "x"), 1),
                                  append(("spec", "hostIPC"), 1), set_value((), 1)])
def test_edits_that_do_not_resolve_are_errors(edit):
    with pytest.raises(EditError):
        apply_edits(DOC, [edit])


def test_fix_as_json_names_paths_as_text():
    fix = Fix("t", Applicability.SAFE, (set_value(("a", 0, "b/c"), 1), remove(("x",)), add_document({"k": 1})))
    assert fix.as_json() == {"title": "t", "applicability": "safe", "edits": [
        {"op": "set", "path": 'a[0]["b/c"]', "value": 1}, {"op": "remove", "path": "x"},
        {"op": "add-document", "value": {"k": 1}}]}


def _template(i: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": f"t-{i}"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}]}}}}


def test_a_fix_holds_its_edits_packed_and_gives_them_back_as_they_were():
    """Every finding keeps its fix until the report: plain values are held as one bytes object
    (a whole template per migrated pod was half of what judging a stream of pods held)."""
    import pickle
    import tracemalloc

    edits = (add_document(_template(0)), append(("spec", "resourceClaims"), {"name": "gpu", "ratio": 0.5}),
             set_value(("spec", "x", 0), (1, [True, None])), remove(("spec", "containers", 0, "resources")))
    fix = Fix("claim it", Applicability.UNSAFE, edits)
    assert fix.edits == edits and [type(e.value) for e in fix.edits] == [type(e.value) for e in edits]
    assert fix.edits[2].value == (1, [True, None]) and type(fix.edits[2].value[1][0]) is bool
    assert pickle.loads(pickle.dumps(fix)) == fix and fix == Fix("claim it", Applicability.UNSAFE, list(edits))
    with pytest.raises(AttributeError):
        fix.title = "changed"  # type: ignore[misc]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = [Fix(f"claim {i}", Applicability.UNSAFE, (add_document(_template(i)),)) for i in range(1000)]
        per_fix = (tracemalloc.get_traced_memory()[0] - before) / len(held)
    finally:
        tracemalloc.stop()
    assert per_fix < 700, per_fix  # about 450 bytes; as Edit objects with their dicts, 1,700


def test_a_fix_keeps_values_marshal_cannot_hold_as_given():
    from draguard.sources.yamlpos import parse_stream

    [document], _ = parse_stream("a:\n  b: 1\n")
    node = document.data["a"]
    fix = Fix("move it", Applicability.SAFE, (set_value(("c",), node),))
    assert fix.edits[0].value is node and fix.edits[0].value.key_mark("b") == (2, 3)


def test_a_fix_held_as_plain_data_is_written_without_making_its_edits(monkeypatch):
    from draguard.core import fixes as module

    fix = Fix("migrate", Applicability.UNSAFE, [add_document({"kind": "ResourceClaimTemplate"}),
                                                 set_value(("spec", "x"), [1]), remove(("a", 0)),
                                                 append(("spec", "claims"), {"name": "gpu"})])
    expected = {"title": "migrate", "applicability": "unsafe", "edits": [e.as_json() for e in fix.edits]}
    monkeypatch.setattr(module, "Edit", None)  # made from the held data, they would fail
    assert fix.as_json() == expected
