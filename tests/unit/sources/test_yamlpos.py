import pytest

from draguard.sources.yamlpos import Limits, YMap, YSeq, mark_of, parse_stream


def test_positions_of_keys_values_and_items():
    docs, problems = parse_stream("a: 1\nlimits:\n  nvidia.com/gpu: 2\nlist:\n- x\n-   y\n")
    assert problems == []
    data = docs[0].data
    assert isinstance(data, YMap) and isinstance(data["list"], YSeq)
    assert data.key_mark("a") == (1, 1)
    assert data["limits"].key_mark("nvidia.com/gpu") == (3, 3)
    assert data["limits"].value_mark("nvidia.com/gpu") == (3, 19)
    assert data["list"].item_mark(1) == (6, 5)
    assert mark_of(data["limits"], "nvidia.com/gpu", value=True) == (3, 19)


def test_scalar_types_follow_yaml_1_1_like_kubernetes():
    docs, _ = parse_stream("i: 3\nf: 1.5\nb: yes\nn: ~\ns: '3'\nt: 2001-12-14\n")
    assert docs[0].data == {"i": 3, "f": 1.5, "b": True, "n": None, "s": "3", "t": "2001-12-14"}


def test_columns_count_characters_not_bytes():
    docs, _ = parse_stream("é€: 1\nb: [x, ü, z]\n")
    assert docs[0].data.value_mark("é€") == (1, 5)
    assert docs[0].data["b"].item_mark(2) == (2, 11)


def test_multi_document_indices_and_lines():
    docs, _ = parse_stream("a: 1\n---\nb: 2\n---\n# only a comment\n---\nc: 3\n")
    assert [d.index for d in docs] == [0, 1, 2, 3]  # the empty document keeps its place
    assert [d.data for d in docs] == [{"a": 1}, {"b": 2}, None, {"c": 3}]
    assert docs[3].start_line == 7


def test_syntax_error_keeps_earlier_documents_and_has_position():
    docs, problems = parse_stream("a: 1\n---\nb: [1, 2\nc: 3\n")
    assert docs[0].data == {"a": 1}
    assert len(problems) == 1 and problems[0].kind == "syntax"
    assert problems[0].line == 4


def test_duplicate_key_is_a_problem_at_the_second_key():
    docs, _ = parse_stream("metadata:\n  name: a\n  name: b\n")
    [problem] = docs[0].problems
    assert (problem.kind, problem.line, problem.column) == ("duplicate-key", 3, 3)
    assert problem.earlier == (2, 3)  # the loader cites it where the user reads it


def test_aliases_and_merge_keys():
    docs, _ = parse_stream("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\ncopy: *b\n")
    data = docs[0].data
    assert data["other"] == {"x": 1, "y": 3}
    assert data["copy"] == {"x": 1, "y": 2}
    # positions, kept in the keys' order (a list, not a second mapping): an explicit key's
    # own, a merged key's where its anchor wrote it
    assert data["other"].key_mark("y") == (4, 3) and data["other"].key_mark("x") == (1, 11)
    assert data["other"].value_mark("x") == (1, 14) and data.key_mark("copy") == (5, 1)


def test_a_repeated_key_keeps_its_place_and_points_at_its_last_value():
    docs, _ = parse_stream("a: 1\nb: 2\na: 3\nc: 4\n")
    data = docs[0].data
    assert list(data) == ["a", "b", "c"] and data["a"] == 3
    assert data.value_mark("a") == (3, 4) and data.key_mark("b") == (2, 1) and data.key_mark("c") == (4, 1)
    assert data.mark == (1, 1) and data.key_mark("absent") == (1, 1)


def test_alias_bomb_is_refused_quickly():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    docs, problems = parse_stream("\n".join(lines) + "\n")
    assert docs[0].data is None
    assert problems[0].kind == "limit" and "alias bomb" in problems[0].message


def test_deep_nesting_and_large_documents_are_refused():
    deep = "".join("  " * i + f"k{i}:\n" for i in range(30)) + "  " * 30 + "v: 1\n"
    _, problems = parse_stream(deep, Limits(max_depth=20))
    assert problems[0].kind == "limit" and "deeper than 20" in problems[0].message
    _, problems = parse_stream("a: " + "x" * 5000 + "\n", Limits(max_document_bytes=1000))
    assert problems[0].kind == "limit" and "larger than 1000 bytes" in problems[0].message
    docs, problems = parse_stream("[" * 2000 + "]" * 2000)
    assert problems and problems[0].kind in ("syntax", "limit")


def test_complex_keys_are_reported_not_raised():
    _, problems = parse_stream("apiVersion: {{ .Values.x }}\n")
    assert problems and problems[0].kind == "syntax"


def test_an_integer_past_pythons_digits_refuses_its_document_not_the_run():
    docs, problems = parse_stream("a: 1\n---\nb: " + "9" * 5000 + "\n")
    assert docs[0].data == {"a": 1} and docs[1].data is None
    assert (problems[0].kind, problems[0].line, problems[0].column) == ("syntax", 3, 4)
    assert "5000 characters" in problems[0].message


@pytest.mark.parametrize("tagged, named", [
    ("!!int", "!!int ''"), ("!!int abc", "!!int 'abc'"), ("!!int 0x", "!!int '0x'"),
    ("!!float ''", "!!float ''"), ("!!float x", "!!float 'x'"), ("!!bool maybe", "!!bool 'maybe'"),
    ("{x: !!int }", "!!int ''"),
])
def test_an_explicit_tag_on_a_text_not_of_its_form_refuses_its_document_at_the_scalar(tagged, named):
    """PyYAML's constructor raises a bare IndexError, ValueError or KeyError for these: they
    were an internal error that lost the whole run."""
    docs, problems = parse_stream("a: 1\n---\nb: " + tagged + "\n")
    assert docs[0].data == {"a": 1} and docs[1].data is None
    assert (problems[0].kind, problems[0].line) == ("syntax", 3)
    assert problems[0].message.startswith(f"{named} is not a YAML 1.1 ")
