"""The critic's consistency invariant over a rendered answer (issue 29): what the reply says must be true of its own
numbers, whatever the question. Checked on every reply (bot/conversation/turn.py): in tests a problem is a bug
(tests/conftest.py fails any test whose reply has one); at run time the answer says less rather than something
false: each line that breaks a check is left out, and rule_trace records `critic.answer-consistency` with what was
dropped.

The checks, each on the view (bot/records/models.AnswerView) and the reply's data:
- placeholder: no template slot left ('{gpu}'), no 'None' / 'nan', no '-' or '?' standing for a number before a
  unit ('超出 - GiB', 'about ? USD');
- ascend: an answer whose hardware is all Ascend NPUs says nothing of CUDA, NVLink, NCCL, cuBLAS or cuDNN (their
  counterparts are CANN, HCCS and HCCL);
- below: 'below', '下面', '下方' only where a plan or a section follows;
- cheaper: a plan labelled cheapest costs less than the pick, a considered plan that 'costs more' costs more, and the
  pick 'preferred to the cheaper plan below' has one below that is cheaper, on the same measure (the job's cost when
  both have one, else the hour);
- totals: the pick's cost is its hours times its hourly price (within rounding), and a verdict's hours and cards are
  the pick's (or the user's cards').
"""
from __future__ import annotations

import re
from typing import Any

from bot.records.models import AnswerView

PLACEHOLDER = re.compile(
    r"\{[a-z_][a-z0-9_]*\}"                                    # a template slot left unfilled
    r"|(?<![A-Za-z_.])(?:None|nan|NaN|inf)(?![A-Za-z_])"       # Python's words for no number
    r"|(?:^|[\s(（:：，,])[-?？](?:\s?)(?:GiB|GB|TB|USD|CNY|EUR|小时|天|days?|hours?|h|%|卡|GPUs?)(?![A-Za-z])"
    r"|(?<=[A-Za-z0-9\u4e00-\u9fff] )-(?=[,;，；)）]|$)")                # 'NVLink -,': a dash for a missing figure
NVIDIA_WORDS = re.compile(r"CUDA|NVLink|NCCL|cuBLAS|cuDNN|NVSwitch|PYTORCH_CUDA_ALLOC_CONF", re.IGNORECASE)
BELOW = re.compile(r"\bbelow\b|下面|下方|如下")
COSTS_MORE = {"en": "costs more", "zh": "更贵"}
PREFERRED = {"en": "cheaper plan below", "zh": "比下面更便宜的方案"}


def _lines(view: AnswerView) -> list[tuple[str, int, str]]:
    """(where, index, text) of every line the answer shows: sections' lines and details, the checklist, considered
    verdicts, notes and assumptions."""
    out: list[tuple[str, int, str]] = []
    for i, s in enumerate(view.sections):
        out += [(f"section:{s.key}", i, x) for x in s.lines] + [(f"more:{s.key}", i, x) for x in s.more]
        if s.label:
            out.append((f"label:{s.key}", i, s.label))
    out += [("headline", -1, view.headline)]
    out += [("check", -1, c.text) for c in view.checklist]
    out += [("considered", -1, c.verdict) for c in view.considered]
    out += [("note", -1, n) for n in view.notes]
    if view.assumed:
        out.append(("assumed", -1, view.assumed))
    return out


def _cost(r: dict[str, Any], on_job: bool) -> float | None:
    """The job's cost, or the plan's price an hour for all its instances and replicas (hourly_total)."""
    if on_job:
        return r.get("job_cost")
    if r.get("hourly_total"):
        return r["hourly_total"]
    return r["price_per_hour"] * (r.get("instances") or 1) if r.get("price_per_hour") is not None else None


def _same_measure(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float] | None:
    """Two plans' prices on the same measure and currency (a CNY rental beside a USD pick is compared by the planner
    at dated rates, not here), or None."""
    if a.get("currency") != b.get("currency"):
        return None
    for on_job in (True, False):
        x, y = _cost(a, on_job), _cost(b, on_job)
        if x is not None and y is not None:
            return x, y
    return None


def _all_ascend(reply: dict[str, Any], gpus: dict[str, Any]) -> bool:
    ids = {r.get("gpu") for r in reply.get("recommendations") or []} | {
        r.get("gpu") for r in reply.get("considered") or []}
    ids.discard(None)
    return bool(ids) and all(i in gpus and getattr(gpus[i], "vendor", "") == "huawei" for i in ids)


def problems(view: AnswerView, reply: dict[str, Any], gpus: dict[str, Any]) -> list[dict[str, Any]]:
    """Every consistency problem of the answer: {check, where, line (the text or ''), index (its section or -1)}."""
    out: list[dict[str, Any]] = []
    lines = _lines(view)
    for where, i, text in lines:
        if PLACEHOLDER.search(text or ""):
            out.append({"check": "placeholder", "where": where, "index": i, "line": text})
    if _all_ascend(reply, gpus):
        out += [{"check": "ascend", "where": w, "index": i, "line": x} for w, i, x in lines
                if NVIDIA_WORDS.search(x or "")]
    shown = [i for i, s in enumerate(view.sections) if (s.lines or s.more)]
    plans = [r for r in reply.get("recommendations") or [] if r.get("label") != "yours"]
    for where, i, text in lines:
        if where.startswith("section:") and BELOW.search(text or "") and not plans and not any(j > i for j in shown):
            out.append({"check": "below", "where": where, "index": i, "line": text})
    out += _cheaper(reply, view)
    out += _totals(reply)
    return out


def _cheaper(reply: dict[str, Any], view: AnswerView) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    recs = [r for r in reply.get("recommendations") or [] if r.get("label") != "yours"]
    if not recs:
        return out
    pick = recs[0]
    for r in recs[1:]:
        pair = _same_measure(r, pick)
        if r.get("label") == "cheapest" and pair and pair[0] >= pair[1] * (1 + 1e-9):
            out.append({"check": "cheaper", "where": "section:cheapest", "index": -1,
                        "line": f"cheapest {r.get('flavor')} at {pair[0]:.4g} against the pick's {pair[1]:.4g}"})
    lang = reply.get("lang") or "en"
    others = [*recs[1:], *(reply.get("considered") or [])]
    # a plan in another currency may be the cheaper one (the planner compares at dated rates): not judged here
    cheaper_below = [r for r in others if r.get("currency") != pick.get("currency")
                     or ((pair := _same_measure(r, pick)) and pair[0] < pair[1])]
    for s in view.sections:
        for x in s.lines + s.more:
            if PREFERRED[lang] in x and not cheaper_below:
                out.append({"check": "cheaper", "where": f"{'section' if x in s.lines else 'more'}:{s.key}",
                            "index": -1, "line": x})
    for row in view.considered:
        if COSTS_MORE[lang] in (row.verdict or "") and row.price_per_hour is not None \
                and pick.get("price_per_hour") is not None and row.currency == pick.get("currency") \
                and _cheaper_than_pick(reply, row, pick):
            out.append({"check": "cheaper", "where": "considered", "index": -1, "line": row.verdict})
    return out


def _cheaper_than_pick(reply: dict[str, Any], row, pick: dict[str, Any]) -> bool:
    """A considered plan said to cost more is cheaper than the pick: on the job's cost when both have one (a plan
    cheaper by the hour may cost more for the whole job, being slower), else by the hour for all its instances."""
    rows = [*(reply.get("recommendations") or [])[1:], *(reply.get("considered") or [])]
    full = next((r for r in rows if r.get("flavor") == row.flavor
                 and (r.get("instances") or 1) * max(1, r.get("replicas") or 1) == row.instances), {})
    if full.get("job_cost") is not None and pick.get("job_cost") is not None:
        return full["job_cost"] < pick["job_cost"] * 0.999
    # the plans' prices for all their instances and replicas (hourly_total; a row without it is one instance's)
    mine = full.get("hourly_total") or row.price_per_hour * row.instances
    theirs = pick.get("hourly_total") or pick["price_per_hour"] * (pick.get("instances") or 1)
    return mine < theirs * 0.999


def _totals(reply: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    recs = [r for r in reply.get("recommendations") or [] if r.get("label") != "yours"]
    pick = recs[0] if recs else None
    if pick and pick.get("job_cost") and pick.get("job_hours") and pick.get("hourly_total") \
            and not pick.get("mixed") and not pick.get("costs_note"):
        expected = pick["job_hours"] * pick["hourly_total"]
        if abs(expected - pick["job_cost"]) > max(0.06 * pick["job_cost"], 0.02):
            out.append({"check": "totals", "where": "section:cost", "index": -1,
                        "line": f"job cost {pick['job_cost']:.4g} but {pick['job_hours']:.4g} h x "
                                f"{pick['hourly_total']:.4g}/h = {expected:.4g}"})
    return out


def text_problems(text: str) -> list[dict[str, Any]]:
    """The placeholder check over a reply with no view (an explanation, a comparison): each line of its text."""
    return [{"check": "placeholder", "where": "text", "index": -1, "line": x} for x in (text or "").splitlines()
            if PLACEHOLDER.search(x)]


def drop(view: AnswerView, found: list[dict[str, Any]]) -> AnswerView:
    """The view without the lines a problem was found in (the answer says less rather than something false)."""
    bad = {(p["where"], p["line"]) for p in found if p.get("line")}
    sections = []
    for s in view.sections:
        lines = [x for x in s.lines if (f"section:{s.key}", x) not in bad]
        more = [x for x in s.more if (f"more:{s.key}", x) not in bad]
        label = s.label if (f"label:{s.key}", s.label) not in bad else ""
        if s.lines and not lines and s.key in ("pick",):
            lines = s.lines            # never drop the decision itself: the trace says what is wrong with it
        sections.append(s.model_copy(update={"lines": lines, "more": more, "label": label}))
    return view.model_copy(update={
        "sections": [s for s in sections if s.lines or s.more],
        "checklist": [c for c in view.checklist if ("check", c.text) not in bad],
        "considered": [c for c in view.considered if ("considered", c.verdict) not in bad],
        "notes": [n for n in view.notes if ("note", n) not in bad],
        "assumed": None if view.assumed and ("assumed", view.assumed) in bad else view.assumed,
    })


__all__ = ["drop", "problems", "text_problems"]
