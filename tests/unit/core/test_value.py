"""Records written by hand behave as the dataclasses they replaced: compared and shown by their
fields, hashed (immutable) or not (mutable), pickled for `--jobs` workers, and copied with a
field changed by `replace` as `dataclasses.replace` copies a dataclass."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from draguard.core.fixes import Edit, Op
from draguard.core.location import Location
from draguard.core.value import replace
from draguard.dra.funnel import RequestExplanation, Stage
from draguard.engine.result import LintResult
from draguard.model.claims import ClaimIndex


@dataclasses.dataclass(frozen=True)
class FrozenLocation:
    file: str
    line: int | None = None
    column: int | None = None
    path: tuple | None = None
    document: int | None = None


def test_an_immutable_record_is_the_frozen_dataclass_it_replaced():
    here = Location("a.yaml", 3, 5, ("spec", 0), 1)
    twin = FrozenLocation("a.yaml", 3, 5, ("spec", 0), 1)
    assert repr(here) == repr(twin).replace("FrozenLocation", "Location")
    same = Location("a.yaml", 3, 5, ("spec", 0), 1)
    assert here == same and hash(here) == hash(same)
    assert here != Location("a.yaml", 3, 6, ("spec", 0), 1)
    assert here != twin  # another class, as two dataclasses are
    assert pickle.loads(pickle.dumps(here)) == here


def test_replace_changes_the_fields_named_and_keeps_the_others():
    here = Location("a.yaml", 3, 5, ("spec", 0), 1)
    moved = replace(here, path=("metadata",))
    assert moved == Location("a.yaml", 3, 5, ("metadata",), 1) and here.path == ("spec", 0)
    assert replace(Edit(Op.SET, ("a",), {"b": 1}), path=("c",)) == Edit(Op.SET, ("c",), {"b": 1})
    with pytest.raises(TypeError, match="no field 'lines'"):
        replace(here, lines=4)


def test_a_mutable_record_compares_by_its_fields_and_is_no_key():
    stage = Stage("in slices", 4)
    first = RequestExplanation("gpu", "1 device", [stage], emptied_at=stage)
    second = RequestExplanation("gpu", "1 device", [Stage("in slices", 4)], emptied_at=Stage("in slices", 4))
    assert first == second and first != RequestExplanation("gpu", "2 devices")
    with pytest.raises(TypeError):
        hash(first)
    assert repr(first).startswith("RequestExplanation(request='gpu', wanted='1 device', stages=[Stage(")
    renamed = first.named("other")
    assert (renamed.request, renamed.stages, first.request) == ("other", first.stages, "gpu")
    assert pickle.loads(pickle.dumps(first)) == first
    assert RequestExplanation("a", "b").stages is not RequestExplanation("a", "b").stages  # each its own list
    assert LintResult([], [], None).sources == [] and LintResult([], [], None) == LintResult([], [], None, 0, [], [])


def test_a_field_kept_out_of_the_repr_is_still_compared():
    recorded = ClaimIndex(read=print)
    assert "read" not in repr(recorded) and recorded != ClaimIndex()


def test_a_record_with_views_keeps_them_apart_from_its_fields():
    """model.pods' sites: views computed once (core.cached) in the `__dict__`, fields compared,
    shown, pickled and replaced as a Record's."""
    from draguard.model.pods import ContainerSite

    site = ContainerSite({"name": "c"}, init=True)
    assert site.path == () and "path" in vars(site)  # a view, kept
    assert site == ContainerSite({"name": "c"}, init=True) and site != ContainerSite({"name": "c"})
    assert repr(site) == "ContainerSite(container={'name': 'c'}, resources_key='resources', init=True, gpu_aliases=())"
    assert pickle.loads(pickle.dumps(site)) == site
    assert replace(site, init=False) == ContainerSite({"name": "c"})


def test_a_finding_is_compared_and_shown_without_where_it_was_judged():
    from draguard.core.finding import Finding, Severity

    finding = Finding("r", "c", Severity.ERROR, "m", Location("a.yaml", 1, 1), judged=object())
    assert finding == Finding("r", "c", Severity.ERROR, "m", Location("a.yaml", 1, 1))
    assert "judged" not in repr(finding) and "site" not in repr(finding)
    assert replace(finding, message="n").message == "n"
