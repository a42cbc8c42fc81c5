"""Mixed request sizes: a fleet of GPU types against one pool of the pick's (fleet.py), and the answer
that describes each pool when a mix wins."""
from __future__ import annotations

import math
from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.plan.candidates import Sizer
from bot.plan.checklist import (pick_facts, public)
from bot.plan.engine import evaluate
from bot.plan.billing import billing_costs
from bot.plan import fleet
from bot.plan.fleet import FleetChoice
from bot.plan.plans import (SIZING_CONCURRENCY, Targets, sizing_workload)
from bot.plan.workload import request_buckets
from bot.plan.advice import SHOWN_PER_SHAPE, Advice, _Job, meets


class FleetStage:
    """The Advisor's fleet stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

    # ----- mixed request sizes: a fleet of GPU types (fleet.py) ----------------------------------------------------
    def _fleet(self, job: _Job, pick) -> FleetChoice | None:
        """A load of several request sizes: each size's cheapest plan on the pick's cloud, at its share of the
        load and its own window, against the pick (one GPU type serving the whole load as one pool)."""
        buckets = request_buckets(job.slots)
        w = job.w
        if (len(buckets) < 2 or not pick or w.method != "inference" or w.kind != "llm" or job.gpu_ids
                or job.sizer.user_fixed or not meets(pick)):
            return None
        pool = self._candidates(job, pick["flavor"].provider, per_shape=SHOWN_PER_SHAPE)
        rows = [self._bucket_rows(job, pool, share, prompt) for share, prompt in buckets]
        passes = self._passes_for(job)
        return fleet.search(buckets, rows, self._usd(pick), self._usd,
                            lambda r: not r["ruled_out"] and meets(r) and passes(r))    # passes last: it is costly

    def _bucket_rows(self, job: _Job, pool, share: float, prompt: int) -> list[dict[str, Any]]:
        """Every flavor's plan for one bucket: its share of the rate or users, its prompt, a window of its own."""
        t = job.targets.for_bucket(share, prompt)
        w = job.w.model_copy(update={"context": t.window})
        conc = SIZING_CONCURRENCY if (t.load_sequences() or 0) > SIZING_CONCURRENCY else w.concurrency
        if t.window * SIZING_CONCURRENCY > job.w.context:
            conc = 1     # a long bucket's replica is first sized to hold one whole request, as the pick's is
        sizer = Sizer(sizing_workload(w, t, conc), job.model, {}, False)
        sizer.speed_memo = job.sizer.speed_memo
        rows = self._ranker.rank(pool, sizer, job.shapes, job.slots, t)
        job.sizer.searched += sizer.searched
        for r in rows:
            r["bucket_targets"] = t
        return rows

    def _usd(self, r: dict[str, Any]) -> float:
        f, hourly = r["flavor"], r.get("hourly")
        if hourly is None or not f.price:
            return math.inf
        return hourly if f.price.currency == "USD" else self.kb.convert(hourly, f.price.currency, "USD")

    def _attach_fleet(self, job: _Job, advice: Advice, pick, choice: FleetChoice | None) -> None:
        """The fleet on the answer's first recommendation (`fleet`: its parts, one per request size;
        `fleet_alternative`: the other option and the saving). A chosen mix is the pick; the single-type plan
        follows it as `single_type`."""
        single_rec = advice.recommendations[0]
        one = _single_parts(self.kb, pick, job.targets)
        single_rec["fleet"] = one
        if choice is None:
            return
        mix = [{"share": p.share, "prompt_tokens": p.prompt, **_part_fields(self.kb, p.row, p.row["bucket_targets"])}
               for p in choice.mix]
        saving = round(100 * choice.saving, 1)
        if choice.chosen == "single":
            single_rec["fleet_alternative"] = {"kind": "mix", "parts": mix, "price_per_hour": _total(mix),
                                               "currency": mix[0]["currency"], "saving_pct": saving}
            return
        top = max(choice.mix, key=lambda p: p.usd).row
        rec = public(self.kb, top)
        hourly = _total(mix)
        rec.update(label="pick", mixed=True, fleet=mix, why=[], breaks=[], replicas=None, layout=None,
                   instances=sum(m["instances"] * m["replicas"] for m in mix), gpus_total=sum(m["gpus"] for m in mix),
                   price_per_hour=hourly, hourly_total=hourly, monthly_cost=round(hourly * 730, 2) if hourly else None,
                   costs=billing_costs({**top, "hourly": hourly, "hours": None}, job.w) if hourly else [],
                   tpot_ms=max(m["tpot_ms"] or 0 for m in mix), spot_price_per_hour=None,
                   fleet_alternative={"kind": "single", "parts": one, "price_per_hour": _total(one),
                                      "currency": single_rec["currency"], "saving_pct": saving})
        single_rec.update(label="single_type", why=["costs_more"], fleet=one)
        advice.recommendations.insert(0, rec)
        del advice.recommendations[3:]
        self._describe_pools(job, advice, choice, top)

    def _describe_pools(self, job: _Job, advice: Advice, choice: FleetChoice, top) -> None:
        """A chosen mix is the answer: its memory and checklist describe each pool of the fleet, not the single-type
        plan it beat. Each part gets its own memory estimate (per GPU, against its card, with its terms) and the check
        rules run on each part as a pick of its own; an item that reads the same for every pool is said once, one
        that differs is said per pool, at the worst status. The answer's memory is the dearest pool's (the pick row
        is that part's flavor)."""
        for part, p in zip(advice.recommendations[0]["fleet"], choice.mix):
            est = p.row["estimate"]
            part.update(gpu_memory_gib=p.row["flavor"].gpu_memory_gib, headroom_pct=p.row["headroom"],
                        memory_terms=[{"name": x.name, "gib": round(x.gib, 2)} for x in est.terms])
        pools = [(p, self._pool_checklist(job, p.row)) for p in choice.mix]
        advice.checklist = [self._pooled_item(item, pools, job.lang) for item in ("oom", "topology", "data", "billing")
                            if any(c["item"] == item for _p, cl in pools for c in cl)]
        advice.memory = top["estimate"]

    def _pool_checklist(self, job: _Job, row) -> list[dict[str, Any]]:
        facts = {**job.facts, **pick_facts(self.kb, row, job.w)}
        checks = evaluate(self.rules, facts, "check", job.lang)
        return self._checklist.build(checks, row, job.w, job.model, job.lang, job.base)

    def _pooled_item(self, item: str, pools, lang: str) -> dict[str, Any]:
        """One checklist item over the fleet's pools: the pools' own item when all read alike, else each pool's
        sentence after its name (the request size and card), at the worst status, citing what each cites."""
        mine = [(p, next(c for c in cl if c["item"] == item)) for p, cl in pools if any(c["item"] == item for c in cl)]
        texts = [self.t.say(c["say"], lang, **c["ctx"]).strip().rstrip("。.") for _p, c in mine]
        cites = list(dict.fromkeys(s for _p, c in mine for s in c["citations"]))
        worst = max((c["status"] for _p, c in mine), key=["ok", "warn", "fail"].index)
        if len(set(texts)) == 1:
            return {**mine[0][1], "status": worst, "citations": cites}      # its own sentence, full stop and all
        said = [self.t.say("fleet.pool_check", lang, prompt=f"{p.prompt:,}", gpu=self.kb.gpus[p.row["gpu"]].name,
                           text=text) for (p, _c), text in zip(mine, texts)]
        return {"item": item, "status": worst, "say": "check.pools", "citations": cites,
                "ctx": {"pools": self.t.say("list.sep_clause", lang).join(said)},
                "rule": ",".join(c["rule"] for _p, c in mine)}


def _part_fields(kb: KnowledgeBase, r: dict[str, Any], t: Targets) -> dict[str, Any]:
    """One part of a serving fleet as the contract shows it: the flavor, its replicas and GPUs, what it costs, and
    the speed it was sized at."""
    f, s = r["flavor"], r.get("sized")
    replicas = max(1, r.get("replicas") or 1)
    return {"provider": f.provider, "flavor": f.flavor, "gpu": f.gpu, "gpu_name": kb.gpus[f.gpu].name,
            "gpu_count": f.gpu_count, "instances": r["instances"], "replicas": replicas,
            "gpus": r["gpus_total"] * replicas, "output_tokens": t.output_len,
            "qps": round(t.qps, 3) if t.qps else None, "concurrency": t.concurrency,
            "price_per_hour": round(r["hourly"], 4) if r.get("hourly") is not None else None,
            "currency": f.price.currency if f.price else None,
            "per_gpu_gib": r["estimate"].per_gpu_gib if r.get("estimate") else None,
            "replica_concurrency": s.replica_concurrency if s else None,
            "tpot_ms": round(s.tpot_ms, 1) if s and s.tpot_ms else None,
            "ttft_ms": round(s.ttft_ms) if s and s.ttft_ms else None}


def _single_parts(kb: KnowledgeBase, pick: dict[str, Any], t: Targets) -> list[dict[str, Any]]:
    """The single-type plan's parts: each request size on its own replicas of the pick's shape (plans.py)."""
    f = pick["flavor"]
    price = f.price.on_demand if f.price else None
    out = []
    for share, prompt, replicas, conc, tpot, ttft in pick["sized"].parts:
        bt = t.for_bucket(share, prompt)
        part = _part_fields(kb, {**pick, "replicas": replicas,
                                 "hourly": price * pick["instances"] * replicas if price is not None else None,
                                 "sized": None}, bt)
        part.update(replica_concurrency=conc, tpot_ms=round(tpot, 1) if tpot else None,
                    ttft_ms=round(ttft) if ttft else None)
        out.append({"share": share, "prompt_tokens": prompt, **part})
    return out


def _total(parts: list[dict[str, Any]]) -> float | None:
    prices = [p["price_per_hour"] for p in parts]
    if any(x is None for x in prices) or len({p["currency"] for p in parts}) > 1:
        return None
    return round(sum(prices), 4)
