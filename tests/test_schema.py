"""The JSON Schema editors use for knowledge/*.yaml (docs/knowledge.schema.json): generated from the records,
committed equal to them, accepting every real knowledge file and refusing what the records refuse."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from bot.knowledge.schema import knowledge_schema

REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "docs" / "knowledge.schema.json"


def test_the_committed_schema_is_the_generated_one():
    assert json.loads(COMMITTED.read_text(encoding="utf-8")) == knowledge_schema(), \
        "regenerate it: gpu-advisor kb schema -o docs/knowledge.schema.json"


def test_every_knowledge_file_passes_and_mistakes_do_not():
    validator = jsonschema.Draft202012Validator(knowledge_schema())
    files = sorted((REPO / "knowledge").rglob("*.yaml"))
    assert len(files) >= 10
    for path in files:
        if "local" in path.relative_to(REPO / "knowledge").parts:
            continue
        doc = json.loads(json.dumps(yaml.safe_load(path.read_text(encoding="utf-8")), default=str))  # dates as
        errors = [e.message[:300] for e in validator.iter_errors(doc)]                       # an editor sees them
        assert not errors, f"{path.name}: {errors[:3]}"
    gpu = yaml.safe_load((REPO / "knowledge" / "gpus.yaml").read_text(encoding="utf-8"))["gpus"][0]
    for wrong in ({"gpu": [gpu]},                                   # unknown kind
                  {"gpus": [{**gpu, "memory_gb": 80}]},             # misspelt field (records forbid extras)
                  {"gpus": [{**gpu, "memory_gib": "eighty"}]}):     # wrong type
        assert list(validator.iter_errors(wrong)), wrong
