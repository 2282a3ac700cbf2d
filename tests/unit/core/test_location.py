import pytest

from draguard.core.location import format_path, json_pointer, parse_path

PATHS = [
    ((), ""),
    (("spec",), "spec"),
    (("spec", "template", "spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"),
     'spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]'),
    (("items", 3, "metadata", "annotations", "ignore.draguard.io/x"),
     'items[3].metadata.annotations["ignore.draguard.io/x"]'),
    ((0, "a b", 'quo"te', "ünï", "_x1"), '[0]["a b"]["quo\\"te"]["ünï"]._x1'),
]


@pytest.mark.parametrize("path, text", PATHS)
def test_paths_format_and_parse_back(path, text):
    assert format_path(path) == text
    assert parse_path(text) == path


@pytest.mark.parametrize("text", ["a..b", ".a", "a[x]", "a[", 'a["b"', "a b"])
def test_malformed_paths_are_refused(text):
    with pytest.raises(ValueError):
        parse_path(text)


def test_json_pointer_escapes_slash_and_tilde():
    assert json_pointer(("spec", "limits", "nvidia.com/gpu", "a~b", 0)) == "/spec/limits/nvidia.com~1gpu/a~0b/0"
    assert json_pointer(()) == ""


def test_a_keys_text_is_made_once_for_every_path_that_holds_it(monkeypatch):
    from draguard.core import location

    made = []
    real = location._key_text
    monkeypatch.setattr(location, "_KEY_TEXTS", {})
    monkeypatch.setattr(location, "_key_text", lambda key, kept=True: made.append(key) or real(key, kept))
    for _ in range(3):
        assert format_path(("spec", "containers", 0, "nvidia.com/gpu")) == 'spec.containers[0]["nvidia.com/gpu"]'
        assert format_path(("metadata", "spec")) == "metadata.spec"
    assert sorted(made) == ["containers", "metadata", "nvidia.com/gpu", "spec"]


def test_keys_of_other_types_are_written_as_themselves_after_equal_ones():
    class Key(str):
        pass

    assert format_path(("a", 1, "b")) == "a[1].b"
    assert format_path(("a", True, "b")) == "a[True].b"  # True == 1: never taken for it
    assert format_path((Key("a b"), Key("c"))) == '["a b"].c'
    with pytest.raises(TypeError):
        format_path(("a", 1.5))  # as before: no text for a float key


def test_the_key_texts_held_are_bounded(monkeypatch):
    from draguard.core import location

    monkeypatch.setattr(location, "_KEY_TEXTS", {})
    monkeypatch.setattr(location, "_KEY_TEXTS_HELD", 3)
    for n in range(10):
        assert format_path((f"k{n}",)) == f"k{n}"
        assert len(location._KEY_TEXTS) <= 3
