import re

import pytest

from draguard.core.patterns import Lazy


def test_a_pattern_is_compiled_at_its_first_use_and_reads_as_the_compiled_one():
    broken = Lazy("(")  # not compiled yet: no error
    with pytest.raises(re.error):
        broken.match("x")
    word = Lazy(r"^(\w+)$", re.M)
    assert vars(word) == {"pattern": r"^(\w+)$", "flags": re.M}
    assert word.findall("a\nb c\nd") == ["a", "d"]
    assert word.sub("<\\1>", "a\nb") == "<a>\n<b>"
    assert "findall" in vars(word) and "sub" in vars(word)  # kept: later reads are plain attributes
