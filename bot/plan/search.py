"""The plans searched: every candidate flavor sized, timed, priced and ranked (ranking.py), the critic's
plausibility invariants over them (critic.py), the user's GPU first, and other clouds when the default
one has nothing that meets the job."""
from __future__ import annotations

import math
import re
from typing import Any

from bot.plan.checklist import pick_facts
from bot.plan.engine import evaluate
from bot.plan.critic import is_implausible
from bot.plan.workload import own_cards
from bot.plan.advice import SHOWN_PER_SHAPE, _Job, meets
from bot.plan.job_stage import region_word
from bot.knowledge.loader import MAINLAND_CHINA, market
from bot.knowledge.prices import borrowed


TWIN_PRICE_MAX = 1.2       # _own_priced: the most an own-priced twin may cost over the borrowed figure it replaces


class SearchStage:
    """The Advisor's search stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

    own_prices_first = True        # _own_priced: with no cloud named, a borrowed default price never leads

    def _candidates(self, job: _Job, *args: Any, **kw: Any) -> list:
        """The knowledge base's candidate flavors; for a precision the planner chose itself (FP8 serving), only
        those whose GPU computes in it: a quantized plan is never offered on hardware that lacks the format."""
        return self._usable(job, list(self.kb.candidates(*args, **kw)))

    def _usable(self, job: _Job, pool: list) -> list:
        """The flavors of `pool` the user can use: never a GPU they ruled out ('no A100/H100 for us'), only those
        they allowed ('only A10 and L20'), whichever way the pool was drawn (the default search, one side of a
        comparison of clouds or flavors); for an FP8 plan the planner chose, only cards that compute in FP8."""
        allowed, excluded = self._limited(job.slots)
        if allowed or excluded:
            # 'we don't have H100 quota, only A100 and A10': only the GPUs the user can get, never the others
            pool = [f for f in pool if f.gpu not in excluded and (not allowed or f.gpu in allowed)]
        if job.native == "fp8":
            pool = [f for f in pool if f.gpu in self.kb.gpus and self.kb.gpus[f.gpu].fp8_tflops]
        return pool

    def _limited(self, slots: dict[str, Any]) -> tuple[set[str], set[str]]:
        """The GPU ids the user can use (empty: any) and those they cannot, from the names they said."""
        def ids(names: list[str] | None) -> set[str]:
            return {g for n in names or [] for g in self._gpu_ids(n)}
        return ids(slots.get("gpu_allowed")), ids(slots.get("gpu_excluded"))

    def _rows(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The rows of the region the question names (every provider selling there, or the one it names), else
        the provider's ranked rows; if none passes, the other providers' passing rows first, and why."""
        region = job.slots.get("region")
        if job.flavor_ids is not None:      # one side of a comparison of clouds or flavors: those flavors only
            pool = self._usable(job, [self.kb.flavors[i] for i in job.flavor_ids if i in self.kb.flavors])
            return self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets)), None
        if region and not job.gpu_ids:
            pool = self._candidates(job, job.slots.get("provider"), per_shape=SHOWN_PER_SHAPE, region=region)
            ranked = self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets) if pool else []
            if any(not r["ruled_out"] for r in ranked):
                return ranked, None
            rows, fallback = self._provider_rows(job)
            where = region_word(region)
            return rows, {"provider": where, "requirement": "", "key": "fallback.no_region"}
        return self._provider_rows(job)

    def _provider_rows(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        elsewhere = self._named_gpu_elsewhere(job)
        if elsewhere is not None:
            return elsewhere
        return self._default_rows(job)

    def _named_gpu_elsewhere(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
        """'部署 Qwen2.5-14B 在 A10 上' with no cloud named: the GPU is what was asked for and the default cloud was
        only assumed, so when it rents no such card the plans on that card elsewhere come first (they were an H100
        on the default cloud, under a verdict on the A10), and the answer says why. Not for the user's own cards:
        a rental beside those is sized on its own."""
        named = job.slots.get("gpu_model")
        if not named or job.slots.get("provider") or job.slots.get("provider_uncovered") or own_cards(job.slots) \
                or job.gpu_ids or job.flavor_ids is not None:
            return None
        wanted = set(self._gpu_ids(named))
        # a sibling of the card on the default cloud will do ('A100 80GB' there as PCIe): not a reason to move
        if not wanted or {_base(g) for g in wanted} & {_base(f.gpu) for f in self.kb.flavors_of(job.provider)}:
            return None
        others = [f for f in self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE) if f.gpu in wanted]
        alt = [r for r in self._sane(job, self._ranker.rank(others, job.sizer, job.shapes, job.slots, job.targets))
               if not r["ruled_out"]]
        if not alt:
            return None
        rows, _ = self._default_rows(job)
        gpu = self.kb.gpus[alt[0]["gpu"]].name
        return alt + rows, {"provider": self.kb.providers[job.provider].display_name(job.lang), "requirement": gpu,
                            "key": "fallback.no_gpu"}

    def _default_rows(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        if job.gpu_ids:
            return self._gpu_rows(job)
        pool = self._candidates(job, job.provider, per_shape=SHOWN_PER_SHAPE)
        if not self.kb.flavors_of(job.provider):
            # a cloud recognised by name with no instance types on file (no vendor table read): say so, not that
            # its instances are too small, and show the best plans elsewhere
            others = self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE)
            alt = self._sane(job, self._ranker.rank(others, job.sizer, job.shapes, job.slots, job.targets))
            return alt, {"provider": self.kb.providers[job.provider].display_name(job.lang), "requirement": "",
                         "key": "fallback.not_on_file"}
        ranked = self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets))
        if any(not r["ruled_out"] for r in ranked):
            rows, fallback = self._elsewhere(job, ranked)
            return (rows, fallback) if fallback else self._own_priced(job, ranked)
        # the requirements that ruled this provider's flavors out (the job's own, or those of a candidate's
        # shape: several GPUs need NVLink, several instances RDMA)
        hard = sorted({r["ruled_out"].split(".", 1)[1] for r in ranked
                       if r["ruled_out"] and r["ruled_out"].startswith("requirement.")}
                      | {c.attribute for c, _ in job.shapes.job.require})
        others = self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE)
        alt = [r for r in self._sane(job, self._ranker.rank(others, job.sizer, job.shapes, job.slots, job.targets))
               if not r["ruled_out"]]
        fits_somewhere = any(r["ruled_out"] != "no_fit" for r in ranked)
        lang = job.lang
        reqs = ", ".join(self.t.say(f"requirement.{a}", lang) for a in hard) if fits_somewhere or not hard else ""
        if job.sizer.user_fixed and any(r["ruled_out"] == "no_fit" for r in ranked):
            # '两机十六卡': its flavors with enough GPUs per instance do not hold the job on that many GPUs either
            need = job.sizer.est(job.w.gpus).per_gpu_gib
            held = self.t.say("requirement.too_big_on", lang, gpus=job.w.gpus, need=f"{need:,.0f}")
            reqs = self.t.say("list.sep_clause", lang).join([held, reqs]) if reqs and fits_somewhere else held
        elif not fits_somewhere:
            big = job.sizer.est(1).per_gpu_gib
            reqs = self.t.say("requirement.too_big", lang, total=f"{big:,.0f}") + (f"; {reqs}" if reqs else "")
        fallback = {"provider": self.kb.providers[job.provider].display_name(lang), "requirement": reqs,
                    "key": "fallback.other_provider" if alt else "fallback.nothing"}
        insane = [r for r in ranked if is_implausible(r)]
        if insane:
            # plans that hold the job exist here, and none is sane: say why, and what would
            why = min(insane, key=lambda r: r.get("hours") or math.inf)["implausible"]      # the nearest
            fallback.update(requirement=why["because"] + (f"; {reqs}" if reqs else ""),
                            fix=self.t.say(f"critic.fix.{why['rule']}", lang),
                            key="fallback.no_sane" if alt else "fallback.no_sane_anywhere")
        return alt + ranked, fallback

    def _gpu_rows(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The plans on the GPUs asked about (one side of a comparison, a verdict on named hardware): on the cloud
        the user named when it rents them and one of its sizes holds the job (set4 'named cloud swapped': 'on Azure,
        A100 or H100?' answered with a Verda A100 and a Huawei H100); else on any cloud, and said."""
        named = job.slots.get("provider")
        if named and named in self.kb.providers:
            mine = [f for f in self._candidates(job, named, per_shape=SHOWN_PER_SHAPE) if f.gpu in job.gpu_ids]
            ranked = self._sane(job, self._ranker.rank(mine, job.sizer, job.shapes, job.slots, job.targets)) \
                if mine else []
            if any(not r["ruled_out"] for r in ranked):
                return ranked, None
            pool = [f for f in self._candidates(job, exclude=named, per_shape=SHOWN_PER_SHAPE)
                    if f.gpu in job.gpu_ids]
            rows = self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets))
            gpus = ", ".join(dict.fromkeys(self.kb.gpus[g].name for g in job.gpu_ids if g in self.kb.gpus))
            key = "fallback.gpu_not_sold" if not mine else "fallback.gpu_no_fit"
            return rows + ranked, {"provider": self.kb.providers[named].display_name(job.lang), "requirement": gpus,
                                   "key": key}
        pool = [f for f in self._candidates(job, None, per_shape=SHOWN_PER_SHAPE) if f.gpu in job.gpu_ids]
        return self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets)), None

    def _sane(self, job: _Job, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The critic's plausibility invariants over ranked rows: a plan that breaks one is ruled out, and said."""
        for entry in self._critic.prune(rows, job.view(), job.lang):
            if entry["fired"] or entry["rule"] not in job.critic:
                job.critic[entry["rule"]] = entry if entry["fired"] else job.critic.get(entry["rule"], entry)
        return rows

    def _elsewhere(self, job: _Job, ranked: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict | None]:
        """The provider was assumed, not asked for, and none of its plans meets the targets (a deadline, the
        horizon, the latency), or meets them only across instances without documented RDMA: plans elsewhere that do
        come first, and the answer says why."""
        fitting = [r for r in ranked if not r["ruled_out"]]
        if job.slots.get("provider") or any(meets(r) and not r.get("demoted") for r in fitting):
            return ranked, None
        others = self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE)
        alt = [r for r in self._sane(job, self._ranker.rank(others, job.sizer, job.shapes, job.slots, job.targets))
               if not r["ruled_out"] and meets(r)]
        if any(meets(r) for r in fitting):
            # its plans meet the job only across instances over a network no source documents as RDMA: plans
            # elsewhere that need no such leap come first, if there are any
            alt = [r for r in alt if not r.get("demoted")]
        if not alt:
            return ranked, None
        missed = [b for r in fitting for b in r["breaks"]] + (["budget"] if any(r.get("over_budget")
                                                                                 for r in fitting) else [])
        provider = self.kb.providers[job.provider].display_name(job.lang)
        leap = [r["flavor"].flavor for r in fitting if meets(r) and r.get("demoted")]
        if leap:
            return alt + ranked, {"provider": provider, "requirement": ", ".join(dict.fromkeys(leap[:3])),
                                  "key": "fallback.rdma"}
        unpriced = [r["flavor"].flavor for r in fitting if r.get("hourly") is None and not r.get("breaks")]
        if unpriced:
            # its plans that meet the job have no public price (Ascend nodes): say so, not 'meets nothing'
            return alt + ranked, {"provider": provider, "requirement": ", ".join(dict.fromkeys(unpriced)),
                                  "key": "fallback.unpriced"}
        if set(missed) - {"untimed"}:
            # plans with no speed on file miss no target; what the timed ones miss is why nothing there will do
            missed = [b for b in missed if b != "untimed"]
        what = ", ".join(dict.fromkeys(self.t.say(f"breaks.{b}", job.lang) for b in missed))
        return alt + ranked, {"provider": provider, "requirement": what, "key": "fallback.targets"}

    def _own_priced(self, job: _Job, ranked: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict | None]:
        """No cloud named, and the default cloud's best plan rests on a price borrowed from other vendors' pages
        (prices.borrowed: Huawei Cloud's sizes priced at the median of other clouds' list prices for the card): the
        pick is the same card from a vendor that publishes its own price for it (the borrowed figure is most often
        that very vendor's price), in the same size (cards an instance, instances, replicas); the default
        cloud's plan follows, its figure said as borrowed in the lead (set4: 'serve qwen2.5-7b for 30 QPS' led with
        a Huawei H100 PCIe size at Lambda's H100 PCIe rate; now Lambda's own). The card, the count and the hours
        stay what the planner chose. A cloud or region the user named, a default cloud with its own prices
        (ADVISOR_DEFAULT_PROVIDER=aws), or a card no vendor prices itself (Ascend) is answered as before."""
        if not self.own_prices_first or job.slots.get("provider") or job.slots.get("provider_uncovered") \
                or job.slots.get("region"):
            return ranked, None
        self._mark_twinned(job, ranked)
        # when nothing there meets the job, _elsewhere has looked for plans that do; the nearest stays as it was
        top = next((r for r in ranked if not r["ruled_out"] and meets(r)), None)
        if top is None or not borrowed(top["flavor"]):
            return self._with_twins(job, ranked), None
        # a tie at the same price in another shape (2 one-card replicas or one 2-card instance, as a fleet sized with
        # headroom often lands on): the shape a vendor with its own price sells goes first
        # serving only: its replicas are independent, so the shape is free; a training job's shape is its topology
        # (4 one-card instances over the network are not one 4-card instance over NVLink)
        ties = [r for r in ranked if not r["ruled_out"] and meets(r) and borrowed(r["flavor"]) and r["gpu"] == top["gpu"]
                and abs((r.get("price_usd") or 0) - (top.get("price_usd") or 0)) < 1e-6] \
            if job.w.method == "inference" else []
        for r in ties:
            if r is not top and any(f.gpu_count == r["flavor"].gpu_count for f in self._candidates(
                    job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE) if f.gpu == r["gpu"] and not borrowed(f)):
                if not any(f.gpu_count == top["flavor"].gpu_count for f in self._candidates(
                        job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE) if f.gpu == top["gpu"] and not borrowed(f)):
                    top = r
                break
        # rental platforms that sell in mainland China only are no offer to a question in English
        pool = [f for f in self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE)
                if f.gpu == top["gpu"] and not borrowed(f)
                and not (job.lang != "zh" and f.region and market(f.region) == MAINLAND_CHINA)]
        same = self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets)) if pool else []
        # the same size: the count per instance, cards a replica, instances and replicas the planner chose
        own = [r for r in same if not r["ruled_out"] and meets(r) and r["flavor"].gpu_count == top["flavor"].gpu_count
               and (r.get("gpus_total"), r.get("instances"), r.get("replicas")) ==
               (top.get("gpus_total"), top.get("instances"), top.get("replicas"))
               # at about the figure the planner chose the card at: a twin dearer than that (Azure's 2 x H100 NVL
               # size at 17.64 where the per-card median made 13.96) would not have been the pick
               and (r.get("price_usd") or math.inf) <= (top.get("price_usd") or 0) * TWIN_PRICE_MAX]
        if not own:
            return self._with_twins(job, ranked), None
        for r in ranked:
            r["borrowed"] = borrowed(r["flavor"])     # never the 'simpler', 'roomier' or 'cheapest' swap for it
        rows = own + [r for r in same if all(r is not o for o in own)] + ranked
        return rows, self.borrowed_fallback(job, top)

    def borrowed_fallback(self, job: _Job, top: dict[str, Any]) -> dict[str, Any]:
        """The answer's word for a pick on another vendor's own price in place of the default cloud's plan `top`,
        whose figure is borrowed (fallback.borrowed_near); the default cloud is no longer said as assumed."""
        f = top["flavor"]
        near = self.t.say("fallback.borrowed_near", job.lang, flavor=f.flavor, price=f"{top['hourly']:,.2f}",
                          ccy=f.price.currency)
        job.assumptions[:] = [a for a in job.assumptions if a[0] != "assume.provider"]
        return {"provider": self.kb.providers[job.provider].display_name(job.lang), "requirement": near,
                "key": "fallback.borrowed_default"}

    def _with_twins(self, job: _Job, ranked: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Beside each plan that meets the job at a borrowed figure with an own-priced twin (_mark_twinned), the
        twin itself: the same card, count an instance, cards a replica, instances and replicas from a vendor that
        prices it, at most TWIN_PRICE_MAX times the figure, placed right after it, so that a later swap (the
        simpler plan: three one-card replicas rather than 12 L4 split four ways) weighs the vendor's own plan, never
        the borrowed figure (`twin_of` says which plan it stands for)."""
        twinned = [r for r in ranked if r.get("borrowed") and not r["ruled_out"] and meets(r)]
        if not twinned:
            return ranked
        gpus = {r["gpu"] for r in twinned}
        pool = [f for f in self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE)
                if f.gpu in gpus and not borrowed(f)
                and not (job.lang != "zh" and f.region and market(f.region) == MAINLAND_CHINA)]
        same = [r for r in self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets))
                if not r["ruled_out"] and meets(r)] if pool else []
        out: list[dict[str, Any]] = []
        for r in ranked:
            out.append(r)
            if all(r is not t for t in twinned):
                continue
            twins = [s for s in same if s["gpu"] == r["gpu"] and s["flavor"].gpu_count == r["flavor"].gpu_count
                     and (s.get("gpus_total"), s.get("instances"), s.get("replicas")) ==
                     (r.get("gpus_total"), r.get("instances"), r.get("replicas"))
                     and (s.get("price_usd") or math.inf) <= (r.get("price_usd") or 0) * TWIN_PRICE_MAX
                     and all(s is not o for o in out)]
            if twins:
                twin = min(twins, key=lambda s: (s.get("price_usd") or math.inf, s["id"]))
                twin["twin_of"] = r
                out.append(twin)
        return out

    def _mark_twinned(self, job: _Job, ranked: list[dict[str, Any]]) -> None:
        """Mark `borrowed` every plan priced at a figure borrowed from other vendors' pages (prices.borrowed) whose
        card, in the same count an instance, a vendor sells at its own price, at most TWIN_PRICE_MAX times the
        figure (no platform that sells in mainland China only, for a question in English): whatever the first plan
        was, no later swap (the simpler plan, the roomier one, the cheapest) puts such a row in the lead, where its
        figure is another vendor's price (a 12 x L4 pick swapped for a 'simpler' 3 x Huawei H100 PCIe size at
        Lambda's H100 PCIe rate, Lambda's own size never looked up)."""
        def usd(f) -> float:
            return self.kb.convert(f.price.on_demand, f.price.currency, "USD")
        own: dict[tuple[str, int], float] = {}
        for f in self._candidates(job, exclude=job.provider, per_shape=SHOWN_PER_SHAPE):
            if f.price and f.price.on_demand is not None and not borrowed(f) \
                    and not (job.lang != "zh" and f.region and market(f.region) == MAINLAND_CHINA):
                own[(f.gpu, f.gpu_count)] = min(own.get((f.gpu, f.gpu_count), math.inf), usd(f))
        for r in ranked:
            f = r["flavor"]
            if not r["ruled_out"] and borrowed(f) and f.price and f.price.on_demand is not None \
                    and own.get((f.gpu, f.gpu_count), math.inf) <= usd(f) * TWIN_PRICE_MAX:
                r["borrowed"] = True

    def _user_gpu_first(self, job: _Job, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The GPU (or card size) the user named goes first when it is a sensible choice, not at any price."""
        named = job.slots.get("gpu_model")
        card_mem = job.slots.get("gpu_memory_gib") if not named else None
        if not (named or card_mem):
            return rows
        wanted = self._gpu_ids(named) if named else []
        mine = [r for r in rows if not r["ruled_out"] and (r["gpu"] in wanted or (
            card_mem and abs(r["flavor"].gpu_memory_gib - card_mem) <= 0.1 * card_mem))]
        if not own_cards(job.slots):
            # "on an H100": a GPU asked for is a constraint; the cheaper plans stay in view below it
            for r in mine:
                r["named"] = True
            return mine + [r for r in rows if all(r is not x for x in mine)] if mine else rows
        # "we have 2x RTX 4090", "我的显卡是 16G": their cards are judged as theirs (gpu_verdict); a rental of the same
        # GPU or card size goes first only when it is a sensible choice, not at any price (four 16 GiB cards sharding
        # a LoRA that one 24 GiB card holds for a quarter of the price is not)
        best_cost = next((r["cost"] for r in rows if not r["ruled_out"]), math.inf)
        mine = [r for r in mine if r["cost"] <= best_cost * 1.5 or best_cost == math.inf]
        return mine + [r for r in rows if all(r is not x for x in mine)] if mine else rows

    def _passes_for(self, job: _Job):
        """A row passes when its own checklist has no failing item (memoised per row)."""
        memo: dict[int, bool] = {}

        def passes(r: dict[str, Any]) -> bool:
            if id(r) not in memo:
                facts = {**job.facts, **pick_facts(self.kb, r, job.w)}
                checks = evaluate(self.rules, facts, "check", job.lang)
                memo[id(r)] = all(c.status != "fail" for c, _cite, _rid in checks.checks)
            return memo[id(r)]
        return passes


def _base(gpu_id: str) -> str:
    """A card without its form factor ('a100-80gb-pcie' -> 'a100-80gb', 'h100-sxm' -> 'h100'): siblings alike."""
    return re.sub(r"-(?:pcie|sxm\d?|nvl)$", "", gpu_id)
