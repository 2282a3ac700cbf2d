"""CEL's conversions of strings with Go's strconv and time packages (cel-go's), where cel-cpp is more
lenient; the answers were taken from the allocator oracle (celgen's _conversions family
re-checks them against upstream)."""

import pytest

from draguard.cel import goconvert
from draguard.cel.env import CelUnsupported, compile_selector


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


@pytest.mark.parametrize("text, utc", [
    ("2020-01-01T00:30:00+01:00", "2019-12-31T23:30:00.000000000Z"),  # parseRFC3339, the fast path
    ("2020-01-01T1:00:00Z", "2020-01-01T01:00:00.000000000Z"),  # the layout parser: a one-digit hour
    ("2020-01-01T00:00:00,5Z", "2020-01-01T00:00:00.500000000Z"),  # ... a comma before the fraction
    ("2020-01-01T00:00:00+24:00", "2019-12-31T00:00:00.000000000Z"),  # ... offsets up to 24:00 and hh:60
    ("2020-01-01T00:00:00.1234567891234Z", "2020-01-01T00:00:00.123456789Z"),  # digits past nine ignored
    ("0000-12-31T23:00:00-01:00", "0001-01-01T00:00:00.000000000Z"),  # year 0, in range once in UTC
    ("2020-02-29T23:59:59Z", "2020-02-29T23:59:59.000000000Z")])
def test_timestamps_as_go_parses_them(text, utc):
    assert goconvert.to_timestamp(text) == utc


@pytest.mark.parametrize("text, message", [
    ("2020-01-01t00:00:00z", "type conversion error"), ("2020-01-01T00:00:60Z", "type conversion error"),
    ("2019-02-29T00:00:00Z", "type conversion error"), ("2020-1-01T00:00:00Z", "type conversion error"),
    ("2020-01-01T00:00:00+0100", "type conversion error"), ("2020-01-01T00:00:00", "type conversion error"),
    ("2020-01-01T00:00:00+25:00", "type conversion error"), ("\uff12020-01-01T00:00:00Z", "type conversion error"),
    ("0001-01-01T00:00:00+01:00", "timestamp overflow"), ("9999-12-31T23:59:59-01:00", "timestamp overflow")])
def test_timestamps_go_refuses(text, message):
    with pytest.raises(ValueError, match=message):
        goconvert.to_timestamp(text)


def test_string_of_a_timestamp_is_written_as_go_does():
    assert goconvert.timestamp_text("2020-01-01T00:30:00.500Z") == "2020-01-01T00:30:00.5Z"
    assert goconvert.timestamp_text("2020-01-01T00:30:00.000Z") == "2020-01-01T00:30:00Z"
    assert compile_selector("string(timestamp('2020-01-01T00:30:00.120Z')) == '2020-01-01T00:30:00.12Z'").run({})


def test_an_offset_that_string_would_show_is_not_evaluated():
    """cel-go keeps the offset a timestamp was parsed with and string() writes it; cel-cpp keeps
    the instant, so draguard says it did not evaluate rather than answer otherwise."""
    assert isinstance(compile_selector("string(timestamp('2020-01-01T00:30:00+01:00')) != ''").run({}), CelUnsupported)
    assert compile_selector("timestamp('2020-01-01T00:30:00+01:00') == timestamp('2019-12-31T23:30:00Z')").run({})


@pytest.mark.parametrize("cel_cpp, nanoseconds, go", [
    ("1.500s", 1_500_000_000, "1.5s"), ("-0.250s", -250_000_000, "-0.25s"), ("0s", 0, "0s"),
    ("3600.000000001s", 3_600_000_000_001, "3600.000000001s"),
    ("123456789.123456789s", 123_456_789_123_456_789, "123456789.12345679s")])  # through float64, as Go
def test_durations_are_counted_and_written_as_go_does(cel_cpp, nanoseconds, go):
    assert goconvert.duration_nanoseconds(cel_cpp) == nanoseconds
    assert goconvert.duration_text(cel_cpp) == go
    assert compile_selector(f"int(duration('{cel_cpp}')) == {nanoseconds} && string(duration('{cel_cpp}')) == '{go}'"
                            ).run({})


def test_nan_and_infinities_are_written_as_go_does():
    assert [goconvert.double_text(v, "x") for v in (float("nan"), float("inf"), float("-inf"), 1.5)] == \
        ["NaN", "+Inf", "-Inf", "x"]
    assert compile_selector("[double('nan'), 1.0 / 0.0, -1.0 / 0.0].map(x, string(x)) == ['NaN', '+Inf', '-Inf']"
                            ).run({})
