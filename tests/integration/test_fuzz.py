"""The loader and the whole lint run never raise, whatever the bytes."""

import io
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from draguard.core.config import Config
from draguard.engine import lint_paths
from draguard.engine.lint import Reading

from support.paths import corpus_files


def lint_bytes(data: bytes):
    result = lint_paths(["-"], Config(), Reading(stdin=io.BytesIO(data)))
    for finding in result.findings:
        assert finding.line >= 1 and finding.column >= 1
    return result


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes(data):
    lint_bytes(data)


YAML_ALPHABET = st.sampled_from(list("abc:- \n\t{}[]&*!|>'\"#%@`,?0123456789.") + ["---", "{{", "<<: *a", "&a "])


@settings(max_examples=300, deadline=None)
@given(st.lists(YAML_ALPHABET, max_size=200))
def test_random_yaml_like_text(tokens):
    lint_bytes("".join(tokens).encode())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_corpus_files(data):
    files = corpus_files()
    path = data.draw(st.sampled_from(files))
    raw = bytearray(path.read_bytes())
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    for _ in range(data.draw(st.integers(1, 8))):
        op = rng.choice(("flip", "delete", "insert", "duplicate"))
        at = rng.randrange(len(raw) + 1) if raw else 0
        if op == "flip" and raw:
            raw[min(at, len(raw) - 1)] = rng.randrange(256)
        elif op == "delete" and raw:
            del raw[at:at + rng.randrange(1, 40)]
        elif op == "insert":
            raw[at:at] = rng.choice([b":", b"- ", b"\n  ", b"{", b"]", b"&x ", b"*x", b"\t", b"'", b"{{ "])
        elif raw:
            start = rng.randrange(len(raw))
            raw[at:at] = raw[start:start + rng.randrange(1, 200)]
    lint_bytes(bytes(raw))
