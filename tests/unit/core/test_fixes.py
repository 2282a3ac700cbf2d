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
