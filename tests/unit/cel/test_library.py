"""The Kubernetes CEL libraries and checks draguard adds to cel-cpp, on cases whose upstream
answers were taken from the allocator oracle's selector mode (test_cel_oracle re-checks them
against upstream whenever Go is present)."""

from fractions import Fraction

import pytest

from draguard.cel import goregex
from draguard.cel.env import CelRuntimeError, CelUnsupported, _runtime_error, compile_selector
from draguard.dra.devices import device_from
from draguard.core.quantity import QuantityError, parse_quantity

DEVICE = device_from({"name": "d", "attributes": {"model": {"string": "a100"}}}, "gpu.example.com", "p")


def evaluate(expression: str):
    compiled = compile_selector(expression)
    assert compiled.error is None, compiled.error
    return compiled.evaluate(DEVICE)


@pytest.mark.parametrize("text, value", [
    ("1.", 1), (".5", Fraction(1, 2)), ("-", 0), (".", 0), ("1e4294967296", 1), ("0.1n", Fraction(1, 10**9)),
    ("-0.1n", Fraction(-1, 10**9)), ("16Ei", 2**63 - 1), ("1.5Gi", 3 * 2**29)])
def test_quantities_parse_as_parsequantity_does(text, value):
    assert parse_quantity(text, trim=False) == value


@pytest.mark.parametrize("text", ["\u0661", " 1", "1e", "1K", "1ee3", "2m3", ""])
def test_text_parsequantity_refuses(text):
    with pytest.raises(QuantityError):
        parse_quantity(text, trim=False)


def test_find_all_follows_go_for_empty_matches():
    assert goregex.find_all("aaa", "a*") == ["aaa"]
    assert goregex.find_all("abc", "x*") == ["", "", "", ""]
    with pytest.raises(goregex.RegexError, match="invalid or unsupported Perl syntax"):
        goregex.compile_pattern("a(?=b)")


@pytest.mark.parametrize("expression, expected", [
    ("1 < 2.5 && 1u < 2", True), ("sign(quantity('-1')) == -1", True), ("[1, 2, 3].sum() == 6", True),
    ("semver('1.2.3+b') == semver('1.2.3')", True), ("cidr('10.0.0.1/8').ip() == ip('10.0.0.1')", True),
    ("url('https://h:8/p').getPort() == '8'", True), ("isURL('relative/path')", False), ("isURL('host:80')", True), ("isIP('::ffff:10.0.0.1')", False),
    ("device.attributes['gpu.example.com'].?missing.orValue('x') == 'x'", True),
    ("device.attributes[?'other.example.com'].hasValue()", True), ("[1, 2].all(i, v, v > i)", True)])
def test_kubernetes_libraries_and_language_options(expression, expected):
    assert evaluate(expression) is expected


@pytest.mark.parametrize("expression, message, column", [
    ("[1, 'a'].size() == 2", "expected type 'int' but found 'string'", 5),
    ("[1, dyn(2)].size() == 2", "expected type 'int' but found 'dyn'", 8),
    ("'abc'.matches('a(?=b)')", "invalid matches argument", 15),
    ("'abc'.find('b(') == 'b'", "missing closing )", 12),
    ("quantity('1').sign() == 1", "undeclared reference to 'sign'", None)])
def test_compile_time_checks_upstream_makes(expression, message, column):
    error = compile_selector(expression).error
    assert error is not None and message in error.message
    assert column is None or error.offset + 1 == column


def test_a_map_key_cel_cpp_refuses_is_said_to_be_draguards_gap():
    """cel-go's map literals take any key (a double, a list, null); cel-cpp's only bool, int,
    uint and string ones."""
    with pytest.raises(CelUnsupported, match="refuses a double map key, which upstream's"):
        evaluate("{1.5: 1}.size() == 1")


def test_device_as_a_value_is_not_checked():
    error = compile_selector("[device].size() == 1").error
    assert error.unsupported and error.offset == 1 and "`device` used as a value" in error.message
    assert not compile_selector("device.nope == 1").error.unsupported  # an unknown field stays the selector's fault


def test_a_bound_device_is_its_body():
    """cel.bind(d, device, body) as body with d's fields read as device's: its value, its
    errors at the original characters (over lines too), and upstream's cost of the bind (11)."""
    assert evaluate("cel.bind(d, device, d.attributes['gpu.example.com'].model == 'a100')") is True
    assert evaluate("cel.bind(d, device, has(d.attributes)) && cel.bind(e, device, e.driver != '')") is True
    error = compile_selector("cel.bind(dev, device,\n  dev.driver + 1 == 2)").error
    assert error.offset == len("cel.bind(dev, device,\n  dev.driver ") and "no matching overload" in error.message
    assert compile_selector("cel.bind(d, device, d.driver == 'x')").max_cost == \
        compile_selector("device.driver == 'x'").max_cost + 11


def test_an_evaluation_past_cel_cpps_iteration_budget_is_said_to_be_draguards_gap():
    """cel-cpp stops at 10,000 comprehension iterations; upstream at an actual cost of
    1,000,000, bounded by the estimate: under it, upstream would finish (oracle: true)."""
    listed = "[" + ", ".join(str(i) for i in range(101)) + "]"
    with pytest.raises(CelUnsupported, match="upstream's would finish it"):
        evaluate(f"{listed}.all(x, {listed}.all(y, true))")
    with pytest.raises(CelUnsupported, match="which it may or may not reach"):
        evaluate(f"{listed}.all(x, {listed}.all(y, {listed}.all(z, true)))")


def test_a_bind_after_a_comprehension_that_stopped_early_reads_its_own_value():
    """cel-cpp reads a lazily bound variable from the slot an early-exiting comprehension left
    its last value in (here the key 'model': size 5, not 3); draguard substitutes written
    binds (cel.bind_inline), and an initializer no read reaches is never evaluated (cel-go)."""
    attrs = "device.attributes['gpu.example.com']"
    assert evaluate(f"{attrs}.exists(k, true) && cel.bind(y, [3, 1, 2], y.size() == 3)") is True
    assert evaluate("cel.bind(y, 1 / 0, true)") is True
    assert evaluate("cel.bind(x, 1, [2].exists(y, cel.bind(z, x + y, z == 3)))") is True
    assert evaluate("cel.bind(y, [1, 2], cel.bind(y, y.size(), y == 2))") is True


def test_a_parenthesized_operand_is_rewritten_whole():
    """A rewritten comparison whose operand starts inside parentheses (it once lost its
    opening one, and the program failed to build)."""
    assert evaluate("(semver('1.0.0')) == semver('1.0.0') && (1 + 1) * 2 == 4") is True
    assert evaluate("(quantity('1').add(quantity('1Ki'))) == quantity('1025')") is True


def test_a_result_cel_expr_python_cannot_read_is_said_not_a_crash():
    """A string that is not UTF-8 (bytes formatted with %s) cannot cross into Python: the
    derived attribute is not evaluated, and nothing escapes as a TypeError."""
    from draguard.dra.derived import compile_derived
    with pytest.raises(CelUnsupported, match="cannot read this result"):
        compile_derived("'%s'.format([b'\\xff'])").evaluate(DEVICE)


@pytest.mark.parametrize("expression, column", [
    ("duration('1d') == duration('24h')", 10), ("timestamp('2020-13-01T00:00:00Z') > timestamp('2020-01-01T00:00:00Z')", 11)])
def test_an_invalid_duration_or_timestamp_literal_is_a_compile_error(expression, column):
    """cel.ValidateDurationLiterals / ValidateTimestampLiterals, at the literal (oracle)."""
    error = compile_selector(expression).error
    assert error.message.startswith("invalid ") and error.message.endswith(" argument") and error.offset + 1 == column


def test_sort_by_after_an_early_exit_and_over_durations():
    """sortBy is evaluated by the order of its keys (cel-cpp's expansion binds its list lazily,
    into the stale slot an early-exiting comprehension leaves); the items stay CEL values."""
    attrs = "device.attributes['gpu.example.com']"
    assert evaluate(f"{attrs}.exists(k, true) && [3, 1, 2].sortBy(x, x) == [1, 2, 3]") is True
    assert evaluate("[duration('2s'), duration('1s')].sortBy(x, x)[0] == duration('1s')") is True
    assert evaluate("['b', 'a', 'c', 'a'].sortBy(x, x.size()) == ['b', 'a', 'c', 'a']") is True  # stable
    assert evaluate("[b'b', b'a'].sortBy(x, x)[0] == b'a'") is True  # bytes and timestamps are comparable too
    assert evaluate("[timestamp('2021-01-01T00:00:00Z'), timestamp('2020-01-01T00:00:00Z')].sortBy(x, x)[0]"
                    " == timestamp('2020-01-01T00:00:00Z')") is True


def test_the_sets_library_compares_quantities_and_versions_by_value():
    assert evaluate("sets.contains([quantity('1')], [quantity('1000m')])") is True
    assert evaluate("sets.equivalent([semver('1.2.3+a')], [semver('1.2.3')])") is True


def test_a_domain_selected_by_name_is_an_empty_map():
    assert evaluate("has(device.attributes.x) && device.attributes.nope.size() == 0") is True


def test_an_engine_gap_is_said_as_such():
    """A function the checker declares that cel-expr-python's runtime lacks is draguard's gap,
    never the selector's fault."""
    error = _runtime_error("INVALID_ARGUMENT: No overload found in reference resolve step for cel.@mapInsert")
    assert isinstance(error, CelUnsupported) and "does not implement 'cel.@mapInsert'" in str(error)


@pytest.mark.parametrize("expression, value", [
    ("[1, 2].transformMap(i, v, v * 2) == {0: 2, 1: 4}", True),
    ("{'a': 1, 'b': 0}.transformMap(k, v, v > 0, v + 1) == {'a': 2}", True),
    ("{1: 2}.transformMapEntry(k, v, {v: k}) == {2: 1}", True),
    ("device.attributes['gpu.example.com'].transformMap(k, v, k + v) == {'model': 'modela100'}", True),
])
def test_transform_maps_build_their_maps(expression, value):
    """transformMap and transformMapEntry (two-variable comprehensions), whose expansion calls
    cel.@mapInsert: evaluated through transformList and draguard_map_entries."""
    assert evaluate(expression) is value


def test_a_transform_map_entry_made_twice_is_an_error():
    with pytest.raises(CelRuntimeError, match="insert failed: key 1 already exists"):
        evaluate("[1, 1].transformMapEntry(i, v, {v: i}).size() == 1")


@pytest.mark.parametrize("expression, value", [
    ("[].indexOf(null) == -1", True),
    ("[null, null].lastIndexOf(null) == 1", True),
    ("[1, 2].indexOf(dyn(null)) == -1", True),
    ("dyn('abc').lastIndexOf(dyn('c')) == 2", True),
])
def test_index_of_what_may_be_null(expression, value):
    """cel-expr-python has no overload for a null argument; upstream answers by equality."""
    assert evaluate(expression) is value


def test_index_of_null_on_a_string_has_no_overload():
    with pytest.raises(CelRuntimeError, match="no such overload"):
        evaluate("dyn('abc').indexOf(null) == -1")


def test_versions_compare_without_their_build_metadata():
    """Semver values carry the text as written (a derived attribute's value), but equality
    and order read the version without build metadata, as upstream's do."""
    assert evaluate("semver('1.2.3+a') == semver('1.2.3+b')") is True
    assert evaluate("[semver('1.2.3+a')] == [semver('1.2.3')]") is True
    assert evaluate("semver('1.2.3+a').compareTo(semver('1.2.3+b')) == 0") is True


def test_a_repeated_map_key_keeps_its_last_value():
    """cel-go builds a map literal entry by entry; cel-cpp refuses a repeated key."""
    assert evaluate("{'a': 1, 'a': 2} == {'a': 2}") is True
    assert evaluate("{1u: 'x', 1u: 'y'}[1u] == 'y'") is True


@pytest.mark.parametrize("expression", [
    "format.dns1123Label().validate('my-name') == optional.none()",
    "format.dns1123Label().validate('a.b').value() == ['must not contain dots']",
    "format.dns1123LabelPrefix().validate('abc-') == optional.none()",
    "format.qualifiedName().validate('/b').value() == ['prefix part must be non-empty']",
    "format.labelValue().validate('" + "x_" * 32 + "x').value() == ['must be no more than 63 bytes']",
    "format.uri().validate('a b').value() == ['parse \"a b\": invalid URI for request']",
    "format.date().validate('0000-02-29') == optional.none() && format.date().validate('2021-02-29').hasValue()",
    "format.datetime().validate('2020-01-01T10:00:00ZTjunk') == optional.none()",
    "format.named('uuid').value().validate('123E4567E89B12D3A456426614174000') == optional.none()",
    "!format.named('DNS1123Label').hasValue() && format.named('byte') == optional.of(format.byte())",
    "format . named( 'uri' ).hasValue()"])
def test_the_format_library_answers_as_upstream(expression):
    """Values taken from the oracle's selector and derived-attribute modes (celgen's
    _format_library family re-checks them against upstream)."""
    assert evaluate(expression) is True


def test_validate_is_estimated_at_the_longest_format_regex():
    """library/cost.go: size of the text x 0.1, x 128 x 0.25 (MaxNameFormatRegexSize)."""
    assert compile_selector("format.dns1123Label().validate('my-name').hasValue()").max_cost == 34


@pytest.mark.parametrize("expression", [
    "[duration('1.000000001s'), duration('1s')].max() == duration('1.000000001s')",  # exact, not via Python
    "[timestamp(2), timestamp(1)].min() == timestamp(1)",
    "[duration('1s'), duration('1ns')].sum() == duration('1.000000001s')",
    "type([1u, 2u].sum()) == uint && type([dyn(1u), dyn(2u)].min()) == uint",
    "[dyn(2.5), dyn(1.5)].sum() == 4.0 && [dyn(1), dyn('a')].max() == 1",  # a pair that does not compare is passed
    "[dyn(1), dyn('a')].isSorted() && !['b', 'a'].isSorted()",
])
def test_the_lists_library_keeps_its_values_types(expression):
    """library.Lists max, min, sum and isSorted as upstream's (answers taken from the oracle;
    celgen's lists family re-checks them)."""
    assert compile_selector(expression).run({}) is True


@pytest.mark.parametrize("expression", ["[dyn(1), dyn(2u)].sum() == 3", "[dyn([1]), dyn(2)].max() == 2",
                                        "string(dyn(quantity('1'))) != ''", "double('NaN') < 1.0",
                                        "1u >= dyn(double('NaN'))",
                                        "[duration('2562047h'), duration('2562047h')].sum() > duration('0s')"])
def test_the_lists_library_refuses_what_upstream_does(expression):
    result = compile_selector(expression).run({})
    assert isinstance(result, CelRuntimeError) and not isinstance(result, CelUnsupported)


@pytest.mark.parametrize("expression", ["'abc'.indexOf('c', 5) == -1", "'abc'.indexOf('', 10) == 3",
                                        "'abc'.lastIndexOf('c', 3) == -1", "'abc'.lastIndexOf('bc', 1) == 1",
                                        "''.lastIndexOf('', 5) == 0", "'héllo'.indexOf('l', 2) == 2",
                                        "''.split('').size() == 0 && 'abc'.split('', 2) == ['a', 'bc']"])
def test_string_searches_and_splits_are_cel_gos(expression):
    """ext/strings.go indexOfOffset and lastIndexOfOffset: an offset at or past the end finds
    nothing (an empty substring: the end), where cel-cpp's is an error; split is Go's
    strings.SplitN (an empty string split by nothing has no part)."""
    assert compile_selector(expression).run({}) is True


@pytest.mark.parametrize("expression", [
    "[quantity('1'), quantity('1000m')].distinct().size() == 1",
    "[semver('1.0.0+a'), semver('1.0.0+b')].distinct().size() == 1",
    "[[semver('1.0.0+a')], [semver('1.0.0+b')]].distinct().size() == 1",
    "[semver('1.0.0+a'), semver('2.0.0'), semver('1.0.0')].distinct()[1] == semver('2.0.0')",
    "[dyn(1), dyn(1.0), dyn('a')].distinct().size() == 2",
])
def test_distinct_keeps_what_no_earlier_element_equals(expression):
    """ext/lists.go distinctList compares with Equal, where cel-cpp compares messages field by field."""
    assert evaluate(expression) is True


@pytest.mark.parametrize("text", ["0.0.0", "1.2.3", "10.20.30-rc.1", "1.2.3-0a.b-c+build.7", "1.0.0+a.b", "580.95.5",
                                  "18446744073709551615.0.0-alpha"])
def test_a_device_version_is_the_semver_librarys_reading(text):
    """semver_message reads a version without the semver library: the same value and text
    as the library's parse gives."""
    from draguard.cel.library import _version, semver_message

    message = semver_message(text)
    parsed = _version(text)
    assert (message.value, message.text) == (str(parsed.replace(build=None)), str(parsed))


@pytest.mark.parametrize("text", ["1.2", "01.2.3", "1.2.3-01", "1.2.3+", "18446744073709551616.0.0", "v1.2.3"])
def test_a_device_version_upstream_refuses_is_refused(text):
    from draguard.cel.library import semver_message

    with pytest.raises(ValueError, match="not a semantic version"):
        semver_message(text)


def test_the_built_in_inventorys_devices_become_selector_data_without_semver_or_descriptor_pb2(tmp_path):
    """Their driverVersion attributes are versions; a one-file lint makes every device's data
    (with an empty per-user cache: a repeat lint reads the selectors' verdicts from it and
    loads no CEL at all, tests/unit/cli/test_startup.py)."""
    import os
    import subprocess
    import sys

    probe = ("import contextlib, io, sys\nfrom draguard.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(['lint', '--no-config', sys.argv[1]])\n"
             "print(code, 'cel_expr_python' in sys.modules, 'semver' in sys.modules,"
             " 'google.protobuf.descriptor_pb2' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe, "examples/dra-inference/inference.yaml"],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "DRAGUARD_CACHE_DIR": str(tmp_path)})
    assert done.stdout.split() == ["0", "True", "False", "False"]  # its selectors judged with CEL, clean

