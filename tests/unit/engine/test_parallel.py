"""`lint --jobs N` judges the objects in N forked processes and reports exactly what one
process reports: the corpus (and the examples) give byte-identical reports in every format,
whatever the number of parts; a suppression on an object judged in another part still holds."""

from __future__ import annotations

import os

import pytest

from draguard.core.finding import Finding, Severity
from draguard.core.location import Location
from draguard.engine import parallel
from draguard.model.manifest import Manifest
from support.paths import CORPUS, EXAMPLES


@pytest.fixture
def parts(monkeypatch):
    """Every run split however small (the corpus is a few hundred objects), counting splits."""
    monkeypatch.setattr(parallel, "MIN_PER_JOB", 1)
    splits = []
    judged = parallel._judged_in_parts

    def counted(loaded, config, manifests, count, advance):
        splits.append(count)
        return judged(loaded, config, manifests, count, advance)

    monkeypatch.setattr(parallel, "_judged_in_parts", counted)
    return splits


@pytest.mark.parametrize("fmt,jobs", [("text", 2), ("json", 3), ("sarif", 7)])
def test_the_corpus_reads_the_same_in_parts(cli, parts, fmt, jobs):
    one = cli("lint", "--no-config", "--jobs", "1", "-f", fmt, CORPUS, EXAMPLES)
    assert not parts and one.code == 1 and one.out
    many = cli("lint", "--no-config", "--jobs", str(jobs), "-f", fmt, CORPUS, EXAMPLES)
    assert parts == [jobs]
    assert (many.code, many.out, many.err) == (one.code, one.out, one.err)


def test_suppressions_in_one_part_hold_for_findings_from_another():
    budget = Manifest.from_data({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                 "metadata": {"name": "b", "namespace": "n", "annotations": {
                                     "ignore.draguard.io/rollout-pdb": "agreed with the platform team"}}})
    other = Manifest.from_data({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}})
    on_budget = Finding("rollout-pdb", "rollout", Severity.WARNING, "m", Location("f"), budget.ref)
    on_other = Finding("rollout-pdb", "rollout", Severity.WARNING, "m", Location("f"), other.ref)
    kept, suppressed = parallel._suppressed_across_parts([on_budget, on_other], [], [budget, other])
    assert kept == [on_other] and suppressed == [on_budget]
    assert on_budget.suppressed_by == "agreed with the platform team"


def test_small_runs_stay_in_one_process(cli, monkeypatch):
    monkeypatch.setattr(parallel, "_judged_in_parts", lambda *a: pytest.fail("split a small run"))
    assert cli("lint", "--no-config", "--jobs", "4", EXAMPLES).code == 1


@pytest.mark.parametrize("jobs", ["0", "-2", "many"])
def test_jobs_must_be_a_positive_number(cli, jobs):
    result = cli("lint", "--no-config", "--jobs", jobs, EXAMPLES)
    assert result.code == 2 and "--jobs" in result.err


def test_a_worker_that_dies_is_an_error_not_a_hang(cli, parts, monkeypatch):
    parent, judge = os.getpid(), parallel.lint_loaded

    def dying(*args, **kwargs):
        if os.getpid() != parent:
            os._exit(9)  # as the kernel's OOM killer would end it
        return judge(*args, **kwargs)

    monkeypatch.setattr(parallel, "lint_loaded", dying)
    result = cli("lint", "--no-config", "--jobs", "2", CORPUS)
    assert result.code == 2 and "ended without answering" in result.err and "--jobs 1" in result.err
