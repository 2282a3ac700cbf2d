import io
import os
import shutil

import pytest

from draguard.core.errors import InputError
from draguard.sources import loader
from draguard.sources.discover import expand
from draguard.sources.loader import load_units

from support.load import manifests, where


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text) if isinstance(text, str) else path.write_bytes(text)
    return path


POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n  containers: [{{name: c, image: x}}]\n"


def test_folders_are_walked_with_include_and_exclude(tmp_path):
    write(tmp_path, "a.yaml", POD.format(name="a"))
    write(tmp_path, "deep/b.yml", POD.format(name="b"))
    write(tmp_path, "deep/c.json", '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}}')
    write(tmp_path, "notes.txt", "not yaml")
    write(tmp_path, ".hidden/d.yaml", POD.format(name="d"))
    write(tmp_path, "skip/e.yaml", POD.format(name="e"))
    units = expand([str(tmp_path)], exclude=("skip",))
    names = sorted(os.path.relpath(u.path, tmp_path) for u in units)
    assert names == ["a.yaml", "deep/b.yml", "deep/c.json"]
    only_json = expand([str(tmp_path)], include=("*.json",))
    assert [os.path.basename(u.path) for u in only_json] == ["c.json"]


def test_a_pipe_and_a_link_out_of_the_folder_are_said_not_read(tmp_path):
    """Reading a named pipe waited forever for a writer; a folder link was skipped silently.
    A link back into the walked folder is read under its own path, once."""
    import os

    inside = tmp_path / "walked"
    (inside / "sub").mkdir(parents=True)
    (inside / "sub" / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    os.mkfifo(inside / "pipe.yaml")
    os.mkfifo(inside / "pipe.txt")  # not a manifest name: not looked at
    (tmp_path / "elsewhere").mkdir()
    (inside / "out").symlink_to(tmp_path / "elsewhere")
    (inside / "again").symlink_to(inside / "sub")
    units = expand([str(inside)])
    assert [(u.kind, os.path.basename(u.path)) for u in units] == [("skipped", "out"), ("skipped", "pipe.yaml"),
                                                                   ("file", "a.yaml")]
    loaded = load_units(units)
    assert [p.rule for p in loaded.problems] == ["input-skipped", "input-skipped"]
    assert "not followed" in loaded.problems[0].message and "not a regular file" in loaded.problems[1].message
    assert len(loaded.entries) == 1


def test_a_link_to_a_pipe_is_said_and_a_broken_link_is_read(tmp_path):
    """The walk tells pipes from files by the folder's listing, not a stat a file: a link
    to a pipe is still said (reading it would wait forever), a broken link still read, and
    its error said."""
    import os

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "to-pipe.yaml").symlink_to(tmp_path / "pipe")
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    units = expand([str(tmp_path)])
    assert [(u.kind, os.path.basename(u.path)) for u in units] == [("file", "a.yaml"), ("file", "broken.yaml"),
                                                                   ("skipped", "to-pipe.yaml")]
    loaded = load_units(units)
    said = [(p.rule, os.path.basename(p.location.file)) for p in loaded.problems]
    assert said == [("yaml-syntax", "broken.yaml"), ("input-skipped", "to-pipe.yaml")]
    assert "No such file" in loaded.problems[0].message and "not a regular file" in loaded.problems[1].message


def test_patterns_match_the_path_under_the_folder_given_however_it_is_written(tmp_path, monkeypatch):
    """Paths made once a folder (absolute, and relative to the folder given) match as when
    each file's were made alone."""
    import os

    for name in ("a.yaml", "deep/b.json", "deep/er/c.json", "skip/d.yaml"):
        write(tmp_path, name, POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    for root in (".", "./", str(tmp_path), str(tmp_path) + "/"):
        units = expand([root], exclude=("deep/*.json", "skip"))
        assert sorted(os.path.relpath(u.path, tmp_path if os.path.isabs(u.path) else ".") for u in units) == [
            "a.yaml"], root  # fnmatch: `*` crosses `/`


def test_json_nested_past_the_stack_is_a_syntax_finding(tmp_path):
    """json raised RecursionError (an internal error); libyaml says where it gives up."""
    path = tmp_path / "deep.json"
    path.write_text('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}\n'
                    + "[" * 100_000 + "]" * 100_000 + "\n")
    loaded = load_units(expand([str(path)]))
    assert len(loaded.entries) == 1
    [problem] = loaded.problems
    assert problem.rule == "yaml-syntax" and "nesting depth" in problem.message and problem.location.line == 2


def test_missing_input_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        expand([str(tmp_path / "nope.yaml")])


def test_list_kinds_are_split_into_items(tmp_path):
    path = write(tmp_path, "list.yaml", "apiVersion: v1\nkind: List\nitems:\n"
                 "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: one}\n"
                 "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: two}\n")
    loaded = load_units(expand([str(path)]))
    assert [(m.name, m.item) for m in manifests(loaded)] == [("one", 0), ("two", 1)]
    location = manifests(loaded)[1].location()
    assert where(location) == (str(path), 7, 3) and location.path == ("items", 1) and location.document == 0


@pytest.mark.parametrize("anchored", [False, True])  # split on events, or parsed whole (an anchor)
def test_list_items_that_are_no_objects_are_noted_each(tmp_path, anchored):
    """kubectl reads a List item only with its apiVersion and kind; a null item is none either."""
    path = write(tmp_path, "list.yaml", "apiVersion: v1\nkind: List\nitems:\n- 5\n- {kind: Pod}\n- null\n"
                 f"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: {'&n one' if anchored else 'one'}}}\n")
    loaded = load_units(expand([str(path)]))
    assert [m.name for m in manifests(loaded)] == ["one"]
    assert [(p.rule, p.location.path, p.location.line) for p in loaded.problems] == \
        [(loader.NOT_AN_OBJECT, ("items", i), 4 + i) for i in range(3)]


def test_a_list_whose_items_are_no_list_is_noted_not_checked_as_an_object(tmp_path):
    path = write(tmp_path, "list.yaml", "apiVersion: v1\nkind: List\nitems: {a: 1}\n")
    loaded = load_units(expand([str(path)]))
    assert manifests(loaded) == []
    [problem] = loaded.problems
    assert problem.rule == loader.NOT_AN_OBJECT and "items is not a list" in problem.message
    assert (problem.location.line, problem.location.column) == (3, 8)


def test_concatenated_json_values_keep_their_positions(tmp_path):
    text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}\n' \
           '  {"apiVersion": "v1", "kind": "ConfigMap",\n   "metadata": {"name": "b"}}\n'
    path = write(tmp_path, "stream.json", text)
    loaded = load_units(expand([str(path)]))
    assert [m.name for m in manifests(loaded)] == ["a", "b"]
    b = manifests(loaded)[1]
    assert where(b.location(b.data, "metadata")) == (str(path), 3, 4)
    assert b.location(b.data, "metadata").document == 1
    assert loaded.problems == []


def test_stdin_is_read_and_named_dash():
    stdin = io.BytesIO(POD.format(name="from-stdin").encode())
    loaded = load_units(expand(["-"]), stdin=stdin)
    assert manifests(loaded)[0].name == "from-stdin"
    assert manifests(loaded)[0].location().file == "-"


@pytest.mark.parametrize("raw, expected, column", [
    (b"a: \xff\xfe\n", "not UTF-8", 4),
    (b"a: 1\x00\n", "NUL bytes", 5),
])
def test_binary_input_is_a_finding_with_position(tmp_path, raw, expected, column):
    path = write(tmp_path, "bad.yaml", raw)
    loaded = load_units(expand([str(path)]))
    [problem] = loaded.problems
    assert problem.rule == loader.YAML_SYNTAX and expected in problem.message
    assert (problem.location.line, problem.location.column) == (1, column)


def test_unrendered_templates_are_reported_not_parsed(tmp_path):
    path = write(tmp_path, "t.yaml", "# {{ in a comment is fine }}\napiVersion: {{ .Values.api }}\nkind: Pod\n")
    loaded = load_units(expand([str(path)]))
    assert loaded.entries == []
    [problem] = loaded.problems
    assert problem.rule == loader.TEMPLATE_UNRENDERED and where(problem.location)[1:] == (2, 13)


def test_template_text_inside_a_string_value_is_data(tmp_path):
    path = write(tmp_path, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: alerts}\n"
                 "data:\n  msg: '{{ $labels.instance }} is down'\n")
    loaded = load_units(expand([str(path)]))
    assert loaded.problems == [] and manifests(loaded)[0].name == "alerts"


def test_documents_without_kind_are_noted(tmp_path):
    path = write(tmp_path, "cfg.yaml", "version: v1\nsharing: {}\n")
    loaded = load_units(expand([str(path)]))
    assert [p.rule for p in loaded.problems] == [loader.NOT_AN_OBJECT]


def test_oversized_file_is_refused(tmp_path):
    from draguard.sources.yamlpos import Limits

    path = write(tmp_path, "big.yaml", "a: " + "x" * 200 + "\n")
    loaded = load_units(expand([str(path)]), Limits(max_file_bytes=100))
    assert [p.rule for p in loaded.problems] == [loader.INPUT_LIMIT]


def test_chart_without_helm_binary_is_skipped_with_a_finding(tmp_path, monkeypatch):
    chart = tmp_path / "chart"
    write(chart, "Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    write(chart, "templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}\n")
    write(tmp_path, "plain.yaml", POD.format(name="plain"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    units = expand([str(tmp_path)])
    assert [u.kind for u in units] == ["helm", "file"]
    loaded = load_units(units)
    assert [m.name for m in manifests(loaded)] == ["plain"]
    [problem] = loaded.problems
    assert problem.rule == loader.RENDER_SKIPPED and problem.location.file.endswith("chart/Chart.yaml")
    assert "helm not found" in problem.message


@pytest.mark.skipif(not (shutil.which("kustomize") or shutil.which("kubectl")), reason="needs kustomize or kubectl")
def test_kustomize_folders_are_rendered(tmp_path):
    write(tmp_path, "kustomization.yaml", "resources: [pod.yaml]\nnamePrefix: team-\n")
    write(tmp_path, "pod.yaml", POD.format(name="web"))
    loaded = load_units(expand([str(tmp_path)]))
    assert [m.name for m in manifests(loaded)] == ["team-web"]
    # kustomize's origin annotation leads back to the resource file
    assert where(manifests(loaded)[0].location()) == (f"{tmp_path}/pod.yaml", 1, 1)


@pytest.mark.skipif(not (shutil.which("kustomize") or shutil.which("kubectl")), reason="needs kustomize or kubectl")
def test_kustomize_failure_is_a_finding(tmp_path):
    write(tmp_path, "kustomization.yaml", "resources: [missing.yaml]\n")
    loaded = load_units(expand([str(tmp_path)]))
    assert [p.rule for p in loaded.problems] == [loader.RENDER_FAILED]


STREAM_WITH_A_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata: {name: before}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-templated
spec: {containers: [{{ include "containers" . }}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: alerts}
data: {summary: '{{ $labels.instance }} is down'}
---
apiVersion: v1
kind: Pod
metadata: {name: after}
"""


def test_one_template_document_skips_only_itself():
    loaded = load_units(expand(["-"]), stdin=io.BytesIO(STREAM_WITH_A_TEMPLATE.encode()))
    objects = manifests(loaded)
    assert [(m.name, m.document) for m in objects] == [("before", 0), ("alerts", 2), ("after", 3)]
    [problem] = loaded.problems
    assert problem.rule == loader.TEMPLATE_UNRENDERED and where(problem.location)[1:] == (8, 9)
    assert where(objects[2].location(objects[2].data, "metadata")) == ("-", 18, 1)


def test_a_broken_document_does_not_end_a_templated_stream():
    text = STREAM_WITH_A_TEMPLATE.replace("data: {summary:", "data: [summary:")
    loaded = load_units(expand(["-"]), stdin=io.BytesIO(text.encode()))
    assert [m.name for m in manifests(loaded)] == ["before", "after"]
    assert sorted(p.rule for p in loaded.problems) == [loader.TEMPLATE_UNRENDERED, loader.TEMPLATE_UNRENDERED]


def test_a_kustomize_folder_is_rendered_and_its_unused_files_are_linted(tmp_path):
    write(tmp_path, "app/kustomization.yaml", "resources: [deploy.yaml, base]\npatches: [{path: patch.yaml}]\n"
          "configMapGenerator: [{name: c, files: [conf=settings.yaml]}]\n")
    for name in ("app/deploy.yaml", "app/patch.yaml", "app/settings.yaml", "app/base/x.yaml", "app/extra.yaml",
                 "app/more/y.yaml", "app/overlay/z.yaml", "top.yaml"):
        write(tmp_path, name, POD.format(name="x"))
    write(tmp_path, "app/overlay/kustomization.yaml", "resources: [z.yaml]\n")
    units = expand([str(tmp_path)])
    assert sorted((u.kind, os.path.relpath(u.path, tmp_path)) for u in units) == [
        ("file", "app/extra.yaml"), ("file", "app/more/y.yaml"), ("file", "top.yaml"),
        ("kustomize", "app"), ("kustomize", "app/overlay")]


def test_a_patch_or_kustomization_named_alone_stands_for_its_build(tmp_path, monkeypatch):
    """pre-commit names changed files one by one: a strategic-merge patch judged alone lacked
    its selector and containers, and `fix` wrote whole objects into it (kustomize then
    refused the build). Named, or met in a walk below its kustomization, it is that build;
    a resource file stays a file."""
    write(tmp_path, "app/kustomization.yaml", "resources: [deploy.yaml]\npatchesStrategicMerge: [p/a.yaml]\n"
          "patches: [{path: p/b.yaml}]\npatchesJson6902: [{path: p/c.yaml}]\n")
    for name in ("app/deploy.yaml", "app/p/a.yaml", "app/p/b.yaml", "app/p/c.yaml", "app/p/own.yaml", "other.yaml"):
        write(tmp_path, name, POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    units = expand(["app/p/a.yaml", "app/deploy.yaml", "app/p/b.yaml", "other.yaml", "app/kustomization.yaml"])
    assert [(u.kind, u.display, u.through) for u in units] == [
        ("kustomize", "app", ("app/p/a.yaml", "app/p/b.yaml", "app/kustomization.yaml")),
        ("file", "app/deploy.yaml", ()), ("file", "other.yaml", ())]
    walked = expand(["app/p"])
    assert [(u.kind, u.display) for u in walked] == [("kustomize", "app"), ("file", "app/p/own.yaml")]
    assert walked[0].through == ("app/p/a.yaml", "app/p/b.yaml", "app/p/c.yaml")
    notes = [p for p in load_units(units[:1]).problems if p.rule == loader.JUDGED_IN_BUILD]
    assert [p.location.file for p in notes] == ["app/p/a.yaml", "app/p/b.yaml", "app/kustomization.yaml"]
    assert notes[0].message.startswith("a patch of the kustomization in app, which is no object alone")


def test_a_part_a_kustomization_names_only_in_a_comment_is_said_in_a_walk_and_checked_when_named(
        tmp_path, monkeypatch):
    """Scaffolds ship patches disabled (kubebuilder's `#- path: patches/cainjection_in_x.yaml`):
    a walk leaves such a file, as the build does, and says so (it drew schema-invalid, a
    patch judged as a whole object); named as an input it is checked. A commented-out
    resource is a whole object (an alternative applied by hand: KServe's samples): still
    linted, as is a file no comment names."""
    write(tmp_path, "app/kustomization.yaml", "resources:\n- deploy.yaml\n# one of these two, by hand:\n"
          "# - alternative.yaml\npatches:\n# [CERTMANAGER] uncomment to enable\n#- path: patches/cainjection.yaml\n"
          "#ENABLE_X - path: image_patch.yaml\n")
    for name in ("app/deploy.yaml", "app/patches/cainjection.yaml", "app/image_patch.yaml", "app/extra.yaml",
                 "app/alternative.yaml"):
        write(tmp_path, name, POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    walked = expand(["app"])
    assert [(u.kind, u.display) for u in walked] == [
        ("kustomize", "app"), ("file", "app/alternative.yaml"), ("file", "app/extra.yaml"),
        ("disabled", "app/image_patch.yaml"), ("disabled", "app/patches/cainjection.yaml")]
    assert walked[3].reason.startswith("named only in a commented-out line of app/kustomization.yaml")
    notes = [p for p in load_units(walked[3:]).problems if p.rule == loader.JUDGED_IN_BUILD]
    assert [p.location.file for p in notes] == ["app/image_patch.yaml", "app/patches/cainjection.yaml"]
    assert [u.kind for u in expand(["app/image_patch.yaml"])] == ["file"]


def test_a_chart_s_template_or_values_named_alone_stands_for_the_chart(tmp_path, monkeypatch):
    """A template is no manifest until rendered (it drew only template-unrendered): named, as
    pre-commit names changed files, a file inside a chart stands for the chart."""
    write(tmp_path, "chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")
    write(tmp_path, "chart/values.yaml", "replicas: 1\n")
    write(tmp_path, "chart/templates/deploy.yaml", "kind: {{ .Values.kind }}\n")
    write(tmp_path, "chart/charts/sub/Chart.yaml", "apiVersion: v2\nname: sub\nversion: 0.1.0\n")
    write(tmp_path, "chart/charts/sub/templates/x.yaml", "kind: {{ .Values.kind }}\n")
    write(tmp_path, "plain.yaml", POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    units = expand(["chart/templates/deploy.yaml", "plain.yaml", "chart/values.yaml", "chart/charts/sub/templates/x.yaml"])
    assert [(u.kind, u.display, u.through) for u in units] == [
        ("helm", "chart", ("chart/templates/deploy.yaml", "chart/values.yaml")), ("file", "plain.yaml", ()),
        ("helm", "chart/charts/sub", ("chart/charts/sub/templates/x.yaml",))]
    assert [(u.kind, u.display) for u in expand(["chart/templates"])] == [("helm", "chart")]


def test_a_kustomize_component_is_said_not_built(tmp_path, monkeypatch):
    """`kustomize build` refuses a Component alone: a walk built it and reported render-failed;
    its patch named alone was judged as an object. Both say where it is judged instead."""
    write(tmp_path, "comp/kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n"
          "patches: [{path: gpu.yaml}]\n")
    write(tmp_path, "comp/gpu.yaml", POD.format(name="x"))
    monkeypatch.chdir(tmp_path)
    for given in (["."], ["comp/gpu.yaml"]):
        units = expand(given)
        assert [(u.kind, os.path.normpath(u.display)) for u in units] == [("component", "comp")], given
        [note] = load_units(units).problems
        said_at = "comp/gpu.yaml" if given != ["."] else "comp/kustomization.yaml"
        assert note.rule == loader.JUDGED_IN_BUILD and os.path.normpath(note.location.file) == said_at
        assert note.message.startswith("a kustomize Component, which `kustomize build` refuses alone")


def test_a_file_is_read_in_a_buffer_of_its_own_size(tmp_path, monkeypatch):
    """A read asks for the file's size and one more, not the limit (32 MiB a file), with no
    buffered file object: the one read more says the file ends."""
    path = write(tmp_path, "pod.yaml", POD.format(name="web"))
    asked: list[int] = []
    read = os.read
    monkeypatch.setattr(loader.os, "read", lambda fd, size: asked.append(size) or read(fd, size))
    monkeypatch.setattr("builtins.open", None)  # no file object
    loaded = load_units(expand([str(path)]))
    assert [m.name for m in manifests(loaded)] == ["web"]
    assert asked == [path.stat().st_size + 1, loader._MORE]


def test_a_file_that_cannot_be_read_is_said_so(tmp_path):
    folder = tmp_path / "pod.yaml"
    folder.mkdir()
    loaded = loader.Loaded()
    assert loader._read(loader.Unit("file", str(folder), "pod.yaml"), loaded, loader.DEFAULT_LIMITS, None) is None
    assert [(p.message, p.location.file) for p in loaded.problems] == [("cannot read: Is a directory", "pod.yaml")]
    assert loaded.refused == ["pod.yaml"]


@pytest.mark.parametrize("said", [0, 10, 99])
def test_a_file_longer_than_it_says_is_read_to_the_limit(tmp_path, monkeypatch, said):
    """A file grown after its size was asked (or one that says 0: a pipe) is read whole up to
    the limit, and refused past it, as before."""
    body = POD.format(name="web")
    path = write(tmp_path, "pod.yaml", body)
    stat = os.fstat

    class Said:
        def __init__(self, real):
            self.real = real
            self.st_size = said

        def __getattr__(self, name):
            return getattr(self.real, name)

    monkeypatch.setattr(loader.os, "fstat", lambda fd: Said(stat(fd)))
    assert [m.name for m in manifests(load_units(expand([str(path)])))] == ["web"]
    from draguard.sources.yamlpos import Limits

    refused = load_units(expand([str(path)]), Limits(max_file_bytes=len(body) - 1))
    assert [p.rule for p in refused.problems] == [loader.INPUT_LIMIT]
