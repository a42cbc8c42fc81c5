"""The job and its targets: the workload, what the answer assumed, the targets a plan is held to, and
the sizer every later stage sizes plans with (the first stage of the planner, DESIGN.md)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.estimate.speed_encoder import generates
from bot.knowledge.loader import MAINLAND_CHINA
from bot.plan.load import (one_copy_note, request_tokens, think_seconds, with_daily_users, with_reasoning_output,
                            with_retrieved_prompt)
from bot.plan.candidates import Shapes, Sizer, gpus_needed, job_facts
from bot.plan.critic import (own_extra_problems, stated_targets, target_share, tight_targets,
                             unjudged_serving_targets)
from bot.plan.batch import batch_spec, batch_targets, is_batch
from bot.plan.plans import (SIZING_CONCURRENCY, Targets, sizing_workload)
from bot.plan.workload import user_fixed_plan
from bot.records.models import Workload
from bot.plan.advice import Advice, _Job


class JobStage:
    """The Advisor's job stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

    def _targets(self, job: _Job, advice: Advice) -> None:
        """Every target the user stated, met or missed by the answer's first plan (theirs, or the pick), and a
        stated amount of work timed and costed (critic.py: targets-stated, work-timed-and-costed)."""
        first = advice.recommendations[0] if advice.recommendations else None
        serving = job.w.method == "inference" and not job.targets.items
        # a request-level latency for what is not a language model's stream of tokens (an encoder, speech, images)
        whole = serving and (not generates(job.model) or job.w.kind not in ("llm", "multimodal"))
        tight = self._critic.tight_share()
        advice.targets = stated_targets(job.slots, first, serving, encoder=whole, output_len=job.targets.output_len,
                                        in_flight=job.targets.concurrency, tight=tight)
        said = [x for x in advice.targets if x.get("tight")]
        if tight and any(target_share(x) is not None for x in advice.targets):
            # held: every met target leaves its margin; fired: the ones that do not are said as tight
            x = said[0] if said else {}
            job.critic["critic.headroom"] = self._critic.trace_entry(
                "headroom", bool(said or tight_targets(advice.targets, tight)), job.lang, target=x.get("target"),
                share=f"{x.get('tight') or 0:.0%}", limit=f"{tight:.0%}")
        missed = [t for t in advice.targets if t["met"] is False]
        if advice.targets:
            said = "; ".join(f"{t['target']} {t['plan']} vs {t['asked']} {t['unit']}" for t in missed)
            job.critic["critic.targets-stated"] = self._critic.trace_entry(
                "targets-stated", bool(missed), job.lang, target=", ".join(t["target"] for t in missed), verdict=said)
        if serving and first:
            wrong = unjudged_serving_targets(job.slots, advice.targets)
            job.critic["critic.serving-targets-judged"] = self._critic.trace_entry(
                "serving-targets-judged", bool(wrong), job.lang, problems="; ".join(wrong))
        if first and first.get("label") == "yours" and job.targets.deadline_h and job.w.method != "inference":
            wrong = own_extra_problems(first, job.targets.deadline_h)
            job.critic["critic.own-deadline-extra"] = self._critic.trace_entry(
                "own-deadline-extra", bool(wrong), job.lang, problems="; ".join(wrong))
        if first and first.get("label") != "yours" and (job.w.tokens or job.targets.items):
            lacking = [name for name, value in (("time", first.get("job_hours")), ("cost", first.get("job_cost")))
                       if value is None and (name == "time" or first.get("price_per_hour") is not None)]
            job.critic["critic.work-timed-and-costed"] = self._critic.trace_entry(
                "work-timed-and-costed", bool(lacking), job.lang, flavor=first["flavor"], missing="/".join(lacking))

    def _job(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str) -> _Job:
        """The workload, its estimate on the GPUs named, the provider, and the job facts and select rules."""
        reasoning: list = []
        if intent == "inference":      # a reasoning model's answer is as long as it typically is, said
            slots, reasoning = with_reasoning_output(slots, self.kb.models.get(slots.get("model") or ""))
            slots, rag = with_retrieved_prompt(slots, self.kb.models.get(slots.get("model") or ""))
            reasoning += rag
            slots = with_daily_users(slots)       # a day's users: the requests they send a day
            if slots.get("token_rate") and not slots.get("qps"):    # a load in tokens: the requests it means
                slots = {**slots, "qps": float(f"{slots['token_rate'] / request_tokens(slots):.5g}")}
        w, model, assumptions = self.workload(intent, slots, assumed)
        assumptions += reasoning
        # a text LLM's chat request is sized by its tokens in flight; a VLM's window also holds its image tokens
        targets = Targets.from_slots(slots, w.context, in_flight=w.kind == "llm",
                                     generative=w.kind in ("llm", "multimodal") and generates(model))
        if w.method == "inference" and is_batch(slots):
            targets = batch_targets(targets, batch_spec(slots, model if w.kind in ("llm", "multimodal") else None), w)
        # the margin every plan is sized with (rules/critic.yaml headroom): the peak at 80 % of what replicas carry,
        # a run within 85 % of the deadline
        targets = replace(targets, **self._critic.headroom())
        if slots.get("e2e_ms") and w.method == "inference":
            # say how a whole-response target was read: it decides the fleet
            assumptions.append(("assume.e2e", {"e2e": f"{slots['e2e_ms'] / 1000:g}", "out": targets.output_len,
                                               "ttft": f"{targets.ttft_ms:.0f}", "tpot": f"{targets.tpot_ms:.1f}"}))
        elif slots.get("latency_ms") and w.method == "inference" and not generates(model):
            assumptions.append(("assume.latency_encoder", {"ms": f"{slots['latency_ms']:.0f}"}))
        elif slots.get("latency_ms") and w.method == "inference":
            assumptions.append(("assume.latency_ttft", {"ms": f"{slots['latency_ms']:.0f}",
                                                        "tpot": f"{targets.tpot_ms:.0f}"}))
        if w.method == "inference" and not targets.items:
            assumptions += serving_load_notes(targets, slots)
        if w.method == "inference" and not generates(model) and targets.concurrency and not targets.items:
            assumptions[:] = [_encoder_users(a, targets) for a in assumptions]
        # a serving replica is sized for a few sequences; the load then sets its capacity and the replica count
        sized_w = w
        fewer: list = []
        if targets.items and w.kind in ("llm", "multimodal"):
            sized_w = sizing_workload(w, targets, SIZING_CONCURRENCY)     # a few sequences; its memory sets the rest
        elif w.method == "inference" and w.kind == "llm":
            load = targets.load_sequences() or 0
            sized_w = sizing_workload(w, targets, SIZING_CONCURRENCY if load > SIZING_CONCURRENCY else w.concurrency)
            # a one-card replica that holds the weights and fewer sequences (long RAG prompts on a 24 GB card) is a
            # replica all the same: the load then sets how many, rather than one 8-card replica per instance
            if load > SIZING_CONCURRENCY:
                fewer = [(c, sizing_workload(w, targets, c)) for c in (2, 1)]
            if targets.kv_tokens:
                assumptions[:] = [_in_flight(a, targets, w) for a in assumptions]
        sizer = Sizer(sized_w, model, {}, user_fixed_plan(w, slots), batch_fixed=bool(slots.get("batch_size")))
        sizer.fewer = fewer
        sizer.speed_ctx = (self.kb.gpus, list(self.kb.models.values()))
        sizer.mfu_floor = self._critic.mfu_floor()       # the search stops where the critic would rule a plan out
        base = sizer.est(w.gpus)
        provider = slots.get("provider") or self.default_provider
        if provider not in self.kb.providers:
            provider = self.default_provider
        if slots.get("region"):
            assumptions.append(("assume.region", {"region": region_word(slots["region"])}))
        elif not slots.get("provider") and not slots.get("provider_uncovered"):   # a cloud not covered: said first
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


def serving_load_notes(t: Targets, slots: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The load's assumptions a service is sized by, said back: users as their requests in flight (Little's law,
    with the wait and the reading time), and the replicas a production service keeps."""
    notes: list[tuple[str, dict[str, Any]]] = []
    if t.users and t.concurrency:
        wait = (t.ttft_ms + t.output_len * t.tpot_ms) / 1000
        notes.append(("assume.users_in_flight", {"users": f"{t.users:,}", "in_flight": f"{t.concurrency:,}",
                                                 "wait": f"{wait:.1f}", "read": f"{think_seconds(t.output_len):.0f}",
                                                 "out": f"{t.output_len:,}"}))
    if t.min_replicas > 1:
        notes.append(("assume.min_replicas", {"replicas": t.min_replicas}))
    return notes + one_copy_note(slots)


def _encoder_users(assumption: tuple[str, dict[str, Any]], t: Targets) -> tuple[str, dict[str, Any]]:
    """An encoder's users said back as the request rate they were sized at (Targets.encoder_rate): the answer
    must show that 50 users became 385 requests/s, not 50 requests in one batch."""
    if assumption[0] != "assume.serving":
        return assumption
    rate = t.encoder_rate() or 0.0
    if t.think_s:       # people, who pause between requests
        return ("assume.encoder_people", {"users": t.concurrency, "ms": f"{t.request_ms:.0f}", "rate": f"{rate:,.0f}",
                                          "think": f"{t.think_s:g}", "context": assumption[1]["context"]})
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
    return ("assume.kv_in_flight", {"concurrency": t.concurrency or w.concurrency, "prompt": f"{t.input_len:,}",
                                    "output": f"{t.output_len:,}", "window": f"{w.context:,}"})


def region_word(region: str) -> str:
    """The region as an answer names it: a template key for the mainland-China market (worded in bot/render), the
    cloud's own region id otherwise."""
    return "@region.cn-mainland" if region == MAINLAND_CHINA else region
