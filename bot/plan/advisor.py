"""A job's slots -> workload -> memory estimate -> candidates -> rules -> ranked recommendations and checklist.

Pure: reads the knowledge base and rules, never the network or a database. Every number in the output comes from
estimate/ (memory.py, cost.py); every sentence from rules and templates; every claim carries source ids. The steps
live in their own modules: workload.py (slots -> Workload), candidates.py (instances per flavor, job facts),
ranking.py (rules, prices, order), checklist.py (the pick's checklist, notes, the sources behind each claim).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from bot.estimate import cost
from bot.estimate.kinds import job_speed
from bot.estimate.speed_encoder import encoder_efficiency, generates
from bot.estimate.scaling import INTER_NODE, INTRA_NODE, dp_efficiency
from bot.knowledge.loader import MAINLAND_CHINA, KnowledgeBase
from bot.plan.candidates import MIN_HEADROOM, Shapes, Sizer, gpus_needed, job_facts
from bot.plan.checklist import (FEED_SOURCES, MEGATRON_SOURCES, NO_PICK_FACTS, PRICE_NOTES, Checklist, claim_sources,
                                note_ctx, pick_facts, public)
from bot.plan.engine import RuleSet, evaluate
from bot.plan.billing import billing_costs
from bot.plan.verdicts import TYPICAL_JOBS, TYPICAL_TOKENS, compare_verdict, factor_figures
from bot.plan.choose import choose, saves_time
from bot.plan.critic import Critic, JobView, is_implausible, stated_targets
from bot.plan import fleet
from bot.plan.batch import batch_spec, batch_targets, is_batch, job_hours, replicas_for, summary
from bot.plan.fleet import FleetChoice
from bot.plan.links import link_of
from bot.plan.own import OwnPlan, bracket, card_decides, cards_of_memory, fabric_sources, own_row, plan_own
from bot.plan import perf
from bot.plan.layouts import zero3_workload
from bot.plan.plans import (HORIZON_DAYS, MAX_SCALE_GPUS, SIZING_CONCURRENCY, Targets, size_training, sizing_workload,
                             timed_workload)
from bot.plan.ranking import Ranker, budget_fields
from bot.plan.work import training_work
from bot.plan.workload import build_workload, own_cards, request_buckets, tp_degrees, user_fixed_plan
from bot.records.kb import Model
from bot.records.models import Link, MemoryEstimate, Work, Workload
from bot.render.templates import Templates

# policy: a batch fleet above this many GPUs (eight 8-GPU machines) gets a note to secure quota and capacity first;
# clouds grant GPU quota per region on request, and a fleet that size is a capacity question, not a click
BATCH_QUOTA_GPUS = 64
SHOWN_PER_SHAPE = 3          # an answer shows at most 3 rows of one flavor shape; only the 3 cheapest can appear
# Volta and Turing have fp16 tensor cores only: "They further support BF16 in Ampere architectures" (MMEngine)
NO_BF16_SOURCES = ["mmengine-amp-docs"]


@dataclass
class Advice:
    workload: Workload
    model: Model | None
    memory: MemoryEstimate
    assumptions: list[tuple[str, dict[str, Any]]]          # (template key, values)
    recommendations: list[dict[str, Any]]
    considered: list[dict[str, Any]]
    checklist: list[dict[str, Any]]
    notes: list[tuple[str, dict[str, Any], list[str]]]
    trace: list[dict[str, Any]]
    claim_sources: dict[str, list[str]]      # claim (memory, compute, speed) -> the sources the answer cites for it
    compute: dict[str, Any] | None = None
    throughput: dict[str, Any] | None = None
    speed: dict[str, Any] | None = None          # JobSpeed of a non-LLM or post-training job (bot/estimate/kinds.py)
    batch: dict[str, Any] | None = None          # a batch job's numbers (bot/plan/batch.py summary)
    gpu_verdict: dict[str, Any] | None = None
    fallback: dict[str, Any] | None = None
    billing: list[str] = field(default_factory=list)
    plans_searched: int = 0      # flavor x instances x replicas evaluated for this answer
    work: Work | None = None     # the amount of work in the user's units and its derivation (bot/plan/work.py)
    targets: list[dict[str, Any]] = field(default_factory=list)     # each stated target, met or not (critic.py)


@dataclass
class _Job:
    """One question's state while it is being advised on."""
    intent: str
    slots: dict[str, Any]
    lang: str
    w: Workload
    model: Model | None
    assumptions: list[tuple[str, dict[str, Any]]]
    sizer: Sizer
    base: MemoryEstimate
    provider: str
    targets: Targets
    gpu_ids: list[str] | None = None          # a comparison: only flavors of these GPUs, on any cloud
    facts: dict[str, Any] = field(default_factory=dict)
    shapes: Shapes | None = None
    critic: dict[str, dict[str, Any]] = field(default_factory=dict)    # invariant -> its rule_trace entry

    def view(self) -> JobView:
        serving = self.w.method == "inference" and not self.targets.items
        encoder = serving and not generates(self.model)
        return JobView(training=self.w.method != "inference", deadline_days=self.slots.get("deadline_days"),
                       users=self.targets.concurrency if serving and not encoder else None,
                       rate=(self.targets.encoder_rate() if encoder else self.targets.qps) if serving else None)


SAID_SPEED_NOTES = ("sp.clip_len", "dif.train_share")     # speed notes an item-timed answer states as assumptions


def _region_word(region: str) -> str:
    """The region as an answer names it: a template key for the mainland-China market (worded in bot/render), the
    cloud's own region id otherwise."""
    return "@region.cn-mainland" if region == MAINLAND_CHINA else region


class Advisor:
    def __init__(self, kb: KnowledgeBase, rules: RuleSet, templates: Templates, default_provider: str = "huaweicloud"):
        self.kb, self.rules, self.t = kb, rules, templates
        self._attr_cache: dict[str, dict[str, Any]] = {}     # per flavor; the knowledge base is immutable
        self.default_provider = default_provider if default_provider in kb.providers else "huaweicloud"
        self._ranker = Ranker(kb, self._attr_cache)
        self._checklist = Checklist(kb, templates)
        self._critic = Critic(rules.invariants)

    # ----- the decision ------------------------------------------------------------------------------------------
    def workload(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any]
                 ) -> tuple[Workload, Model | None, list[tuple[str, dict[str, Any]]]]:
        return build_workload(self.kb, intent, slots, assumed)

    def advise(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str) -> Advice:
        advice = self._advise(intent, slots, assumed, lang)
        if not advice.recommendations and intent == "inference" and not slots.get("precision"):
            # nothing holds it in 16-bit: serve quantized weights instead, and say so
            for precision in ("fp8", "int4"):
                quant = self._advise(intent, {**slots, "precision": precision}, assumed, lang)
                if quant.recommendations:
                    quant.assumptions.insert(0, ("assume.quantized", {"precision": precision}))
                    return quant
        return advice

    def compare(self, slots: dict[str, Any], assumed: dict[str, Any], lang: str, job_intent: str | None = None
                ) -> dict[str, Any] | None:
        """'A10 or L4 for a 13B chatbot, 20 users?': the same plans, one GPU at a time on any cloud, and a verdict
        (bot/plan/verdicts.py): which is preferred for the job, by how much, and what decided it. With no job named,
        a typical job of the kind the question implies is compared, and said; a training job with no amount of work
        is timed on a typical amount, so each side has a time and a cost per job. None with fewer than two GPUs."""
        names = [n for n in dict.fromkeys(slots.get("gpu_models") or []) if self._known_gpu(n)]
        if len(names) < 2:
            return None
        intent = _compare_intent(slots, job_intent)
        typical = None
        if not (slots.get("model") or slots.get("params_b") or slots.get("arch")):
            intent = intent or self._typical_intent(names)
            typical = "finetune" if intent in ("finetune", "train") else "inference"
            intent = typical
            job = TYPICAL_JOBS[typical]
            slots = {**slots, **job, "params_b": self.kb.models[job["model"]].params_b}
        intent = intent or "inference"
        work_assumed = None
        if intent != "inference" and not (slots.get("tokens") or slots.get("dataset_items")) and self._llm(slots):
            work_assumed = intent
            slots = {**slots, "tokens": TYPICAL_TOKENS[intent]}
        side = [self._compare_side(intent, name, slots, assumed, lang) for name in names]
        fitting = [x for x in side if x["pick"] and not x["pick"]["breaks"]]
        best = min(fitting, key=lambda x: (self._usd_cost(x["pick"]), x["gpu"])) if fitting else None
        out = {"intent": intent, "side": side, "best": best["name"] if best else None,
               "training": intent != "inference", "typical": typical, "work_assumed": work_assumed}
        if best is None and all(x["pick"] is None and x["cards"] for x in side):
            # nothing on file rents either card: the one that holds the job on fewer cards (fewer to buy or rent,
            # no tensor parallelism over PCIe) is the verdict, and the answer says it rests on the cards alone
            held = [x for x in side if x["cards"]["cards"]]
            if held:
                def speed(x):      # decoding is bound by memory bandwidth, training by compute
                    g = self.kb.gpus[x["gpu"]]
                    return (g.memory_bandwidth_gbs if intent == "inference" else g.bf16_tflops or g.fp16_tflops) or 0
                fewest = min(held, key=lambda x: (x["cards"]["cards"], -speed(x), x["gpu"]))
                tie = sum(x["cards"]["cards"] == fewest["cards"]["cards"] for x in held) > 1
                out.update(by_cards=fewest["name"],
                           why=("bandwidth" if intent == "inference" else "compute") if tie else "cards")
        out["verdict"] = {**compare_verdict(self.kb, out, slots.get("precision")), "typical": typical,
                          "training": intent != "inference", "work_assumed": work_assumed}
        if out["verdict"].get("factor") in ("bandwidth", "compute") and out["verdict"].get("basis") in ("job", "month"):
            out["verdict"]["figures"] = factor_figures(self.kb, out["verdict"])
        return out

    def _llm(self, slots: dict[str, Any]) -> bool:
        """A language model's job is timed in tokens (an image or speech model's is not)."""
        from bot.estimate.kinds import kind_of_model
        model = self.kb.models.get(slots.get("model") or "")
        return not slots.get("kind") and (model is None or kind_of_model(model) == "llm")

    def _known_gpu(self, name: str) -> bool:
        return any(g in self.kb.gpus for g in self._gpu_ids(name))

    def _typical_intent(self, names: list[str]) -> str:
        """No job named: cards all sold for training (H100, A100, 910B) compare on a fine-tune, others on serving."""
        gpus = [self.kb.gpus[g] for n in names for g in self._gpu_ids(n) if g in self.kb.gpus]
        return "finetune" if gpus and all("training" in g.positioning for g in gpus) else "inference"

    def _compare_side(self, intent: str, name: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str
                      ) -> dict[str, Any]:
        """One GPU's side of a comparison: its best plan on any cloud, or, when no flavor on file rents it, how many
        of its cards hold the job."""
        ids = [g for g in self._gpu_ids(name) if g in self.kb.gpus]
        plain = {k: v for k, v in slots.items() if k not in ("gpu_models", "gpu_model", "provider")}
        advice = self._advise(intent, plain, assumed, lang, gpu_ids=ids)
        pick = advice.recommendations[0] if advice.recommendations else None
        gpu = self.kb.gpus[pick["gpu"] if pick else max(ids, key=lambda g: self.kb.gpus[g].memory_gib)]
        rented = any(f.gpu in ids for f in self.kb.flavors_of())
        return {"name": name, "gpu": gpu.id, "gpu_name": gpu.name, "bf16": gpu.bf16,
                "bf16_sources": [] if gpu.bf16 else NO_BF16_SOURCES,
                "consumer": "consumer" in gpu.positioning, "advice": advice, "pick": pick, "rented": rented,
                # no plan on file holds the job on it (not rented, or only in sizes that cannot): its own cards' count
                "cards": None if rented and pick else self._cards_needed(intent, plain, assumed, lang, gpu)}

    def _usd_cost(self, rec: dict[str, Any]) -> float:
        """A recommendation's job cost (else hourly) in USD at the dated rates: a 5.15 CNY/h A800 and a 2.96 USD/h
        set of 4090s compare in one currency. (Not `_usd` below, which prices a ranked row by its flavor: under that
        same name this one was silently replaced, and every comparison fell back to the GPU's name.)"""
        cost = rec.get("job_cost") or rec.get("hourly_total")
        return self.kb.convert(cost, rec["currency"], "USD") if cost and rec.get("currency") else math.inf

    def _cards_needed(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                      gpu) -> dict[str, Any]:
        """A GPU no flavor on file rents (a 4090, an A800): the fewest of its cards that hold the job, judged as the
        user's own cards would be, so a comparison still says which card holds the job and on how many, instead of
        only 'no plan on offer'."""
        verdict = self._fewest_cards(intent, slots, assumed, lang, gpu)
        if intent == "inference" and verdict["cards"] != 1 and not slots.get("precision"):
            # served from several of these cards, or none: would 4-bit weights (AWQ/GPTQ) hold it on fewer?
            int4 = self._fewest_cards(intent, {**slots, "precision": "int4"}, assumed, lang, gpu)
            if int4["cards"] and (verdict["cards"] is None or int4["cards"] < verdict["cards"]):
                verdict["int4"] = {"cards": int4["cards"], "need_gib": int4["need_gib"]}
        return verdict

    def _fewest_cards(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                      gpu) -> dict[str, Any]:
        """The fewest of a GPU's cards that hold the job: the one search a GPU named without a count gets
        (_fewest_that_hold: one server of 1, 2, 4 or 8, or two, least moved to host RAM first), as a dict."""
        job = self._job(intent, {k: v for k, v in slots.items() if k != "gpus"}, assumed, lang)
        plan = self._fewest_that_hold(job, gpu, gpu.memory_gib)
        return {"memory_gib": gpu.memory_gib, "usable_gib": gpu.memory_gib * (1 - MIN_HEADROOM),
                "need_gib": plan.estimate.per_gpu_gib, "fits": plan.fits, "steps": plan.steps, "gpus": plan.used,
                "sharding": plan.workload.sharding, "changes": plan.changes,
                "cards": plan.cards if plan.fits else None}

    def _advise(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                gpu_ids: list[str] | None = None) -> Advice:
        job = self._job(intent, slots, assumed, lang)
        job.gpu_ids = gpu_ids
        rows, fallback = self._rows(job)
        rows = self._user_gpu_first(job, rows)
        quote = self._critic.promote_unpriced(rows, job.lang)
        job.critic[quote["rule"]] = quote
        # training only: a served model's KV cache fills the memory by design (vLLM caps it; requests queue)
        roomy = self._critic.prefer_roomy(rows, job.lang) if job.w.method != "inference" \
            and not job.sizer.user_fixed else None
        if roomy:
            job.critic[roomy["rule"]] = roomy
        recs, considered = choose(rows, self._passes_for(job))
        pick = recs[0] if recs else None
        if pick and pick.get("micro_batch"):
            job.assumptions[:] = [_split_batch(a, pick) for a in job.assumptions]
        self._faster(job, pick, recs)
        if pick:
            pick["costs"] = billing_costs(pick, job.w)
        mixed = self._fleet(job, pick)
        advice = self._assemble(job, pick, recs, considered, fallback)
        if pick and pick.get("sized") and pick["sized"].parts and advice.recommendations:
            self._attach_fleet(job, advice, pick, mixed)
        advice.work = training_work(job.slots, job.w)
        self._extras(job, pick, advice)
        self._targets(job, advice)
        advice.trace += [e for e in job.critic.values() if e not in advice.trace]
        if advice.recommendations and advice.recommendations[0].get("mixed"):
            advice.throughput = None      # each pool's speed is on its fleet line, not one GPU's for the whole load
        advice.plans_searched = job.sizer.searched
        return advice

    def _targets(self, job: _Job, advice: Advice) -> None:
        """Every target the user stated, met or missed by the answer's first plan (theirs, or the pick), and a
        stated amount of work timed and costed (critic.py: targets-stated, work-timed-and-costed)."""
        first = advice.recommendations[0] if advice.recommendations else None
        serving = job.w.method == "inference" and not job.targets.items
        advice.targets = stated_targets(job.slots, first, serving, encoder=serving and not generates(job.model))
        missed = [t for t in advice.targets if t["met"] is False]
        if advice.targets:
            said = "; ".join(f"{t['target']} {t['plan']} vs {t['asked']} {t['unit']}" for t in missed)
            job.critic["critic.targets-stated"] = self._critic.trace_entry(
                "targets-stated", bool(missed), job.lang, target=", ".join(t["target"] for t in missed), verdict=said)
        if first and first.get("label") != "yours" and (job.w.tokens or job.targets.items):
            lacking = [name for name, value in (("time", first.get("job_hours")), ("cost", first.get("job_cost")))
                       if value is None and (name == "time" or first.get("price_per_hour") is not None)]
            job.critic["critic.work-timed-and-costed"] = self._critic.trace_entry(
                "work-timed-and-costed", bool(lacking), job.lang, flavor=first["flavor"], missing="/".join(lacking))

    def _job(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str) -> _Job:
        """The workload, its estimate on the GPUs named, the provider, and the job facts and select rules."""
        w, model, assumptions = self.workload(intent, slots, assumed)
        # a text LLM's chat request is sized by its tokens in flight; a VLM's window also holds its image tokens
        targets = Targets.from_slots(slots, w.context, in_flight=w.kind == "llm")
        if w.method == "inference" and is_batch(slots):
            targets = batch_targets(targets, batch_spec(slots, model if w.kind in ("llm", "multimodal") else None), w)
        if slots.get("e2e_ms") and w.method == "inference":
            # say how a whole-response target was read: it decides the fleet
            assumptions.append(("assume.e2e", {"e2e": f"{slots['e2e_ms'] / 1000:g}", "out": targets.output_len,
                                               "ttft": f"{targets.ttft_ms:.0f}", "tpot": f"{targets.tpot_ms:.1f}"}))
        elif slots.get("latency_ms") and w.method == "inference" and not generates(model):
            assumptions.append(("assume.latency_encoder", {"ms": f"{slots['latency_ms']:.0f}"}))
        elif slots.get("latency_ms") and w.method == "inference":
            assumptions.append(("assume.latency_ttft", {"ms": f"{slots['latency_ms']:.0f}",
                                                        "tpot": f"{targets.tpot_ms:.0f}"}))
        if w.method == "inference" and not generates(model) and targets.concurrency and not targets.items:
            assumptions[:] = [_encoder_users(a, targets) for a in assumptions]
        # a serving replica is sized for a few sequences; the load then sets its capacity and the replica count
        sized_w = w
        if targets.items and w.kind in ("llm", "multimodal"):
            sized_w = sizing_workload(w, targets, SIZING_CONCURRENCY)     # a few sequences; its memory sets the rest
        elif w.method == "inference" and w.kind == "llm":
            load = targets.load_sequences() or 0
            sized_w = sizing_workload(w, targets, SIZING_CONCURRENCY if load > SIZING_CONCURRENCY else w.concurrency)
            if targets.kv_tokens:
                assumptions[:] = [_in_flight(a, targets, w) for a in assumptions]
        sizer = Sizer(sized_w, model, {}, user_fixed_plan(w, slots), batch_fixed=bool(slots.get("batch_size")))
        sizer.speed_ctx = (self.kb.gpus, list(self.kb.models.values()))
        sizer.mfu_floor = self._critic.mfu_floor()       # the search stops where the critic would rule a plan out
        base = sizer.est(w.gpus)
        provider = slots.get("provider") or self.default_provider
        if provider not in self.kb.providers:
            provider = self.default_provider
        if slots.get("region"):
            assumptions.append(("assume.region", {"region": _region_word(slots["region"])}))
        elif not slots.get("provider"):
            assumptions.append(("assume.provider", {"provider": self.kb.providers[provider].display_name(lang)}))
        job = _Job(intent, slots, lang, w, model, assumptions, sizer, base, provider, targets)
        job.facts = job_facts(intent, w, model, slots, base, gpus_needed(self.kb, sizer), provider)
        job.shapes = Shapes(self.rules, job.facts, lang)
        if sizer.user_fixed and not any(sizer.plan(f) for f in self.kb.candidates(per_shape=1) if not f.vgpu):
            # the GPUs the user named cannot hold the job anywhere: plan the size it needs instead, and say so
            sizer.user_fixed = False
            sizer.cache.clear()
            assumptions.append(("assume.more_gpus", {"gpus": w.gpus}))
        return job

    def _rows(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """The rows of the region the question names (every provider selling there, or the one it names), else
        the provider's ranked rows; if none passes, the other providers' passing rows first, and why."""
        region = job.slots.get("region")
        if region and not job.gpu_ids:
            pool = list(self.kb.candidates(job.slots.get("provider"), per_shape=SHOWN_PER_SHAPE, region=region))
            ranked = self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets) if pool else []
            if any(not r["ruled_out"] for r in ranked):
                return ranked, None
            rows, fallback = self._provider_rows(job)
            where = _region_word(region)
            return rows, {"provider": where, "requirement": "", "key": "fallback.no_region"}
        return self._provider_rows(job)

    def _provider_rows(self, job: _Job) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        if job.gpu_ids:
            pool = [f for f in self.kb.candidates(None, per_shape=SHOWN_PER_SHAPE) if f.gpu in job.gpu_ids]
            return self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets)), None
        pool = list(self.kb.candidates(job.provider, per_shape=SHOWN_PER_SHAPE))
        ranked = self._sane(job, self._ranker.rank(pool, job.sizer, job.shapes, job.slots, job.targets))
        if any(not r["ruled_out"] for r in ranked):
            return self._elsewhere(job, ranked)
        # the requirements that ruled this provider's flavors out (the job's own, or those of a candidate's
        # shape: several GPUs need NVLink, several instances RDMA)
        hard = sorted({r["ruled_out"].split(".", 1)[1] for r in ranked
                       if r["ruled_out"] and r["ruled_out"].startswith("requirement.")}
                      | {c.attribute for c, _ in job.shapes.job.require})
        others = list(self.kb.candidates(exclude=job.provider, per_shape=SHOWN_PER_SHAPE))
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
        if job.slots.get("provider") or any(_meets(r) and not r.get("demoted") for r in fitting):
            return ranked, None
        others = list(self.kb.candidates(exclude=job.provider, per_shape=SHOWN_PER_SHAPE))
        alt = [r for r in self._sane(job, self._ranker.rank(others, job.sizer, job.shapes, job.slots, job.targets))
               if not r["ruled_out"] and _meets(r)]
        if any(_meets(r) for r in fitting):
            # its plans meet the job only across instances over a network no source documents as RDMA: plans
            # elsewhere that need no such leap come first, if there are any
            alt = [r for r in alt if not r.get("demoted")]
        if not alt:
            return ranked, None
        missed = [b for r in fitting for b in r["breaks"]] + (["budget"] if any(r.get("over_budget")
                                                                                 for r in fitting) else [])
        provider = self.kb.providers[job.provider].display_name(job.lang)
        leap = [r["flavor"].flavor for r in fitting if _meets(r) and r.get("demoted")]
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

    # ----- mixed request sizes: a fleet of GPU types (fleet.py) ----------------------------------------------------
    def _fleet(self, job: _Job, pick) -> FleetChoice | None:
        """A load of several request sizes: each size's cheapest plan on the pick's cloud, at its share of the
        load and its own window, against the pick (one GPU type serving the whole load as one pool)."""
        buckets = request_buckets(job.slots)
        w = job.w
        if (len(buckets) < 2 or not pick or w.method != "inference" or w.kind != "llm" or job.gpu_ids
                or job.sizer.user_fixed or not _meets(pick)):
            return None
        pool = list(self.kb.candidates(pick["flavor"].provider, per_shape=SHOWN_PER_SHAPE))
        rows = [self._bucket_rows(job, pool, share, prompt) for share, prompt in buckets]
        passes = self._passes_for(job)
        return fleet.search(buckets, rows, self._usd(pick), self._usd,
                            lambda r: not r["ruled_out"] and _meets(r) and passes(r))    # passes last: it is costly

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

    def _faster(self, job: _Job, pick, recs: list[dict[str, Any]]) -> None:
        """No deadline and no faster plan shown: the pick's flavor at a quarter of its time, with its cost."""
        if job.targets.items:
            self._faster_batch(job, pick, recs)
            return
        if not pick or not pick.get("hours") or job.targets.deadline_h or job.sizer.user_fixed:
            return
        if any(r.get("label") == "fastest" for r in recs):
            return
        f = pick["flavor"]
        quick = size_training(f, self.kb.gpus[f.gpu], pick["instances"], pick["gpus_total"], pick["estimate"],
                              job.sizer, Targets(deadline_h=pick["hours"] / 4), link_of(self.kb, f))
        if not saves_time(quick.hours, pick["hours"]) or pick.get("hourly") is None:
            return
        hourly = pick["hourly"] / pick["instances"] * quick.instances
        row = {**pick, "instances": quick.instances, "gpus_total": quick.gpus_total, "estimate": quick.estimate,
               "layout": quick.layout, "hours": quick.hours, "hourly": hourly, "job_cost": hourly * quick.hours,
               "headroom": round(100 * (1 - quick.estimate.per_gpu_gib / f.gpu_memory_gib), 1),
               "label": "fastest", "breaks": [], "sized": quick}
        if self._faster_breaks(job, row, recs):
            return
        row.update(budget_fields(self.kb, hourly, row["job_cost"], f, job.slots))
        row["why"] = ["costs_more"] if row["job_cost"] > pick["job_cost"] * 1.0005 else ["same_cost"]
        recs.insert(1, row)
        del recs[3:]

    def _faster_breaks(self, job: _Job, row: dict[str, Any], recs: list[dict[str, Any]]) -> bool:
        """The pick scaled out to finish sooner is offered only if it is a sane plan (the critic: its MFU against
        the pick's on the same card, the floor); if not, the trace says why it is not shown."""
        broken = self._critic.breaks_row(row, job.view(), job.lang, recs)
        if broken:
            job.critic[f"critic.{broken[0]}"] = {"rule": f"critic.{broken[0]}", "fired": True, "because": broken[1]}
        return broken is not None

    def _faster_batch(self, job: _Job, pick, recs: list[dict[str, Any]]) -> None:
        """A batch job goes faster on more replicas of the same plan at about the same cost (the same GPU-hours,
        plus a start-up each), so the faster option is the pick scaled out, not another flavor's single replica
        (which choose() would call 'fastest' while the pick could outrun it for less): with no deadline, the
        pick's replicas for a quarter of its time."""
        for r in recs:
            if r.get("label") == "fastest":
                r["label"] = None
        sized = pick.get("sized") if pick else None
        if not sized or not sized.items_per_s or not pick.get("hours") or job.targets.deadline_h \
                or pick.get("hourly") is None or pick["hours"] < 1:
            return
        items, rate = job.targets.items, sized.items_per_s
        replicas, meets = replicas_for(items, rate, pick["hours"] / 4, pick["gpus_total"])
        if not meets or replicas <= pick["replicas"]:
            return
        hours = job_hours(items, rate, replicas)
        if not saves_time(hours, pick["hours"]):
            return
        hourly = pick["hourly"] / max(1, pick["replicas"]) * replicas
        quick = replace(sized, replicas=replicas, hours=hours, breaks=[],
                        layout={**sized.layout, "dp": sized.layout["dp"] // max(1, pick["replicas"]) * replicas})
        row = {**pick, "replicas": replicas, "sized": quick, "layout": quick.layout, "hours": hours,
               "hourly": hourly, "job_cost": hourly * hours, "label": "fastest", "breaks": []}
        if self._faster_breaks(job, row, recs):
            return
        row.update(budget_fields(self.kb, hourly, row["job_cost"], pick["flavor"], job.slots))
        row["why"] = ["costs_more"] if row["job_cost"] > pick["job_cost"] * 1.0005 else ["same_cost"]
        recs.insert(1, row)
        del recs[3:]

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
                      fallback=fallback, billing=billing)

    def _extras(self, job: _Job, pick, advice: Advice) -> None:
        """Training time (and GPUs for a deadline), serving throughput, and the verdict on a named GPU or card."""
        w, model = job.w, job.model
        if pick:
            gpu = self.kb.gpus[pick["gpu"]]
            if w.precision == "bf16" and not gpu.bf16 and gpu.vendor == "nvidia":
                # Volta and Turing have no bf16: the job runs in fp16 there (same bytes, so the same memory)
                advice.notes.append(("note.no_bf16", {"gpu": gpu.name}, NO_BF16_SOURCES))
            if w.tokens:
                advice.compute = self._compute(job, pick, gpu)
            # a transcription job's copies share the audio: its speed is theirs together
            copies = (pick.get("replicas") or 1) if w.kind == "speech" and w.dataset_items else 1
            speed = job_speed(w.model_copy(update={"gpus": pick["gpus_total"] * copies}), model, gpu, self.kb.gpus,
                              list(self.kb.models.values()), self._pick_link(pick))
            if job.targets.items and pick.get("sized") and pick["sized"].items_per_s:
                spec = batch_spec(job.slots, model if w.kind in ("llm", "multimodal") else None)
                advice.batch = summary(spec, pick["sized"], pick["gpus_total"],
                                       tokens=w.kind in ("llm", "multimodal"))
                fleet_gpus = pick["gpus_total"] * max(1, pick.get("replicas") or 1)
                if fleet_gpus > BATCH_QUOTA_GPUS:
                    advice.notes.append(("note.batch_fleet", {"gpus": f"{fleet_gpus:,}"}, []))
            elif speed is not None:      # images/s, x real time, samples/s: the job's own unit, never tokens
                advice.speed = speed.model_dump()
                if speed.items and pick.get("hours"):
                    advice.compute = self._compute_items(job, pick, gpu, speed)
                    # what the job's time rests on and the user may know better: the clips' length, the training
                    # share of a denoiser's rate
                    advice.assumptions += [(k["key"], k["ctx"]) for k in speed.assumption_keys
                                           if k["key"] in SAID_SPEED_NOTES]
            elif w.method == "inference" and pick.get("sized") and pick["sized"].request_ms:
                advice.throughput = encoder_throughput(gpu, pick)
                eff, measured = encoder_efficiency(gpu)
                if not measured:     # the rate rests on an LLM prefill share, not on a BERT measurement: say so
                    advice.notes.append(("note.encoder_unmeasured", {"gpu": gpu.name, "share": f"{eff:.0%}"}, []))
            elif w.method == "inference" and w.kind in ("llm", "multimodal"):
                sized = pick.get("sized")
                conc = sized.replica_concurrency if sized and sized.replica_concurrency else w.concurrency
                sw = w.model_copy(update={"concurrency": conc})
                tps = cost.decode_tokens_per_second(sw, model, gpu, pick["gpus_total"])
                if tps:
                    advice.throughput = {"gpu": gpu.name, "tokens_per_s": round(tps), "concurrency": conc}
        if (pick and pick.get("named") and job.slots.get("gpu_model") and not job.slots.get("gpus")
                and pick["gpus_total"] > 1):
            # 'on Ascend 910B' with no count, and the pick runs it on several of those cards: judge the cards the
            # pick uses, not one card (which would say 'out of memory' above a plan that fits)
            job = replace(job, w=w.model_copy(update={"gpus": pick["gpus_total"]}))
        self._judge(job, advice)

    def _pick_link(self, pick) -> Link | None:
        """The speed model's link for the pick as planned (its cards per instance; bridged pairs at PCIe speed), so
        a speed shown is the one the plan was ranked on, not the GPU's usual link."""
        if not pick.get("link"):
            return None
        return perf.speed_link(pick["link"], min(pick["gpus_total"], self.kb.flavors[pick["id"]].gpu_count))

    def _compute(self, job: _Job, pick, gpu) -> dict[str, Any] | None:
        """The pick's compute: FLOPs and basis from cost.py, timed as the plan was (its layout over its GPUs and its
        link), so the tokens/s per GPU shown agree with the wall clock."""
        n, f = pick["gpus_total"], self.kb.flavors[pick["id"]]
        link = self._pick_link(pick)
        planned = (pick.get("layout") or {}).get("sharding")
        wn = timed_workload(job.w, n, f.gpu_count, pick.get("layout")).model_copy(
            update={"nodes": max(1, math.ceil(n / f.gpu_count))})
        ct = cost.training_time(wn, job.model, gpu, n, link)
        if not ct:
            return None
        out = ct.model_dump()
        if planned == "hsdp":
            out.update(sharding="hsdp", nodes=wn.nodes, gpus_per_node=f.gpu_count)
        lay = pick.get("layout") or {}
        if lay.get("tp", 1) * lay.get("pp", 1) > 1 and lay.get("ep", 1) <= 1 and wn.nodes > 1 and pick.get("link"):
            # tensor parallelism inside each instance, pipeline stages across them: said with what ZeRO-3 would take
            zero3 = perf.train_time(zero3_workload(job.w, n, f.gpu_count), job.model, gpu, n, f.gpu_count,
                                    pick["link"])
            out.update(layout_3d={"tp": lay["tp"], "pp": lay["pp"], "dp": lay["dp"], "gpus_per_node": f.gpu_count,
                                  "zero3_days": round(zero3.hours / 24, 1) if zero3 else None})
        if pick.get("hours"):
            out.update(days=round(pick["hours"] / 24, 2), hours=round(pick["hours"], 1),
                       gpu_hours=round(pick["hours"] * pick["gpus_total"], 1))
        deadline = job.slots.get("deadline_days")
        if deadline and out["days"] > deadline:
            out["deadline_days"] = deadline
            out["gpus_for_deadline"] = math.ceil(ct.gpu_hours / 24 / deadline)
        return out

    def _compute_items(self, job: _Job, pick, gpu, speed) -> dict[str, Any]:
        """The compute of an image, audio or denoiser training job (ask --json `compute`): its items (dataset x
        epochs), the pick's rate and wall clock, GPU-hours; past a deadline, about how many GPUs of the pick's kind
        would meet it (linear in GPUs at the data-parallel efficiency of several servers: a lower bound)."""
        hours = pick["hours"]
        out = {"gpu": gpu.id, "gpus": pick["gpus_total"], "hours": round(hours, 1), "days": round(hours / 24, 2),
               "gpu_hours": round(hours * pick["gpus_total"], 1), "items": speed.items,
               "items_per_epoch": speed.items_per_epoch, "epochs": speed.epochs, "item_unit": speed.item_unit,
               "rate": speed.rate, "rate_unit": speed.unit, "utilization": None, "flops": None,
               "basis": "; ".join(f"{t.name}: {t.formula}" for t in speed.terms)}
        deadline = job.slots.get("deadline_days")
        if deadline and hours > deadline * 24:
            one = hours * pick["gpus_total"] * dp_efficiency(pick["gpus_total"], pick["instances"])
            out.update(deadline_days=deadline,
                       gpus_for_deadline=math.ceil(one / (deadline * 24) / (INTRA_NODE * INTER_NODE)))
        return out

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

    # ----- the user's GPU ----------------------------------------------------------------------------------------
    def _gpu_ids(self, named: str) -> list[str]:
        from bot.knowledge.loader import GPU_FAMILIES
        return GPU_FAMILIES.get(named, [named])

    def _family_default(self, ids: list[str]):
        """The card a family named bare means ('8x H100', 'A100'): the largest of its SXM modules, the data-centre
        part teams run in 8-GPU servers (H100 SXM 80 GB, not the H100 NVL pair-bridged PCIe variant people name when
        they have it); the largest member when the family has no SXM module. The answer names the card it took."""
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
            gpu = self._family_default(ids)
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

    OFFLOAD_ORDER = ("none", "optimizer", "full")     # least moved to host RAM first
    ASKED_COUNTS = (1, 2, 4, 8, 16)   # a GPU named without a count: the server sizes it comes in, and two

    def _fewest_that_hold(self, job: _Job, gpu, mem: float) -> OwnPlan:
        """The user's cards as they said them; a GPU named without a count and not said to be theirs ('需要几张 a100
        80g', 'can qwen 72b run on an A100?'): the fewest of them (one server of 1, 2, 4 or 8, or two servers) that
        hold the job with the least moved to host RAM (16 H100s sharding a 70B full fine-tune beat 4 with every
        state offloaded to the CPU), the plan saying what one would need (`fewer_fail`); when none do, the plan on
        the most of them, with what would make it fit."""
        as_said = gpu is None or job.slots.get("gpus") or own_cards(job.slots)
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
        while cards < MAX_SCALE_GPUS:
            cards *= 2
            bigger = plan_on(cards)
            if bigger.fits and bigger.hours:
                plan = bigger
                if bigger.hours <= deadline:
                    break
        plan.for_deadline = "deadline" if job.targets.deadline_h else "horizon"
        return plan

    def _judge(self, job: _Job, advice: Advice) -> None:
        """The verdict on the GPU or card the user named, and when the cards are theirs (a count named with the GPU,
        or 'my 24GB card') their plan as the `yours` row, first."""
        own = self._own(job)
        if own is None:
            return
        plan, name, sources = own
        row = own_row(plan, name)
        if job.targets.items and plan.fits and plan.gpu is not None:
            self._own_batch(job, plan, row)
        if plan.fits:
            # their cards hold it, but would they do it? 20 years, or 1 % MFU, is a verdict, not a plan
            broken = self._critic.own_verdict(row, job.view(), job.lang)
            if broken:
                row["implausible"] = {"rule": broken[0], "because": broken[1]}
                job.critic[f"critic.{broken[0]}"] = {"rule": f"critic.{broken[0]}", "fired": True,
                                                     "because": broken[1]}
        advice.gpu_verdict = {"gpu": plan.gpu.id if plan.gpu else None, "gpu_name": name, "memory_gib": plan.memory_gib,
                              "need_gib": plan.estimate.per_gpu_gib, "fits": plan.fits, "steps": plan.steps,
                              "gpus": plan.used, "cards": plan.cards, "sharding": plan.workload.sharding,
                              "hours": row["job_hours"], "link": plan.link, "sources": sources, "row": row,
                              "owned": own_cards(job.slots),
                              # no flavor on file carries the card (MI300X, GB200): the answer says it is not covered
                              "rentable": bool(self.kb.flavors_with_gpu(plan.gpu.id)) if plan.gpu else True}
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


def encoder_throughput(gpu, pick: dict[str, Any]) -> dict[str, Any]:
    """An encoder's speed as the answer says it (ask --json `throughput`): requests/s of one replica, the batch one
    forward pass runs, a request's latency (that forward pass), and the fleet's requests/s; no tokens are output."""
    s = pick["sized"]
    replicas = max(1, pick.get("replicas") or 1)
    return {"gpu": gpu.name, "encoder": True, "requests_per_s": round(s.items_per_s, 1), "batch": s.encoder_batch,
            "request_ms": round(s.request_ms, 1), "gpus": s.gpus_total, "replicas": replicas,
            "total_requests_per_s": round(s.items_per_s * replicas, 1)}


def _compare_intent(slots: dict[str, Any], job_intent: str | None) -> str | None:
    """The job a comparison is about: the job words of the question ('训 ... 继续预训练' is training), else what the
    slots imply (a method is a fine-tune, tokens a training run); None when nothing says."""
    if slots.get("method") and job_intent in (None, "train"):
        return "finetune"
    if job_intent in ("train", "finetune", "inference"):
        return job_intent
    return "train" if slots.get("tokens") else ("inference" if slots.get("concurrency") or slots.get("qps") else None)


def _split_batch(assumption: tuple[str, dict[str, Any]], pick: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The assumed batch, as the pick runs it: in micro-batches with gradient accumulation to fit one card."""
    key, ctx = assumption[0], assumption[1]
    if key != "assume.batch":
        return assumption
    return ("assume.micro_batch", {**ctx, "micro": pick["micro_batch"], "steps": pick["layout"]["grad_accumulation"]},
            *assumption[2:])


def _encoder_users(assumption: tuple[str, dict[str, Any]], t: Targets) -> tuple[str, dict[str, Any]]:
    """An encoder's users said back as the request rate they were sized at (Targets.encoder_rate): the answer
    must show that 50 users became 385 requests/s, not 50 requests in one batch."""
    if assumption[0] != "assume.serving":
        return assumption
    rate = t.encoder_rate() or 0.0
    return ("assume.encoder_users", {"users": t.concurrency, "ms": f"{t.request_ms:.0f}", "rate": f"{rate:,.0f}",
                                     "context": assumption[1]["context"]})


def _in_flight(assumption: tuple[str, dict[str, Any]], t: Targets, w: Workload) -> tuple[str, dict[str, Any]]:
    """The serving assumption as the KV cache is sized once request sizes are known: tokens in flight per sequence
    (prompt + output), the window still holding one whole request."""
    if assumption[0] != "assume.serving":
        return assumption
    if t.buckets:
        mix = " + ".join(f"{share:.0%} x {prompt:,}" for share, prompt in t.buckets)
        return ("assume.request_mix", {"mix": mix, "output": f"{t.output_len:,}", "window": f"{w.context:,}"})
    return ("assume.kv_in_flight", {"concurrency": w.concurrency, "prompt": f"{t.input_len:,}",
                                    "output": f"{t.output_len:,}", "window": f"{w.context:,}"})


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


def _meets(r: dict[str, Any]) -> bool:
    """A priced plan that misses no target and keeps to the budget."""
    return not r.get("breaks") and not r.get("over_budget") and r.get("hourly") is not None


__all__ = ["Advisor", "Advice", "tp_degrees", "user_fixed_plan"]
