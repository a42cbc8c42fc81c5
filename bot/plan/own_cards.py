"""The user's own cards (or the GPU they named): their plan, judged as theirs, on the fewest that hold the
job and meet its deadline, with the verdict the answer leads with."""
from __future__ import annotations

import math
from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.plan.candidates import MIN_HEADROOM
from bot.plan.checklist import (CARD_NOTES, FEED_SOURCES, MEGATRON_SOURCES, NO_PICK_FACTS, arch_family)
from bot.plan.engine import evaluate
from bot.plan.batch import job_hours
from bot.plan.own import OwnPlan, bracket, card_decides, cards_of_memory, fabric_sources, own_row, plan_own
from bot.plan.plans import (HORIZON_DAYS, MAX_SCALE_GPUS)

CARDS_PER_SERVER = 8          # a training server of the classes teams own in clusters (HGX/DGX, Atlas 800T)


def _servers(cards: float) -> int:
    """`cards` rounded up to whole 8-card servers."""
    return CARDS_PER_SERVER * max(1, math.ceil(cards / CARDS_PER_SERVER - 1e-9))
from bot.plan.workload import own_cards, tp_degrees
from bot.plan.advice import Advice, _Job


class OwnCardsStage:
    """The Advisor's owncards stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

    OFFLOAD_ORDER = ("none", "optimizer", "full")     # least moved to host RAM first

    ASKED_COUNTS = (1, 2, 4, 8, 16)   # a GPU named without a count: the server sizes it comes in, and two

    def _own_batch(self, job: _Job, plan: OwnPlan, row: dict[str, Any]) -> None:
        """A batch job on the user's own cards: how long it takes there (what 'we have 8 A100s, how long for a
        million items?' asks), from each replica's batch throughput; the deadline, if any, met or not."""
        best = _own_batch_rate(self.kb, job, plan)
        if not best:
            return
        rate, tp, engines = best
        hours = job_hours(job.targets.items, rate, 1)
        row.update(job_hours=round(hours, 1), timed=True,
                   batch={"items_per_s": round(rate, 3), "hours": round(hours, 2), "tp": tp, "replicas": engines,
                          "deadline_h": job.targets.deadline_h,
                          "meets": not job.targets.deadline_h or hours <= job.targets.deadline_h})
        if job.targets.deadline_h and hours > job.targets.deadline_h:
            row["breaks"] = ["deadline"]

    def _rented_cost(self, gid: str, cards: int, hours: float, provider: str | None) -> dict[str, Any] | None:
        """The count the user means to rent ('rent 16 A100 for it', '40 台 g6.xlarge'), for the hours the job takes on
        them: at the named cloud's cheapest price a card when it rents the card, else the cheapest on file, said with
        its flavor; None where no price of the card is on file."""
        priced = [f for f in self.kb.flavors_with_gpu(gid) if f.price and f.price.on_demand is not None
                  and f.price.kind != "flagged" and f.gpu_count]
        ours = [f for f in priced if f.provider == provider]
        if not (ours or priced):
            return None
        f = min(ours or priced, key=lambda f: (self.kb.convert(f.price.on_demand / f.gpu_count, f.price.currency,
                                                               "USD"), f.id))
        per = f.price.on_demand / f.gpu_count
        return {"cards": cards, "per_card": round(per, 4), "hours": hours, "cost": round(per * cards * hours, 2),
                "currency": f.price.currency, "flavor": f.flavor, "provider": f.provider, "kind": f.price.kind}

    # ----- the user's GPU ----------------------------------------------------------------------------------------
    def _gpu_ids(self, named: str) -> list[str]:
        from bot.knowledge.loader import GPU_FAMILIES
        return GPU_FAMILIES.get(named, [named])

    def _family_default(self, ids: list[str], provider: str | None = None):
        """The card a family named bare means ('8x H100', 'A100'): on the cloud the user named, a member that cloud
        rents ('H100 on Azure' is its H100 NVL); else the largest of its SXM modules, the data-centre part teams run
        in 8-GPU servers (H100 SXM 80 GB, not the H100 NVL pair-bridged PCIe variant people name when they have it);
        the largest member when the family has no SXM module. The answer names the card it took."""
        if provider:
            rented = [g for g in ids if any(f.provider == provider for f in self.kb.flavors_with_gpu(g))]
            ids = rented or ids
        gpus = [self.kb.gpus[g] for g in ids]
        sxm = [g for g in gpus if (g.form_factor or "").startswith("SXM")]
        return max(sxm or gpus, key=lambda g: g.memory_gib)

    def _own(self, job: _Job) -> tuple[OwnPlan, str, list[str]] | None:
        """The user's cards as a plan of their own, on every card they named (a card named without a count: one)."""
        named = job.slots.get("gpu_model")
        card_mem = job.slots.get("gpu_memory_gib") if not named else None
        if named:
            ids = [g for g in self._gpu_ids(named) if g in self.kb.gpus]
            if not ids:
                return None
            gpu = self._family_default(ids, job.slots.get("provider"))
            mem, name, sources = gpu.memory_gib, gpu.name, list(gpu.sources)
        elif card_mem:
            gpu, mem, sources = None, card_mem, []
            name = self.t.say("label.card_of", job.lang, mem=f"{card_mem:g}")
        else:
            return None
        plan = self._fewest_that_hold(job, gpu, mem)
        if gpu is None and plan.fits and plan.timed:
            plan.bracket = bracket(plan, job.model, cards_of_memory(self.kb.gpus.values(), mem), job.targets)
            named = plan.bracket[:1] + plan.bracket[1:][-1:]          # the fastest and the slowest, as the line says
            sources = list(dict.fromkeys(s for b in named for s in self.kb.gpus[b["gpu"]].sources))
        return plan, name, sources + [s for s in fabric_sources(plan) if s not in sources]

    def _fewest_that_hold(self, job: _Job, gpu, mem: float) -> OwnPlan:
        """The user's cards as they said them; a GPU named without a count and not said to be theirs ('需要几张 a100
        80g', 'can qwen 72b run on an A100?'): the fewest of them (one server of 1, 2, 4 or 8, or two servers) that
        hold the job with the least moved to host RAM (16 H100s sharding a 70B full fine-tune beat 4 with every
        state offloaded to the CPU), the plan saying what one would need (`fewer_fail`); when none do, the plan on
        the most of them, with what would make it fit."""
        # a count said as nodes ('2 nodes of H100') is 8 cards a node, as said (sharding was laid out for them)
        as_said = gpu is None or job.slots.get("gpus") or job.slots.get("nodes") or own_cards(job.slots)
        # cards to be had, not cards they have: as a cluster of them is rented, with RDMA between its servers
        network = job.slots.get("network") or (None if as_said else "rdma")

        def plan_on(cards: int) -> OwnPlan:
            return plan_own(job.w, job.model, gpu, mem, cards, job.targets, bool(job.slots.get("batch_size")),
                            (self.kb.gpus, list(self.kb.models.values())),
                            network=(network, job.slots.get("network_gbps")))
        if as_said:
            return plan_on(job.w.gpus)
        first = plan_on(1)
        if first.fits and first.workload.offload == "none":
            return self._enough_for_the_deadline(job, first, plan_on)
        plans = [first] + [plan_on(n) for n in self.ASKED_COUNTS[1:]]
        fitting = [p for p in plans if p.fits]
        if not fitting:
            return plans[-1]
        best = min(fitting, key=lambda p: (self.OFFLOAD_ORDER.index(p.workload.offload), p.cards))
        best = self._enough_for_the_deadline(job, best, plan_on)
        if best is not first:
            best.fewer_fail = first.estimate.per_gpu_gib
            best.fewer_offload = first.workload.offload if first.fits else None
            best.fewer_steps = [] if first.fits else first.steps
        return best

    def _enough_for_the_deadline(self, job: _Job, plan: OwnPlan, plan_on) -> OwnPlan:
        """'How many H100s to pre-train 7B on 1T tokens in 30 days?': the cards that hold the job are not the answer
        when they would take years; with a deadline, the count doubles (whole servers) until the time meets it, as
        far as the planner's largest cluster, and the plan says it was sized for the deadline."""
        deadline = job.targets.deadline_h or HORIZON_DAYS * 24      # no deadline: the run the rental is sized to
        if not plan.hours or plan.hours <= deadline:
            return plan
        cards = plan.cards
        below = None                       # the largest count tried that misses the deadline
        while cards < MAX_SCALE_GPUS:
            cards *= 2
            bigger = plan_on(cards)
            if bigger.fits and bigger.hours:
                below, plan = (plan if plan.hours and plan.hours > deadline else below), bigger
                if bigger.hours <= deadline:
                    break
        if below is not None and plan.hours and plan.hours <= deadline:
            plan = self._fewest_servers(plan, below.cards, deadline, plan_on)
        plan.for_deadline = "deadline" if job.targets.deadline_h else "horizon"
        return plan

    @staticmethod
    def _fewest_servers(plan: OwnPlan, low: int, deadline: float, plan_on) -> OwnPlan:
        """Doubling overshoots: between the count that missed the deadline and the one that met it, the fewest
        whole servers (8 cards) that still meet it (344 H100s, not 512, for 34B on 3T tokens in 60 days)."""
        step = 8 if low >= 8 else 1
        lo, hi = low // step, plan.cards // step          # lo misses, hi meets
        while hi - lo > 1:
            mid = (lo + hi) // 2
            cand = plan_on(mid * step)
            if cand.fits and cand.hours and cand.hours <= deadline:
                hi, plan = mid, cand
            else:
                lo = mid
        return plan

    def _judge(self, job: _Job, advice: Advice) -> None:
        """The verdict on the GPU or card the user named, and when the cards are theirs (a count named with the GPU,
        or 'my 24GB card') their plan as the `yours` row, first."""
        own = self._own(job)
        if own is None:
            return
        plan, name, sources = own
        row = own_row(plan, name)
        row["work_said"] = bool(job.w.tokens or job.slots.get("dataset_items"))    # an untimed row says why
        if job.targets.items and plan.fits and plan.gpu is not None:
            self._own_batch(job, plan, row)
        if job.slots.get("renting") and plan.fits and plan.gpu is not None and row.get("job_hours"):
            row["rent"] = self._rented_cost(plan.gpu.id, plan.used, row["job_hours"], job.slots.get("provider"))
            if row["rent"]:
                row["rent"]["provider_name"] = self.kb.providers[row["rent"]["provider"]].display_name(job.lang)
        if plan.fits:
            # their cards hold it, but would they do it? 20 years, or 1 % MFU, is a verdict, not a plan
            broken = self._critic.own_verdict(row, job.view(), job.lang)
            if broken:
                row["implausible"] = {"rule": broken[0], "because": broken[1]}
                job.critic[f"critic.{broken[0]}"] = {"rule": f"critic.{broken[0]}", "fired": True,
                                                     "because": broken[1]}
        if own_cards(job.slots) and plan.fits and plan.gpu is not None:
            row["extra"] = self._extra_for_deadline(job, plan)
        advice.gpu_verdict = {"gpu": plan.gpu.id if plan.gpu else None, "gpu_name": name, "memory_gib": plan.memory_gib,
                              "need_gib": plan.estimate.per_gpu_gib, "fits": plan.fits, "steps": plan.steps,
                              "breakdown": dict(plan.estimate.breakdown),       # the terms need_gib sums
                              "gpus": plan.used, "cards": plan.cards, "sharding": plan.workload.sharding,
                              "hours": row["job_hours"], "link": plan.link, "sources": sources, "row": row,
                              "owned": own_cards(job.slots),
                              # no flavor on file carries the card (MI300X, GB200): the answer says it is not covered
                              "rentable": bool(self.kb.flavors_with_gpu(plan.gpu.id)) if plan.gpu else True}
        if advice.gpu_verdict["owned"] and plan.fits:
            _own_memory_check(advice, plan)
        deadline = job.slots.get("deadline_days")
        row["card_decides"] = deadline if card_decides(plan, deadline) else None     # the deadline it decides
        if advice.gpu_verdict["owned"]:
            advice.recommendations.insert(0, row)
        used = {c["change"] for c in plan.changes}
        extra = ["answerai-fsdp-qlora"] if "offload parameters too" in used and job.w.method == "qlora" else []
        extra += ["pagedattention-paper"] if "kv budget" in used else []
        extra += MEGATRON_SOURCES if plan.zero3_hours else []
        extra += FEED_SOURCES if row.get("feed") else []
        advice.gpu_verdict["sources"] = sources + extra        # the verdict line cites them
        if plan.gpu is not None:
            advice.gpu_verdict["caveats"] = self._card_caveats(job, plan.gpu)

    def _extra_for_deadline(self, job: _Job, plan: OwnPlan) -> dict[str, Any] | None:
        """Their cluster misses the deadline ('we own 8 x 8 H800; boss wants it in 10 days, how many more to rent?'):
        the cards of their class the job needs in all to meet it (whole 8-card servers, timed by the same speed
        model as their own plan, so scaling losses count), the extra over what they own, and what that means: cards
        rented on a cloud do not join a job on their own InfiniBand/RoCE fabric over the internet (a data-parallel
        step all-reduces every gradient each step; a WAN link is orders of magnitude below the fabric), so the
        deadline is met by running the whole job on a cloud cluster of that many cards with RDMA, or the job stays
        on their cards (their time) or shrinks to the work their cards finish in time. None when the deadline holds
        or the job is not training with its work known."""
        deadline = job.targets.deadline_h
        if not deadline or not plan.hours or plan.hours <= deadline or job.w.method == "inference" \
                or not job.w.tokens:
            return None
        owned = plan.cards
        network = (job.slots.get("network") or "rdma", job.slots.get("network_gbps"))
        n = max(owned + CARDS_PER_SERVER, _servers(owned * plan.hours / deadline))
        found = None
        while n <= MAX_SCALE_GPUS:
            trial = plan_own(job.w, job.model, plan.gpu, plan.memory_gib, n, job.targets,
                             bool(job.slots.get("batch_size")), (self.kb.gpus, list(self.kb.models.values())),
                             network=network)
            if trial.fits and trial.hours and trial.hours <= deadline:
                found = trial
                break
            n += max(CARDS_PER_SERVER, _servers(n * 0.125))       # an eighth more at a time, in whole servers
        provider = job.slots.get("provider")
        sells = [f for f in self.kb.flavors_with_gpu(plan.gpu.id) if not provider or f.provider == provider]
        return {"needed": found.cards if found else None, "extra": found.cards - owned if found else None,
                "owned": owned, "hours": round(found.hours, 1) if found else None,
                "own_hours": round(plan.hours, 1), "deadline_h": deadline,
                # the work their own cards finish by the deadline, at their time per token
                "tokens_in_time": job.w.tokens * deadline / plan.hours,
                "provider": provider, "provider_name": self.kb.providers[provider].display_name(job.lang)
                if provider in self.kb.providers else None,
                "same_card_flavors": sorted({f.flavor for f in sells if f.gpu_count >= CARDS_PER_SERVER})[:3],
                "gpu_name": plan.gpu.name, "separate_clusters": True}

    def _card_caveats(self, job: _Job, gpu) -> list[tuple[str, list[str]]]:
        """What the card named can't do for this job (bf16 before Ampere, FP8 compute before Ada, 4-bit or INT8
        kernels on Volta): the same check rules the rental pick is read against, on the user's card, so that
        'bf16 on our V100s' is answered with the fp16 it must run in."""
        if gpu.vendor != "nvidia":
            return []          # the rules read NVIDIA generations (an Ascend card's bf16 is its own matter)
        facts = {**job.facts, **NO_PICK_FACTS, "pick_bf16": gpu.bf16, "pick_arch": arch_family(gpu)}
        notes = evaluate(self.rules, facts, "check", job.lang).notes
        return [(key, list(cite)) for key, cite, _rid in notes if key in CARD_NOTES]


def _own_memory_check(advice: Advice, plan: OwnPlan) -> None:
    """With no rental plan, the memory check was made against no card at all and failed; the user's own cards hold
    the job, so the checklist says so from their plan (the same need and memory the verdict line states), never a
    fail beside a verdict that it fits."""
    need, have = plan.estimate.per_gpu_gib, plan.memory_gib
    headroom = max(0.0, (1 - need / have) * 100) if have else 0.0
    for item in advice.checklist:
        if item["item"] == "oom" and item["status"] == "fail":
            item.update(status="ok" if headroom >= 10 else "warn",
                        say="check.oom.ok" if headroom >= 10 else "check.oom.tight",
                        ctx={**item.get("ctx", {}), "need": f"{need:.1f}", "have": f"{have:g}",
                             "headroom": f"{headroom:.0f}", "fit_hint": ""},
                        rule="oom-own-cards")


def _own_batch_rate(kb: KnowledgeBase, job: _Job, plan: OwnPlan) -> tuple[float, int, int] | None:
    """(items per second on all of the user's cards, cards per engine, engines): engines of the fewest cards that
    hold the model (the layout found) or of more, whichever completes the most items, as a rented instance is
    packed (batch_plans.size_batch): 72B on 8 A100s runs 2 engines of 4 cards faster than 4 of 2, whose KV cache is
    a few sequences."""
    from types import SimpleNamespace
    from bot.plan.batch_plans import engine_rate
    from bot.plan.own import own_link
    least = max(1, plan.used // max(1, plan.replicas))
    shape = SimpleNamespace(gpu_memory_gib=plan.memory_gib, gpu_count=plan.used)
    usable = plan.memory_gib * (1 - MIN_HEADROOM)
    best = None
    for tp in [d for d in tp_degrees(job.model, plan.used) if d >= least and plan.used % d == 0]:
        est = job.sizer.est(tp)
        if tp > least and est.per_gpu_gib > usable:
            continue
        sized = engine_rate(shape, plan.gpu, 1, tp, est, job.sizer, job.targets, own_link(plan.gpu), kb)
        rate = (sized.items_per_s or 0) * (plan.used // tp)
        if rate and (best is None or rate > best[0]):
            best = (rate, tp, plan.used // tp)
    return best
