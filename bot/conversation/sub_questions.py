"""Sub-questions a job question carries beside 'which GPU?' ('..., and how much a month?', '包月还是按需?', 'can it finish
by Friday?', 'will it fit?'): each one heard (rules/lexicon.yaml `sub_questions`) gets its own one-line verdict near
the top of the answer, computed from the same plan the answer leads with (bot/plan/verdicts.py), unless a verdict the
answer already leads with says it (a deadline's how-long verdict, the spot verdict, a budget's, a named card's).

The verdicts are kept as data in rule_trace (`sub-questions`: each asked kind, its numbers and its line), so the
critic's verdict-agreement invariant (bot/plan/critic.verdict_problems) can check them against the plan numbers.
"""
from __future__ import annotations

import re
from typing import Any

from bot.conversation import info
from bot.conversation.cues import CueSet, _both
from bot.plan import verdicts as verdict_math
from bot.records.models import Reply, ViewSection
from bot.render import verdicts as say_verdict

# a number of days or weeks said in a question that asks about a deadline ('5 days deadline, will it make it?',
# '两周内能跑完吗' is parsed by the NLU; this is the fallback for what it leaves unset)
_DAYS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:个)?\s*(days?|weeks?|天|周|星期)")
KINDS = ("deadline", "cost", "billing_mode", "spot", "fits")
_MONTH = ("month", "月")
# the sections a question's own verdict leads with: the sub-questions' lines go after them, before the plan
LEADING = ("verdict", "changed", "cloud", "sized_as")


class SubQuestions:
    """The sub-question cues, compiled once from the lexicon."""

    def __init__(self, lexicon: dict[str, Any]):
        self.cues = {k: CueSet(_both(v)) for k, v in (lexicon.get("sub_questions") or {}).items()}

    def asked(self, text: str) -> list[str]:
        """The kinds of sub-question the text asks, in KINDS order."""
        low = (text or "").lower()
        return [k for k in KINDS if k in self.cues and self.cues[k].any(low)]


def answered_already(reply: Reply, spot_said: bool, own_card_lead: bool) -> set[str]:
    """What the verdict the answer already leads with answers: a how-long verdict against a deadline, the spot
    verdict, a budget's (its spend is the cost), a named or own card's verdict (whether it fits)."""
    v = reply.verdict or {}
    out: set[str] = set()
    shown = [x for s in (reply.view.sections if reply.view else []) for x in s.lines] if reply.view else \
        (reply.text or "").splitlines()
    if v.get("line") not in shown:
        v = {}            # a verdict kept as data but not said (a time computed beside a spot question) answers nothing
    if v.get("kind") == "how_long" and v.get("deadline_days") and v.get("answer") in ("yes", "no"):
        out.add("deadline")
    if v.get("kind") == "enough" and v.get("answer") in ("yes", "no"):
        out.add("cost")
    if spot_said:
        out.add("spot")
    if own_card_lead:
        out.add("fits")
    return out


def _plan(reply: Reply) -> dict[str, Any] | None:
    """The plan the answer leads with: the user's own cards when they hold the job, else the first rental."""
    recs = reply.recommendations or []
    mine = next((r for r in recs if r.get("label") == "yours" and r.get("fits")), None)
    return mine or next((r for r in recs if r.get("label") != "yours"), None)


def _rental(reply: Reply) -> dict[str, Any] | None:
    return next((r for r in reply.recommendations or [] if r.get("label") != "yours"), None)


def verdicts(kb, asks: list[str], reply: Reply, slots: dict[str, Any], text: str,
             answered: set[str], said_days: float | None = None,
             usage: dict[str, Any] | None = None, lang: str = "en") -> list[dict[str, Any]]:
    """Each sub-question asked and not answered already, as verdict data from the answer's own plan."""
    out: list[dict[str, Any]] = []
    plan, rental = _plan(reply), _rental(reply)
    low = (text or "").lower()
    for k in asks:
        if k in answered:
            continue
        if k == "spot":
            # a training or batch job's spot verdict (Core._spot_verdict) answers it first; a service's is here
            if not rental or rental.get("job_hours") or rental.get("price_per_hour") is None:
                continue
            copies = (rental.get("instances") or 1) * max(1, rental.get("replicas") or 1)
            od = rental.get("hourly_total") or rental["price_per_hour"] * copies
            spot = rental["spot_price_per_hour"] * copies if rental.get("spot_price_per_hour") is not None else None
            prov = kb.providers.get(rental.get("provider") or "")
            v = {"kind": "spot_service", "od_h": round(od, 2), "spot_h": round(spot, 2) if spot is not None else None,
                 "saving": round(100 * (1 - spot / od)) if spot is not None and od else None,
                 "currency": rental.get("currency"), "flavor": rental.get("flavor"), "provider": rental.get("provider"),
                 "provider_name": prov.display_name(lang) if prov else rental.get("provider") or ""}
            out.append({**v, "asked": k})
            continue
        if k == "cost":
            v = verdict_math.cost_verdict(rental, month_asked=any(m in low for m in _MONTH))
        elif k == "billing_mode":
            discounts = info.published_discounts(kb, rental["provider"]) if rental and rental.get(
                "provider") in kb.providers else []
            v = verdict_math.billing_mode_verdict(rental, discounts, usage)
        elif k == "deadline" and reply.intent == "inference" and not (plan or {}).get("job_hours"):
            continue           # a service has no end to meet a date with ('answers in time' is its latency target)
        elif k == "deadline":
            # the deadline parsed, else a number of days said with the question ('5 days deadline, will it make it?')
            m = _DAYS.search(low) if not (slots.get("deadline_days") or said_days) else None
            said = float(m.group(1)) * (7 if m.group(2)[0] in "w周星" else 1) if m else None
            v = verdict_math.time_verdict(plan, slots.get("deadline_days") or said_days or said,
                                          work_said=reply.work is not None)
        elif k == "fits":
            v = verdict_math.fits_verdict(plan)
        else:
            continue
        out.append({**v, "asked": k})
    return out


def answer(kb, templates, asks: list[str], reply: Reply, slots: dict[str, Any], text: str, lang: str,
           answered: set[str], said_days: float | None = None, usage: dict[str, Any] | None = None) -> None:
    """Each sub-question's verdict line, after the verdict the answer leads with and before the plan; the data in
    rule_trace for the critic."""
    found = verdicts(kb, asks, reply, slots, text, answered, said_days, usage, lang)
    lines, data = [], []
    for v in found:
        line = say_verdict.asked_line(templates, v, lang)
        if line:
            lines.append(line)
            data.append({**v, "line": line})
    if not data:
        return
    reply.rule_trace.append({"rule": "sub-questions", "fired": True,
                             "because": {"asked": asks, "answered_by_lead": sorted(answered), "verdicts": data}})
    if reply.view is None:
        reply.text = "\n".join(lines) + "\n" + reply.text
        return
    secs = reply.view.sections
    at = next((i for i, s in enumerate(secs) if s.key not in LEADING), len(secs))
    secs.insert(at, ViewSection(key="verdict", lines=lines))
