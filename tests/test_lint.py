"""`make lint` is clean, and `make test` (CI) fails on a new finding: ruff with the rules in pyproject.toml."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _ruff() -> list[str]:
    exe = Path(sys.executable).with_name("ruff")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("ruff")
    if found:
        return [found]
    pytest.fail("ruff is not installed: it is in the test extras (pip install -e '.[test]', which `make install` runs)")


def test_ruff_finds_nothing():
    proc = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, "ruff findings (fix them, or see [tool.ruff] in pyproject.toml):\n" + proc.stdout + proc.stderr


def test_ruff_catches_a_defect(tmp_path):
    """The configuration really lints: an unused import and a blind except in a file under bot/surfaces fail."""
    bad = tmp_path / "bot" / "surfaces" / "bad.py"
    bad.parent.mkdir(parents=True)
    bad.write_text("import os\n\n\ndef f():\n    try:\n        return 1\n    except Exception:\n        return 2\n")
    proc = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise",
                           "--config", str(ROOT / "pyproject.toml"), str(bad)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert "F401" in proc.stdout and "BLE001" in proc.stdout


def test_make_lint_is_a_target():
    make = (ROOT / "Makefile").read_text()
    assert "\nlint: install\n\t@$(BIN)/ruff check .\n" in make
