"""A job's slots -> workload -> memory estimate -> candidates -> rules -> ranked recommendations and checklist.

Pure: reads the knowledge base and rules, never the network or a database. Every number in the output comes from
estimate.py / cost.py; every sentence from rules and templates; every claim carries source ids.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from bot.estimate import cost
from bot.plan.engine import RuleSet, evaluate, satisfies
from bot.estimate.memory import estimate_memory
from bot.estimate.fit import make_it_fit
from bot.knowledge.loader import KnowledgeBase
from bot.records.models import MemoryEstimate, Workload
from bot.records.kb import Flavor, Model
from bot.render.templates import Templates

MIN_HEADROOM = 0.05          # never plan on the last 5% of a card: fragmentation spikes and driver reservations
MAX_INSTANCES = 64
SHOWN_PER_SHAPE = 3          # an answer shows at most 3 rows of one flavor shape; only the 3 cheapest can appear
PERIOD_HOURS = {"hour": 1, "day": 24, "month": 730, "year": 8760}
METHOD_SOURCES = {"full": ["zero-paper", "hf-memory-anatomy", "korthikanti-2022"],
                  "freeze": ["hf-memory-anatomy", "korthikanti-2022"],
                  "lora": ["lora-paper", "hf-memory-anatomy", "korthikanti-2022"],
                  "qlora": ["qlora-paper", "lora-paper", "korthikanti-2022"],
                  "inference": ["gqa-paper", "hf-memory-anatomy"]}


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
    citations: list[str]
    compute: dict[str, Any] | None = None
    throughput: dict[str, Any] | None = None
    gpu_verdict: dict[str, Any] | None = None
    fallback: dict[str, Any] | None = None
    billing: list[str] = field(default_factory=list)


class Advisor:
    def __init__(self, kb: KnowledgeBase, rules: RuleSet, templates: Templates, default_provider: str = "huaweicloud"):
        self.kb, self.rules, self.t = kb, rules, templates
        self._attr_cache: dict[str, dict[str, Any]] = {}     # per flavor; the knowledge base is immutable
        self.default_provider = default_provider if default_provider in kb.providers else "huaweicloud"

    # ----- workload from slots ---------------------------------------------------------------------------------
    def workload(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any]
                 ) -> tuple[Workload, Model | None, list[tuple[str, dict[str, Any]]]]:
        model = self.kb.models.get(slots.get("model") or "")
        params_b = slots.get("params_b") or (model.params_b if model else None) or assumed.get("params_b", 7)
        notes: list[tuple[str, dict[str, Any]]] = []
        if not model and not slots.get("params_b"):
            notes.append(("assume.params", {"params_b": params_b}))
        transformer = model is None or model.is_transformer
        if intent == "inference":
            precision = slots.get("precision") or "bf16"
            concurrency = slots.get("concurrency") or 4
            context = slots.get("seq_len") or min(4096, (model.max_context if model and model.max_context else 4096))
            if not slots.get("concurrency"):
                notes.append(("assume.small_team", {}))
            notes.append(("assume.serving", {"concurrency": concurrency, "context": context}))
            if not slots.get("precision"):
                notes.append(("assume.precision", {"precision": precision}))
            nodes = slots.get("nodes") or 1
            gpus = slots.get("gpus") or (8 * nodes if nodes > 1 else 1)
            if nodes > 1 and not slots.get("gpus"):
                notes.append(("assume.gpus_per_node", {"gpus": gpus, "nodes": nodes}))
            w = Workload(model=model.id if model else None, params_b=params_b, task="inference", method="inference",
                         precision=precision, concurrency=concurrency, context=context,
                         gpus=max(gpus, nodes), nodes=nodes, tensor_parallel=max(gpus, nodes))
            return w, model, notes
        method = slots.get("method") or assumed.get("method") or ("full" if intent in ("train", "rendering") else "lora")
        if not slots.get("method"):
            notes.append(("assume.method", {"method": f"method.{method}"}))
        precision = slots.get("precision") or "bf16"
        if precision in ("int4", "nf4", "int8") and method in ("lora", "qlora"):
            method, precision = "qlora", "bf16"
        elif precision in ("int4", "nf4", "int8", "fp8") and method in ("full", "freeze"):
            precision = "bf16"
        if model is not None and model.encoder_tokens and not model.decoder_layers:
            transformer = False     # a fixed input (ViT: one image's patches): batches are counted in samples
        default_batch = 4 if method in ("lora", "qlora") else (16 if not transformer else 1)
        batch = slots.get("batch_size") or default_batch
        seq = slots.get("seq_len") or (1024 if intent == "finetune" else 2048)
        nodes = slots.get("nodes") or 1
        gpus = slots.get("gpus") or (8 * nodes if nodes > 1 else 1)
        if nodes > 1 and not slots.get("gpus"):
            notes.append(("assume.gpus_per_node", {"gpus": gpus, "nodes": nodes}))
        w = Workload(model=model.id if model else None, params_b=params_b,
                     task="finetune" if intent == "finetune" else "train", method=method, precision=precision,
                     batch_size=batch, seq_len=seq, gpus=max(gpus, nodes), nodes=nodes,
                     sharding="zero3" if gpus > 1 and method in ("full", "freeze") else ("ddp" if gpus > 1 else "none"),
                     grad_checkpointing=transformer, lora_rank=16, tokens=slots.get("tokens"),
                     # full fine-tuning at a small micro-batch accumulates: its gradients stay through every forward
                     grad_accumulation=8 if method in ("full", "freeze") else 1)
        if transformer:
            notes.append(("assume.batch", {"batch": batch, "seq": seq}))
        else:
            notes.append(("assume.batch_samples", {"batch": batch}))
        if method in ("lora", "qlora"):
            notes.append(("assume.lora", {"rank": 16}))
        if transformer:
            notes.append(("assume.ckpt_on", {}))
        if method in ("full", "freeze"):
            notes.append(("assume.grad_accum", {}))
        notes.append(("assume.optimizer", {"optimizer": "AdamW"}))
        return w, model, notes

    def _estimate_on(self, w: Workload, model: Model | None, n: int, cache: dict[int, MemoryEstimate]
                     ) -> MemoryEstimate:
        """Estimate with n GPUs in total: sharded training (ZeRO-3) or tensor-parallel serving when n > 1."""
        if n not in cache:
            if n == w.gpus:
                cw = w
            elif w.method == "inference":
                cw = w.model_copy(update={"gpus": n, "tensor_parallel": n, "nodes": max(1, math.ceil(n / 8))})
            else:
                cw = w.model_copy(update={"gpus": n, "sharding": "zero3" if n > 1 else "none",
                                          "nodes": max(1, math.ceil(n / 8))})
            cache[n] = estimate_memory(cw, model)
        return cache[n]

    # ----- the decision ------------------------------------------------------------------------------------------
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

    def _advise(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str) -> Advice:
        w, model, assumptions = self.workload(intent, slots, assumed)
        cache: dict[int, MemoryEstimate] = {}
        base = self._estimate_on(w, model, w.gpus, cache)
        provider = slots.get("provider") or self.default_provider
        if provider not in self.kb.providers:
            provider = self.default_provider
        if not slots.get("provider"):
            assumptions.append(("assume.provider", {"provider": self.kb.providers[provider].display_name(lang)}))
        user_fixed = bool(slots.get("gpus") or slots.get("nodes"))

        plans: dict[tuple[float, int], tuple[int, int, MemoryEstimate] | None] = {}

        def plan(f: Flavor) -> tuple[int, int, MemoryEstimate] | None:
            """(instances, GPUs in total, estimate) for running the job on flavor f, or None if it cannot fit.
            It depends only on the flavor's GPU memory and count, so it is computed once per such pair."""
            key = (f.gpu_memory_gib, f.gpu_count)
            if key not in plans:
                plans[key] = plan_for(f)
            return plans[key]

        def plan_for(f: Flavor) -> tuple[int, int, MemoryEstimate] | None:
            usable = f.gpu_memory_gib * (1 - MIN_HEADROOM)
            if user_fixed:
                n = w.gpus
                k = math.ceil(n / f.gpu_count)
                est = self._estimate_on(w, model, n, cache)
                return (k, n, est) if est.per_gpu_gib <= usable else None
            one = self._estimate_on(w, model, 1, cache)
            if one.per_gpu_gib <= usable:
                return 1, 1, one
            if w.method == "inference":
                # tensor parallelism inside one instance over a degree the attention heads divide by (vLLM's rule);
                # beyond that, pipeline stages on several instances
                degrees = tp_degrees(model, f.gpu_count)
                for k in (1, 2, 3, 4, 6, 8):
                    for t in degrees:
                        n = k * t
                        if n > 1 and (k == 1 or t > 1):
                            est = self._estimate_on(w, model, n, cache)
                            if est.per_gpu_gib <= usable:
                                return k, n, est
                            break            # the largest degree did not fit: smaller ones will not either
                return None
            k = 1
            while k <= MAX_INSTANCES:
                n = k * f.gpu_count
                if n > 1:
                    est = self._estimate_on(w, model, n, cache)
                    if est.per_gpu_gib <= usable:
                        return k, n, est
                k = k + 1 if k < 4 else k * 2
            return None

        # job-level facts use the best case: the largest card on offer
        biggest = self.kb.max_gpu_memory_gib or 80
        best = None
        for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
            est = self._estimate_on(w, model, n if not user_fixed else w.gpus, cache)
            if est.per_gpu_gib <= biggest * (1 - MIN_HEADROOM):
                best = n if not user_fixed else w.gpus
                break
            if user_fixed:
                break
        gpus_needed = best or (w.gpus if user_fixed else 512)
        facts = self._job_facts(intent, w, model, slots, base, gpus_needed, provider)
        select = evaluate(self.rules, facts, "select", lang)
        shapes: dict[tuple[bool, bool], Any] = {(facts["multi_gpu"], facts["multi_node"]): select}

        def select_for(n: int, k: int):
            """The select rules for a candidate's own shape: several GPUs? several instances?"""
            key = (n > 1, k > 1)
            if key not in shapes:
                shapes[key] = evaluate(self.rules, {**facts, "multi_gpu": key[0], "multi_node": key[1],
                                                    "sharded": facts["sharded"] or key[0]}, "select", lang)
            return shapes[key]

        if user_fixed and not any(plan(f) for f in self.kb.candidates(per_shape=1) if not f.vgpu):
            # the GPUs the user named cannot hold the job anywhere: plan the size it needs instead, and say so
            user_fixed = False
            cache.clear()
            assumptions.append(("assume.more_gpus", {"gpus": w.gpus}))
        rows = []
        pool = list(self.kb.candidates(provider, per_shape=SHOWN_PER_SHAPE))
        fallback = None
        ranked = self._rank(pool, plan, select_for, w, model, slots, cache)
        passing = [r for r in ranked if not r["ruled_out"]]
        if not passing:
            # the requirements that ruled this provider's flavors out (the job's own, or those of a candidate's
            # shape: several GPUs need NVLink, several instances RDMA)
            hard = sorted({r["ruled_out"].split(".", 1)[1] for r in ranked
                           if r["ruled_out"] and r["ruled_out"].startswith("requirement.")}
                          | {c.attribute for c, _ in select.require})
            others = list(self.kb.candidates(exclude=provider, per_shape=SHOWN_PER_SHAPE))
            alt = [r for r in self._rank(others, plan, select_for, w, model, slots, cache) if not r["ruled_out"]]
            fits_somewhere = any(r["ruled_out"] != "no_fit" for r in ranked)
            reqs = ", ".join(self.t.say(f"requirement.{a}", lang) for a in hard) if fits_somewhere or not hard \
                else ""
            if not fits_somewhere:
                big = self._estimate_on(w, model, 1, cache).per_gpu_gib
                reqs = self.t.say("requirement.too_big", lang, total=f"{big:,.0f}") + (f"; {reqs}" if reqs else "")
            fallback = {"provider": self.kb.providers[provider].display_name(lang), "requirement": reqs,
                        "key": "fallback.other_provider" if alt else "fallback.nothing"}
            rows = alt + ranked
        else:
            rows = ranked
        named = slots.get("gpu_model")
        card_mem = slots.get("gpu_memory_gib") if not named else None
        if named or card_mem:
            wanted = self._gpu_ids(named) if named else []
            mine = [r for r in rows if not r["ruled_out"] and (r["gpu"] in wanted or (
                card_mem and abs(r["flavor"].gpu_memory_gib - card_mem) <= 0.1 * card_mem))]
            best_cost = next((r["cost"] for r in rows if not r["ruled_out"]), math.inf)
            # the user's GPU goes first when it is a sensible choice, not at any price
            mine = [r for r in mine if r["cost"] <= best_cost * 1.5 or best_cost == math.inf]
            if mine:
                rows = mine + [r for r in rows if r not in mine]
        recs = [r for r in rows if not r["ruled_out"]][:3]
        # like SkyPilot's "considered resources": the next fitting options, and the cheaper ones that lost and why
        top_hourly = recs[0].get("hourly") if recs else None
        cheaper_out = [r for r in rows if r["ruled_out"] and top_hourly is not None
                       and r["flavor"].price and r["flavor"].price.on_demand is not None
                       and r["flavor"].price.on_demand < top_hourly][:3]
        considered = cheaper_out + [r for r in rows if r not in recs and not r["ruled_out"]][:3]
        if not considered:
            considered = [r for r in rows if r not in recs][:6]
        pick = recs[0] if recs else None

        check_facts = dict(facts)
        if pick:
            check_facts.update(self._pick_facts(pick, w))
        else:
            check_facts.update({"pick_fits": False, "pick_headroom_pct": 0, "pick_in_spread": False, "pick_gpu_count": 0,
                                "pick_instances": 0, "pick_price_kind": "none"})
        checks = evaluate(self.rules, check_facts, "check", lang)
        checklist = self._checklist(checks, pick, w, model, lang, provider, base)
        notes = [(key, self._note_ctx(pick, provider, lang), cite) for key, cite, _rid in select.notes + checks.notes]
        billing = [b for b, _c, _r in select.billing]

        citations: list[str] = []
        for src in METHOD_SOURCES[w.method] + (list(model.sources) if model else []):
            if src not in citations:
                citations.append(src)
        if pick:
            flavor = self.kb.flavors[pick["id"]]
            for src in [*flavor.sources, *self.kb.gpus[flavor.gpu].sources,
                        *(flavor.price.sources if flavor.price else [])]:
                if src not in citations:
                    citations.append(src)
        for item in checklist:
            for src in item["citations"]:
                if src not in citations:
                    citations.append(src)
        for _k, _ctx, cite in notes:
            for src in cite:
                if src not in citations:
                    citations.append(src)

        advice = Advice(workload=w, model=model, memory=pick["estimate"] if pick else base,
                        assumptions=assumptions, recommendations=[self._public(r) for r in recs],
                        considered=[self._public(r) for r in considered], checklist=checklist, notes=notes,
                        trace=select.trace + checks.trace, citations=[c for c in citations if c in self.kb.sources],
                        fallback=fallback, billing=billing)
        if pick:
            gpu = self.kb.gpus[pick["gpu"]]
            if w.tokens:
                ct = cost.training_time(w, model, gpu, pick["gpus_total"])
                if ct:
                    advice.compute = ct.model_dump()
                    deadline = slots.get("deadline_days")
                    if deadline and ct.days > deadline:
                        advice.compute["deadline_days"] = deadline
                        advice.compute["gpus_for_deadline"] = math.ceil(ct.gpu_hours / 24 / deadline)
            if w.method == "inference":
                tps = cost.decode_tokens_per_second(w, model, gpu, pick["gpus_total"])
                if tps:
                    advice.throughput = {"gpu": gpu.name, "tokens_per_s": round(tps), "concurrency": w.concurrency}
        if named:
            advice.gpu_verdict = self._judge_gpu(named, w, model, cache, lang)
        elif card_mem:
            advice.gpu_verdict = self._judge_memory(card_mem, w, model, cache, lang)
        return advice

    # ----- helpers -----------------------------------------------------------------------------------------------
    def _gpu_ids(self, named: str) -> list[str]:
        from bot.knowledge.loader import GPU_FAMILIES
        return GPU_FAMILIES.get(named, [named])

    def _judge_gpu(self, named: str, w: Workload, model: Model | None, cache, lang: str) -> dict[str, Any] | None:
        ids = [g for g in self._gpu_ids(named) if g in self.kb.gpus]
        if not ids:
            return None
        gpu = self.kb.gpus[max(ids, key=lambda g: self.kb.gpus[g].memory_gib)]
        est = self._estimate_on(w, model, w.gpus, cache)
        fits = est.per_gpu_gib <= gpu.memory_gib * (1 - MIN_HEADROOM)
        steps = [] if fits else make_it_fit(w, model, gpu.memory_gib, MIN_HEADROOM)
        return {"gpu": gpu.id, "gpu_name": gpu.name, "memory_gib": gpu.memory_gib, "need_gib": est.per_gpu_gib,
                "fits": fits, "steps": [s.model_dump() for s in steps], "gpus": w.gpus,
                "sources": list(gpu.sources)}

    def _judge_memory(self, mem: float, w: Workload, model: Model | None, cache, lang: str) -> dict[str, Any]:
        """'Will it fit on my 24GB card?': the same verdict as for a named GPU, for a card of that memory."""
        est = self._estimate_on(w, model, w.gpus, cache)
        fits = est.per_gpu_gib <= mem * (1 - MIN_HEADROOM)
        steps = [] if fits else make_it_fit(w, model, mem, MIN_HEADROOM)
        return {"gpu": None, "gpu_name": self.t.say("label.card_of", lang, mem=f"{mem:g}"), "memory_gib": mem,
                "need_gib": est.per_gpu_gib, "fits": fits, "steps": [s.model_dump() for s in steps],
                "gpus": w.gpus, "sources": []}

    def _job_facts(self, intent, w: Workload, model, slots, base: MemoryEstimate, gpus_needed: int, provider: str):
        nodes_needed = max(w.nodes, math.ceil(gpus_needed / 8))
        return {
            "task": "rendering" if intent == "rendering" else w.task, "method": w.method, "params_b": w.params_b,
            "per_gpu_gib": base.per_gpu_gib, "gpus_needed": gpus_needed, "nodes_needed": nodes_needed,
            "multi_gpu": gpus_needed > 1, "multi_node": nodes_needed > 1,
            "sharded": w.sharding in ("zero3", "fsdp", "zero2", "zero1") or gpus_needed > 1,
            "sharded_adapters": w.method in ("lora", "qlora") and gpus_needed > 1 and (
                w.sharding in ("zero3", "fsdp") or gpus_needed != w.gpus),
            "budget": slots.get("budget"), "budget_amount_set": slots.get("budget_amount") is not None,
            "duration": slots.get("duration") or ("long" if (slots.get("deadline_days") or 0) > 60 else None),
            "concurrency": w.concurrency if w.method == "inference" else None, "latency": slots.get("latency"),
            "has_tokens": bool(w.tokens), "model_kind": model.kind if model else "unknown",
            "precision": w.precision, "provider": provider, "gpu_named": bool(slots.get("gpu_model")),
        }

    def _attrs(self, f: Flavor) -> dict[str, Any]:
        cached = self._attr_cache.get(f.id)
        if cached is not None:
            return cached
        gpu = self.kb.gpus[f.gpu]
        self._attr_cache[f.id] = attrs = {"nvlink": f.nvlink, "rdma": f.rdma, "use": list(f.use), "gpu_positioning": list(gpu.positioning),
                "bf16": gpu.bf16, "fp8": gpu.fp8, "evidence": f.evidence, "vgpu": f.vgpu,
                "multi_gpu": f.gpu_count > 1}
        attrs["_shape"] = (f.nvlink, f.rdma, tuple(f.use), f.gpu, f.evidence, f.vgpu, f.gpu_count > 1)
        return attrs

    def _rank(self, pool: list[Flavor], plan, select_for, w: Workload, model, slots,
              cache: dict[int, MemoryEstimate]) -> list[dict[str, Any]]:
        rows = []
        budget = slots.get("budget")
        verdicts: dict[tuple, tuple[str | None, float]] = {}
        times: dict[tuple[str, int], float | None] = {}
        for f in pool:
            attrs = self._attrs(f)
            p = plan(f)
            row = {"id": f.id, "flavor": f, "gpu": f.gpu, "ruled_out": None, "reason": None}
            if p is None:
                need = self._estimate_on(w, model, 1 if not slots.get("gpus") else w.gpus, cache).per_gpu_gib
                row.update(ruled_out="no_fit", need=need, instances=0, gpus_total=0, estimate=None,
                           headroom=-1.0, cost=math.inf)
                rows.append(row)
                continue
            k, n, est = p
            select = select_for(n, k)
            row.update(instances=k, gpus_total=n, estimate=est,
                       headroom=round(100 * (1 - est.per_gpu_gib / f.gpu_memory_gib), 1))
            row["ruled_out"], bonus = self._verdict(f, attrs, select, n, k, verdicts)
            if row["ruled_out"] == "requirement.rdma" and not user_fixed_plan(w, slots):
                # it only needed several instances because the job does not fit one: say that instead
                one = self._estimate_on(w, model, f.gpu_count, cache)
                row.update(ruled_out="no_fit", need=one.per_gpu_gib, estimate=None)
            price = f.price.on_demand if f.price else None
            hourly = price * k if price is not None else None
            hours = None
            if w.tokens and price is not None:
                if (f.gpu, n) not in times:
                    ct = cost.training_time(w, model, self.kb.gpus[f.gpu], n)
                    times[(f.gpu, n)] = ct.days * 24 if ct else None
                hours = times[(f.gpu, n)]
            row["hourly"] = hourly
            row["job_cost"] = hourly * hours if hourly is not None and hours else None
            row["hours"] = hours
            base_cost = row["job_cost"] if row["job_cost"] is not None else hourly
            tight = 1.15 if row["headroom"] < 10 else 1.0
            if base_cost is None:
                eff = math.inf
            elif budget == "high":
                gpu = self.kb.gpus[f.gpu]
                speed = (gpu.bf16_tflops or gpu.fp16_tflops or 1) * n
                eff = 1e6 / speed * (1 - bonus) + base_cost * 1e-6
            else:
                eff = base_cost * (1 - bonus) * tight
            row["cost"] = eff
            row["over_budget"] = self._over_budget(hourly, row["job_cost"], f, slots)
            rows.append(row)
        order = {None: 0}
        return sorted(rows, key=lambda r: (order.get(r["ruled_out"], 1), bool(r.get("over_budget")), r["cost"],
                                           -r["headroom"], r["id"]))

    def _verdict(self, f: Flavor, attrs: dict[str, Any], select, n: int, k: int, memo: dict
                 ) -> tuple[str | None, float]:
        """(why the rules rule the flavor out or None, the weight of the preferences it meets). It depends on the
        flavor's attributes and the job's shape on it (several GPUs? several instances?), so it is memoised."""
        key = (id(select), n > 1, k > 1, attrs["_shape"])
        if key in memo:
            return memo[key]
        ruled = None
        for con, _rid in select.require:
            if con.attribute == "nvlink" and n <= 1:
                continue                       # NVLink matters only between GPUs the job uses
            if con.attribute == "rdma" and k == 1:
                continue                       # RDMA matters only between instances
            if not satisfies(attrs, con):
                ruled = f"requirement.{con.attribute}"
                break
        if ruled is None:
            for con, _rid in select.exclude:
                if satisfies(attrs, con):
                    ruled = f"requirement.{con.attribute}"
                    break
        bonus = sum(con.weight for con, _ in select.prefer if satisfies(attrs, con))
        memo[key] = (ruled, bonus)
        return ruled, bonus

    @staticmethod
    def _over_budget(hourly, job_cost, f: Flavor, slots) -> bool:
        amount, period = slots.get("budget_amount"), slots.get("budget_period")
        currency = slots.get("budget_currency")
        if amount is None or hourly is None or not f.price or currency != f.price.currency:
            return False
        if period in PERIOD_HOURS:
            return hourly * PERIOD_HOURS[period] > amount
        if period == "total" and job_cost is not None:
            return job_cost > amount
        return False

    def _public(self, r: dict[str, Any]) -> dict[str, Any]:
        f: Flavor = r["flavor"]
        price = f.price
        est = r.get("estimate")
        return {
            "id": f.id, "provider": f.provider, "flavor": f.flavor, "gpu": f.gpu, "gpu_name": self.kb.gpus[f.gpu].name,
            "gpu_count": f.gpu_count, "gpu_memory_gib": f.gpu_memory_gib,
            "interconnect": ("nvlink" if f.nvlink else f.interconnect) if f.interconnect else None,
            "interconnect_detail": f.interconnect, "rdma": f.rdma, "network": f.network,
            "instances": r.get("instances", 0), "gpus_total": r.get("gpus_total", 0),
            "price_per_hour": round(price.on_demand * max(1, r.get("instances", 1)), 4)
            if price and price.on_demand is not None else None,
            "spot_price_per_hour": round(price.spot * max(1, r.get("instances", 1)), 4)
            if price and price.spot is not None else None,
            "currency": price.currency if price else None, "price_kind": price.kind if price else None,
            "price_date": price.date.isoformat() if price else None, "price_basis": price.basis if price else None,
            "fits": r["ruled_out"] != "no_fit", "headroom_pct": r.get("headroom", -1.0),
            "per_gpu_gib": est.per_gpu_gib if est else r.get("need"),
            "evidence": f.evidence, "region": f.region, "job_cost": round(r["job_cost"], 2) if r.get("job_cost") else None,
            "job_hours": round(r["hours"], 1) if r.get("hours") else None,
            "ruled_out": r["ruled_out"], "over_budget": bool(r.get("over_budget")), "sources": list(f.sources),
            "note": f.note,
        }

    def _spread(self, w: Workload):
        """How published runs of this kind of job compared with the estimate (knowledge/estimate_spread.yaml)."""
        return self.kb.estimate_spread.get({"freeze": "full"}.get(w.method, w.method))

    def _pick_facts(self, pick: dict[str, Any], w: Workload) -> dict[str, Any]:
        f: Flavor = pick["flavor"]
        spread = self._spread(w)
        in_spread = bool(spread and pick["estimate"].per_gpu_gib * spread.p90_ratio > f.gpu_memory_gib)
        return {"pick_fits": True, "pick_headroom_pct": pick["headroom"], "pick_in_spread": in_spread,
                "pick_gpu_count": f.gpu_count,
                "pick_instances": pick["instances"], "pick_nvlink": f.nvlink, "pick_rdma": f.rdma,
                "pick_spot": bool(f.price and f.price.spot), "pick_price_kind": f.price.kind if f.price else "none",
                "pick_evidence": f.evidence, "pick_bf16": self.kb.gpus[f.gpu].bf16,
                "multi_gpu": pick["gpus_total"] > 1, "multi_node": pick["instances"] > 1,
                "sharded_adapters": w.method in ("lora", "qlora") and pick["gpus_total"] > 1 and (
                    w.sharding in ("zero3", "fsdp") or pick["gpus_total"] != w.gpus),
                "job_days": (pick["hours"] / 24) if pick.get("hours") else None}

    def _note_ctx(self, pick, provider: str, lang: str = "en") -> dict[str, Any]:
        ctx = {"provider": self.kb.providers[provider].display_name(lang)}
        if pick:
            f = pick["flavor"]
            ctx.update(flavor=f.flavor, price_date=f.price.date.isoformat() if f.price else "-")
        return ctx

    def _checklist(self, checks, pick, w: Workload, model, lang: str, provider: str, base: MemoryEstimate):
        items = []
        seen = set()
        for chk, cite, rid in checks.checks:
            if chk.item in seen:
                continue
            seen.add(chk.item)
            ctx: dict[str, Any] = {}
            cites = list(cite)
            if pick:
                f: Flavor = pick["flavor"]
                est = pick["estimate"]
                ctx = {"need": f"{est.per_gpu_gib:.1f}", "have": f"{f.gpu_memory_gib:g}",
                       "headroom": f"{pick['headroom']:.0f}", "flavor": f.flavor, "instances": pick["instances"],
                       "gpus_per_instance": f.gpu_count, "interconnect": (f.interconnect or "?").upper(),
                       "network": f.network or "RDMA"}
                if chk.item == "oom" and chk.status != "ok":
                    steps = make_it_fit(w, model, f.gpu_memory_gib * 0.9, 0.0)
                    ctx["fit_hint"] = self._fit_hint(steps, f.gpu_memory_gib, lang)
                spread = self._spread(w)
                if chk.item == "oom" and spread:
                    ctx.update(spread_pct=f"{(spread.p90_ratio - 1) * 100:.0f}", spread_rows=spread.rows,
                               spread_need=f"{est.per_gpu_gib * spread.p90_ratio:.1f}",
                               method=self.t.say(f"spread.{spread.id}", lang))
                    cites += [c for c in spread.sources if c not in cites]
                if chk.item == "billing":
                    prov = self.kb.providers.get(f.provider)
                    for mode in (prov.billing if prov else []):
                        for s in mode.sources:
                            if s not in cites:
                                cites.append(s)
            else:
                ctx = {"need": f"{base.per_gpu_gib:.1f}", "have": "-", "fit_hint": ""}
            items.append({"item": chk.item, "status": chk.status, "say": chk.say, "ctx": ctx,
                          "citations": [c for c in cites if c in self.kb.sources], "rule": rid})
        order = {"oom": 0, "topology": 1, "billing": 2}
        return sorted(items, key=lambda i: order[i["item"]])

    def _fit_hint(self, steps, have: float, lang: str) -> str:
        if not steps:
            return ""
        parts = [f"{self.t.change(s.change, lang)} -> {s.per_gpu_gib:.1f} GiB" for s in steps]
        hint = self.t.say("fit.hint", lang, have=f"{have:g}", steps="; ".join(parts))
        return hint if steps[-1].fits else f"{hint} {self.t.say('fit.still_too_big', lang)}"


def tp_degrees(model: Model | None, gpus: int) -> list[int]:
    """Tensor-parallel degrees usable on `gpus` GPUs, largest first: the query heads must divide evenly, and the KV
    heads either divide evenly or are replicated (vLLM); without a config, powers of two."""
    if model is not None and model.heads:
        kv = model.kv_heads or model.heads
        out = [t for t in range(gpus, 0, -1) if model.heads % t == 0 and (kv % t == 0 or t % kv == 0)]
    else:
        out = [t for t in range(gpus, 0, -1) if t & (t - 1) == 0]
    return out or [1]


def user_fixed_plan(w: Workload, slots: dict[str, Any]) -> bool:
    return bool(slots.get("gpus") or slots.get("nodes"))


__all__ = ["Advisor", "Advice"]
