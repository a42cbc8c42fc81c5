"""The rule engine: conditions, phrases, load-time validation, contradictions; and the real rules."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.plan.engine import check_rules, evaluate

ROOT = Path(__file__).resolve().parent.parent
FACTS = {"facts": {"task": {"type": "str", "en": "the job", "zh": "任务", "values": ["train", "inference"]},
                   "gpus_needed": {"type": "num", "en": "GPUs needed", "zh": "所需卡数"},
                   "multi_node": {"type": "bool", "en": "several nodes", "zh": "多机"}}}


def ruleset(tmp: Path, rules: list[dict]):
    (tmp / "facts.yaml").write_text(yaml.safe_dump(FACTS, allow_unicode=True))
    (tmp / "advice.yaml").write_text(yaml.safe_dump({"rules": rules}, allow_unicode=True))
    return check_rules(tmp, {"s1"}, {"say.x"})


RULE = {"id": "r1", "when": {"all": [{"fact": "task", "op": "eq", "value": "train"},
                                     {"fact": "gpus_needed", "op": "gt", "value": 1}]},
        "then": {"require": [{"attribute": "nvlink", "value": True}]}, "cite": ["s1"],
        "justify": [{"source": "s1", "quote": "a sentence of s1"}]}


@pytest.mark.parametrize("facts, fired, phrase", [
    ({"task": "train", "gpus_needed": 8}, True, "the job is train and GPUs needed is above 1"),   # both hold
    ({"task": "train", "gpus_needed": 1}, False, "not: GPUs needed is above 1 (it is 1)"),        # first failure
    ({"task": "inference", "gpus_needed": 8}, False, "not: the job is train (it is inference)"),  # short-circuit
    ({"task": "train"}, False, "it is unknown"),                                                  # missing fact
])
def test_trace_says_which_condition_decided(tmp_path, facts, fired, phrase):
    rs, problems = ruleset(tmp_path, [RULE])
    assert not problems
    out = evaluate(rs, facts, "select", "en")
    assert out.trace == [{"rule": "r1", "fired": fired, "because": out.trace[0]["because"]}]
    assert phrase in out.trace[0]["because"]
    assert bool(out.require) is fired


def test_trace_in_chinese(tmp_path):
    rs, _ = ruleset(tmp_path, [RULE])
    out = evaluate(rs, {"task": "train", "gpus_needed": 8}, "select", "zh")
    assert out.trace[0]["because"] == "任务为train，且所需卡数大于1"


def test_any_and_not(tmp_path):
    rule = {**RULE, "when": {"any": [{"fact": "multi_node", "op": "is_true"},
                                     {"not": {"fact": "task", "op": "eq", "value": "train"}}]}}
    rs, _ = ruleset(tmp_path, [rule])
    assert evaluate(rs, {"task": "inference", "multi_node": False}, "select").fired == ["r1"]
    assert evaluate(rs, {"task": "train", "multi_node": False}, "select").fired == []


@pytest.mark.parametrize("bad, words", [
    ({**RULE, "when": {"fact": "taks", "op": "eq", "value": "train"}}, "did you mean 'task'"),      # unknown fact
    ({**RULE, "when": {"fact": "task", "op": "equals", "value": "train"}}, "unknown operator"),      # unknown op
    ({**RULE, "when": {"fact": "task", "op": "eq", "value": "trian"}}, "not a value of fact"),      # bad value
    ({**RULE, "cite": []}, "at least 1"),                                                           # no citation
    ({**RULE, "cite": ["s9"]}, "unknown source 's9'"),                                              # bad citation
    ({**RULE, "then": {"require": [{"attribute": "nvlnk", "value": True}]}}, "did you mean 'nvlink'"),
    ({**RULE, "then": {"check": [{"item": "oom", "status": "ok", "say": "say.y"}]}}, "no text template"),
    ({**RULE, "then": {"demote": [{"attribute": "rdmaa", "value": True}]}}, "did you mean 'rdma'"),
    ({**RULE, "justify": [], "then": {"demote": [{"attribute": "rdma", "value": True}]}},
     "a 'demote' rule names no source sentence"),
])
def test_bad_rules_are_refused_at_load(tmp_path, bad, words):
    _rs, problems = ruleset(tmp_path, [bad])
    assert any(words in str(p) for p in problems), [str(p) for p in problems]
    assert all("advice.yaml" in str(p) or "rules" in str(p) for p in problems)


def test_contradicting_requirements_at_one_priority(tmp_path):
    other = {**RULE, "id": "r2", "then": {"require": [{"attribute": "nvlink", "value": False}]}}
    _rs, problems = ruleset(tmp_path, [RULE, other])
    assert any("same priority" in str(p) for p in problems)


def test_the_real_rules_validate(kb):
    from bot.render.templates import default_templates
    rs, problems = check_rules(ROOT / "rules", set(kb.sources), default_templates().keys)
    assert problems == [], [str(p) for p in problems]
    assert len(rs.rules) >= 20


def test_demote_is_collected_apart_from_require(tmp_path):
    """`demote` ranks a plan last without ruling it out (issue 16): the engine hands it over on its own list."""
    rule = {**RULE, "then": {"demote": [{"attribute": "rdma", "value": True}]}}
    rs, problems = ruleset(tmp_path, [rule])
    assert not problems
    out = evaluate(rs, {"task": "train", "gpus_needed": 8}, "select")
    assert [(c.attribute, rid) for c, rid in out.demote] == [("rdma", "r1")] and not out.require
