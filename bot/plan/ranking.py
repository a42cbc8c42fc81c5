"""Ranking: each candidate flavor's plan checked against the select rules, priced, and sorted cheapest first."""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable

from bot.plan.batch_plans import size_batch
from bot.plan.candidates import MIN_HEADROOM, Sizer
from bot.plan.engine import satisfies
from bot.plan.links import link_of
from bot.plan import capacity, perf
from bot.plan.plans import HORIZON_DAYS, Sized, Targets, layout_of, size_serving, size_training, timed_workload
from bot.plan.workload import tp_degrees
from bot.estimate.kinds import job_speed
from bot.estimate.speed_encoder import generates
from bot.knowledge.loader import KnowledgeBase
from bot.knowledge.prices import borrowed
from bot.records.kb import Flavor

PERIOD_HOURS = {"hour": 1, "day": 24, "month": 730, "year": 8760}
Row = dict[str, Any]


def item_seconds(speed: Any) -> float | None:
    """Seconds one item (an image) takes on one GPU, where the kind's speed model says it (diffusion.py)."""
    if speed is None:
        return None
    return next((term.value for term in speed.terms if term.name == "seconds per image"), None)


class Ranker:
    """Ranks flavors for one job. Flavor attributes are cached per flavor: the knowledge base is immutable."""

    def __init__(self, kb: KnowledgeBase, attr_cache: dict[str, dict[str, Any]]):
        self.kb, self._attr_cache = kb, attr_cache

    def attrs(self, f: Flavor) -> dict[str, Any]:
        cached = self._attr_cache.get(f.id)
        if cached is not None:
            return cached
        gpu = self.kb.gpus[f.gpu]
        self._attr_cache[f.id] = attrs = {
            "nvlink": f.nvlink, "rdma": f.rdma, "use": list(f.use), "gpu_positioning": list(gpu.positioning),
            "bf16": gpu.bf16, "fp8": gpu.fp8, "evidence": f.evidence, "vgpu": f.vgpu, "multi_gpu": f.gpu_count > 1}
        attrs["_shape"] = (f.nvlink, f.rdma, tuple(f.use), f.gpu, f.evidence, f.vgpu, f.gpu_count > 1)
        return attrs

    def rank(self, pool: list[Flavor], sizer: Sizer, select_for: Callable, slots: dict[str, Any],
             targets: Targets) -> list[Row]:
        """Every flavor of the pool as a plan row: passing ones first, then those meeting every target, within
        budget, not demoted by a rule (several instances without documented RDMA), by effective cost and headroom."""
        rows = []
        verdicts: dict[tuple, tuple[str | None, float]] = {}
        sized: dict[tuple, Sized] = {}
        for f in pool:
            rows.append(self._row(f, sizer, select_for, slots, verdicts, (targets, sized)))
        shadowed(rows)
        order = {None: 0}
        return sorted(rows, key=lambda r: (order.get(r["ruled_out"], 1), bool(r.get("breaks")),
                                           bool(r.get("over_budget")), bool(r.get("demoted")), r["borrowed"],
                                           r["cost"], r.get("instances", 0), -r["headroom"], r["id"]))

    def _row(self, f: Flavor, sizer: Sizer, select_for: Callable, slots: dict[str, Any], verdicts: dict,
             sizing: tuple) -> Row:
        w = sizer.w
        attrs = self.attrs(f)
        p = sizer.plan(f)
        sizer.searched += 1
        row: Row = {"id": f.id, "flavor": f, "gpu": f.gpu, "ruled_out": None, "reason": None}
        if sizer.user_fixed and w.nodes > 1 and f.gpu_count < math.ceil(w.gpus / w.nodes):
            # "two nodes, sixteen cards": a flavor with fewer cards than that per node is another shape of job
            row.update(ruled_out="requirement.gpus_per_node", need=None, instances=0, gpus_total=0, estimate=None,
                       headroom=-1.0, cost=math.inf)
            return row
        if p is None:
            # per card on the most cards the sizer tried for this flavor, so that need and card compare per card
            on = w.gpus if sizer.user_fixed else sizer.most_gpus(f)
            row.update(ruled_out="no_fit", need=sizer.est(on).per_gpu_gib, need_gpus=on, instances=0, gpus_total=0,
                       estimate=None, headroom=-1.0, cost=math.inf)
            return row
        s = self._sized(f, p, sizer, sizing)
        k, n, est = s.instances, s.gpus_total, s.estimate
        row.update(instances=k, gpus_total=n, estimate=est, replicas=s.replicas, layout=s.layout,
                   breaks=list(s.breaks), sized=s, link=link_of(self.kb, f),
                   headroom=round(100 * (1 - est.per_gpu_gib / f.gpu_memory_gib), 1))
        if w.method == "inference" and not sizing[0].items:
            row["capacity"] = capacity.of_sized(s, sizing[0], w.kind, not generates(sizer.model), slots.get("fanout"),
                                                slots.get("fanout_unit"))
        split = sizer.micro.get((f.gpu_memory_gib, f.gpu_count)) if n == 1 else None
        if split:      # one card at a smaller micro-batch (candidates.Sizer._micro_batch_plan)
            mb, acc = split
            row.update(micro_batch=mb, layout={**s.layout, "micro_batch": mb, "grad_accumulation": acc})
        row["ruled_out"], bonus, link_weight, demoted = self._verdict(attrs, select_for(n, k), n, k, verdicts)
        if link_weight:
            row["link_gain"] = self._link_gain(f, s, sizer, sizing[0])
            bonus += min(link_weight, row["link_gain"])
        if demoted:
            row["demoted"] = demoted      # e.g. several instances over a network no source documents as RDMA
        # QLoRA is chosen to fit the job on one small card: with no deadline, fewer cards beat a faster node of them
        # at about the same job cost (choose._simpler): 8 x A100 for a 14B QLoRA is a plan no engineer would sign
        row["frugal"] = w.method == "qlora" and not sizing[0].deadline_h
        self._price(row, f, s, bonus, slots)
        return row

    def _link_gain(self, f: Flavor, s: Sized, sizer: Sizer, targets: Targets) -> float:
        """The share of the job's step time this flavor's NVLink saves over PCIe in the speed model (perf.link_gain),
        once per GPU, count, plan size and link evidence."""
        link = link_of(self.kb, f)
        key = ("link_gain", f.gpu, f.gpu_count, s.gpus_total, s.replica_concurrency, link)
        if key not in sizer.speed_memo:
            w = sizer.w
            if w.method == "inference":
                w = w.model_copy(update={"input_len": targets.input_len, "output_len": targets.output_len})
            else:
                w = timed_workload(w, s.gpus_total, f.gpu_count)
            sizer.speed_memo[key] = perf.link_gain(w, sizer.model, self.kb.gpus[f.gpu], s.gpus_total, f.gpu_count,
                                                   link, s.replica_concurrency)
        return sizer.speed_memo[key]

    def _sized(self, f: Flavor, p, sizer: Sizer, sizing: tuple) -> Sized:
        """The flavor's plan at the targets; flavors of one GPU, count and link evidence share it."""
        targets, memo = sizing
        link = link_of(self.kb, f)
        key = (f.gpu, f.gpu_count, f.gpu_memory_gib, link)
        if key not in memo:
            k, n, est = p
            gpu = self.kb.gpus[f.gpu]
            if targets.items and sizer.w.method == "inference":
                # a batch job: throughput, items and a deadline, not latency and users (batch.py)
                memo[key] = size_batch(f, gpu, p, sizer, targets, link, self.kb)
            elif sizer.w.method == "inference" and sizer.w.kind not in ("llm", "multimodal"):
                memo[key] = self._kind_sized(sizer, gpu, k, n, est, targets, f.gpu_count)
            elif sizer.w.method == "inference":
                memo[key] = self._serving_sized(f, gpu, p, sizer, targets, link)
            else:
                memo[key] = size_training(f, gpu, k, n, est, sizer, targets, link)
        return memo[key]

    @staticmethod
    def _serving_sized(f: Flavor, gpu, p, sizer: Sizer, targets, link) -> Sized:
        """A serving replica on the fewest of the instance's cards that hold the model; when the load needs several
        such replicas and the instance has cards to spare, the replica over more of them (tensor parallelism inside
        the instance) is sized too, and kept if it needs fewer instances: the weights are held once, so the other
        cards' memory holds KV cache (Qwen3-8B for 30 chats of 4k tokens: one 2 x L4 instance at TP 2, where one-L4
        replicas needed five instances, each with its second card idle). The all-reduces over the instance's link
        are in the speed model's time per token; a tie keeps the fewer cards per replica."""
        k, n, est = p
        best = size_serving(f, gpu, k, n, est, sizer, targets, link)
        if k != 1 or best.replicas <= 1 or n >= f.gpu_count or best.encoder_batch:
            return best
        usable = f.gpu_memory_gib * (1 - MIN_HEADROOM)
        for t in sorted(d for d in tp_degrees(sizer.model, f.gpu_count) if d > n):
            est_t = sizer.est(t)
            if est_t.per_gpu_gib > usable:
                continue
            alt = size_serving(f, gpu, 1, t, est_t, sizer, targets, link)
            if (bool(alt.breaks), alt.replicas) < (bool(best.breaks), best.replicas):
                best = alt
        return best

    def _kind_sized(self, sizer: Sizer, gpu, k: int, n: int, est, targets: Targets, per_instance: int = 1) -> Sized:
        """Images, audio, scenes: their own speed model (bot/estimate/kinds.py) sizes them. A load asked (live
        streams, images/s, hours of audio a day) sets how many copies of the n-GPU plan run side by side: the
        load over one copy's capacity, at least the production minimum; the capacity goes on the plan, so the
        answer shows the division and the critic checks it. Hours of audio to transcribe are a job instead.
        An instance of more cards than one copy needs runs a copy on each (an 8-GPU p6-b200 for Whisper was once
        timed on one of its cards while all eight were paid for)."""
        copies = per_instance // n if k == 1 and n < per_instance and per_instance % n == 0 else 1
        n_copy, n = n, n * copies
        w = sizer.w.model_copy(update={"gpus": n})
        speed = job_speed(w, sizer.model, gpu, self.kb.gpus, list(self.kb.models.values()))
        replicas = max(1, math.ceil(speed.gpus_for_target / n)) if speed is not None and speed.gpus_for_target else 1
        replicas, hours = self._transcription(sizer, gpu, n, replicas, targets)
        cap = capacity.of_kind_speed(speed, n, replicas, targets.utilisation) if hours is None else None
        if cap is not None:     # at the utilisation target (rules/critic.yaml headroom), at least the minimum
            replicas = max(replicas, cap.need, targets.min_replicas)
            cap = replace(cap, replicas=replicas)
        s = Sized(k, n, est, {**layout_of(sizer, n_copy, k, replicas * copies), "copies_per_instance": copies},
                  replicas=replicas, hours=hours, capacity=cap)
        if cap is None and speed is None and (targets.qps or targets.concurrency) and hours is None:
            s.breaks.append("untimed")     # no speed on file: it cannot be said to carry the load
        item_s = item_seconds(speed)
        if item_s is not None and w.task == "inference":
            # one image's wait on this card: more copies add images a second, never a shorter wait, so a card
            # slower per image than the target misses it whatever the fleet (one T4 at 17 s for '8 s per image')
            s.request_ms = item_s * 1000
            if targets.latency_stated and s.request_ms > targets.request_ms:
                s.breaks.append("latency")
        return s

    def _transcription(self, sizer: Sizer, gpu, n: int, replicas: int, targets: Targets) -> tuple[int, float | None]:
        """Hours of audio to transcribe ('转写 2000 小时录音，三天内'): a job, not a service. Copies of the n-GPU plan
        split the audio so that it ends within the deadline (or the horizon), and the plan has a wall clock, so a
        job cost. The rate is one window after another per GPU (speech.py): batched pipelines run faster, so this
        errs towards more GPUs."""
        w = sizer.w
        if w.kind != "speech" or not w.dataset_items:
            return replicas, None
        speed = job_speed(w.model_copy(update={"gpus": n}), sizer.model, gpu, self.kb.gpus,
                          list(self.kb.models.values()))
        if speed is None or not speed.hours:
            return replicas, None
        limit = targets.deadline_h or HORIZON_DAYS * 24
        replicas = max(replicas, math.ceil(speed.hours / limit))
        return replicas, speed.hours / replicas

    def _price(self, row: Row, f: Flavor, s: Sized, bonus: float, slots: dict[str, Any]) -> None:
        """Hourly and job cost, and the effective cost the ranking sorts by (preferences and tightness weighed)."""
        n = s.gpus_total
        price = f.price.on_demand if f.price else None
        hourly = price * s.instances * s.replicas if price is not None else None
        hours = s.hours
        row["hourly"] = hourly
        row["job_cost"] = hourly * hours if hourly is not None and hours else None
        row["hours"] = hours
        base_cost = row["job_cost"] if row["job_cost"] is not None else hourly
        ccy = f.price.currency if f.price else "USD"
        if base_cost is not None and ccy != "USD":
            # rank prices in one currency (knowledge/rates.yaml): a 25 CNY/h price is not cheaper than 4 USD/h
            base_cost = self.kb.convert(base_cost, ccy, "USD")
        row["price_usd"] = base_cost        # what choose() compares: plans in CNY and in USD side by side
        user_ccy = slots.get("budget_currency")
        if user_ccy and hourly is not None and user_ccy != ccy:
            row["user_currency"], row["hourly_user"] = user_ccy, self.kb.convert(hourly, ccy, user_ccy)
        tight = 1.15 if row["headroom"] < 10 else 1.0
        if base_cost is None:
            eff = math.inf
        elif slots.get("budget") == "high":
            gpu = self.kb.gpus[f.gpu]
            speed = (gpu.bf16_tflops or gpu.fp16_tflops or 1) * n * s.replicas
            eff = (s.hours if s.hours else 1e6 / speed) * (1 - bonus) + base_cost * 1e-6
        elif s.hours or s.tpot_ms is not None:
            # the speed model already paid for slow links in the job's time, or in the replicas a serving load
            # needs at its latency target: preferences only break near-ties
            eff = base_cost * (1 - bonus / 4) * tight
        else:
            eff = base_cost * (1 - bonus) * tight
        row["cost"] = eff
        row.update(budget_fields(self.kb, hourly, row["job_cost"], f, slots))

    @staticmethod
    def _verdict(attrs: dict[str, Any], select, n: int, k: int, memo: dict
                 ) -> tuple[str | None, float, float, list[str]]:
        """(why the rules rule the flavor out or None, the weight of the preferences it meets other than NVLink, the
        most an NVLink preference it meets is worth, the attributes it lacks that the rules would rather it had:
        ranked after the plans that have them). NVLink is credited by what it buys the job (_link_gain), up to its
        rule's weight. It depends on the flavor's attributes and the job's shape on it (several GPUs? several
        instances?), so it is memoised."""
        key = (id(select), n > 1, k > 1, attrs["_shape"])
        if key in memo:
            return memo[key]
        ruled = next((f"requirement.{con.attribute}" for con, _rid in select.require
                      if _applies(con, n, k) and not satisfies(attrs, con)), None)
        if ruled is None:
            ruled = next((f"requirement.{con.attribute}" for con, _rid in select.exclude if satisfies(attrs, con)),
                         None)
        met = [con for con, _ in select.prefer if satisfies(attrs, con)]
        link_weight = max((con.weight for con in met if con.attribute == "nvlink"), default=0.0) if n > 1 else 0.0
        bonus = sum(con.weight for con in met if con.attribute != "nvlink")
        demoted = sorted({con.attribute for con, _rid in select.demote
                          if _applies(con, n, k) and not satisfies(attrs, con)})
        memo[key] = (ruled, bonus, link_weight, demoted)
        return memo[key]


def shadowed(rows: list[Row]) -> None:
    """Mark `borrowed` the rows whose price is borrowed from other vendors' pages (prices.borrowed: the median of
    other clouds' list prices for the card) while a vendor that publishes its own price offers the same plan: the
    same card, cards a replica, instances and replicas, holding the job. Such a figure is that vendor's price, not
    this one's: the plan ranks after the vendor's own (a Huawei H100 PCIe size priced at Lambda's rate, beside
    Lambda's own). A borrowed price with no own-priced twin (GCP's 2 x L4 size, where AWS sells 1 and 4) is the
    best estimate of its plan and ranks by it."""
    own = {_shape(r) for r in rows if r["ruled_out"] is None and r.get("hourly") is not None
           and not borrowed(r["flavor"])}
    for r in rows:
        r["borrowed"] = r["ruled_out"] is None and borrowed(r["flavor"]) and _shape(r) in own


def _shape(r: Row) -> tuple:
    return (r["gpu"], r["flavor"].gpu_count, r.get("gpus_total"), r.get("instances"), r.get("replicas"))


def _applies(con, n: int, k: int) -> bool:
    """NVLink matters only between GPUs the job uses, RDMA only between instances."""
    return not ((con.attribute == "nvlink" and n <= 1) or (con.attribute == "rdma" and k == 1))


def budget_fields(kb: KnowledgeBase, hourly, job_cost, f: Flavor, slots: dict[str, Any]) -> dict[str, Any]:
    """A plan's `budget_use` and whether it breaks the stated budget (per period, or in total for a job of known
    length), the flag read from the spend so that the flag and the sentence saying the spend never disagree."""
    use = budget_use(kb, hourly, job_cost, f, slots)
    return {"budget_use": use, "over_budget": bool(use) and not use["met"]}


def budget_use(kb: KnowledgeBase, hourly, job_cost, f: Flavor, slots: dict[str, Any]) -> dict[str, Any] | None:
    """What the plan spends against a stated budget, in the budget's own currency and period, so the answer can say
    "about 50 of your 300 USD" rather than only flag a plan that breaks it. None without a budget, a price, or a
    length of job for a total budget."""
    amount, period = slots.get("budget_amount"), slots.get("budget_period")
    if amount is None or hourly is None or not f.price:
        return None
    if period in PERIOD_HOURS:
        spend = hourly * PERIOD_HOURS[period]
    elif period == "total" and job_cost is not None:
        spend = job_cost
    else:
        return None
    ccy = slots.get("budget_currency") or f.price.currency
    if ccy != f.price.currency:
        try:
            spend = kb.convert(spend, f.price.currency, ccy)
        except Exception:                 # a currency the rate table lacks: say nothing rather than guess
            return None
    return {"amount": amount, "currency": ccy, "period": period, "spend": round(spend, 2), "met": spend <= amount}


def shortlist(rows: list[Row]) -> tuple[list[Row], list[Row]]:
    """The top three passing rows, and, like SkyPilot's "considered resources", the next fitting options and
    the cheaper ones that lost (and why)."""
    recs = [r for r in rows if not r["ruled_out"]][:3]
    top_hourly = recs[0].get("hourly") if recs else None
    cheaper_out = [r for r in rows if r["ruled_out"] and top_hourly is not None
                   and r["flavor"].price and r["flavor"].price.on_demand is not None
                   and r["flavor"].price.on_demand < top_hourly][:3]
    considered = cheaper_out + [r for r in rows if r not in recs and not r["ruled_out"]][:3]
    if not considered:
        considered = [r for r in rows if r not in recs][:6]
    return recs, considered
