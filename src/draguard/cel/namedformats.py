"""The named formats of Kubernetes' CEL format library (k8s.io/apiserver/pkg/cel/library/format.go
ConstantFormats): `format.<name>()` and `format.named(name)` give one, `<format>.validate(s)`
the messages its validator returns for `s`, word for word, so that an expression reading them
(`.value()[0]`) sees what upstream's does.

The validators mirror apimachinery (api/validation NameIsDNS* with their `prefix` masking,
util/validation's "characters" messages; api/validate/content's label key and value, whose
length messages say "bytes"), kube-openapi strfmt (uuid, byte, date, datetime) and Go's
url.ParseRequestURI (cel.gourl). Go measures strings in bytes and its regexps anchor with `$`
at the very end, so lengths here are UTF-8 byte counts and patterns match whole strings."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from .gourl import URLError, go_quote, parse

if TYPE_CHECKING:
    from .library import Message, Overload, _Runtime

_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = _LABEL + "(\\." + _LABEL + ")*"
_LABEL_1035 = "[a-z]([-a-z0-9]*[a-z0-9])?"
_KEY_NAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = "(" + _KEY_NAME + ")?"
_LABEL_MESSAGE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                  "start and end with an alphanumeric character")
_SUBDOMAIN_MESSAGE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                      "and must start and end with an alphanumeric character")
_LABEL_1035_MESSAGE = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                       "alphabetic character, and end with an alphanumeric character")
_KEY_MESSAGE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                "alphanumeric character")
_VALUE_MESSAGE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                  "must start and end with an alphanumeric character")
_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE | re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")


def _full(pattern: str) -> Callable[[str], bool]:
    compiled = re.compile(pattern)
    return lambda text: compiled.fullmatch(text) is not None


_is_label, _is_subdomain, _is_label_1035 = _full(_LABEL), _full(_SUBDOMAIN), _full(_LABEL_1035)
_is_key_name, _is_label_value = _full(_KEY_NAME), _full(_LABEL_VALUE)


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogateescape"))


def regex_error(message: str, pattern: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return f"{message} (regex used for validation is '{pattern}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _max_length(limit: int, unit: str) -> str:
    return f"must be no more than {limit} {unit}"


def dns1123_label(text: str, unit: str = "characters") -> list[str]:
    errors = [_max_length(63, unit)] if _size(text) > 63 else []
    if not _is_label(text):
        errors.append("must not contain dots" if _is_subdomain(text) else
                      regex_error(_LABEL_MESSAGE, _LABEL, "my-name", "123-abc"))
    return errors


def dns1123_subdomain(text: str, unit: str = "characters") -> list[str]:
    errors = [_max_length(253, unit)] if _size(text) > 253 else []
    if not _is_subdomain(text):
        errors.append(regex_error(_SUBDOMAIN_MESSAGE, _SUBDOMAIN, "example.com"))
    return errors


def dns1035_label(text: str) -> list[str]:
    errors = [_max_length(63, "characters")] if _size(text) > 63 else []
    if not _is_label_1035(text):
        errors.append(regex_error(_LABEL_1035_MESSAGE, _LABEL_1035, "my-name", "abc-123"))
    return errors


def qualified_name(text: str) -> list[str]:
    """content.IsLabelKey: an optional DNS subdomain prefix and '/', then the name."""
    parts = text.split("/")
    if len(parts) > 2:
        return ["a valid label key " + regex_error(_KEY_MESSAGE, _KEY_NAME, "MyName", "my.name", "123-abc") +
                " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    errors = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors += ["prefix part " + m for m in dns1123_subdomain(prefix, "bytes")]
    if not name:
        errors.append("name part must be non-empty")
    elif _size(name) > 63:
        errors.append("name part " + _max_length(63, "bytes"))
    if not _is_key_name(name):
        errors.append("name part " + regex_error(_KEY_MESSAGE, _KEY_NAME, "MyName", "my.name", "123-abc"))
    return errors


def label_value(text: str) -> list[str]:
    errors = [_max_length(63, "bytes")] if _size(text) > 63 else []
    if not _is_label_value(text):
        errors.append(regex_error(_VALUE_MESSAGE, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errors


def _mask_trailing_dash(text: str) -> str:
    """api/validation maskTrailingDash: a generateName prefix may end in '-' (the last two
    bytes become an 'a', as upstream writes it)."""
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > 1 and raw.endswith(b"-"):
        return (raw[:-2] + b"a").decode("utf-8", "surrogateescape")
    return text


def _prefixed(validate: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda text: validate(_mask_trailing_dash(text))


def uri(text: str) -> list[str]:
    """url.ParseRequestURI's error, as url.Error prints it: parse "<text>": <why>."""
    try:
        parse(text, True)
    except URLError as exc:
        return [f"parse {go_quote(text)}: {exc}"]
    return []


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def is_date(text: str) -> bool:
    """time.Parse("2006-01-02", text): four-digit year (0 included), two-digit month and day,
    the day within its month."""
    match = _DATE.fullmatch(text)
    if not match:
        return False
    year, month, day = (int(part) for part in match.groups())
    return 1 <= month <= 12 and 1 <= day <= _days_in(month, year)


def is_datetime(text: str) -> bool:
    """strfmt.IsDateTime: lowercased and split at every 't', a date before the first and a
    time (hours up to 23, minutes and seconds up to 59, compared as text) after it; what
    follows a second 't' is not read."""
    if _size(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not is_date(parts[0]):
        return False
    match = _TIME.fullmatch(parts[1])
    return match is not None and match[1] <= "23" and match[2] <= "59" and match[3] <= "59"


def _check(valid: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda text: [] if valid(text) else [message]


#: format.go ConstantFormats: each validator by the name `format.<name>()` and `format.named()` use
FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": dns1123_label,
    "dns1123Subdomain": dns1123_subdomain,
    "dns1035Label": dns1035_label,
    "qualifiedName": qualified_name,
    "dns1123LabelPrefix": _prefixed(dns1123_label),
    "dns1123SubdomainPrefix": _prefixed(dns1123_subdomain),
    "dns1035LabelPrefix": _prefixed(dns1035_label),
    "labelValue": label_value,
    "uri": uri,
    "uuid": _check(lambda text: _UUID.fullmatch(text) is not None, "does not match the UUID format"),
    "byte": _check(lambda text: _BASE64.fullmatch(text) is not None, "invalid base64"),
    "date": _check(is_date, "invalid date"),
    "datetime": _check(is_datetime, "invalid datetime"),
}


#: the two functions that return optionals, which a Python implementation cannot: declared in
#: the environment's config for the checker; cel.rewrite routes their calls through
#: draguard_format_named and draguard_format_errors, whose empty list stands for none
DECLARATIONS = """functions:
  - name: format.named
    overloads:
      - id: format-named
        args:
          - type_name: string
        return:
          type_name: optional_type
          params:
            - type_name: kubernetes.NamedFormat
  - name: validate
    overloads:
      - id: format-validate
        target:
          type_name: kubernetes.NamedFormat
        args:
          - type_name: string
        return:
          type_name: optional_type
          params:
            - type_name: list
              params:
                - type_name: string
"""


def function_table(rt: _Runtime) -> list[Overload]:
    """(name, overload id, return type, parameter types, is member, implementation): each
    `format.<name>()`, and what the optional-returning functions are evaluated through."""
    T, FormatT = rt.T, rt.FormatT

    def constant(name: str) -> Callable[[], Message]:
        return lambda: rt.NamedFormat(value=name)

    return [(f"format.{name}", f"format-{name}", FormatT, [], False, constant(name)) for name in FORMATS] + [
        ("draguard_format_named", "draguard_format_named_string", T.List(FormatT), [T.STRING], False,
         lambda name: [rt.NamedFormat(value=name)] if name in FORMATS else []),
        ("draguard_format_errors", "draguard_format_errors_format_string", T.List(T.STRING), [FormatT, T.STRING],
         False, lambda named, text: FORMATS[named.value](text)),
    ]
