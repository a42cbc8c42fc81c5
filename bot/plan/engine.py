"""A deterministic rule engine over named facts: all / any / not trees, typed and validated at load time.

Rules live in rules/advice.yaml, facts are declared in rules/facts.yaml (with their human names). Evaluation
returns what the rules require / prefer / demote / exclude of candidate instances, the checklist items they add, and a
trace saying, for every rule, whether it fired and which conditions decided, in the user's language.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bot.records.errors import KnowledgeError, Problem
from bot.knowledge.loader import did_you_mean, read_yaml, validation_problems
from bot.plan.critic import FILE as CRITIC_FILE, check_invariants
from bot.plan.operators import OPERATORS

ATTRIBUTES = {   # candidate attributes that require / prefer / demote / exclude may name
    "nvlink": "GPU-to-GPU link is NVLink/NVSwitch/HCCS",
    "rdma": "RDMA (RoCE / InfiniBand / EFA) between nodes",
    "use": "the vendor's intended use of the flavor",
    "gpu_positioning": "what the GPU vendor positions the card for",
    "bf16": "the GPU computes in bf16",
    "fp8": "the GPU computes in fp8",
    "evidence": "how the flavor is documented",
    "vgpu": "a virtual GPU slice rather than a whole GPU",
    "multi_gpu": "the flavor has more than one GPU",
}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cond(Strict):
    fact: str
    op: str
    value: Any = None


class All(Strict):
    all: list["Node"] = Field(min_length=1)


class AnyOf(Strict):
    any: list["Node"] = Field(min_length=1)


class Not(Strict):
    not_: "Node" = Field(alias="not")
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


Node = Union[Cond, All, AnyOf, Not]
All.model_rebuild()
AnyOf.model_rebuild()
Not.model_rebuild()


class Constraint(Strict):
    attribute: str
    value: Any
    weight: float = 1.0


class CheckAction(Strict):
    item: Literal["oom", "topology", "data", "billing"]
    status: Literal["ok", "warn", "fail"]
    say: str


class Then(Strict):
    require: list[Constraint] = []
    prefer: list[Constraint] = []
    # a plan that does not meet a `demote` constraint ranks after every plan that meets the job's targets and does;
    # it is never excluded. For what a source says to choose ("必须选择配备 RDMA 的实例") but which is not a
    # condition for the job to run: NCCL falls back to TCP sockets without RDMA, slower, and the speed model times it
    demote: list[Constraint] = []
    exclude: list[Constraint] = []
    check: list[CheckAction] = []
    note: list[str] = []
    billing: str | None = None        # the billing mode this rule recommends


class Quote(Strict):
    """The source sentence a rule rests on, verbatim (as recorded in that source's note in knowledge/sources)."""
    source: str
    quote: str


class Rule(Strict):
    id: str
    stage: Literal["select", "check"] = "select"
    priority: int = 50
    description: str | None = None
    when: Node
    then: Then
    cite: list[str] = Field(min_length=1)
    justify: list[Quote] = []         # a rule that says "require" or "demote" names the sentence it rests on

    @model_validator(mode="before")
    @classmethod
    def _when_default(cls, data: Any) -> Any:
        return data


class Fact(Strict):
    type: Literal["str", "num", "bool", "list"]
    en: str
    zh: str
    values: list[Any] | None = None


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    facts: dict[str, Fact]
    version: str
    invariants: dict[str, Any] = field(default_factory=dict)     # the critic's (rules/critic.yaml, bot/plan/critic.py)


@dataclass
class Outcome:
    require: list[tuple[Constraint, str]] = field(default_factory=list)
    prefer: list[tuple[Constraint, str]] = field(default_factory=list)
    demote: list[tuple[Constraint, str]] = field(default_factory=list)
    exclude: list[tuple[Constraint, str]] = field(default_factory=list)
    checks: list[tuple[CheckAction, list[str], str]] = field(default_factory=list)
    notes: list[tuple[str, list[str], str]] = field(default_factory=list)
    billing: list[tuple[str, list[str], str]] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    fired: list[str] = field(default_factory=list)


# ----- loading and validation ----------------------------------------------------------------------------------
def load_rules(rules_dir: Path, source_ids: set[str] | None = None, template_keys: set[str] | None = None) -> RuleSet:
    rs, problems = check_rules(rules_dir, source_ids, template_keys)
    if problems:
        raise KnowledgeError(problems)
    return rs


def check_rules(rules_dir: Path, source_ids: set[str] | None = None, template_keys: set[str] | None = None
                ) -> tuple[RuleSet | None, list[Problem]]:
    import hashlib
    problems: list[Problem] = []
    facts_doc = read_yaml(rules_dir / "facts.yaml", problems, "facts.yaml") or {}
    facts: dict[str, Fact] = {}
    for name, spec in (facts_doc.get("facts") or {}).items():
        try:
            facts[name] = Fact(**spec)
        except ValidationError as exc:
            problems.extend(validation_problems("facts.yaml", f"facts.{name}", Fact, exc))
    rules: list[Rule] = []
    digest = hashlib.sha256()
    for path in sorted(rules_dir.glob("*.yaml")):
        digest.update(path.name.encode() + path.read_bytes())
        if path.name in ("facts.yaml", "lexicon.yaml", "dialogue.yaml", CRITIC_FILE):
            continue
        doc = read_yaml(path, problems, path.name) or {}
        seen: set[str] = set()
        for i, item in enumerate(doc.get("rules") or []):
            rid = item.get("id", f"#{i}") if isinstance(item, dict) else f"#{i}"
            try:
                rule = Rule(**item)
            except ValidationError as exc:
                problems.extend(validation_problems(path.name, f"rules[{rid}]", Rule, exc))
                continue
            if rule.id in seen:
                problems.append(Problem(path.name, f"rules[{rid}]", "duplicate rule id", "rename one of them"))
            seen.add(rule.id)
            problems.extend(_check_rule(path.name, rule, facts, source_ids, template_keys))
            rules.append(rule)
    problems.extend(_contradictions(rules))
    invariants, critic_problems = check_invariants(rules_dir, source_ids)
    problems.extend(critic_problems)
    if problems:
        return None, problems
    rules.sort(key=lambda r: (-r.priority, r.id))
    return RuleSet(tuple(rules), facts, digest.hexdigest()[:12], invariants), []


def _conds(node: Node) -> list[Cond]:
    if isinstance(node, Cond):
        return [node]
    if isinstance(node, All):
        return [c for n in node.all for c in _conds(n)]
    if isinstance(node, AnyOf):
        return [c for n in node.any for c in _conds(n)]
    return _conds(node.not_)


def _check_rule(file: str, rule: Rule, facts: dict[str, Fact], source_ids, template_keys) -> list[Problem]:
    out = []
    where = f"rules[{rule.id}]"
    for c in _conds(rule.when):
        if c.fact not in facts:
            guess = did_you_mean(c.fact, facts)
            out.append(Problem(file, f"{where}.when", f"unknown fact '{c.fact}'",
                               f"did you mean '{guess[0]}'?" if guess else "declare it in facts.yaml"))
        if c.op not in OPERATORS:
            guess = did_you_mean(c.op, OPERATORS)
            out.append(Problem(file, f"{where}.when", f"unknown operator '{c.op}'",
                               f"did you mean '{guess[0]}'?" if guess else f"use one of {', '.join(OPERATORS)}"))
        elif OPERATORS[c.op].takes_value and c.value is None:
            out.append(Problem(file, f"{where}.when", f"operator '{c.op}' needs a value", "add 'value: ...'"))
        fact = facts.get(c.fact)
        if fact and fact.values is not None and c.op in ("eq", "ne", "in", "not_in"):
            vals = c.value if isinstance(c.value, list) else [c.value]
            for v in vals:
                if v not in fact.values:
                    out.append(Problem(file, f"{where}.when", f"'{v}' is not a value of fact '{c.fact}'",
                                       f"use one of {fact.values}"))
    for kind in ("require", "prefer", "demote", "exclude"):
        for con in getattr(rule.then, kind):
            if con.attribute not in ATTRIBUTES:
                guess = did_you_mean(con.attribute, ATTRIBUTES)
                out.append(Problem(file, f"{where}.then.{kind}", f"unknown attribute '{con.attribute}'",
                                   f"did you mean '{guess[0]}'?" if guess else f"use one of {', '.join(ATTRIBUTES)}"))
    if (rule.then.require or rule.then.demote) and not rule.justify:
        kind = "require" if rule.then.require else "demote"
        out.append(Problem(file, f"{where}.justify", f"a '{kind}' rule names no source sentence that justifies it",
                           "add justify: [{source: <id from cite>, quote: <the sentence>}] or make it 'prefer'"))
    for q in rule.justify:
        if q.source not in rule.cite:
            out.append(Problem(file, f"{where}.justify", f"quote from '{q.source}', which the rule does not cite",
                               f"add '{q.source}' to cite"))
    if source_ids is not None:
        for sid in rule.cite:
            if sid not in source_ids:
                guess = did_you_mean(sid, source_ids)
                out.append(Problem(file, f"{where}.cite", f"unknown source '{sid}'",
                                   f"did you mean '{guess[0]}'?" if guess else "cite a source id from knowledge/"))
    if template_keys is not None:
        says = [c.say for c in rule.then.check] + list(rule.then.note)
        if rule.then.billing:
            says.append(f"billing_mode.{rule.then.billing}")
        for key in says:
            if key not in template_keys:
                guess = did_you_mean(key, template_keys)
                out.append(Problem(file, f"{where}.then", f"no text template '{key}'",
                                   f"did you mean '{guess[0]}'?" if guess else "add it to bot/render/templates/messages.yaml"))
    return out


def _contradictions(rules: list[Rule]) -> list[Problem]:
    """Two rules of the same priority requiring different values of one attribute cannot both be obeyed."""
    out = []
    seen: dict[tuple[int, str, str], tuple[str, Any]] = {}
    for r in rules:
        for con in r.then.require:
            key = (r.priority, r.stage, con.attribute)
            if key in seen and seen[key][1] != con.value:
                other = seen[key][0]
                out.append(Problem("rules", f"rules[{r.id}].then.require",
                                   f"requires {con.attribute}={con.value!r} but rule '{other}' requires "
                                   f"{con.attribute}={seen[key][1]!r} at the same priority {r.priority}",
                                   "give one of them a higher priority, or make their conditions exclusive"))
            seen.setdefault(key, (r.id, con.value))
    return out


# ----- evaluation ----------------------------------------------------------------------------------------------
def evaluate(rs: RuleSet, facts: dict[str, Any], stage: str, lang: str = "en") -> Outcome:
    out = Outcome()
    for rule in rs.rules:
        if rule.stage != stage:
            continue
        ok, why = _eval(rule.when, facts, rs, lang)
        out.trace.append({"rule": rule.id, "fired": ok, "because": why})
        if not ok:
            continue
        out.fired.append(rule.id)
        cite = list(rule.cite)
        for con in rule.then.require:
            out.require.append((con, rule.id))
        for con in rule.then.prefer:
            out.prefer.append((con, rule.id))
        for con in rule.then.demote:
            out.demote.append((con, rule.id))
        for con in rule.then.exclude:
            out.exclude.append((con, rule.id))
        for chk in rule.then.check:
            out.checks.append((chk, cite, rule.id))
        for key in rule.then.note:
            out.notes.append((key, cite, rule.id))
        if rule.then.billing:
            out.billing.append((rule.then.billing, cite, rule.id))
    return out


def _label(rs: RuleSet, fact: str, lang: str) -> str:
    f = rs.facts.get(fact)
    return (f.zh if lang == "zh" else f.en) if f else fact


def _eval(node: Node, facts: dict[str, Any], rs: RuleSet, lang: str) -> tuple[bool, str]:
    """(held, the phrases that decided): all -> every held phrase, or the first that failed."""
    joiner_and = "，且" if lang == "zh" else " and "
    joiner_or = "，或" if lang == "zh" else " or "
    if isinstance(node, Cond):
        op = OPERATORS[node.op]
        held = op.test(facts.get(node.fact), node.value)
        phrase = op.phrase(lang, _label(rs, node.fact, lang), node.value)
        if not held:
            actual = facts.get(node.fact)
            shown = "未知" if actual is None and lang == "zh" else ("unknown" if actual is None else actual)
            phrase = (f"并非“{phrase}”（实际：{shown}）" if lang == "zh" else f"not: {phrase} (it is {shown})")
        return held, phrase
    if isinstance(node, All):
        phrases = []
        for child in node.all:
            ok, why = _eval(child, facts, rs, lang)
            if not ok:
                return False, why
            phrases.append(why)
        return True, joiner_and.join(phrases)
    if isinstance(node, AnyOf):
        failed = []
        for child in node.any:
            ok, why = _eval(child, facts, rs, lang)
            if ok:
                return True, why
            failed.append(why)
        return False, joiner_or.join(failed)
    ok, why = _eval(node.not_, facts, rs, lang)
    return (not ok), (f"并非（{why}）" if lang == "zh" else f"not ({why})") if ok else why


def satisfies(attrs: dict[str, Any], con: Constraint) -> bool:
    actual = attrs.get(con.attribute)
    if isinstance(actual, (list, tuple, set)):
        return con.value in actual
    return actual == con.value
