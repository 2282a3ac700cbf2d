"""sources.reread: a text past Limits.tree_bytes holds no trees; each object is parsed again
from the text when read, and must be exactly what the load parsed (data, positions, paths)."""

import copy
import json
import pickle

import pytest

from draguard.core.config import Config
from draguard.engine.lint import LINT_LIMITS, Reading, lint_paths
from draguard.model.manifest import Manifest
from draguard.model.objectset import ObjectSet
from draguard.report import chunk_renderer
from draguard.sources.loader import Entry, Loaded, Source, load_text
from draguard.sources.yamlpos import YMap, YSeq, Limits

from support.paths import ROOT

SHED = Limits(tree_bytes=0)  # every text is past it
KEPT = Limits(tree_bytes=1 << 30)

#: documents a stream may hold: comments, anchors and a merge key inside one document, a flow
#: mapping, a block scalar, `...`; a root whose tag or text is on the `---` line does not start a
#: line: it keeps its tree
STREAM = """# a comment before anything
apiVersion: v1
kind: ConfigMap
metadata: {name: flow, namespace: "a"}
data:
  script: |
    echo one
      two
---
base: &base
  image: x
  args: ["--a", 2, 3.5, .nan, null, true]
apiVersion: v1
kind: Pod
metadata:
  name: merged
  labels:
    app: web   # trailing comment
spec:
  containers:
  - <<: *base
    name: c
    resources: {limits: {nvidia.com/gpu: 1}}
...
--- !!map
apiVersion: apps/v1
kind: Deployment
metadata:
  name: tagged
---
{"apiVersion": "v1", "kind": "Service",
 "metadata": {"name": "json-like"}}
--- {apiVersion: v1, kind: Secret, metadata: {name: on-the-marker}}
"""


def _loaded(text: str, limits: Limits) -> Loaded:
    loaded = Loaded()
    load_text(Source("s.yaml", text), loaded, limits)
    return loaded


def _positions(node, out: list) -> list:
    """Every collection's path and marks, depth first: what a finding is placed by."""
    if isinstance(node, (YMap, YSeq)):
        out.append((node.path, node.marks))
        for child in node.values() if isinstance(node, dict) else node:
            _positions(child, out)
    return out


def _holds_data(entry: Entry) -> bool:
    """Whether the entry holds its tree (its slot set), not asking __getattr__ to parse it."""
    try:
        Entry.data.__get__(entry)
    except AttributeError:
        return False
    return True


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_object_parsed_again_is_the_object_the_load_parsed(newline):
    text = STREAM.replace("\n", newline)
    kept, shed = _loaded(text, KEPT), _loaded(text, SHED)
    assert [p.message for p in shed.problems] == [p.message for p in kept.problems]
    assert len(shed.entries) == len(kept.entries) == 5
    again = [entry.reread is not None for entry in shed.entries]
    assert again == [True, True, False, True, False]
    for before, after in zip(kept.entries, shed.entries):
        assert (not _holds_data(after)) is (after.reread is not None)  # held by the text only
        assert after.data == before.data
        assert _positions(after.data, []) == _positions(before.data, [])


def test_a_document_that_is_not_parsed_alone_as_it_was_keeps_its_tree():
    """A root on the `---` line does not start a line; a `%TAG` directive changes what the tags
    of the documents after it mean: those keep their trees (and every one of a text with a
    directive)."""
    shed = _loaded("--- {apiVersion: v1, kind: Pod, metadata: {name: a}}\n", SHED)
    assert shed.entries[0].reread is None and shed.entries[0].data["kind"] == "Pod"
    directive = "%TAG !e! tag:example.com,2000:\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: !e!x a}\n"
    shed = _loaded(directive, SHED)
    assert [entry.reread for entry in shed.entries] == [None]
    assert shed.entries[0].data["metadata"]["name"] == "a"


def test_a_manifest_of_a_large_text_parses_its_tree_when_read_and_lets_it_go_when_judged():
    shed = _loaded(STREAM, SHED)
    manifests = [Manifest.from_entry(entry) for entry in shed.entries]
    pod = manifests[1]
    assert (pod.kind, pod.api_version, pod.group) == ("Pod", "v1", "")
    assert not _holds(pod, "data")  # its kind was read at load: asking parses nothing
    assert pod.name == "merged" and _holds(pod, "data")  # its metadata is in the tree: parsed
    first = pod.data
    container = first["spec"]["containers"][0]
    where = pod.location(container, "name")
    ObjectSet(manifests).done(pod)
    assert not _holds(pod, "data") and not _holds(pod, "_metadata")
    assert pod.location(container, "name") == where  # a part kept by another reader still places
    assert pod.data is not first and pod.data == first
    assert pod.location(pod.data["spec"]["containers"][0], "name") == where


def test_a_manifest_that_let_its_tree_go_is_pickled_and_copied_without_it():
    """Pickled (a `lint --jobs` part's shipped objects) or copied, an object that let its tree
    go sends none and parses none: pickle reads every slot by getattr, which parsed the tree
    again (`__getattr__`) only to send it; the copy parses it when read."""
    manifests = [Manifest.from_entry(entry) for entry in _loaded(STREAM, SHED).entries]
    pod = manifests[1]
    assert pod.name == "merged"
    ObjectSet(manifests).done(pod)
    copies = [pickle.loads(pickle.dumps(pod, pickle.HIGHEST_PROTOCOL)), copy.copy(pod)]
    assert not any(_holds(each, "data") for each in (pod, *copies))
    for copied in copies:
        assert (copied.name, copied.ref, copied.is_live) == ("merged", pod.ref, False)
        assert copied.location(copied.data["spec"]["containers"][0], "name") == \
            pod.location(pod.data["spec"]["containers"][0], "name")


def test_only_a_reader_that_asks_sheds_trees():
    """Every text keeps its trees by default (draguard fix, audit's dumps and the inventories
    read every object and keep them); lint asks for it past 4 MiB (engine.lint.LINT_LIMITS)."""
    assert Limits().tree_bytes is None
    assert all(entry.reread is None for entry in _loaded(STREAM, Limits()).entries)
    assert LINT_LIMITS.tree_bytes == 4 * 1024 * 1024 and Reading().limits == LINT_LIMITS


def test_a_json_stream_that_yaml_cannot_read_is_read_as_json_when_shed_too():
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}{"apiVersion": "v1", "kind": "Pod",\n' \
           '"metadata": {"name": "b"}}\n'
    kept, shed = _loaded(text, KEPT), _loaded(text, SHED)
    assert [e.data["metadata"]["name"] for e in shed.entries] == ["a", "b"]
    assert [e.data for e in shed.entries] == [e.data for e in kept.entries]
    assert [p.message for p in shed.problems] == [p.message for p in kept.problems] == []
    assert len(shed.sources) == 1


@pytest.mark.parametrize("indent", [None, 2])
def test_a_list_item_holds_where_its_text_is_not_a_copy(indent):
    items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "labels": {"a": "b"}}} for i in range(3)]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=indent)
    kept, shed = _loaded(text, KEPT), _loaded(text, SHED)
    for before, after in zip(kept.entries, shed.entries):
        assert before.source.text == after.source.text == ""
        assert before.source.lines == after.source.lines
        assert before.source.lines[0].lstrip().startswith("{")
        assert after.data == before.data and _positions(after.data, []) == _positions(before.data, [])
    assert [e.reread is None for e in kept.entries] == [True] * 3
    assert [e.reread is not None for e in shed.entries] == [True] * 3


def _report(paths, limits: Limits) -> str:
    config = Config()
    result = lint_paths(paths, config, Reading(limits=limits))
    return "".join(chunk_renderer("json")(result, colour=False, show_suppressed=True, fail_on=None))


def test_the_corpus_judged_from_texts_parsed_again_gives_the_same_report():
    """Every object of the corpus and of every rule's fixtures parsed again when read and let
    go after its own rules: the same findings, at the same places, with the same fixes."""
    paths = [str(ROOT / "tests" / "support" / "data" / "corpus"), str(ROOT / "tests" / "rules")]
    assert _report(paths, SHED) == _report(paths, KEPT)


def _holds(manifest, name: str) -> bool:
    """Whether `manifest` holds its field `name` now, without reading it (a re-read object
    parses its tree when asked)."""
    try:
        type(manifest).__dict__[name].__get__(manifest)
    except AttributeError:
        return False
    return True
