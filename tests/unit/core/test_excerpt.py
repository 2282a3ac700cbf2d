"""Bounded messages: what a rule quotes from the input is cut to an excerpt with an ellipsis,
in every report (a 630 KB value made one 2 MB finding line)."""

from __future__ import annotations

import json

import yaml

from draguard.core.excerpt import MAX_MESSAGE, MAX_WORD, bounded


def test_short_text_and_any_kubernetes_name_are_kept_whole():
    name = "a" * 253  # the longest DNS subdomain name
    assert bounded(f"container '{name}' runs privileged") == f"container '{name}' runs privileged"


def test_an_overlong_value_is_cut_with_an_ellipsis_and_its_length():
    out = bounded("sets CUDA_VISIBLE_DEVICES=" + "7" * 100_000 + " in container 'c'")
    assert out.startswith("sets CUDA_VISIBLE_DEVICES=777") and "… (100,021 characters)" in out
    assert out.endswith(" in container 'c'") and len(out) < MAX_WORD + 60


def test_many_values_with_blanks_end_at_the_message_bound():
    out = bounded("values: " + "ab " * 50_000)
    assert len(out) < MAX_MESSAGE + 40 and out.endswith("more characters)")


def _hostile(size: int) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c" * 300, "image": "x",
                                    "env": [{"name": "CUDA_VISIBLE_DEVICES", "value": "0," * (size // 2)}],
                                    "resources": {"limits": {"nvidia.com/gpu": "9" * 300}}}]}}
    odd = {"apiVersion": "v1", "kind": "K" * 300, "metadata": {"name": "n" * 300}}
    return yaml.safe_dump_all([pod, odd], width=1 << 30)


def test_no_report_line_quotes_a_value_whole(cli, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(_hostile(630_000))
    for fmt in ("text", "json", "github", "junit"):
        done = cli("lint", "--no-config", "-f", fmt, path)
        assert done.code in (0, 1), done.err
        longest = max(len(line) for line in done.out.splitlines())
        assert longest < 3 * MAX_MESSAGE, (fmt, longest)
    sarif = json.loads(cli("lint", "--no-config", "-f", "sarif", path).out)  # one line: its messages
    assert max(len(r["message"]["text"]) for r in sarif["runs"][0]["results"]) < 3 * MAX_MESSAGE
    report = json.loads(cli("lint", "--no-config", "-f", "json", path).out)
    assert any("characters)" in f["message"] for f in report["findings"])
