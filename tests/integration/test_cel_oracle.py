"""draguard's CEL against upstream's DRA CEL compiler (the allocator oracle's selector mode):
generated selectors from every library, derived attributes' values, the regressions kept as data, and the gaps still
open, each expected to differ. A verdict is a compile error (at upstream's column when it
gives one) or, per device of celgen.DEVICES, match / no match / runtime error; and every
selector both sides compile has the cost upstream estimates for it (CompilationResult.MaxCost,
what the API server compares with its limit). `--selectors N` runs more generated selectors."""

import pytest

from draguard.cel.env import compile_selector
from support import celgen
from support.cel_regressions import REGRESSIONS
from support.oracle import run_oracle


def disagreements(oracle, expressions, consumable_capacity=None, list_type_attributes=False):
    run = celgen.selector_run(expressions, consumable_capacity=consumable_capacity,
                              list_type_attributes=list_type_attributes)
    verdicts = run_oracle(oracle, [run])[0]["cel"]
    found = []
    for expression, verdict in zip(expressions, verdicts, strict=True):
        theirs = celgen.upstream_verdict(verdict)
        ours = celgen.draguard_verdict(expression, consumable_capacity is not False,
                                       consumable_capacity is None or list_type_attributes)
        if not celgen.agree(ours, theirs):
            found.append((expression, ours, theirs, verdict.get("compileError", "")[:200]))
    return found


def test_generated_selectors_agree_with_upstream(oracle, request):
    count = request.config.getoption("--selectors")
    expressions = celgen.expressions(0, count)
    found = disagreements(oracle, expressions)
    compile_errors = sum(1 for e in expressions if celgen.draguard_verdict(e)[0] == "compile")
    print(f"\n{count} generated selectors ({compile_errors} compile errors); {len(found)} disagreements")
    assert not found, found[:5]
    assert 0 < compile_errors < count, "the generator must produce valid and invalid selectors"


def test_generated_selectors_cost_what_upstream_estimates(oracle, request):
    expressions = celgen.expressions(0, request.config.getoption("--selectors")) + list(REGRESSIONS.values())
    verdicts = run_oracle(oracle, [celgen.selector_run(expressions)])[0]["cel"]
    compared, found, over = 0, [], 0
    for expression, verdict in zip(expressions, verdicts, strict=True):
        compiled = compile_selector(expression)
        if verdict.get("compileError") or compiled.error:
            continue
        compared += 1
        over += compiled.too_complex
        if compiled.max_cost != verdict["maxCost"]:
            found.append((expression, compiled.max_cost, verdict["maxCost"]))
    print(f"\n{compared} selectors compiled by both; {over} over the API server's limit; {len(found)} costs differ")
    assert compared > len(expressions) // 2 and over > 0
    assert not found, found[:5]


def test_derived_attribute_values_agree_with_upstream(oracle, request):
    """Derived attributes (DRADerivedAttributes) compiled and evaluated on each device as the
    experimental allocator does (GetOrCompileDerivedAttribute, EvaluateDerivedAttribute): the
    output types it refuses, the attribute each value becomes (lists, empty ones, versions
    with build metadata), and the errors."""
    expressions = celgen.derived_expressions(0, request.config.getoption("--selectors"))
    verdicts = run_oracle(oracle, [celgen.derived_run(expressions)])[0]["cel"]
    theirs = [celgen.upstream_derived(v) for v in verdicts]
    found = [(e, ours, t) for e, t in zip(expressions, theirs, strict=True)
             if (ours := celgen.draguard_derived(e)) != t]
    kinds = {kind: sum(1 for t in theirs if t[0] == kind) for kind in ("compile", "eval")}
    print(f"\n{len(expressions)} derived attribute expressions {kinds}; {len(found)} disagreements")
    assert not found, found[:5]
    assert all(kinds.values())


@pytest.mark.parametrize("consumable_capacity", [True, False])
def test_new_objects_compile_as_the_api_server_does(oracle, consumable_capacity):
    """The API server's environment for new objects declares device.allowMultipleAllocations
    only while DRAConsumableCapacity is on; cel-invalid follows the target's gate."""
    expressions = celgen.expressions(2, 300, celgen.device_fields)
    assert not disagreements(oracle, expressions, consumable_capacity)


@pytest.mark.parametrize("list_type_attributes", [True, False])
def test_includes_compiles_for_new_objects_only_with_its_gate(oracle, list_type_attributes):
    """The lists library's `includes` is in the scheduler's environment (1.37) but in the API
    server's for new objects only with DRAListTypeAttributes; cel-invalid follows the gate."""
    expressions = celgen.expressions(3, 200, celgen._includes)
    assert not disagreements(oracle, expressions, True, list_type_attributes)


def test_regressions_agree_with_upstream(oracle):
    assert not disagreements(oracle, list(REGRESSIONS.values()))


@pytest.mark.parametrize("gap", sorted(celgen.GAPS))
def test_known_gaps_still_differ(oracle, gap):
    """Each gap's reason is in its generator's docstring; when one closes, move its
    productions into the agreed families."""
    found = disagreements(oracle, celgen.expressions(1, 40, celgen.GAPS[gap]))
    assert found, f"{gap} agrees with upstream now: move it into the agreed families"


def test_selectors_near_the_limits_agree_with_upstream(oracle):
    """Nesting just under, at and over cel-go's 250 in every shape that nests (its listener's
    and its visitor's count), and estimated cost on each side of the API server's 1,000,000:
    refused (a compile error, or an estimate over the limit) exactly when upstream refuses,
    with upstream's message for nesting. Nested 33 to 250 deep, draguard's engine does not
    judge a selector (cel-cpp nests 32 deep) and says so: that is not a refusal."""
    from draguard.cel.env import MAX_COST

    expressions = {name: e for name, e in celgen.near_limits().items() if not name.startswith("length")}
    verdicts = run_oracle(oracle, [celgen.selector_run(list(expressions.values()))])[0]["cel"]
    found, refused = [], 0
    for (name, expression), verdict in zip(expressions.items(), verdicts, strict=True):
        compiled = compile_selector(expression)
        ours = bool(compiled.error and not compiled.error.unsupported) or compiled.too_complex
        theirs = bool(verdict.get("compileError")) or verdict.get("maxCost", 0) > MAX_COST
        refused += theirs
        worded = not (compiled.error and ours) or compiled.error.message in verdict.get("compileError", "")
        if ours != theirs or not worded:
            found.append((name, compiled.error and compiled.error.message, verdict.get("compileError", "")[:120],
                          compiled.max_cost, verdict.get("maxCost")))
    assert not found, found[:5]
    assert 0 < refused < len(expressions)
