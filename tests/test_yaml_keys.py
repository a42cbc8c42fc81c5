"""No YAML the product reads says one key twice: PyYAML keeps the last silently, so a second definition of a text
template ('lost.breaks.untimed' was written three times, one of them a copy of another key's text) or of a knowledge
field would change an answer without anyone seeing it."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([*ROOT.glob("knowledge/**/*.yaml"), *ROOT.glob("rules/*.yaml"), *ROOT.glob("bot/**/*.yaml")])
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def duplicate_keys(node: yaml.Node, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            name = getattr(key, "value", "?")
            if name in seen:
                out.append(f"{path}/{name} (line {key.start_mark.line + 1})")
            seen.add(name)
            out += duplicate_keys(value, f"{path}/{name}")
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out += duplicate_keys(item, f"{path}[{i}]")
    return out


def test_the_files_are_found():
    assert len(FILES) > 20 and any(f.name == "messages.yaml" for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_key_is_said_twice(path):
    node = yaml.compose(path.read_text(encoding="utf-8"), Loader=LOADER)
    assert duplicate_keys(node) == [] if node is not None else True


def test_a_duplicate_is_found():
    node = yaml.compose("a: 1\nb: {c: 1, c: 2}\na: 3\n", Loader=LOADER)
    assert duplicate_keys(node) == ["/b/c (line 2)", "/a (line 3)"]
