"""CEL's conversions of a string as cel-go makes them, with Go's strconv and time packages:
`int(s)` is ParseInt(s, 10, 64), `uint(s)` ParseUint(s, 10, 64), `double(s)` ParseFloat(s, 64),
`duration(s)` time.ParseDuration, `timestamp(s)` time.Parse(time.RFC3339, s) (common/types/
string.go); and back: `string(t)` of a timestamp t.Format(time.RFC3339Nano), of a duration
FormatFloat(d.Seconds(), 'f', -1, 64) + "s", of a double FormatFloat(x, 'g', -1, 64), and
`int(d)` of a duration its nanoseconds. cel-cpp's are more lenient (it takes ' 12', '1e400'
as infinity) or parse and write otherwise (absl), so cel.rewrite routes these conversions
through the functions here. A failure is cel-go's "type conversion error" (or ParseDuration's,
or "timestamp overflow")."""

from __future__ import annotations

import math
import re
from decimal import Decimal

from .gourl import go_quote

_INT = re.compile(r"[+-]?[0-9]+")
_UINT = re.compile(r"[0-9]+")
# ParseFloat: decimal with an optional exponent, hexadecimal with its p exponent, inf, infinity, nan
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEXADECIMAL = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)  # a sign only before inf


def _failed(to: str) -> ValueError:
    return ValueError(f"type conversion error from 'string' to '{to}'")


def to_int(text: str) -> int:
    if not _INT.fullmatch(text) or not -(1 << 63) <= int(text) < 1 << 63:
        raise _failed("int")
    return int(text)


def to_uint(text: str) -> int:
    if not _UINT.fullmatch(text) or int(text) >= 1 << 64:
        raise _failed("uint")
    return int(text)


def _underscore_ok(text: str) -> bool:
    """strconv underscoreOK: each `_` between digits (or after a base prefix), as in Go literals."""
    body = text[1:] if text[:1] in "+-" else text
    hexadecimal = body[:2].lower() == "0x"
    saw, rest = ("0", body[2:]) if body[:2].lower() in ("0x", "0b", "0o") else ("^", body)
    for char in rest:
        if char.isascii() and (char.isdigit() or hexadecimal and char.lower() in "abcdef"):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def to_double(text: str) -> float:
    """A value out of float64's range is ParseFloat's ErrRange, an error here (underflow is 0).
    Digits may be separated by underscores, as in Go's float literals."""
    if _SPECIAL.fullmatch(text):
        return float(text.lower().replace("infinity", "inf"))
    if "_" in text:
        if not _underscore_ok(text):
            raise _failed("double")
        text = text.replace("_", "")
    if _HEXADECIMAL.fullmatch(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            raise _failed("double") from None
    if not _DECIMAL.fullmatch(text):
        raise _failed("double")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _failed("double")
    return value


#: time.ParseDuration's units, in nanoseconds (micro spelled three ways)
_UNITS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "\u03bcs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
          "h": 3600 * 10**9}
_LIMIT = 1 << 63


def _invalid_duration(text: str) -> ValueError:
    return ValueError(f"time: invalid duration {go_quote(text)}")


def to_duration(text: str) -> str:
    """time.ParseDuration (`[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`, int64 nanoseconds, a fraction
    added through float64 as Go adds it), written as seconds that cel-cpp reads alike."""
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return "0s"
    if not rest:
        raise _invalid_duration(text)
    total = 0
    while rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if not digits and not rest.startswith("."):
            raise _invalid_duration(text)
        whole, rest = int(rest[:digits] or "0"), rest[digits:]
        if whole > _LIMIT:
            raise _invalid_duration(text)
        fraction, scale, had_fraction = 0, 1.0, False
        if rest.startswith("."):
            rest = rest[1:]
            count = len(rest) - len(rest.lstrip("0123456789"))
            had_fraction = count > 0
            for char in rest[:count]:  # leadingFraction: digits past int64 are dropped
                candidate = fraction * 10 + int(char)
                if fraction > (_LIMIT - 1) // 10 or candidate > _LIMIT:
                    break
                fraction, scale = candidate, scale * 10
            rest = rest[count:]
        if not digits and not had_fraction:
            raise _invalid_duration(text)
        end = next((i for i, char in enumerate(rest) if char == "." or char in "0123456789"), len(rest))
        unit = _UNITS.get(rest[:end])
        if unit is None:
            raise _invalid_duration(text)
        rest = rest[end:]
        if whole > _LIMIT // unit:
            raise _invalid_duration(text)
        value = whole * unit
        if fraction:
            value += int(float(fraction) * (float(unit) / scale))
            if value > _LIMIT:
                raise _invalid_duration(text)
        total += value
        if total > _LIMIT:
            raise _invalid_duration(text)
    if not negative and total > _LIMIT - 1:
        raise _invalid_duration(text)
    # seconds and nanoseconds: absl cannot read -2^63 written as nanoseconds
    return f"{'-' if negative and total else ''}{total // 10**9}.{total % 10**9:09d}s"


# --- timestamps: time.Parse(time.RFC3339, s), as cel-go's string-to-timestamp conversion ------

#: cel-go's range of timestamps, in Unix seconds (common/types/timestamp.go minUnixTime, maxUnixTime)
_MIN_UNIX, _MAX_UNIX = -62135596800, 253402300799
_TIMESTAMP_FAILED = "type conversion error from 'string' to 'google.protobuf.Timestamp'"
#: what the draguard_ function says when a timestamp's UTC offset would show (cel.env reports
#: the expression as not evaluated: cel-cpp keeps no offset)
ZONE_LOST = "draguard's CEL engine keeps no UTC offset"


def _is_digit(data: bytes, index: int) -> bool:
    return index < len(data) and 48 <= data[index] <= 57


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if _leap(year) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (year 0 included, as Go's Date)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146097 + day_of_era - 719468


def _nanoseconds(data: bytes, count: int) -> int:
    """time.parseNanoseconds: the digits after the separator, at most nine read."""
    count = min(count, 10)
    scale: int = 10 ** (10 - count)  # count <= 10: a whole power
    return int(data[1:count]) * scale


def _fixed(data: bytes, low: int, high: int) -> int | None:
    """parseRFC3339's parseUint: every byte a digit, the value in [low, high]."""
    if not data or not all(48 <= c <= 57 for c in data):
        return None
    value = int(data)
    return value if low <= value <= high else None


#: (year, month, day, hour, minute, second, nanoseconds, UTC offset in seconds)
_Parsed = tuple[int, int, int, int, int, int, int, int]


def _rfc3339_fast(data: bytes) -> _Parsed | None:
    """time.parseRFC3339 (format_rfc3339.go), the path time.Parse tries first: fixed
    widths, a `.` fraction, `Z` or ±hh:mm with hh < 24 and mm < 60."""
    if len(data) < 19 or bytes(data[i] for i in (4, 7, 10, 13, 16)) != b"--T::":
        return None
    year, month = _fixed(data[0:4], 0, 9999), _fixed(data[5:7], 1, 12)
    if year is None or month is None:
        return None
    day, hour, minute, second = (_fixed(data[8:10], 1, _days_in(month, year)), _fixed(data[11:13], 0, 23),
                                 _fixed(data[14:16], 0, 59), _fixed(data[17:19], 0, 59))
    if day is None or hour is None or minute is None or second is None:
        return None
    rest, nanos = data[19:], 0
    if len(rest) >= 2 and rest[0] == 46 and _is_digit(rest, 1):  # '.'
        count = 2
        while _is_digit(rest, count):
            count += 1
        nanos, rest = _nanoseconds(rest, count), rest[count:]
    if rest == b"Z":
        return (year, month, day, hour, minute, second, nanos, 0)
    if len(rest) != 6 or rest[0] not in b"+-" or rest[3] != 58:  # ':'
        return None
    hours, minutes = _fixed(rest[1:3], 0, 23), _fixed(rest[4:6], 0, 59)
    if hours is None or minutes is None:
        return None
    offset = (hours * 60 + minutes) * 60
    return (year, month, day, hour, minute, second, nanos, -offset if rest[0] == 45 else offset)


def _number(data: bytes, fixed: bool) -> tuple[int, bytes] | None:
    """time.getnum: one or two digits (two with `fixed`), and what follows."""
    if not _is_digit(data, 0):
        return None
    if not _is_digit(data, 1):
        return None if fixed else (data[0] - 48, data[1:])
    return (data[0] - 48) * 10 + data[1] - 48, data[2:]


def _rfc3339_layout(data: bytes) -> _Parsed | None:
    """time.parse with the layout "2006-01-02T15:04:05Z07:00" (format.go), where the fast path
    failed: a one-digit hour, a `,` before the fraction, a zone of ±24:00 or ±hh:60 pass."""
    if len(data) < 4 or not all(48 <= c <= 57 for c in data[:4]):
        return None
    year, rest = int(data[:4]), data[4:]
    values = []
    for separator, fixed, high in ((b"-", True, 12), (b"-", True, 99), (b"T", False, 23), (b":", True, 59),
                                   (b":", True, 59)):
        if rest[:1] != separator:
            return None
        found = _number(rest[1:], fixed)
        if found is None or found[0] > high:
            return None
        values.append(found[0])
        rest = found[1]
    month, day, hour, minute, second = values
    if month < 1:
        return None
    nanos = 0
    if len(rest) >= 2 and rest[0] in b".," and _is_digit(rest, 1):
        count = 2
        while _is_digit(rest, count):
            count += 1
        nanos, rest = _nanoseconds(rest, count), rest[count:]
    if rest[:1] == b"Z":
        offset, rest = 0, rest[1:]
    else:
        if len(rest) < 6 or rest[3] != 58 or rest[0] not in b"+-":
            return None
        hours, minutes = _number(rest[1:3], True), _number(rest[4:6], True)
        if hours is None or minutes is None or hours[0] > 24 or minutes[0] > 60:
            return None
        offset = (hours[0] * 60 + minutes[0]) * 60 * (-1 if rest[0] == 45 else 1)
        rest = rest[6:]
    if rest or not 1 <= day <= _days_in(month, year):
        return None
    return (year, month, day, hour, minute, second, nanos, offset)


def parse_timestamp(text: str) -> tuple[int, int, int]:
    """time.Parse(time.RFC3339, text) and cel-go's range check: (Unix seconds, nanoseconds,
    UTC offset in seconds); ValueError with cel-go's message when it fails."""
    data = text.encode("utf-8")
    parsed = _rfc3339_fast(data) or _rfc3339_layout(data)
    if parsed is None:
        raise ValueError(_TIMESTAMP_FAILED)
    year, month, day, hour, minute, second, nanos, offset = parsed
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    if not _MIN_UNIX <= seconds <= _MAX_UNIX:
        raise ValueError("timestamp overflow")
    return seconds, nanos, offset


def to_timestamp(text: str, offset_shows: bool = False) -> str:
    """`text` parsed as cel-go parses a timestamp, written in UTC for cel-cpp to read alike.
    With `offset_shows` (the expression turns a timestamp into a string, where Go writes the
    offset it parsed), a non-zero offset is refused as draguard's limit (ZONE_LOST)."""
    seconds, nanos, offset = parse_timestamp(text)
    if offset and offset_shows:
        raise ValueError(f"{ZONE_LOST}, which string() of this timestamp shows upstream")
    days, rest = divmod(seconds, 86400)
    year, month, day = _civil_from_days(days)
    return (f"{year:04d}-{month:02d}-{day:02d}T{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
            f".{nanos:09d}Z")


def _civil_from_days(days: int) -> tuple[int, int, int]:
    """The inverse of _days_from_civil."""
    days += 719468
    era = days // 146097
    day_of_era = days - era * 146097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36524 - day_of_era // 146096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    shifted_month = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * shifted_month + 2) // 5 + 1
    month = shifted_month + (3 if shifted_month < 10 else -9)
    return year_of_era + era * 400 + (month <= 2), month, day


def timestamp_text(cel_cpp_text: str) -> str:
    """string() of a timestamp as Go's Format(time.RFC3339Nano) writes a UTC time: the
    fraction without trailing zeros (none when zero), where cel-cpp writes 3, 6 or 9 digits."""
    head, _, fraction = cel_cpp_text.removesuffix("Z").partition(".")
    fraction = fraction.rstrip("0")
    return f"{head}.{fraction}Z" if fraction else f"{head}Z"


def duration_nanoseconds(cel_cpp_text: str) -> int:
    """A duration's nanoseconds (time.Duration, what cel-go's int(d) gives), from cel-cpp's exact
    text of it: seconds with 0, 3, 6 or 9 fraction digits and an `s`."""
    body = cel_cpp_text.removesuffix("s")
    negative = body.startswith("-")
    whole, _, fraction = body.lstrip("-").partition(".")
    nanoseconds = int(whole) * 10**9 + int(fraction.ljust(9, "0") or 0)
    return -nanoseconds if negative else nanoseconds


def seconds_and_nanos(nanoseconds: int) -> tuple[int, int]:
    """Go's d / Second and d % Second: both toward zero, the sign on each (as a Duration
    message holds them too)."""
    seconds = abs(nanoseconds) // 10**9 * (-1 if nanoseconds < 0 else 1)
    return seconds, nanoseconds - seconds * 10**9


def duration_text(cel_cpp_text: str) -> str:
    """string() of a duration as cel-go writes it: strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
    and an `s`, the shortest decimal that reads back as the float64 of its seconds (Python's
    repr is that shortest decimal too), never in exponent form."""
    seconds, nanos = seconds_and_nanos(duration_nanoseconds(cel_cpp_text))
    value = float(seconds) + float(nanos) / 1e9  # time.Duration.Seconds
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}s"


def double_text(value: float, cel_cpp_text: str) -> str:
    """string() of a double as cel-go writes it, strconv.FormatFloat(d, 'g', -1, 64): cel-cpp
    writes the same digits (checked against the oracle), but NaN and infinities its own way."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return cel_cpp_text
