"""The house's one-way imports (DESIGN.md "The house"): surfaces -> conversation -> plan -> estimate / knowledge
-> records, with render and store beside them. A lower layer that imports a higher one, or anything below the
surfaces that imports Slack or click, fails here with the file and the import that broke the rule."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parents[1] / "bot"

# What each layer may import from bot/ besides itself. `plan -> render` is the advisor's wording through the
# templates; the planner's rewrite returns data only and this edge goes with it.
ALLOWED = {
    "records": set(),
    "knowledge": {"records"},
    "estimate": {"records", "knowledge"},
    "store": {"records"},
    "render": {"records", "knowledge"},
    "plan": {"records", "knowledge", "estimate", "render"},
    "conversation": {"records", "knowledge", "estimate", "plan", "render"},
    "surfaces": {"records", "knowledge", "estimate", "plan", "render", "conversation", "store"},
}
IO_LIBRARIES = {"slack_bolt", "slack_sdk", "click", "waitress"}


def _imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{path}:{node.lineno}: use absolute imports (from bot.<layer>.<module> import ...)"
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _modules() -> list[Path]:
    return sorted(p for p in BOT.rglob("*.py") if len(p.relative_to(BOT).parts) > 1)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(BOT)))
def test_imports_go_one_way(path):
    layer = path.relative_to(BOT).parts[0]
    assert layer in ALLOWED, f"bot/{layer}/ is not a layer of DESIGN.md's house; add it to ALLOWED with its edges"
    for line, module in _imports(path):
        top, _, rest = module.partition(".")
        if top == "bot" and rest:
            target = rest.split(".")[0]
            assert target == layer or target in ALLOWED[layer], \
                f"bot/{path.relative_to(BOT)}:{line} imports {module}: {layer} may import only {sorted(ALLOWED[layer])}"
        if layer != "surfaces":
            assert top not in IO_LIBRARIES, f"bot/{path.relative_to(BOT)}:{line} imports {top}: only bot/surfaces/ may"


def test_every_module_lives_in_a_layer():
    loose = [p.name for p in BOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert loose == [], f"modules directly in bot/ {loose}: move each into the layer it belongs to"


def test_python_dash_m_bot_is_the_command():
    out = subprocess.run([sys.executable, "-m", "bot", "--help"], capture_output=True, text=True, check=True).stdout
    assert "ask" in out and "estimate" in out and "audit" in out
