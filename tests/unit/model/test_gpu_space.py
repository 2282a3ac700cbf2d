"""model.gpu.CEL_SPACE, written out, is what CEL's trim() strips: every character Python
calls a space, but U+001C..U+001F (which Go's unicode.IsSpace and Unicode's White_Space do
not count), over the whole of Unicode."""

import sys

from draguard.model.gpu import CEL_SPACE, hides_devices


def test_cel_space_is_unicode_white_space():
    derived = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace() and c not in "\x1c\x1d\x1e\x1f")
    assert CEL_SPACE == derived


def test_a_value_in_cel_space_hides_devices_and_one_in_the_gap_does_not():
    assert hides_devices("\u3000 void\u2029")
    assert not hides_devices("\x1cvoid")
