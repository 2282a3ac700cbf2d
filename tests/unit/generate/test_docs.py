"""Rule docs are generated from the registry; stale docs fail here (fix: python -m draguard.docs)."""

from pathlib import Path

from draguard.generate.docs import expected_files
from draguard.rules import REGISTRY

from support.paths import ROOT


def test_generated_docs_are_up_to_date():
    stale = [path for path, content in expected_files(str(ROOT)).items()
             if not Path(path).is_file() or Path(path).read_text(encoding="utf-8") != content]
    assert not stale, f"stale docs, run `python -m draguard.generate.docs`: {stale}"
    extra = {p.name for p in (ROOT / "docs" / "rules").iterdir()} - {f"{r.id}.md" for r in REGISTRY} - {"index.md"}
    assert not extra, f"docs for rules that no longer exist: {extra}"


def test_every_rule_is_documented_fully():
    for rule in REGISTRY:
        assert rule.reference.startswith("https://"), rule.id
        assert len(" ".join(rule.rationale.split())) > 80, rule.id
