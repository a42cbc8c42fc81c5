"""The critic: named invariants every answer is checked against before it leaves the planner (rules/critic.yaml).

Why a stage of its own: every scenario written for the planner passed while answers to new questions offered plans
no engineer would sign (a 13B pre-training at 6 % MFU for three years, a LoRA of a 671B MoE at 0.1 % MFU over TCP).
Each of those breaks one sanity check an expert makes without thinking; here each check has a name, a one-line
reason and thresholds read from data with their justification, and the answer's rule_trace says when one removed
or changed a plan.

- `prune` (plausibility): a plan row that breaks an invariant is ruled out as `implausible.<id>` (so it is never
  the pick, and the considered rows say why); the planner's fallback then offers the next sane plan, or says that
  nothing sane is on offer and what would work.
- `promote_unpriced`: a plan that meets the job without a public price goes ahead of priced plans that miss it.
- `stated_targets`: every target the user stated, met or missed and by how much (ask --json `targets`).

Cheap by design: one pass over rows already sized (no speed model calls), so the warm planner's latency holds.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.knowledge.loader import read_yaml
from bot.plan.load import serving_load
from bot.plan.verdicts import memory_problems
from bot.knowledge.problems import did_you_mean, validation_problems
from bot.records.errors import Problem

Row = dict[str, Any]
FILE = "critic.yaml"
NON_LLM_KINDS = ("speech", "vision", "diffusion", "rendering")

# The invariants the code implements, each with the limits it reads: critic.yaml must declare exactly these.
CHECKS: dict[str, tuple[str, ...]] = {
    "mfu-floor": ("mfu_min", "min_gpus"),
    "scale-efficiency": ("ratio_max",),
    "wall-time-horizon": ("days_max",),
    "memory-slack": ("headroom_min",),
    "kind-speed": (),
    "unpriced-feasible": (),
    "serving-load": (),
    "fleet-size": ("ratio_max", "min_gpus"),
    "replica-span": ("instances_max",),
    "roomy-pick": ("headroom_pct_min", "cost_ratio_max"),
    "targets-stated": (),
    "work-timed-and-costed": (),
    "serving-targets-judged": (),
    "own-deadline-extra": (),
    "answer-consistency": (),        # checked over the rendered answer: bot/render/consistency.py
    "verdict-agreement": (),         # every verdict line against its plan's numbers: verdict_problems below
    "headroom": ("utilisation_target", "deadline_share_target", "tight_share"),
}
PRUNING = ("kind-speed", "memory-slack", "serving-load", "fleet-size", "replica-span", "wall-time-horizon", "mfu-floor",
           "scale-efficiency")    # in the order they are said


class Invariant(BaseModel):
    """One invariant as critic.yaml declares it."""
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    kind: Literal["plausibility", "targets", "completeness", "consistency", "honesty", "continuity"]
    reason: str
    limits: dict[str, float] = {}
    justify: str
    because: dict[Literal["en", "zh"], str]
    cite: list[str] = []

    def limit(self, name: str) -> float:
        return self.limits[name]

    def say(self, lang: str, **ctx: Any) -> str:
        return self.because.get(lang, self.because["en"]).format(**ctx)


def check_invariants(rules_dir: Path, source_ids: set[str] | None = None
                     ) -> tuple[dict[str, Invariant], list[Problem]]:
    """critic.yaml read and validated: every invariant the code implements declared once, with the limits it reads,
    the sources behind its thresholds known, and its sentences naming only what the check supplies."""
    problems: list[Problem] = []
    path = rules_dir / FILE
    if not path.exists():      # a rules directory without a critic (a test's own rules): no invariants to check
        return {}, []
    doc = read_yaml(path, problems, FILE) or {}
    out: dict[str, Invariant] = {}
    for i, item in enumerate(doc.get("invariants") or []):
        iid = item.get("id", f"#{i}") if isinstance(item, dict) else f"#{i}"
        where = f"invariants[{iid}]"
        try:
            inv = Invariant(**item)
        except ValidationError as exc:
            problems.extend(validation_problems(FILE, where, Invariant, exc))
            continue
        if inv.id in out:
            problems.append(Problem(FILE, where, "duplicate invariant id", "rename one of them"))
        if inv.id not in CHECKS:
            guess = did_you_mean(inv.id, CHECKS)
            problems.append(Problem(FILE, where, "no check implements this invariant",
                                    f"did you mean '{guess[0]}'?" if guess else "implement it in bot/plan/critic.py"))
        else:
            missing = [n for n in CHECKS[inv.id] if n not in inv.limits]
            if missing:
                problems.append(Problem(FILE, f"{where}.limits", f"missing limit(s) {', '.join(missing)}",
                                        "add them with the value and say where it comes from in `justify`"))
        if inv.limits and not inv.cite:
            problems.append(Problem(FILE, f"{where}.cite", "thresholds with no source",
                                    "cite the knowledge/sources ids the thresholds rest on"))
        for sid in inv.cite:
            if source_ids is not None and sid not in source_ids:
                guess = did_you_mean(sid, source_ids)
                problems.append(Problem(FILE, f"{where}.cite", f"unknown source '{sid}'",
                                        f"did you mean '{guess[0]}'?" if guess else "cite a source id from knowledge/"))
        out[inv.id] = inv
    for iid in CHECKS:
        if iid not in out and not any(p.key.startswith(f"invariants[{iid}]") for p in problems):
            problems.append(Problem(FILE, "invariants", f"invariant '{iid}' is not declared",
                                    "declare it with its reason, limits and justification"))
    return out, problems


@dataclass(frozen=True)
class JobView:
    """What the critic needs to know of the job: is it trained (MFU matters), and the deadline the user stated."""
    training: bool
    deadline_days: float | None = None
    users: int | None = None          # a service's concurrent users (sequences in flight)
    rate: float | None = None         # a service's requests per second (an encoder's users as their rate)
    kind: str | None = None           # the workload's kind (llm, speech, vision, diffusion, ...)


class Critic:
    """The checks, over the invariants as loaded."""

    def __init__(self, invariants: dict[str, Invariant], held: dict[str, str] | None = None):
        self.inv = invariants
        self.held = held or {"en": "every plan offered clears it", "zh": "所给方案都满足"}

    # ----- plausibility ------------------------------------------------------------------------------------------
    def mfu_floor(self) -> float | None:
        """The MFU under which no multi-GPU training plan is offered (`mfu-floor`), for the search to stop scaling a
        flavor out once it is under it (plans.size_training); None when the rules have no such invariant."""
        inv = self.inv.get("mfu-floor")
        return inv.limit("mfu_min") if inv else None

    def headroom(self) -> dict[str, float]:
        """The margin plans are sized with (`headroom`): serving replicas at `utilisation_target` of what they carry
        at the latency target, a timed run within `deadline_share_target` of the deadline (plans.Targets fields
        `utilisation`, `deadline_share`); none (1.0: sized to the edge) when the rules have no such invariant."""
        inv = self.inv.get("headroom")
        if inv is None:
            return {"utilisation": 1.0, "deadline_share": 1.0}
        return {"utilisation": inv.limit("utilisation_target"), "deadline_share": inv.limit("deadline_share_target")}

    def tight_share(self) -> float | None:
        """The share of a deadline, a fleet's capacity or a budget over which a met target is said as tight."""
        inv = self.inv.get("headroom")
        return inv.limit("tight_share") if inv else None

    def prune(self, rows: list[Row], job: JobView, lang: str) -> list[dict[str, Any]]:
        """Rule out every row that breaks a plausibility invariant (`implausible.<id>`, with the sentence why), keep
        the ranking's order among the rest, and return one rule_trace entry per invariant evaluated."""
        best = _best_mfu(rows) if job.training else _fewest_cards(rows)
        fired: dict[str, list[str]] = {iid: [] for iid in PRUNING if iid in self.inv}
        for r in rows:
            if r["ruled_out"]:
                continue
            broken = self.first_broken(r, job, best, lang)
            if broken:
                iid, because = broken
                r["ruled_out"], r["implausible"] = f"implausible.{iid}", {"rule": iid, "because": because}
                fired[iid].append(because)
        rows.sort(key=lambda r: r["ruled_out"] is not None)          # stable: the ranking's order otherwise
        return [self._trace(iid, said, lang) for iid, said in fired.items()]

    def first_broken(self, r: Row, job: JobView, best: dict[str, float], lang: str) -> tuple[str, str] | None:
        """(invariant id, why) of the first plausibility invariant the row breaks, or None."""
        for iid in PRUNING:
            if iid not in self.inv:
                continue
            ctx = getattr(self, "_" + iid.replace("-", "_"))(r, job, best)
            if ctx is not None:
                return iid, self.inv[iid].say(lang, flavor=r["flavor"].flavor, **ctx)
        return None

    def _kind_speed(self, r: Row, job: JobView, best) -> dict[str, Any] | None:
        """A speech, vision or diffusion job is never sized with an LLM's token speed: a row carrying per-token decode
        or first-token times (what only the LLM serving model computes) for such a job was timed as a language
        model. Where the estimator has no speed of the job's own kind, the answer says so (no row time) rather than
        borrow one."""
        if job.kind not in NON_LLM_KINDS:
            return None
        said = [k for k in ("tpot_ms", "load_tpot_ms", "ttft_ms") if r.get(k) is not None]
        return {"kind": job.kind, "figures": ", ".join(said)} if said else None

    def _memory_slack(self, r: Row, job: JobView, best) -> dict[str, Any] | None:
        est, have = r.get("estimate"), r["flavor"].gpu_memory_gib
        slack = self.inv["memory-slack"].limit("headroom_min")
        if est is None or est.per_gpu_gib <= have * (1 - slack) + 1e-6:
            return None
        return {"need": f"{est.per_gpu_gib:.1f}", "have": f"{have:g}", "slack": f"{slack:.0%}"}

    def _serving_load(self, r: Row, job: JobView, best) -> dict[str, Any] | None:
        """Every served kind alike: the plan's replicas times what one carries, in the load's own unit (live
        streams, sequences in flight, requests or query-passage pairs a second, images a second; capacity.py),
        cover the peak load it was sized for."""
        cap = r.get("capacity")
        if job.training or cap is None or cap.enough:
            return None
        return {"replicas": cap.replicas, "capacity": f"{cap.total:,.1f} {cap.unit}",
                "load": f"{cap.load:,.1f} {cap.unit}"}

    def _fleet_size(self, r: Row, job: JobView, best: dict[str, Any]) -> dict[str, Any] | None:
        """A serving fleet that carries its load with more than `ratio_max` times the cards the load needs on that GPU:
        the load over one replica's capacity times the cards a replica rents, or the smallest plan on the same card
        that carries the load (`best`, from the rows: _fewest_cards), whichever is fewer."""
        inv = self.inv["fleet-size"]
        cap = r.get("capacity")
        if job.training or cap is None or not cap.enough:
            return None
        cards = rented_cards(r)
        if cards <= inv.limit("min_gpus"):
            return None
        per = cards / max(1, cap.replicas)
        own = math.ceil(cap.need * per)
        other = best.get(r["gpu"])
        fewest, how = own, f"{cap.need} x {per:g}"
        if other is not None and other[0] < fewest:
            fewest, how = other[0], other[1]
        ratio = inv.limit("ratio_max")
        if cards <= ratio * max(1, fewest):
            return None
        return {"cards": cards, "gpu": r.get("gpu_name") or r["gpu"], "fewest": fewest, "how": how,
                "ratio": f"{ratio:g}"}

    def _replica_span(self, r: Row, job: JobView, best) -> dict[str, Any] | None:
        """A served model's one copy split over more machines than the limit: each token's decode waits on every
        one of them (48 T4 in 6 machines for DeepSeek-V3); an engineer serves it on bigger cards or quantized."""
        if job.training:
            return None
        per_replica = int(r.get("instances") or 1)
        limit = self.inv["replica-span"].limit("instances_max")
        if per_replica <= limit:
            return None
        return {"instances": per_replica, "gpus": per_replica * int(r["flavor"].gpu_count or 1),
                "gpu": r.get("gpu_name") or r["gpu"], "limit": f"{limit:g}"}

    def _wall_time_horizon(self, r: Row, job: JobView, best) -> dict[str, Any] | None:
        limit = max(self.inv["wall-time-horizon"].limit("days_max"), job.deadline_days or 0)
        hours = r.get("hours")
        if not hours or hours <= limit * 24:
            return None
        return {"days": f"{hours / 24:,.0f}", "gpus": _gpus(r), "limit": f"{limit:,.0f}"}

    def _mfu_floor(self, r: Row, job: JobView, best) -> dict[str, Any] | None:
        inv = self.inv["mfu-floor"]
        mfu = _mfu(r)
        if not job.training or mfu is None or _gpus(r) < inv.limit("min_gpus") or mfu >= inv.limit("mfu_min"):
            return None
        return {"gpus": _gpus(r), "mfu": _pct(mfu), "floor": _pct(inv.limit("mfu_min"))}

    def _scale_efficiency(self, r: Row, job: JobView, best: dict[str, float]) -> dict[str, Any] | None:
        mfu, top = _mfu(r), best.get(r["gpu"])
        if not job.training or not mfu or not top or _gpus(r) < 2:
            return None
        ratio = top / mfu
        if ratio <= self.inv["scale-efficiency"].limit("ratio_max"):
            return None
        return {"gpus": _gpus(r), "mfu": _pct(mfu), "best": _pct(top), "ratio": f"{ratio:.1f}"}

    def own_verdict(self, row: Row, job: JobView, lang: str) -> tuple[str, str] | None:
        """The user's own cards, holding the job: the horizon and the MFU floor judge their plan too (their cards'
        time is theirs to spend, but 20 years or 1 % MFU is not a way to do the job). Judged on the row's figures."""
        shim = {**row, "flavor": _Named(row.get("gpu_name") or "yours"), "sized": _Mfu(row.get("mfu")),
                "hours": row.get("job_hours"), "ruled_out": None, "estimate": None}
        for iid in ("wall-time-horizon", "mfu-floor"):
            if iid not in self.inv:
                continue
            ctx = getattr(self, "_" + iid.replace("-", "_"))(shim, job, {})
            if ctx is not None:
                return iid, self.inv[iid].say(lang, flavor=shim["flavor"].flavor, **ctx)
        return None

    def breaks_row(self, r: Row, job: JobView, lang: str, reference: list[Row] = ()) -> tuple[str, str] | None:
        """A row made after the search (the pick's flavor scaled out to finish sooner): the invariant it breaks, or
        None; its MFU is judged against the rows it was made from."""
        return self.first_broken(r, job, _best_mfu([*reference, r]) if job.training else {}, lang)

    # ----- a feasible plan with no public price ------------------------------------------------------------------
    def promote_unpriced(self, rows: list[Row], lang: str) -> dict[str, Any]:
        """No priced plan meets the job, and a plan with no public price does: it goes first (offered as 'ask for a
        quote'), ahead of priced plans that miss the deadline or the horizon."""
        fitting = [r for r in rows if not r["ruled_out"]]
        # a target missed, not a budget: an unpriced plan cannot be shown to keep to a budget either
        priced_meeting = [r for r in fitting if r.get("hourly") is not None and not r.get("breaks")]
        timed = any(r.get("hours") for r in fitting)
        # feasible: it misses no target and, when the job has a length, is timed (an untimed plan is not shown to
        # meet a deadline or the horizon)
        unpriced = [r for r in fitting if r.get("hourly") is None and not r.get("breaks")
                    and (r.get("hours") or not timed)]
        inv = self.inv.get("unpriced-feasible")
        if inv is None:
            return {"rule": "critic.unpriced-feasible", "fired": False, "because": ""}
        if priced_meeting or not unpriced or not any(r.get("breaks") for r in fitting if r.get("hourly") is not None):
            return {"rule": f"critic.{inv.id}", "fired": False, "because": self.held.get(lang, self.held["en"])}
        for r in unpriced:
            r["quote"] = True
        rows[:] = unpriced + [r for r in rows if all(r is not u for u in unpriced)]
        return {"rule": f"critic.{inv.id}", "fired": True, "because": inv.say(lang, flavor=unpriced[0]["flavor"].flavor)}

    # ----- a pick the answer warns will OOM ----------------------------------------------------------------------
    def prefer_roomy(self, rows: list[Row], lang: str) -> dict[str, Any] | None:
        """The first plan that meets every target leaves under 10 % of its memory free, and another that meets them
        with room costs at most twice as much: the roomy one goes first (and the tight ones are marked, so that no
        'simpler' swap brings them back); the tight one stays in view as the cheapest."""
        inv = self.inv.get("roomy-pick")
        if inv is None:
            return None
        meeting = [r for r in rows if not r["ruled_out"] and not r.get("breaks") and not r.get("over_budget")
                   and _price(r) < math.inf]
        if not meeting or meeting[0].get("headroom", 100) >= inv.limit("headroom_pct_min"):
            return self.trace_entry("roomy-pick", False, lang)
        first = meeting[0]
        # the roomy plan on the fewest cards, then the cheapest: one 94 GB card, not eight 24 GB ones sharding it
        # and no bigger a leap than the tight plan: no more instances, no undocumented network, at most twice the cards
        roomy = min((r for r in meeting if r.get("headroom", 0) >= inv.limit("headroom_pct_min")
                     and _price(r) <= _price(first) * inv.limit("cost_ratio_max")
                     and r.get("instances", 1) <= first.get("instances", 1) and not r.get("demoted")
                     and (not r.get("borrowed") or first.get("borrowed"))
                     and _gpus(r) <= 2 * _gpus(first)
                     and (r.get("named") or not first.get("named"))),      # 'on an A10': room on an A10
                    key=lambda r: (_gpus(r), _price(r)), default=None)
        if roomy is None:
            return self.trace_entry("roomy-pick", False, lang)
        for r in meeting:
            if r.get("headroom", 100) < inv.limit("headroom_pct_min"):
                r["tight"] = True
        rows.remove(roomy)
        rows.insert(rows.index(first), roomy)
        return self.trace_entry("roomy-pick", True, lang, tight=first["flavor"].flavor, roomy=roomy["flavor"].flavor,
                                headroom=f"{first.get('headroom', 0):.0f}", ratio=f"{_price(roomy) / _price(first):.2f}")

    def mark_tight(self, rows: list[Row]) -> None:
        """Every plan under the OOM warning's headroom (roomy-pick headroom_pct_min: the checklist's oom-tight) is
        marked `tight`, whether or not prefer_roomy reorders (a served model is not reordered: its KV cache fills the
        card by design), so that no later swap (choose._simpler) trades a pick whose checklist says 'OOM ok' for one
        it warns on: 12 L4 at 17 % free swapped for two H100 80 GB at 95 % ('simpler') put 'OOM warn' in the lead."""
        inv = self.inv.get("roomy-pick")
        if inv is None:
            return
        for r in rows:
            if not r["ruled_out"] and r.get("headroom", 100) < inv.limit("headroom_pct_min"):
                r["tight"] = True

    def _trace(self, iid: str, said: list[str], lang: str) -> dict[str, Any]:
        if not said:
            return {"rule": f"critic.{iid}", "fired": False, "because": self.held.get(lang, self.held["en"])}
        more = f" (+{len(said) - 1})" if len(said) > 1 else ""
        return {"rule": f"critic.{iid}", "fired": True, "because": said[0] + more}

    def trace_entry(self, iid: str, fired: bool, lang: str, **ctx: Any) -> dict[str, Any]:
        inv = self.inv.get(iid)
        because = inv.say(lang, **ctx) if fired and inv else self.held.get(lang, self.held["en"])
        return {"rule": f"critic.{iid}", "fired": fired, "because": because}


# ----- targets ---------------------------------------------------------------------------------------------------
def stated_targets(slots: dict[str, Any], rec: Row | None, serving: bool, encoder: bool,
                   output_len: int | None = None, in_flight: int | None = None,
                   tight: float | None = None) -> list[dict[str, Any]]:
    """Each target the user stated, with the answer's first plan's figure, met or not and by how much (`by`: how far
    past the target the plan is, in the target's unit; 0 or less when met). `met` is None when the plan has no figure
    to judge it by (no speed on file): the answer says so rather than stay silent. A whole answer's budget ('e2e
    3 s', '3 秒内返回') is judged as the plan's first token + `output_len` tokens x its time per token, the sum
    shown (`parts`). A plan that does not hold the job (the user's card out of memory) meets none of them, whatever
    its speed would be (set3 s3-18: 'does not fit, 39 GiB > 24 GiB' over 'Targets: 5 requests/s - meets')."""
    out = _stated_targets(slots, rec or {}, serving, encoder, output_len, in_flight)
    if rec and rec.get("fits") is False:
        out = [{**x, "met": False, "plan": None, "by": None} for x in out]
    return with_tight(out, tight)


_SPENT = ("deadline", "budget")            # the plan's figure over the target's: the share of it used


def target_share(x: dict[str, Any]) -> float | None:
    """The share of a met target the plan uses (`headroom`): the deadline's days or the budget's money it takes,
    the load over what the fleet carries (of its raw rate, `used`, where its capacity is derated), a latency's
    budget the plan's time takes (a first token, each token, a request or a whole answer: 2.8 s of a 3 s budget is
    met on paper and missed at the first spike); None when the target has no figure."""
    if not x.get("plan") or not x.get("asked"):
        return None
    if x["target"] in _SPENT or x["target"] in _UNDER:
        return x["plan"] / x["asked"]
    if x["target"] in _LOAD_TARGETS:
        return x.get("used") or (x.get("sized_for") or x["asked"]) / x["plan"]
    return None


def with_tight(out: list[dict[str, Any]], tight: float | None) -> list[dict[str, Any]]:
    """Each met target the plan uses more than `tight` of (rules/critic.yaml headroom tight_share) carries that
    share as `tight`, so that the answer says so beside 'meets': 9.6 of 10 days is met on paper and missed at the
    first restart."""
    if not tight:
        return out
    for x in out:
        share = target_share(x) if x.get("met") is True else None
        if share is not None and share > tight:
            x["tight"] = round(share, 3)
    return out


def tight_targets(targets: list[dict[str, Any]], tight: float | None) -> list[str]:
    """`headroom`: the met targets the plan uses more than `tight` of and that are not said as tight ([] holds)."""
    if not tight:
        return []
    return [f"{x['target']} {target_share(x):.0%}" for x in targets if x.get("met") is True
            and (target_share(x) or 0) > tight and not x.get("tight")]


def _stated_targets(slots: dict[str, Any], rec: Row, serving: bool, encoder: bool,
                    output_len: int | None, in_flight: int | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if slots.get("deadline_days"):
        hours = rec.get("job_hours")
        out.append(_target("deadline", slots["deadline_days"], hours / 24 if hours else None, "days"))
    if slots.get("budget_amount") is not None:
        use = rec.get("budget") or {}
        ccy, period = slots.get("budget_currency") or use.get("currency") or "", slots.get("budget_period")
        unit = ccy if period in (None, "total") else f"{ccy}/{period}"
        out.append(_target("budget", slots["budget_amount"], use.get("spend"), unit.strip("/")))
    if not serving:
        return out
    broke = set(rec.get("breaks") or [])
    if encoder:
        asked = slots.get("latency_ms") or slots.get("e2e_ms")
        if asked:
            out.append(_target("latency", asked, rec.get("request_ms"), "ms"))
    else:
        if slots.get("ttft_ms") or (slots.get("latency_ms") and not slots.get("e2e_ms")):
            out.append(_target("ttft", slots.get("ttft_ms") or slots["latency_ms"], rec.get("ttft_ms"), "ms"))
        if slots.get("tpot_ms"):
            out.append(_target("tpot", slots["tpot_ms"], rec.get("load_tpot_ms") or rec.get("tpot_ms"), "ms"))
        if slots.get("e2e_ms"):
            out.append(_e2e_target(slots["e2e_ms"], rec, output_len or slots.get("output_tokens")))
    load_met = None if not rec else not (broke & {"latency", "untimed"})
    if rec.get("capacity"):
        return out + _capacity_targets(slots, rec["capacity"], load_met)
    if slots.get("concurrency"):
        cap = (rec.get("replica_concurrency") or 0) * max(1, rec.get("replicas") or 1) if not encoder else None
        need = in_flight or slots["concurrency"]        # users said as people: their requests in flight
        x = {"target": "users", "asked": slots["concurrency"], "plan": cap or None,
             "unit": "sequences" if need != slots["concurrency"] else "users",
             "met": load_met if cap is None or cap >= need else False, "by": None if not cap else need - cap}
        if need != slots["concurrency"]:
            x["sized_for"] = need
        out.append(x)
    if slots.get("qps"):
        rate = rec.get("requests_per_s")
        plan = round(rate * max(1, rec.get("replicas") or 1), 1) if rate else None
        out.append({"target": "rate", "asked": slots["qps"], "plan": plan, "unit": "requests/s",
                    "met": load_met if plan is None else plan >= slots["qps"] * 0.999,
                    "by": None if plan is None else round(slots["qps"] - plan, 1)})
    return out


# the slots a serving answer must judge, each by the target that judges it
_LATENCY_SLOTS = {"e2e_ms": ("e2e", "latency"), "ttft_ms": ("ttft",), "tpot_ms": ("tpot",),
                  "latency_ms": ("ttft", "latency", "e2e")}
_LOAD_TARGETS = ("users", "streams", "rate", "rate_peak")
_UNDER = ("e2e", "ttft", "tpot", "latency")


def unjudged_serving_targets(slots: dict[str, Any], targets: list[dict[str, Any]]) -> list[str]:
    """What a serving answer leaves unjudged or misjudges (the `serving-targets-judged` invariant): a stated load or
    latency with no target, or a target with no figure; a time target whose verdict disagrees with its own numbers
    (a plan over the budget said to meet it, or under it said to miss)."""
    by_name = {x["target"]: x for x in targets}
    out = []
    for slot, names in _LATENCY_SLOTS.items():
        if slots.get(slot) and not any(n in by_name for n in names):
            out.append(f"{slot} {slots[slot]:g} ms not judged")
    if (slots.get("qps") or slots.get("concurrency") or slots.get("token_rate")) and \
            not any(n in by_name for n in _LOAD_TARGETS):
        out.append("the stated load not judged")
    for x in targets:
        if x["target"] in _UNDER + _LOAD_TARGETS and x["met"] is None:
            out.append(f"{x['target']} {x['asked']:g} {x['unit']}: no figure")
        elif x["target"] in _UNDER and x["plan"] is not None and x["met"] != (x["plan"] <= x["asked"] * 1.0005):
            out.append(f"{x['target']}: {x['plan']:g} vs {x['asked']:g} {x['unit']} said {'met' if x['met'] else 'missed'}")
    return out


def _e2e_target(asked: float, rec: Row, output_len: int | None) -> dict[str, Any]:
    """A whole answer within `asked` ms: the plan's time to the first token + each output token at its time per
    token (at the load asked, when the replicas run below what they hold)."""
    ttft, tpot = rec.get("ttft_ms"), rec.get("load_tpot_ms") or rec.get("tpot_ms")
    if not (ttft and tpot and output_len):
        return _target("e2e", asked, None, "ms")
    out = _target("e2e", asked, ttft + output_len * tpot, "ms")
    out["parts"] = {"ttft_ms": ttft, "output_tokens": output_len, "tpot_ms": tpot}
    return out


def _capacity_targets(slots: dict[str, Any], cap: dict[str, Any], load_met: bool | None) -> list[dict[str, Any]]:
    """The stated load against what the plan carries, in the unit the fleet was sized in (capacity.py): the users
    or streams said, with the sequences in flight they mean; a rate as the peak the fleet was sized for (a day's
    count raised to its busy hours, each query's passages counted), not the average said."""
    # a latency the user stated is judged on its own line: the load line says whether the fleet carries the load
    timed = any(slots.get(k) for k in _LATENCY_SLOTS)
    met = bool(cap["enough"]) and (timed or load_met is not False)
    by = round(cap["load"] - cap["total"], 1)
    if slots.get("concurrency"):
        name = "streams" if cap["unit"] in ("streams", "frames/s") else "users"
        return [{"target": name, "asked": slots["concurrency"], "plan": cap["total"], "unit": cap["unit"],
                 "met": met, "by": by, "sized_for": cap["load"], "used": cap.get("used")}]
    peak = slots.get("qps_basis") == "average"
    out = {"target": "rate_peak" if peak else "rate", "asked": cap["load"], "plan": cap["total"],
           "unit": cap["unit"], "met": met, "by": by, "sized_for": cap["load"], "used": cap.get("used")}
    load = serving_load(slots)
    if cap["unit"] == "sequences" and load is not None:
        out["requests_per_s"] = round(load.amount, 3)     # sized as the sequences it keeps in flight: both said
    return [out]


def _target(name: str, asked: float, got: float | None, unit: str) -> dict[str, Any]:
    """A target the plan must stay under (time, money, latency)."""
    if got is None:
        return {"target": name, "asked": asked, "plan": None, "unit": unit, "met": None, "by": None}
    # four figures, not two decimals: a 10-minute deadline is 0.0069 days, and 0.01 would read as 14.4 minutes
    return {"target": name, "asked": asked, "plan": _figures(got), "unit": unit, "met": got <= asked * 1.0005,
            "by": _figures(got - asked)}


def _figures(x: float) -> float:
    return round(x, 2) if abs(x) >= 1 else float(f"{x:.4g}")


# ----- helpers ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Named:
    flavor: str


@dataclass(frozen=True)
class _Mfu:
    mfu: float | None


def _price(r: Row) -> float:
    """What the plan costs the user (choose.job_price's measure): the job when its length is known, else an hour."""
    if r.get("job_cost") is not None:
        return r["job_cost"]
    return r["hourly"] if r.get("hourly") is not None else math.inf


def _mfu(r: Row) -> float | None:
    s = r.get("sized")
    return getattr(s, "mfu", None) if s is not None else None


def rented_cards(r: Row) -> int:
    """The cards a serving plan rents: instances a replica x the flavor's cards x replicas (idle ones included)."""
    per_instance = getattr(r["flavor"], "gpu_count", None) or r.get("gpus_total") or 1
    return int(r.get("instances") or 1) * int(per_instance) * max(1, int(r.get("replicas") or 1))


def _fewest_cards(rows: list[Row]) -> dict[str, tuple[int, str]]:
    """Per GPU: the fewest cards a plan of the rows rents that carries its load and misses no target, and that plan
    said ('57 x g5.xlarge'), for `fleet-size`."""
    out: dict[str, tuple[int, str]] = {}
    for r in rows:
        cap = r.get("capacity")
        if r["ruled_out"] or r.get("breaks") or cap is None or not cap.enough:
            continue
        n = rented_cards(r)
        if r["gpu"] not in out or n < out[r["gpu"]][0]:
            reps = max(1, int(r.get("replicas") or 1)) * int(r.get("instances") or 1)
            out[r["gpu"]] = (n, f"{reps} x {r['flavor'].flavor}")
    return out


def _gpus(r: Row) -> int:
    return int(r.get("gpus_total") or 0) * max(1, int(r.get("replicas") or 1))


def _best_mfu(rows: list[Row]) -> dict[str, float]:
    """The best MFU each GPU reaches for the job among the rows searched (the hardware's realistic MFU here)."""
    best: dict[str, float] = {}
    for r in rows:
        mfu = _mfu(r)
        if mfu and not (r["ruled_out"] or "").startswith(("no_fit", "requirement")) and mfu > best.get(r["gpu"], 0):
            best[r["gpu"]] = mfu
    return best


def _pct(x: float) -> str:
    return f"{x:.0%}" if x >= 0.1 else f"{x:.1%}" if x >= 0.001 else f"{x:.2%}"


def is_implausible(r: Row) -> bool:
    return (r.get("ruled_out") or "").startswith("implausible.")


__all__ = ["CHECKS", "Critic", "Invariant", "JobView", "check_invariants", "is_implausible", "stated_targets"]


def own_extra_problems(row: Row | None, deadline_h: float | None) -> list[str]:
    """`own-deadline-extra`: the user's own cards hold a training job and miss its deadline, so the answer must carry
    the cards of their class it takes in all and the extra over theirs, consistent with their capacity (at least
    their cards x their time / the deadline: scaling out never beats linear; the extra is the cards in all less
    theirs; timed within the deadline), and the caveat that rented cards run apart from theirs. What is wrong, or []."""
    if not row or row.get("label") != "yours" or not row.get("fits") or not deadline_h or not row.get("job_hours") \
            or row["job_hours"] <= deadline_h or row.get("mfu") is None:
        return []
    x = row.get("extra")
    if not x:
        return ["no extra count"]
    if x.get("needed") is None:
        return []                       # no cluster the planner sizes meets it: said so
    out = []
    if x["needed"] < x["owned"] * row["job_hours"] / deadline_h * 0.98:
        out.append(f"{x['needed']} in all is under their {x['owned']} x {row['job_hours']:.0f} h / {deadline_h:.0f} h")
    if x["extra"] != x["needed"] - x["owned"]:
        out.append(f"extra {x['extra']} is not {x['needed']} - {x['owned']}")
    if not x.get("hours") or x["hours"] > deadline_h:
        out.append(f"{x['needed']} cards are not timed within the deadline")
    if not x.get("separate_clusters"):
        out.append("no word that rented cards cannot join their job")
    return out


# ----- verdict-agreement: the headline and every verdict agree with the plan numbers --------------------------------
# rounding a verdict's figures may carry (hours to one decimal, money to cents, days to a tenth)
_ROUND_H = 0.06
_ROUND_REL = 0.01


def _close(a: float | None, b: float | None, rel: float = _ROUND_REL, abs_: float = 0.02) -> bool:
    return a is None or b is None or abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def _rental(reply: dict[str, Any]) -> Row | None:
    return next((r for r in reply.get("recommendations") or [] if r.get("label") != "yours"), None)


def _compare_problems(v: dict[str, Any], tie: float) -> list[str]:
    """A comparison that prefers a side on cost has the lower cost on the measure it compared (per job: hours x
    price x cards, never the price an hour; per month; per million tokens); on time alone, the fewer card-hours."""
    out: list[str] = []
    sides = {s["name"]: s for s in v.get("sides") or []}
    best, other = sides.get(v.get("preferred") or ""), sides.get(v.get("other") or "")
    if not best or not other or v.get("tie"):
        return out
    key = v.get("cost_key")
    if v.get("basis") in ("job", "month", "mtok") and key and best.get(key) is not None and other.get(key) is not None:
        # a tie on cost (within COST_TIE) may be broken by speed or quality; past it the cheaper side is preferred
        if best[key] > other[key] * (1 + tie) + 0.005:
            out.append(f"compare prefers {best['name']} at {best[key]:g} {key} over {other['name']} at {other[key]:g}")
        # the cost per job is its hours x the price an hour of all its cards, not the hourly price alone
        if v.get("basis") == "job" and key == "job_cost" and best.get("hours") and best.get("hourly") is not None \
                and best.get("price_kind") != "per_card" \
                and not _close(best["job_cost"], best["hours"] * best["hourly"], rel=0.06):
            out.append(f"{best['name']}: job cost {best['job_cost']:g} is not {best['hours']:g} h x "
                       f"{best['hourly']:g}/h")
    if v.get("basis") == "time" and best.get("hours") and other.get("hours") and \
            best["hours"] * (best.get("gpus") or 1) > other["hours"] * (other.get("gpus") or 1) * (1 + 1e-6):
        out.append(f"compare prefers {best['name']} on time with more card-hours than {other['name']}")
    return out


def _time_problems(v: dict[str, Any], plan: Row | None) -> list[str]:
    """A deadline verdict says yes exactly when the plan's hours fit in the deadline, by the margin it states."""
    out: list[str] = []
    if v.get("answer") not in ("yes", "no") or not v.get("deadline_days") or v.get("hours") is None:
        return out
    limit_h = v["deadline_days"] * 24
    if (v["answer"] == "yes") != (v["hours"] <= limit_h * 1.0001 + _ROUND_H):
        out.append(f"deadline verdict '{v['answer']}' for {v['hours']:g} h against {limit_h:g} h")
    margin = v.get("spare_h") if v["answer"] == "yes" else v.get("late_h")
    if margin is not None and abs(margin - abs(limit_h - v["hours"])) > 0.2:
        out.append(f"deadline margin {margin:g} h is not |{limit_h:g} - {v['hours']:g}| h")
    # a verdict on another card or count than the plan's ('如果换成 H100 呢，8 卡够不够？' over a B200 pick) is that
    # fleet's own figure, checked by the margin above, not against the plan's hours
    other_fleet = (v.get("gpu_name") and plan and plan.get("gpu_name") and v["gpu_name"] != plan["gpu_name"]) or \
        (v.get("cards") and plan and plan.get("gpus_total") and v["cards"] != plan["gpus_total"])
    if plan and plan.get("job_hours") and v.get("label") != "named" and not other_fleet and not _close(
            v["hours"], plan["job_hours"], abs_=_ROUND_H) and not v.get("yours"):
        out.append(f"deadline verdict's {v['hours']:g} h is not the plan's {plan['job_hours']:g} h")
    return out


def _asked_problems(v: dict[str, Any], reply: dict[str, Any]) -> list[str]:
    """A sub-question's verdict (bot/conversation/sub_questions.py) agrees with the plan the answer leads with."""
    rent = _rental(reply)
    k = v.get("kind")
    out: list[str] = []
    if k == "cost" and rent and v.get("answer") == "job":
        if not _close(v["amount"], rent.get("job_cost")):
            out.append(f"cost verdict {v['amount']:g} is not the plan's job cost {rent.get('job_cost')}")
    elif k == "cost" and rent and v.get("answer") == "month" and rent.get("hourly_total") and not rent.get(
            "monthly_cost"):
        if not _close(v["amount"], rent["hourly_total"] * 730, rel=0.01):
            out.append(f"monthly cost {v['amount']:g} is not 730 h x {rent['hourly_total']:g}/h")
    elif k == "billing_mode" and v.get("preferred") in ("pay_per_use", "monthly"):
        share = (v.get("hours_month") or 0) / 730
        if v["preferred"] == "pay_per_use" and share > 0.5 or v["preferred"] == "monthly" and share < 0.95:
            out.append(f"billing verdict '{v['preferred']}' at {round(100 * share)} % of a month's hours")
    elif k == "fits" and v.get("answer") in ("yes", "no"):
        if (v["answer"] == "yes") != (v["need_gib"] <= v["memory_gib"]):
            out.append(f"fits verdict '{v['answer']}' for {v['need_gib']:g} of {v['memory_gib']:g} GiB")
    elif k == "how_long":
        out += _time_problems(v, None)
    return out


# a count of cards said in a verdict line: '8 x Huawei Ascend 910B', '32 张', '1 card(s)', '2 cards'
CARD_COUNT = re.compile(r"(?<![\d.,])(\d+)\s*(?:x\s|×|张|cards?\b|card\(s\))")


def _can_run_problems(v: dict[str, Any], rent: Row | None) -> list[str]:
    """'Can a 910B fine-tune Qwen2.5-72B?': a yes whose plan below is on the same cards says the plan's count and
    memory a card (the fewest that hold it, and 4-bit weights, only as the other options they are); every count of
    cards its line says is one of those."""
    out: list[str] = []
    if v.get("answer") not in ("yes", "port"):
        return out
    said = {v.get("cards"), (v.get("int4") or {}).get("cards"), v.get("pick_cards")}
    if rent and rent.get("fits") and not rent.get("mixed") and rent.get("gpus_total") \
            and rent.get("gpu") in set(v.get("family") or [v.get("gpu")]):
        n = int(rent["gpus_total"])
        if n != v.get("cards") and v.get("pick_cards") != n:
            out.append(f"can-run verdict says {v.get('cards')} cards, its pick uses {n} and the line does not say so")
        if v.get("pick_cards") == n and rent.get("per_gpu_gib") is not None \
                and abs(float(v.get("pick_need_gib") or 0) - rent["per_gpu_gib"]) > 0.06:
            out.append(f"can-run verdict says {v.get('pick_need_gib')} GiB a card on the pick, it needs "
                       f"{rent['per_gpu_gib']:.1f}")
    for m in CARD_COUNT.finditer(v.get("line") or ""):
        if int(m.group(1)) not in said:
            out.append(f"can-run verdict line says {m.group(0).strip()}, not the pick's nor another option's count")
    return out


def verdict_problems(reply: dict[str, Any], tie: float) -> list[dict[str, Any]]:
    """The verdict-agreement invariant (rules/critic.yaml): the headline and every verdict the answer gives agree
    with the plan numbers they come from. `tie`: the share within which two costs are a tie (verdicts.COST_TIE).
    Each problem: {what, line (the verdict's line, '' for none)}."""
    out: list[str] = []
    v = reply.get("verdict") or {}
    recs = reply.get("recommendations") or []
    mine = next((r for r in recs if r.get("label") == "yours"), None)
    rent = _rental(reply)
    if v.get("kind") == "compare":
        out += _compare_problems(v, tie)
        chosen = v.get("chosen") or {}
        if reply.get("status") == "answer" and rent and chosen.get("gpu_model") and not mine \
                and rent.get("gpu") != chosen["gpu_model"] and not rent.get("mixed"):
            # the headline's card is the side the comparison preferred: the job was planned on it
            out.append(f"headline card {rent.get('gpu')} is not the preferred side's {chosen['gpu_model']}")
    elif v.get("kind") == "how_long":
        out += _time_problems(v, mine or rent)
    elif v.get("kind") == "why_not" and v.get("cost_key") and v.get("winner") in ("pick", "alt") \
            and (v.get("alt") or {}).get("fits", True):
        # 'wouldn't 8x A10 be cheaper?': the side said to cost less for the job costs less on the measure compared
        key, a, b = v["cost_key"], v.get("pick") or {}, v.get("alt") or {}
        if a.get(key) is not None and b.get(key) is not None:
            win, lose = (a, b) if v["winner"] == "pick" else (b, a)
            if win[key] > lose[key] * (1 + tie) + 0.005:
                out.append(f"why-not verdict says {v['winner']} costs less at {win[key]:g} {key} against {lose[key]:g}")
    elif v.get("kind") == "can_run":
        out += _can_run_problems(v, rent)
    elif v.get("kind") == "memory":
        out += memory_problems(v)
    # the plan the answer leads with: their own cards when those hold the job, else the first rental
    head = mine if mine and mine.get("fits") and recs and recs[0] is mine else rent
    for e in reply.get("rule_trace") or []:
        d = e.get("because") if e.get("rule") == "fleet_delta" else None
        if isinstance(d, dict) and head and d.get("gpu_after") and head.get("gpu") and not head.get("mixed") \
                and d["gpu_after"] != head["gpu"]:
            # 'A -> B' said under a headline on other cards: the change line is not about the plan shown
            out.append(f"fleet change to {d['gpu_after']} under a headline on {head['gpu']}")
    found = [{"what": w, "line": v.get("line") or ""} for w in out]
    for e in reply.get("rule_trace") or []:
        if e.get("rule") == "sub-questions" and isinstance(e.get("because"), dict):
            for sv in e["because"].get("verdicts") or []:
                found += [{"what": w, "line": sv.get("line") or ""} for w in _asked_problems(sv, reply)]
    return found
