"""The planner's orchestrator: a job's slots -> the advice, through the stages in their own modules.

Stages, in the order an answer is made (DESIGN.md "plan"), each a module of bot/plan:
  job_stage.py  the job and its targets: workload, assumptions, targets, the sizer (work.py: the amount of work)
  search.py     candidates sized, timed, priced and ranked (candidates.py, plans.py, layouts.py, ranking.py), the
                critic's plausibility invariants over them (critic.py), other clouds when the default has nothing
  fleet_stage.py  a fleet of GPU types for mixed request sizes (fleet.py)
  faster.py     the faster option beside the pick
  figures.py    the compute, speed and throughput said with the pick
  own_cards.py  the user's own cards judged as theirs, and the verdict the answer leads with
  compare.py    comparisons, from the same plans (verdicts.py)
  inverse.py    the biggest model or most tokens a budget or fleet x time trains, over the forward planner
  budget_paths.py  'not enough': the priced ways to bring a job within its budget
The advice (advice.py) carries the pick, the alternatives, the checklist (checklist.py), the targets met or missed and
the rule trace; the conversation layer renders it. Pure: reads the knowledge base and rules, never the network or a
database.
"""
from __future__ import annotations

from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.plan.checklist import (NO_PICK_FACTS, PRICE_NOTES, Checklist, claim_sources, note_ctx, pick_facts,
                                public)
from bot.plan.engine import RuleSet, evaluate
from bot.plan.billing import billing_costs
from bot.plan.choose import choose
from bot.plan.critic import Critic
from bot.plan.ranking import Ranker
from bot.plan.load import serving_load
from bot.plan.work import training_work
from bot.plan.workload import build_workload, own_cards, tp_degrees, user_fixed_plan
from bot.records.kb import Model
from bot.records.models import Workload
from bot.render.templates import Templates
from bot.plan.advice import Advice, _Job
from bot.plan.job_stage import JobStage
from bot.plan.search import SearchStage
from bot.plan.fleet_stage import FleetStage
from bot.plan.faster import FasterStage
from bot.plan.figures import FiguresStage, split_batch
from bot.plan.own_cards import OwnCardsStage
from bot.plan.quantized import FP8_SLOTS, prefer, quantizable, served_quantized
from bot.plan.compare import CompareStage
from bot.plan.inverse import InverseStage
from bot.plan.budget_paths import BudgetPathsStage


class Advisor(JobStage, SearchStage, FleetStage, FasterStage, FiguresStage, OwnCardsStage, CompareStage,
              InverseStage, BudgetPathsStage):
    """Advises on one job at a time; one instance per process (the knowledge base and rules are immutable)."""

    def __init__(self, kb: KnowledgeBase, rules: RuleSet, templates: Templates, default_provider: str = "huaweicloud"):
        self.kb, self.rules, self.t = kb, rules, templates
        self._attr_cache: dict[str, dict[str, Any]] = {}     # per flavor; the knowledge base is immutable
        self.default_provider = default_provider if default_provider in kb.providers else "huaweicloud"
        self._ranker = Ranker(kb, self._attr_cache)
        self._checklist = Checklist(kb, templates)
        self._critic = Critic(rules.invariants)

    def headroom(self) -> dict[str, float]:
        """The margin plans are sized with (rules/critic.yaml headroom), for sizing done outside the planner (a
        queue of orders, conversation/queue_turn.py)."""
        return self._critic.headroom()

    # ----- the decision ------------------------------------------------------------------------------------------
    def workload(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any]
                 ) -> tuple[Workload, Model | None, list[tuple[str, dict[str, Any]]]]:
        return build_workload(self.kb, intent, slots, assumed)

    def advise(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str) -> Advice:
        advice = self._advise(intent, slots, assumed, lang)
        named = slots.get("gpu_model")
        if quantizable(intent, slots, advice) and not own_cards(slots) and (not named or all(
                self.kb.gpus[g].fp8_tflops for g in self._gpu_ids(named) if g in self.kb.gpus)):
            # FP8 weights and KV cache on cards that compute in FP8, served so when it meets the job for less
            fp8 = self._advise(intent, {**slots, **FP8_SLOTS}, assumed, lang, native="fp8")
            # a cloud the user named is kept: FP8 on another cloud (the named one has no FP8 card) is no saving
            on_named = not slots.get("provider") or all(
                r.get("provider") == slots["provider"] for r in fp8.recommendations[:1])
            if on_named and prefer(advice, fp8):
                return served_quantized(advice, fp8)
        if not advice.recommendations and intent == "inference" and not slots.get("precision"):
            # nothing holds it in 16-bit: serve quantized weights instead, and say so
            for precision in ("fp8", "int4"):
                quant = self._advise(intent, {**slots, "precision": precision}, assumed, lang,
                                     native=precision if precision == "fp8" else None)
                if quant.recommendations:
                    quant.assumptions.insert(0, ("assume.quantized", {"precision": precision}))
                    return quant
        return advice

    def _advise(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                gpu_ids: list[str] | None = None, native: str | None = None,
                flavor_ids: list[str] | None = None) -> Advice:
        job = self._job(intent, slots, assumed, lang)
        job.gpu_ids, job.native, job.flavor_ids = gpu_ids, native, flavor_ids
        rows, fallback = self._rows(job)
        rows = self._user_gpu_first(job, rows)
        quote = self._critic.promote_unpriced(rows, job.lang)
        job.critic[quote["rule"]] = quote
        # training only: a served model's KV cache fills the memory by design (vLLM caps it; requests queue)
        roomy = self._critic.prefer_roomy(rows, job.lang) if job.w.method != "inference" \
            and not job.sizer.user_fixed else None
        if roomy:
            job.critic[roomy["rule"]] = roomy
        if job.w.method != "inference":
            # training, as roomy-pick: a served model's KV cache fills the card by design (the replica's sequences
            # are sized to what it holds), so low headroom there is capacity, not an OOM
            self._critic.mark_tight(rows)
        recs, considered = choose(rows, self._passes_for(job))
        pick = recs[0] if recs else None
        if pick is not None and pick.get("twin_of") is not None and fallback is None:
            # a swap landed on a vendor's own plan that stands beside the default cloud's borrowed figure: said so
            fallback = self.borrowed_fallback(job, pick["twin_of"])
        if pick and pick.get("micro_batch"):
            job.assumptions[:] = [split_batch(a, pick) for a in job.assumptions]
        self._faster(job, pick, recs)
        if pick:
            pick["costs"] = billing_costs(pick, job.w)
        mixed = self._fleet(job, pick)
        advice = self._assemble(job, pick, recs, considered, fallback)
        if pick and pick.get("sized") and pick["sized"].parts and advice.recommendations:
            self._attach_fleet(job, advice, pick, mixed)
        advice.work = training_work(job.slots, job.w) or (serving_load(job.slots) if job.w.task == "inference"
                                                           and not job.targets.items else None)
        self._extras(job, pick, advice)
        self._targets(job, advice)
        advice.trace += [e for e in job.critic.values() if e not in advice.trace]
        if advice.recommendations and advice.recommendations[0].get("mixed"):
            advice.throughput = None      # each pool's speed is on its fleet line, not one GPU's for the whole load
        advice.plans_searched = job.sizer.searched
        return advice

    def _assemble(self, job: _Job, pick, recs, considered, fallback) -> Advice:
        """The check rules on the pick, the checklist, notes and citations, and the Advice itself."""
        check_facts = dict(job.facts)
        check_facts.update(pick_facts(self.kb, pick, job.w) if pick else NO_PICK_FACTS)
        checks = evaluate(self.rules, check_facts, "check", job.lang)
        checklist = self._checklist.build(checks, pick, job.w, job.model, job.lang, job.base)
        if pick is None and fallback and fallback["key"].startswith("fallback.no_sane"):
            # plans held the job and were not sane: a memory verdict on one card would say something false
            checklist = [c for c in checklist if c["item"] != "oom"]
        select = job.shapes.job
        ctx = note_ctx(self.kb, pick, job.provider, job.lang)
        notes = [(key, ctx, [*cite, *(s for s in ctx.get("price_sources", []) if key in PRICE_NOTES and s not in cite)])
                 for key, cite, _rid in select.notes + checks.notes]
        billing = [b for b, _c, _r in select.billing]
        return Advice(workload=job.w, model=job.model, memory=pick["estimate"] if pick else job.base,
                      assumptions=job.assumptions, recommendations=[public(self.kb, r) for r in recs],
                      considered=[public(self.kb, r) for r in considered], checklist=checklist, notes=notes,
                      trace=select.trace + checks.trace,
                      claim_sources=claim_sources(self.kb, job.w, job.model, pick),
                      fallback=fallback, billing=billing, one_copy=job.sizer.est(1))


__all__ = ["Advisor", "Advice", "tp_degrees", "user_fixed_plan"]
