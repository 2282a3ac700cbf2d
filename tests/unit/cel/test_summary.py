"""cel.summary: a selector's compile facts are the compiled selector's own, whether computed
or read back from the per-user cache; another expression, another environment switch,
another draguard version or an edited engine module is a miss, and a damaged entry is
computed again."""

from __future__ import annotations

import pytest

from draguard.cel import summary
from draguard.cel.env import compile_selector
from draguard.core import usercache

EXPRESSIONS = [
    "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'",  # compiles; compares a profile
    "device.driver == 'gpu.nvidia.com' && has(device.attributes['gpu.nvidia.com'].uuid)",  # pins, guards
    "device.attributes['gpu.nvidia.com'].memory >= 40Gi",  # does not compile: a suggestion
    "[device].size() == 1",  # device as a value: not checked (unsupported)
    "device.attributes[device.driver].exists(k, k == 'x')",  # reads everything of the driver's domain
    "device.allowMultipleAllocations",  # known only with DRAConsumableCapacity's switch
    # too complex: a quantity compared with != is unbounded (cel.cost)
    "device.driver == 'x' && quantity('1') != quantity('2')",
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DRAGUARD_CACHE_DIR", str(tmp_path / "cache"))
    summary._summary.cache_clear()
    yield tmp_path / "cache"
    summary._summary.cache_clear()


@pytest.fixture
def builds(monkeypatch):
    """The expressions compiled for a summary (misses), in order."""
    calls: list[str] = []
    facts = summary._facts

    def counted(expression, *switches):
        calls.append(expression)
        return facts(expression, *switches)

    monkeypatch.setattr(summary, "_facts", counted)
    return calls


def facts_of(found) -> tuple:
    error = found.error
    return (None if error is None else (error.message, error.offset, error.suggestion, error.unsupported),
            found.max_cost if error is None else 0, found.costliest if error is None else 0, found.too_complex,
            found.references.items, found.references.everything, found.references.driver_domains,
            tuple(sorted(found.guarded)), tuple(sorted((k, tuple(sorted(v))) for k, v in found.compared.items())))


@pytest.mark.parametrize("expression", EXPRESSIONS)
@pytest.mark.parametrize("switches", [(True, True), (False, True), (True, False)])
def test_computed_and_read_back_are_the_compiled_selectors_facts(cache, builds, expression, switches):
    compiled = facts_of(compile_selector(expression, *switches))
    assert facts_of(summary.summarize(expression, *switches)) == compiled
    summary._summary.cache_clear()  # a new process: read from the file
    assert facts_of(summary.summarize(expression, *switches)) == compiled
    assert builds == [expression]


def test_the_facts_differ_where_the_expressions_do(cache):
    """Not one answer for all: the cases above are told apart."""
    answers = {facts_of(summary.summarize(e)) for e in EXPRESSIONS}
    assert len(answers) == len(EXPRESSIONS)
    assert summary.summarize(EXPRESSIONS[6]).too_complex and not summary.summarize(EXPRESSIONS[0]).too_complex
    assert summary.summarize(EXPRESSIONS[5], False).error is not None
    assert summary.summarize(EXPRESSIONS[5], True).error is None


def test_another_expression_or_switch_is_a_miss(cache, builds):
    summary.summarize(EXPRESSIONS[0])
    summary.summarize(EXPRESSIONS[0] + " ")
    summary.summarize(EXPRESSIONS[0], False)
    summary.summarize(EXPRESSIONS[0], True, False)
    summary._summary.cache_clear()
    summary.summarize(EXPRESSIONS[0])  # each of those four is stored apart
    assert builds == [EXPRESSIONS[0], EXPRESSIONS[0] + " ", EXPRESSIONS[0], EXPRESSIONS[0]]


def test_another_draguard_version_is_a_miss(cache, builds, monkeypatch):
    summary.summarize(EXPRESSIONS[0])
    summary._summary.cache_clear()
    monkeypatch.setattr(usercache, "__version__", "0.0.0-other")
    summary.summarize(EXPRESSIONS[0])
    assert len(builds) == 2


def test_an_edited_engine_module_is_a_miss(cache, builds, tmp_path, monkeypatch):
    summary.summarize(EXPRESSIONS[0])
    summary._summary.cache_clear()
    summary.engine_stamp.cache_clear()
    real = summary.engine_stamp()
    monkeypatch.setattr(summary, "engine_stamp", lambda: real.replace(":", ":1", 1))  # one module's size
    summary.summarize(EXPRESSIONS[0])
    assert len(builds) == 2


def test_the_engine_stamp_names_the_cel_modules_and_cel_expr_python():
    summary.engine_stamp.cache_clear()
    stamp = summary.engine_stamp()
    assert "draguard/cel/env.py:" in stamp and "draguard/core/quantity.py:" in stamp
    assert "cel_expr_python" in stamp and "google/protobuf/__init__.py:" in stamp


def test_a_damaged_entry_is_computed_again(cache, builds):
    summary.summarize(EXPRESSIONS[2])
    [entry] = (cache / f"v{usercache.__version__}" / "cel").iterdir()
    entry.write_text(entry.read_text().replace('"error":[', '"error":7,"x":['))
    summary._summary.cache_clear()
    assert summary.summarize(EXPRESSIONS[2]).error is not None
    assert len(builds) == 2
