from fractions import Fraction

import pytest

from draguard.cel import rewrite
from draguard.cel.checked import checked_ast
from draguard.cel.env import (CelRuntimeError, CelUnsupported, MAX_EXPRESSION_LENGTH, _env, compile_selector,
                                 rewrite_device_fields, suggest)
from draguard.dra.devices import Attr, Device, device_from

NV = "gpu.nvidia.com"


def gpu(**attrs) -> Device:
    values = {"type": Attr("string", "gpu"), "productName": Attr("string", "NVIDIA H100 80GB HBM3"),
              "cudaComputeCapability": Attr("version", "9.0.0")}
    values.update(attrs)
    return Device("gpu-0", NV, "node-a", {NV: values}, {NV: {"memory": Fraction(80 * 2**30)}})


@pytest.mark.parametrize("expression, expected", [
    ("device.driver == 'gpu.nvidia.com'", True),
    ("device.attributes['gpu.nvidia.com'].type == 'gpu'", True),
    ('device.attributes["gpu.nvidia.com"].productName.lowerAscii().contains("h100")', True),
    ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", True),
    ("device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('80Gi'))", False),
    ("device.capacity['gpu.nvidia.com'].memory == quantity('81920Mi')", True),
    ("device.capacity['gpu.nvidia.com'].memory.asInteger() == 85899345920", True),
    ("quantity('1') == quantity('1000m') && quantity('1.5').isInteger() == false", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.major() == 9", True),
    ("semver('v1.2', true) == semver('1.2.0')", True),
    ("cel.bind(g, device.attributes['gpu.nvidia.com'], g.type == 'gpu' && g.productName.startsWith('NVIDIA'))", True),
    ("'a100-x'.find('a[0-9]+') == 'a100'", True),
    ("has(device.attributes['gpu.nvidia.com'].profile)", False),
    ("device.allowMultipleAllocations == false", True),
])
def test_upstream_environment(expression, expected):
    compiled = compile_selector(expression)
    assert compiled.error is None, compiled.error
    assert compiled.evaluate(gpu()) is expected


def test_unknown_domain_is_an_empty_map_so_missing_names_are_runtime_errors():
    compiled = compile_selector("device.attributes['other.example.com'].model == 'x'")
    with pytest.raises(CelRuntimeError, match="not found"):
        compiled.evaluate(gpu())
    assert compile_selector("device.attributes['other.example.com'].size() == 0").evaluate(gpu())


@pytest.mark.parametrize("expression, message, offset", [
    ("device.attributes['gpu.nvidia.com'].memory >= 40Gi", "Syntax error", 48),
    ("device.capacity['gpu.nvidia.com'].memory >= 40", "no matching overload", 41),
    ("device.driver", "must evaluate to bool", 0),
    ("device.drivr == 'x'", "undefined field", 6),
])
def test_compile_errors_with_offsets(expression, message, offset):
    error = compile_selector(expression).error
    assert error is not None and message in error.message and error.offset == offset


def test_suggestion_for_sizes_without_quantity():
    assert suggest("device.attributes['gpu.nvidia.com'].memory >= 40Gi") == \
        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    fixed = compile_selector(suggest("device.attributes['gpu.nvidia.com'].memory >= 40Gi"))
    assert fixed.error is None and fixed.evaluate(gpu())
    # the quotes the expression uses (a YAML scalar holding it then needs no new escapes)
    assert suggest('device.capacity["gpu.nvidia.com"].memory > 1Gi') == \
        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("1Gi")) > 0'


def test_length_limit():
    long = "device.driver == '" + "x" * MAX_EXPRESSION_LENGTH + "'"
    assert "limit" in compile_selector(long).error.message


def test_non_bool_dyn_result_is_a_runtime_error_not_a_crash():
    compiled = compile_selector("device.attributes['gpu.nvidia.com'].productName")
    assert compiled.error is None  # dyn: only known at run time, as upstream
    with pytest.raises(CelRuntimeError, match="must evaluate to bool"):
        compiled.evaluate(gpu())


def test_rewrite_keeps_strings_and_lengths():
    expression = "device.driver == 'device.driver' && device . attributes['x'].y"
    rewritten = rewrite_device_fields(expression)
    assert len(rewritten) == len(expression)
    assert rewritten.startswith("device_driver == 'device.driver'") and "device_attributes" in rewritten


def test_has_on_a_device_field_is_true_for_the_declared_fields():
    """Upstream's device always has its declared fields: has() of one is true (at a cost of 1);
    of an unknown one, or of allowMultipleAllocations without DRAConsumableCapacity (the API
    server's environment for new objects), it is an unknown field."""
    for field in ("driver", "attributes", "capacity", "allowMultipleAllocations"):
        compiled = compile_selector(f"has(device.{field})")
        assert compiled.error is None and compiled.evaluate(gpu()) is True and compiled.max_cost == 1
    assert compile_selector("has(device.nope)").error.message == "undefined field 'nope'"
    gated = compile_selector("has(device.allowMultipleAllocations)", allow_multiple_allocations=False)
    assert gated.error.message == "undefined field 'allowMultipleAllocations'"
    assert compile_selector("draguard_has").error.message == "undeclared reference to 'draguard_has'"


def test_results_are_memoized_by_the_values_read():
    compiled = compile_selector("device.attributes['gpu.nvidia.com'].type == 'gpu' && true")
    devices = [gpu(uuid=Attr("string", f"GPU-{i}")) for i in range(50)]
    assert all(compiled.evaluate(d) for d in devices)
    assert len(compiled._memo) == 1  # uuid is not read: one evaluation for 50 devices


@pytest.mark.parametrize("expression, device_a, device_b", [
    # `.size()` after a domain subscript reads the whole domain, not an attribute named "size"
    ("device.attributes['gpu.nvidia.com'].size() == 3", {}, {"extra": Attr("int", 1)}),
    ("device.attributes['gpu.nvidia.com'].exists(k, k == 'profile')", {}, {"profile": Attr("string", "1g.10gb")}),
    ("device.capacity['gpu.nvidia.com'].all(k, k == 'memory')", {}, {"cores": Fraction(1)}),
])
def test_member_calls_on_a_domain_read_the_whole_domain(expression, device_a, device_b):
    """Both orders of evaluation give each device its own answer (a memo keyed by a phantom
    attribute would hand the first device's answer to the second)."""
    def device(extra):
        d = gpu(**{k: v for k, v in extra.items() if isinstance(v, Attr)})
        d.capacity[NV].update({k: v for k, v in extra.items() if not isinstance(v, Attr)})
        return d

    compiled = compile_selector(expression)
    a, b = device(device_a), device(device_b)
    first = (compiled.evaluate(a), compiled.evaluate(b))
    compiled._memo.clear()
    assert (compiled.evaluate(a), compiled.evaluate(b)) == first  # evaluation order does not matter
    assert first[0] != first[1]


def test_results_are_never_keyed_by_object_identity():
    """An expression that reads the device opaquely is memoized by the device's content (a
    key built from id() would hand a dead device's answer to a new one at its address)."""
    compiled = compile_selector("device.attributes.exists(d, d == 'gpu.nvidia.com')")
    refs = compiled.references
    assert refs.everything
    assert gpu().memo_key(refs) == gpu().memo_key(refs)  # two objects, one content: one key
    other = Device("gpu-1", NV, "node-a", {"other.example.com": {"x": Attr("int", 1)}}, {})
    assert other.memo_key(refs) != gpu().memo_key(refs)
    assert compiled.evaluate(gpu()) is True and compiled.evaluate(other) is False


def test_an_evaluation_over_the_iteration_budget_is_draguards_gap_not_a_crash():
    """cel-cpp's iteration budget (10,000) ends this evaluation; upstream's runtime cost limit
    would not (its estimate, 125,551, bounds the actual cost), so draguard says it did not
    evaluate it: an error of its own engine, never a crash (it once escaped as a RuntimeError
    and crashed the rule) nor upstream's cost-limit error."""
    ten = "[1,2,3,4,5,6,7,8,9,10]"
    compiled = compile_selector(f"{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, a + b + c + d > 0))))")
    assert compiled.error is None and compiled.max_cost == 125_551
    with pytest.raises(CelUnsupported, match="upstream's would finish it"):
        compiled.evaluate(device_from({"name": "d"}, "gpu.example.com", "p"))


@pytest.mark.parametrize("expression, expected", [
    ("device.attributes['gpu.nvidia.com'].type.includes('gpu')", True),  # a scalar: Equal to the item
    ("['a', 'gpu'].includes(device.attributes['gpu.nvidia.com'].type)", True),
    ("[1, 2].includes(2.0)", True),  # cel-go's Equal across numeric types
    ("[quantity('1')].includes(quantity('1000m'))", True),
    ("1.includes('1')", False),
])
def test_the_lists_library_includes(expression, expected):
    assert compile_selector(expression).evaluate(gpu()) is expected


def test_includes_is_declared_for_new_objects_only_with_its_gate():
    """NewExpressions: IncludesOption only with DRAListTypeAttributes (1.36+), the lists
    library's version 1 only once the compatibility version reaches 1.37 (Kubernetes 1.38)."""
    expression = "device.attributes['gpu.nvidia.com'].type.includes('gpu')"
    assert compile_selector(expression, True, True).error is None
    error = compile_selector(expression, True, False).error
    assert error.message == "undeclared reference to 'includes'" and expression[error.offset:] == "('gpu')"  # as cel-go


@pytest.mark.parametrize("outer", ["int(dyn({}))", "string(dyn({}))", "timestamp(dyn({}))", "[{}].sortBy(x, x)[0]"])
def test_a_rewritten_value_is_written_once_however_deep_it_nests(outer):
    """Each rewrite names a dyn value once (rewrite._once), so the program grows with the
    depth, where writing the value at each question about its type doubled it at each level
    (a selector of 10 nested int(dyn(...)) once took minutes, then raised from cel-cpp)."""
    inner = "'2020-01-01T00:00:00Z'" if outer.startswith("timestamp") else "'7'"
    sizes = []
    for depth in (2, 4):
        code = inner
        for _ in range(depth):
            code = outer.format(code)
        code = f"[{code}].size() == 1"
        sizes.append(len(rewrite.rewrite(checked_ast(_env().compile(code).serialize()), code)))
    assert sizes[1] < 3 * sizes[0], sizes  # doubling at each level would be 4x from depth 2 to 4


def test_nesting_past_the_engines_depth_is_not_checked_rather_than_invalid():
    """cel-cpp nests 32 deep, cel-go's parser 250: deeper is draguard's limit, said so."""
    error = compile_selector("[" * 40 + "1" + "]" * 40 + " != []").error
    assert error is not None and error.unsupported and "32 deep" in error.message
    error = compile_selector("int(dyn(" * 10 + "1" + "))" * 10 + " != 0").error  # the program it makes is too deep
    assert error is not None and error.unsupported


@pytest.mark.parametrize("expression", ["{'a': 1}.transformMap(k, v, duration('1s')).size() == 1",
                                        "{'a': 1}.transformMapEntry(k, v, {k: [timestamp(1)]}).size() == 1"])
def test_a_map_of_times_built_in_python_is_not_evaluated_rather_than_an_error(expression):
    """Its values pass through Python, which cannot hand a timestamp or duration back to cel-cpp:
    draguard's limit, said so (upstream builds the map)."""
    result = compile_selector(expression).run({})
    assert isinstance(result, CelUnsupported) and "cannot build a map holding" in str(result)


@pytest.mark.parametrize("expression", [
    "optional.of(quantity('1')) == optional.none()",
    "dyn(optional.of(1)) == 1",
    "[dyn(optional.of(1))].includes(optional.of(1))",
    "sets.contains([dyn(optional.of(1))], [1])",
    "[dyn(optional.of(1))].max() == 1",
    "[dyn(optional.of(1))].exists(x, x == x)",
    "[1].map(x, dyn(optional.of(x))).exists(y, y == 1)",
])
def test_an_optional_never_reaches_python_it_is_not_evaluated(expression):
    """cel-expr-python dies converting an optional for a Python function: refused before it runs."""
    compiled = compile_selector(expression)
    assert compiled.error is not None and compiled.error.unsupported, compiled.error
    assert "optional value" in compiled.error.message


@pytest.mark.parametrize("expression, expected", [
    ("device.attributes['gpu.example.com'].?model.orValue('') == 'a100'", True),
    ("device.attributes['gpu.example.com'].?model.orValue('') == 'a100' && "
     "[device.attributes['gpu.example.com'].index].max() == 3", True),
    ("optional.of(1).value() == dyn(1)", True),
    ("dyn(type(optional.of(1))) == dyn(type(optional.none()))", True),  # a type holds no optional
])
def test_optionals_unwrapped_before_python_still_evaluate(expression, expected):
    device = device_from({"name": "d", "attributes": {"model": {"string": "a100"}, "index": {"int": 3}}},
                         "gpu.example.com", "p")
    compiled = compile_selector(expression)
    assert compiled.error is None, compiled.error
    assert compiled.evaluate(device) is expected


@pytest.mark.parametrize("expression", [
    "[semver('1.0.0+a')].indexOf(semver('1.0.0+b')) == 0",
    "[quantity('1')].lastIndexOf(dyn(quantity('1000m'))) == 0",
    "[optional.of(1)].indexOf(optional.of(1)) == 0",
])
def test_a_search_of_messages_is_not_checked_rather_than_invalid(expression):
    """library.Lists declares indexOf for any element type; draguard's engine only for some."""
    error = compile_selector(expression).error
    assert error is not None and error.unsupported, error


def test_a_search_of_unrelated_types_stays_invalid():
    error = compile_selector("[quantity('1')].indexOf(1) == 0").error
    assert error is not None and not error.unsupported


@pytest.mark.parametrize("expression, offset", [
    ("1e400 > 0.0", 0), ("1.0 < -1e400", 6), ("1.0 - 1e400 < 0.0", 6), ("'a' > 1e309", 6), ("1e400u > 0u", 0),
])
def test_a_double_literal_out_of_range_is_a_parse_error(expression, offset):
    """cel-go's parser refuses what strconv.ParseFloat does (cel-cpp reads infinity), at the
    literal or at the unary minus it folds into it, before any checker error."""
    error = compile_selector(expression).error
    assert (error.message, error.offset, error.unsupported) == ("invalid double literal", offset, False)


def test_a_double_literal_in_range_or_in_a_string_compiles():
    assert compile_selector("1.7976931348623157e308 > 0.0 && 1e-400 == 0.0 && '1e400' != ''").error is None


@pytest.mark.parametrize("expression, message, offset", [
    ("[1].map(x)", "undeclared reference to 'map'", 7),  # cel-go sorts errors by location
    ("dyn == dyn", "undeclared reference to 'dyn'", 0),  # the type name is cel-cpp's, not cel-go's
])
def test_the_first_error_is_upstreams(expression, message, offset):
    error = compile_selector(expression).error
    assert (error.message, error.offset) == (message, offset)


def test_a_comprehension_variable_may_be_named_dyn():
    assert compile_selector("[1].map(dyn, dyn + 1) == [2]").error is None


@pytest.mark.parametrize("expression, root, offset", [
    ("a.b.c == 1", "a", 0), ("(a).b == 1", "a", 1), ("[1, gpu.example.com] == []", "gpu", 4),
])
def test_an_undeclared_select_chain_names_its_root(expression, root, offset):
    """cel-go's checker reports the root identifier where it is written; cel-cpp the whole
    chain at its last select."""
    error = compile_selector(expression).error
    assert (error.message, error.offset) == (f"undeclared reference to '{root}'", offset)


@pytest.mark.parametrize("expression, message, offset", [
    ("type(quantity('1')) == kubernetes.Quantity", "undeclared reference to 'kubernetes'", 23),
    ("1 == 2 && dyn != int", "undeclared reference to 'dyn'", 10),
])
def test_names_only_draguards_engine_declares_are_undeclared(expression, message, offset):
    error = compile_selector(expression).error
    assert (error.message, error.offset) == (message, offset)


def test_a_network_type_name_is_declared_upstream_too():
    assert compile_selector("type(ip('::1')) == net.IP").error is None


@pytest.mark.parametrize("expression, expected", [
    ("device.attributes[device.driver].size() == 0", True),
    ("'model' in device.attributes[device.driver]", False),
    ("device.capacity[device.driver].size() == 0", True),
    ("'gpu.nvidia.com' in device.attributes", False),  # membership is the map's own: no default there
])
def test_a_device_without_attributes_reads_its_driver_s_domain_as_an_empty_map(expression, expected):
    """Upstream's device maps return an empty map for a domain they lack (cel/compile.go,
    newStringInterfaceMapWithDefault), a domain named by `device.driver` too (issue: allocator
    and CEL fidelity: it was a "Key not found in map" runtime error here)."""
    bare = Device("gpu-1", NV, "node-a", {}, {})
    assert compile_selector(expression).evaluate(bare) is expected


def test_the_stable_variant_reads_allow_multiple_allocations_as_false():
    """Upstream's stable allocator builds the CEL device without the field: a selector on it
    is false there, whatever the slice publishes (issue: allocator and CEL fidelity)."""
    shared = Device("gpu-2", NV, "node-a", {}, {}, allow_multiple_allocations=True)
    compiled = compile_selector("device.allowMultipleAllocations")
    assert compiled.evaluate(shared) is True and compiled.evaluate(shared, multiple_allocations=False) is False
