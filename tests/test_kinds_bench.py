"""The non-LLM accuracy bench: its rows cite real sources, and the README shows exactly what it prints."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import kinds_accuracy  # noqa: E402


def test_rows_cite_sources_on_file(kb):
    rows = kinds_accuracy.evaluate()
    assert {r["source"] for r in rows} <= set(kb.sources)
    assert len(kinds_accuracy.scored([r for r in rows if r["kind"] == "vision"])) >= 5
    assert len(kinds_accuracy.scored([r for r in rows if r["kind"] == "diffusion"])) >= 5
    assert len([r for r in rows if r["kind"] == "speech"]) >= 3


def test_readme_tables_are_the_bench_output():
    rows = kinds_accuracy.evaluate()
    readme = (ROOT / "README.md").read_text()
    assert kinds_accuracy.summary_markdown(rows) in readme
    assert kinds_accuracy.markdown(rows) in readme
