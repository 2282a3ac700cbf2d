"""`unified_diff` compares only what lies between the lines two texts share at their start and
end (difflib compared every line of a file where a fix changed a few), and writes a run of
lines added, taken out or replaced as one hunk itself: a diff that patch applies to give the
new text, with difflib's header and ranges, numbered from where the text starts in its file."""

from __future__ import annotations

import difflib
import random
import re

import pytest

from draguard.fix.files import unified_diff

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@\n", re.MULTILINE)


def _difflib(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/x", "b/x")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def _patched(before: str, diff: str) -> str:
    """What applying `diff` to `before` gives (a small `patch` for one-file unified diffs)."""
    source, out, at = before.splitlines(True), [], 0
    hunks = list(_HUNK.finditer(diff))
    for index, hunk in enumerate(hunks):
        start, length = int(hunk[1]), int(hunk[2]) if hunk[2] is not None else 1
        start = start - 1 if length else start
        out += source[at:start]
        at = start
        body = diff[hunk.end():hunks[index + 1].start() if index + 1 < len(hunks) else len(diff)].splitlines(True)
        for k, line in enumerate(body):
            if line.startswith("\\"):
                continue
            text = line[1:] if not (k + 1 < len(body) and body[k + 1].startswith("\\")) else line[1:].rstrip("\n")
            at += line[0] in " -"
            if line[0] in " +":
                out.append(text)
    return "".join(out + source[at:])


@pytest.mark.parametrize("before, after", [
    ("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nd\nX\nY\ne\nf\ng\nh\n"),  # lines added
    ("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\ng\nh\n"),  # lines taken out
    ("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nD\ne\nf\ng\nh\n"),  # one replaced
    ("a\nb\n", "a\nb\nc"),  # at the end, without a line break
    ("a\nb\nc\n", "a\nb\nc\n"),  # nothing
])
def test_a_single_run_is_the_hunk_difflib_writes(before, after):
    assert unified_diff("x", before, after) == _difflib(before, after)


def test_hunks_are_numbered_from_the_first_line_given():
    diff = unified_diff("x", "a\nb\nc\nd\ne\nf\ng\n", "a\nb\nc\nd\nX\ne\nf\ng\n", first_line=41)
    assert "@@ -42,6 +42,7 @@" in diff


def test_every_diff_applies_to_give_the_new_text():
    rnd = random.Random(41)
    for _ in range(3000):
        old = [f"l{rnd.randint(0, 30)}\n" for _ in range(rnd.randint(0, 12))]
        new = list(old)
        for _ in range(rnd.randint(0, 3)):
            at = rnd.randint(0, len(new))
            op = rnd.choice("add")
            if op == "a":
                new[at:at] = [f"n{rnd.randint(0, 5)}\n" for _ in range(rnd.randint(1, 3))]
            elif at < len(new):
                del new[at]
        before, after = "".join(old), "".join(new)
        before, after = (before.rstrip("\n") if rnd.random() < 0.2 else before,
                         after.rstrip("\n") if rnd.random() < 0.2 else after)
        assert _patched(before, unified_diff("x", before, after)) == after, (before, after)


@pytest.mark.parametrize("before, after", [
    ("a\nb\nc\n", "a\nB\nc\n"),  # every line ends with "\n": joined as they are
    ("a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"),  # CRLF ends with "\n" too
    ("a\nb\nc", "a\nB\nc"),  # the last line without a break
    ("a\nb\rc\n", "a\nB\rc\n"),  # a lone CR ends a line for splitlines
    ("a\nb\u2028c\n", "a\nB\u2028c\n"),  # so does a line separator
    ("a\x0cb\nc\n", "a\x0cB\nc\n"),  # and a form feed
    ("a\nb\nc\n", "a\nb\nc\nd"),  # only the new text without a final break
])
def test_lines_without_a_final_newline_are_marked_as_difflib_marks_them(before, after):
    assert unified_diff("x", before, after) == _difflib(before, after)


def test_a_hunk_has_three_lines_of_context_before_its_first_change_as_diff_u():
    """difflib was given the lines from three before the first differing one, and where it
    placed an added line earlier among equal lines (`b` before `b`, `b`) the hunk began with
    fewer than three lines of context (here one: `---`); the hunks are now written from the
    comparison's changes with three, as `diff -u` writes them."""
    before = "  x: 1\na\n---\nb\nb\n  x: 1\n  x: 1\nc\nc\nc\nc\nlimits:\nlimits:\nlimits:\nc\n  x: 1\nlimits:\nb\n"
    after = "  x: 1\na\n---\nb\nb\nb\n  x: 1\n  x: 1\nc\nc\n  x: 1\nb\n---\nb\nc\nc\nlimits:\nlimits:\nlimits:\nb\n"
    diff = unified_diff("x", before, after)
    assert _patched(before, diff) == after
    body = diff.split("@@\n", 1)[1].splitlines()
    first = next(k for k, line in enumerate(body) if line[0] in "+-")
    assert diff.split("\n")[2].startswith("@@ -1,") and first == 3, diff


LEGACY_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p%d, namespace: t}
spec:
  containers:
  - name: c
    image: x
    resources:
      limits: {nvidia.com/gpu: 1, memory: 1Gi}
"""


def test_fix_diff_is_written_from_the_fixes_replacements_comparing_no_text(cli, monkeypatch, tmp_path):
    """A stream of legacy pods: every document's fix takes out lines and adds lines equal to
    some it took out (the `limits:` line kept), which a comparison of the texts matched line by
    line over the whole stream (17 s for 3,400 pods). `fix --diff` writes it from the
    replacements the fixes recorded, every round's (fix.hunks.steps_diff): the same diff, and
    it applies to give the fixed text; no text is compared."""
    from draguard.fix import files

    stream = tmp_path / "stream.yaml"
    stream.write_text("---\n".join(LEGACY_POD % n for n in range(40)))
    args = ("fix", "--no-config", "--unsafe-fixes", "--jobs", "1")
    compared = cli(*args, "--diff", stream)
    assert compared.code == 1 and compared.out.count("resourceClaimTemplateName") == 40

    def refused(*args, **kwargs):
        raise AssertionError("the diff compared the texts")

    monkeypatch.setattr(files, "unified_diff", refused)
    written = cli(*args, "--diff", stream)
    assert (written.code, written.out, written.err) == (compared.code, compared.out, compared.err)
    hunks = written.out[:written.out.index(f"{stream}: would fix")].split("\n", 2)[2]
    before = stream.read_text()
    assert cli(*args, stream).code in (0, 1)
    assert _patched(before, hunks) == stream.read_text()
    assert cli(*args, "--diff", "-", stdin=before).out.split("\n", 2)[2] == hunks  # stdin's too
