"""The published answer contract (issue 33.2): docs/answer.schema.json is generated from the answer models
(bot/records/answer.py), every `ask --json` object carries `schema_version` and validates against the schema: every
planner scenario answer, follow-ups, information replies, and one real `ask --json` run."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from bot.records.answer import answer_schema
from bot.records.models import SCHEMA_VERSION

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "answer.schema.json"
SCENARIOS = yaml.safe_load((REPO / "tests" / "scenarios" / "planner.yaml").read_text(encoding="utf-8"))["scenarios"]
OTHER_TURNS = ["finetune a model", "A10 or L4 for a 13B chatbot, 20 users?", "what is ZeRO-3?", "华为云竞价实例怎么计费",
               "what is the weather today", "help"]


@pytest.fixture(scope="module")
def validator():
    return jsonschema.Draft202012Validator(answer_schema())


def test_the_committed_schema_is_the_models():
    assert json.loads(COMMITTED.read_text(encoding="utf-8")) == answer_schema(), \
        "regenerate it: gpu-advisor schema -o docs/answer.schema.json"


def test_the_schema_is_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(answer_schema())


def _as_asked(reply) -> dict:
    """The object `ask --json` prints for a reply (bot/surfaces/service.py adds the record's id and the session)."""
    return json.loads(json.dumps({"advice_id": "a1b2c3", "session": "s", **reply.model_dump()}, default=str))


@pytest.mark.parametrize("question", [s["q"] for s in SCENARIOS] + OTHER_TURNS)
def test_every_reply_validates(core, validator, question):
    reply, _ = core.turn(question, {})
    obj = _as_asked(reply)
    errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.path))
    assert not errors, [(list(e.path), e.message[:200]) for e in errors[:5]]
    assert obj["schema_version"] == SCHEMA_VERSION


def test_a_reply_that_breaks_the_contract_is_refused(core, validator):
    """The schema is not a formality: a plan without its flavor, or a label outside the four, does not validate."""
    reply, _ = core.turn("serve llama 3 70b for 500 users", {})
    obj = _as_asked(reply)
    del obj["recommendations"][0]["flavor"]
    assert not validator.is_valid(obj)
    obj = _as_asked(reply)
    obj["recommendations"][0]["label"] = "best"
    assert not validator.is_valid(obj)
    obj = _as_asked(reply)
    obj["schema_version"] = "2.0"
    assert not validator.is_valid(obj)


def test_ask_json_on_the_command_line_validates(validator, tmp_path):
    env = {**os.environ, "ADVISOR_DB": str(tmp_path / "advisor.db")}
    out = subprocess.run([sys.executable, "-m", "bot", "ask", "--json", "lora finetune qwen2.5 7b, tight budget"],
                         capture_output=True, text=True, check=True, env=env, cwd=REPO).stdout
    obj = json.loads(out)
    assert not list(validator.iter_errors(obj)) and obj["schema_version"] == SCHEMA_VERSION
    assert obj["text"] and obj["details"] and obj["advice_id"]
