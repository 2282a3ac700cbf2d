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
