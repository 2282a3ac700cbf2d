"""CEL's string-to-number conversions with Go's strconv (cel-go's), where cel-cpp is more
lenient; the answers were taken from the allocator oracle (celgen's _conversions family
re-checks them against upstream)."""

import pytest

from draguard.dra import goconvert
from draguard.dra.celenv import compile_selector


@pytest.mark.parametrize("convert, text, value", [
    (goconvert.to_int, "+5", 5), (goconvert.to_int, "-9223372036854775808", -(1 << 63)),
    (goconvert.to_uint, "18446744073709551615", (1 << 64) - 1), (goconvert.to_double, "1_000.5", 1000.5),
    (goconvert.to_double, "0x1.8p1", 3.0), (goconvert.to_double, "-Infinity", float("-inf")),
    (goconvert.to_double, "1e-400", 0.0)])
def test_what_go_parses(convert, text, value):
    assert convert(text) == value


@pytest.mark.parametrize("convert, text", [
    (goconvert.to_int, " 12"), (goconvert.to_int, "0x10"), (goconvert.to_int, "1_000"),
    (goconvert.to_int, "9223372036854775808"), (goconvert.to_uint, "+1"), (goconvert.to_uint, "-0"),
    (goconvert.to_double, " 1.5"), (goconvert.to_double, "1e400"), (goconvert.to_double, "1e"),
    (goconvert.to_double, "-nan"), (goconvert.to_double, "1__0"), (goconvert.to_double, "1_.5"),
    (goconvert.to_double, "0x1p"), (goconvert.to_int, "\u0661\u0662")])
def test_what_go_refuses(convert, text):
    with pytest.raises(ValueError, match="type conversion error from 'string'"):
        convert(text)


@pytest.mark.parametrize("text, seconds", [
    ("1.5h", "5400.000000000s"), ("1\u00b5s", "0.000001000s"), (".5s", "0.500000000s"), ("1h1h", "7200.000000000s"),
    ("-9223372036854775808ns", "-9223372036.854775808s"), ("+0", "0s")])
def test_durations_as_go_parses_them(text, seconds):
    assert goconvert.to_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1", "1d", ".s", "10000000h", "9223372036854775808ns"])
def test_durations_go_refuses(text):
    with pytest.raises(ValueError, match="time: invalid duration"):
        goconvert.to_duration(text)


def test_a_constant_conversion_that_fails_is_a_compile_error():
    """cel-go's OptOptimize folds type conversions of constants when it builds the program;
    a failure there is a compile error for the API server and the scheduler."""
    error = compile_selector("int(1e19) == 0").error
    assert error is not None and error.message.startswith("program instantiation failed: ")  # cel-cpp words the overflow
    assert compile_selector("double(int('7')) == 7.0").error is None
    assert compile_selector("int(' 12') == 12").error.message.endswith("from 'string' to 'int'")
