"""Comparisons ('A10 or L4 for a 13B chatbot?'): the same plans, one GPU at a time on any cloud, and the
data the verdict is made from (verdicts.py)."""
from __future__ import annotations

import math
from typing import Any

from bot.plan.advice import NO_BF16_SOURCES, SHOWN_PER_SHAPE
from bot.plan.candidates import MIN_HEADROOM
from bot.plan.workload import own_cards
from bot.records.errors import AdvisorError
from bot.plan.verdicts import TYPICAL_JOBS, TYPICAL_TOKENS, compare_verdict, factor_figures


class CompareStage:
    """The Advisor's compare stage (a mixin: its methods read the advisor's knowledge base, rules,
    templates, ranker and critic)."""

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
        if not (slots.get("model") or slots.get("params_b") or slots.get("arch")):
            intent = intent or self._typical_intent(names)
        intent, slots, typical, work_assumed = self._compared_job(intent, slots)
        counts = slots.pop("gpu_counts", None) or {}
        if counts:
            # '8xA100 or 4xH100': each side on the cards said for it (one count said once is not both sides')
            bare = {k: v for k, v in slots.items() if k not in ("gpus", "nodes")}
            side = [self._compare_side(intent, name, {**bare, **({"gpus": counts[name]} if name in counts else {})},
                                       assumed, lang) for name in names]
        else:
            side = [self._compare_side(intent, name, slots, assumed, lang) for name in names]
        fitting = [x for x in side if x["pick"] and not x["pick"]["breaks"]]
        best = min(fitting, key=lambda x: (self._usd_cost(x["pick"]), x["gpu"])) if fitting else None
        out = {"intent": intent, "side": side, "best": best["name"] if best else None, "axis": "gpu",
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
        if out["verdict"].get("factor") in ("bandwidth", "compute") and out["verdict"].get("basis") in ("job", "month",
                                                                                                  "mtok", "time"):
            out["verdict"]["figures"] = factor_figures(self.kb, out["verdict"])
        elif out["verdict"].get("basis") == "priced_timed" and out["verdict"].get("faster") != out["verdict"].get(
                "preferred") and all(s["gpu"] in self.kb.gpus for s in out["verdict"]["sides"]):
            # the unpriced side is the faster: its compute against the priced one's, said under the verdict
            out["verdict"]["figures"] = factor_figures(self.kb, {**out["verdict"], "factor": "compute"})
        return out

    # ----- two ways to do one job: precisions, methods, clouds, flavors ------------------------------------------
    def compare_on(self, axis: str, values: list[Any], slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                   job_intent: str | None = None, labels: list[str] | None = None,
                   rental_hours: float | None = None) -> dict[str, Any] | None:
        """'FP8 or AWQ for Qwen2.5-32B on an L40S?', 'LoRA or full for 8B?', 'Lambda or AWS for this pre-training?',
        'g6e.xlarge or g6.xlarge for a 13B model?': the job planned once per side, every side on the same hardware
        where the question names it, and the verdict (bot/plan/verdicts.py) made from those plans as for two GPUs.
        `axis` is precision, method, provider or flavor; `values` the precisions, methods, provider ids, or lists of
        flavor ids (a flavor or a family). With no job named, a typical one is compared, and said. None with fewer
        than two different sides."""
        keys = [v if isinstance(v, str) else "|".join(v) for v in values]
        if len(set(keys)) < 2:
            return None
        intent = _compare_intent(slots, job_intent)
        if axis == "method" and intent not in ("train", "finetune"):
            intent = "finetune"
        named_job = slots.get("model") or slots.get("params_b") or slots.get("arch") or slots.get("kind")
        if axis in ("provider", "flavor") and not named_job and slots.get("gpus") and rental_hours:
            # '8x H100 for 2 weeks: AWS p5 or GCP a3?': no job to plan, the rental itself is what is compared
            return self._compare_rentals(axis, values, keys, labels, slots, rental_hours, intent)
        if intent is None and axis == "flavor" and not named_job:
            # 'p4d or p5 for this run?' with no job said: 8-card training instances compare on a fine-tune, as two
            # training GPUs named bare do (_typical_intent); serving instances (g6e, g6) on a service
            cards = {self.kb.flavors[f].gpu for v in values if not isinstance(v, str) for f in v if f in self.kb.flavors}
            if cards and all(g in self.kb.gpus and "training" in self.kb.gpus[g].positioning for g in cards):
                intent = "finetune"
        intent, slots, typical, work_assumed = self._compared_job(intent, slots, bool(slots.get("kind")))
        named = slots.get("gpu_model") if axis != "flavor" else None      # a flavor is its own card
        ids = [g for g in self._gpu_ids(named) if g in self.kb.gpus] if named else []
        plain = {k: v for k, v in slots.items() if k not in ("gpu_models", "gpu_model")}
        side = []
        for i, value in enumerate(values):
            label = (labels or [])[i] if labels and i < len(labels) else keys[i]
            side.append(self._side_on(intent, axis, value, keys[i], label, plain, ids, assumed, lang))
        fitting = [x for x in side if x["pick"] and not x["pick"]["breaks"]]
        best = min(fitting, key=lambda x: (self._usd_cost(x["pick"]), x["name"])) if fitting else None
        out = {"intent": intent, "side": side, "best": best["name"] if best else None, "axis": axis,
               "training": intent != "inference", "typical": typical, "work_assumed": work_assumed}
        precision = slots.get("precision") if axis != "precision" else None
        out["verdict"] = {**compare_verdict(self.kb, out, precision), "typical": typical, "axis": axis,
                          "training": intent != "inference", "work_assumed": work_assumed}
        v = out["verdict"]
        if v.get("factor") in ("bandwidth", "compute") and v.get("basis") in ("job", "month", "mtok", "time") and \
                len({s["gpu"] for s in v["sides"]}) > 1:
            v["figures"] = factor_figures(self.kb, v)
        return out

    def _compare_rentals(self, axis: str, values: list[Any], keys: list[str], labels: list[str] | None,
                         slots: dict[str, Any], hours: float, intent: str | None) -> dict[str, Any]:
        """The same cards for the same hours on each side (the cheapest priced size of each cloud or family that
        holds them, in the fewest instances): each side's cost for the span, compared as jobs."""
        named = slots.get("gpu_model")
        ids = [g for g in self._gpu_ids(named) if g in self.kb.gpus] if named else []
        want = int(slots["gpus"])
        side = []
        for i, value in enumerate(values):
            label = (labels or [])[i] if labels and i < len(labels) else keys[i]
            # a side is a cloud (its sizes of the card) or a flavor or family (its sizes), whatever the axis: a
            # follow-up may add a cloud to two families ('what about just lambda?')
            pool = self._pool(value, ids) if isinstance(value, str) else [f for f in value if f in self.kb.flavors]
            fs = [self.kb.flavors[f] for f in pool or [] if self.kb.flavors[f].price
                  and self.kb.flavors[f].price.on_demand is not None and (not ids or self.kb.flavors[f].gpu in ids)]
            pick, why_not = None, None
            whole = [f for f in fs if f.gpu_count >= min(want, 8)]     # the cards in whole nodes, where sold so
            fs = whole or fs
            if fs:
                def total(f):
                    n = -(-want // f.gpu_count)
                    return (f.price.on_demand * n, n, f.id)
                f = min(fs, key=total)
                pick = self._rental_row(f, -(-want // f.gpu_count), hours)
            else:
                why_not = {"kind": "not_rented", "provider": value if isinstance(value, str) else "",
                           "gpu": self.kb.gpus[ids[0]].name if ids else ""}
            gid = pick["gpu"] if pick else (ids[0] if ids else "")
            gpu = self.kb.gpus.get(gid)
            side.append({"name": keys[i], "label": label, "value": value, "gpu": gid,
                         "gpu_name": gpu.name if gpu else label, "bf16": True, "bf16_sources": [],
                         "consumer": bool(gpu and "consumer" in gpu.positioning), "advice": None, "pick": pick,
                         "rented": True, "cards": None, "why_not": why_not})
        out = {"intent": intent or "train", "side": side, "axis": axis, "training": True, "typical": None,
               "work_assumed": None, "rental": {"gpus": want, "hours": round(hours, 1)}}
        fitting = [x for x in side if x["pick"]]
        out["best"] = min(fitting, key=lambda x: (self._usd_cost(x["pick"]), x["name"]))["name"] if fitting else None
        out["verdict"] = {**compare_verdict(self.kb, out), "axis": axis, "training": True, "typical": None,
                          "work_assumed": None, "rental": out["rental"]}
        return out

    def _rental_row(self, f, instances: int, hours: float) -> dict[str, Any]:
        """A rental of `instances` of a flavor for `hours`, shaped as a plan's public record."""
        p = f.price
        hourly = p.on_demand * instances
        return {"id": f.id, "provider": f.provider, "flavor": f.flavor, "gpu": f.gpu,
                "gpu_name": self.kb.gpus[f.gpu].name if f.gpu in self.kb.gpus else f.gpu, "gpu_count": f.gpu_count,
                "gpu_memory_gib": f.gpu_memory_gib, "instances": instances, "gpus_total": f.gpu_count * instances,
                "replicas": 1, "price_per_hour": round(hourly, 4), "hourly_total": round(hourly, 4),
                "spot_price_per_hour": round(p.spot * instances, 4) if p.spot is not None else None,
                "currency": p.currency, "price_kind": p.kind, "price_date": p.date.isoformat() if p.date else None,
                "job_hours": round(hours, 1), "job_cost": round(hourly * hours, 2),
                "monthly_cost": round(hourly * 730, 2), "breaks": [], "sources": list(f.sources),
                "price_sources": list(p.sources or []), "per_gpu_gib": None, "label": "rental"}

    def _compared_job(self, intent: str | None, slots: dict[str, Any], has_job: bool = False
                      ) -> tuple[str, dict[str, Any], str | None, str | None]:
        """The job both sides are planned for: the one named, else a typical one of the kind the question implies
        (said); a training job with no amount of work timed on a typical amount (said: the ratio holds for any)."""
        typical = None
        if not (slots.get("model") or slots.get("params_b") or slots.get("arch") or has_job):
            typical = "finetune" if intent in ("finetune", "train") else "inference"
            intent = typical
            job = TYPICAL_JOBS[typical]
            slots = {**slots, **job, "params_b": self.kb.models[job["model"]].params_b}
        intent = intent or "inference"
        work_assumed = None
        if intent != "inference" and not (slots.get("tokens") or slots.get("dataset_items")) and self._llm(slots):
            work_assumed = intent
            slots = {**slots, "tokens": TYPICAL_TOKENS[intent]}
        return intent, slots, typical, work_assumed

    def _pool(self, provider: str | None, ids: list[str]) -> list[str] | None:
        """The flavors one side may use: the provider's (of the GPUs named, if any); None: the usual search."""
        if not provider:
            return None
        return [f.id for f in self.kb.candidates(provider, per_shape=SHOWN_PER_SHAPE) if not ids or f.gpu in ids]

    def _side_on(self, intent: str, axis: str, value: Any, key: str, label: str, slots: dict[str, Any],
                 ids: list[str], assumed: dict[str, Any], lang: str) -> dict[str, Any]:
        """One side of a comparison along `axis`: its best plan, or why it has none (memory, no FP8 on the card
        named, no such card at that cloud)."""
        provider = slots.get("provider")
        native, flavors, why_not = None, None, None
        if axis == "precision":
            slots = {**slots, "precision": value}
            if value == "fp8":
                native = "fp8"
                if ids and not any(self.kb.gpus[g].fp8_tflops for g in ids):
                    why_not = {"kind": "no_fp8", "gpu": self.kb.gpus[ids[0]].name}
            flavors = self._pool(provider, ids)
        elif axis == "method":
            slots = {**slots, "method": value}
            if value != "qlora" and slots.get("precision") in ("int4", "nf4"):
                slots.pop("precision")
            flavors = self._pool(provider, ids)
        elif axis == "provider":
            slots = {k: v for k, v in slots.items() if k not in ("provider", "region")}
            flavors = self._pool(value, ids)
            if not flavors:
                why_not = {"kind": "not_rented", "provider": value,
                           "gpu": self.kb.gpus[ids[0]].name if ids else ""}
        else:          # flavor: a flavor or a family, as named
            slots = {k: v for k, v in slots.items() if k not in ("provider", "region")}
            flavors = [f for f in value if f in self.kb.flavors]
        mine = own_cards(slots) and axis in ("precision", "method")
        if why_not:
            advice, pick = None, None
        elif mine:
            # 'LoRA or QLoRA on my 16GB card?': each side judged on the user's own cards
            advice = self._advise(intent, slots, assumed, lang)
            pick = next((r for r in advice.recommendations if r.get("label") == "yours"), None)
            if pick is not None and not pick.get("fits"):
                why_not = {"kind": "memory", "need_gib": round(pick.get("per_gpu_gib") or 0, 1),
                           "memory_gib": pick.get("gpu_memory_gib"), "gpu": pick.get("gpu_name") or ""}
                pick = None
        else:
            advice = self._advise(intent, slots, assumed, lang, gpu_ids=ids or None, native=native,
                                  flavor_ids=flavors)
            pick = next((r for r in advice.recommendations if r.get("label") != "yours"), None)
        gid = pick["gpu"] if pick else (ids[0] if ids else next(
            (self.kb.flavors[f].gpu for f in flavors or [] if self.kb.flavors[f].gpu in self.kb.gpus), None))
        gpu = self.kb.gpus.get(gid) if gid else None
        if pick is None and why_not is None:
            # what the job needs a card on the side's biggest size (most cards, then most memory), and that card
            big = max((self.kb.flavors[f] for f in flavors or []), default=None,
                      key=lambda f: (f.gpu_count, f.gpu_memory_gib, f.id))
            count = big.gpu_count if big else 1
            try:
                need = self.need_on(intent, slots, assumed, lang, count)
            except AdvisorError:          # no estimate for that size: the one the advice made
                need = advice.memory.per_gpu_gib if advice is not None and advice.memory else None
            card = self.kb.gpus.get(big.gpu) if big else gpu
            why_not = {"kind": "memory", "need_gib": round(need, 1) if need else None, "count": count,
                       "memory_gib": big.gpu_memory_gib if big else (gpu.memory_gib if gpu else None),
                       "gpu": card.name if card else ""}
        return {"name": key, "label": label, "value": value, "gpu": gid or "", "gpu_name": gpu.name if gpu else label,
                "bf16": gpu.bf16 if gpu else True, "bf16_sources": [] if not gpu or gpu.bf16 else NO_BF16_SOURCES,
                "consumer": bool(gpu and "consumer" in gpu.positioning), "advice": advice, "pick": pick,
                "rented": True, "cards": None, "why_not": why_not}

    def need_on(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str, gpus: int) -> float:
        """What the job needs a card on `gpus` cards (the layout the estimate picks for that count): 'can one
        8-card node of this flavor run it?'."""
        job = self._job(intent, {k: v for k, v in slots.items() if k not in ("gpus", "nodes")}, assumed, lang)
        return job.sizer.est(gpus).per_gpu_gib

    def plan_on(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str, gpu_ids: list[str]):
        """The advice on these GPUs only (the cloud named, else any): what a verdict about named hardware ('spot
        p4d') is judged on, where the pick may be another card. None when no plan on them holds the job."""
        plain = {k: v for k, v in slots.items() if k not in ("gpu_models", "gpu_model")}
        advice = self._advise(intent, plain, assumed, lang, gpu_ids=gpu_ids)
        return advice if any(r.get("label") != "yours" for r in advice.recommendations) else None

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
        """One GPU's side of a comparison: its best plan on the cloud the user named (else on any cloud; on another
        only when the named one has no size of it that holds the job, and said), or, when no flavor on file rents
        it, how many of its cards hold the job."""
        ids = [g for g in self._gpu_ids(name) if g in self.kb.gpus]
        plain = {k: v for k, v in slots.items() if k not in ("gpu_models", "gpu_model", "provider")}
        cloud = slots.get("provider") if slots.get("provider") in self.kb.providers else None
        advice = self._advise(intent, {**plain, "provider": cloud} if cloud else plain, assumed, lang, gpu_ids=ids)
        pick = advice.recommendations[0] if advice.recommendations else None
        gpu = self.kb.gpus[pick["gpu"] if pick else max(ids, key=lambda g: self.kb.gpus[g].memory_gib)]
        rented = any(f.gpu in ids for f in self.kb.flavors_of())
        counted = plain.get("gpus") if slots.get("gpus") and not slots.get("own") else None
        need = (lambda: self._counted_cards(intent, plain, assumed, lang, gpu)) if counted else \
            (lambda: self._cards_needed(intent, plain, assumed, lang, gpu))
        cards = None if rented and pick else need()
        card_price = self._card_price(gpu.id, cards) if pick is None and cards else None
        if pick is not None and pick.get("price_per_hour") is None:
            # its sizes that hold the job have no public price (Alibaba's 8 x H20 host): the fewest of its cards that
            # hold it, as many replicas as the plan keeps, at the price a card on file (a 1 x H20 rental), if any
            fewest = need()
            reps = max(1, pick.get("replicas") or 1)
            priced = self._card_price(gpu.id, {"cards": fewest["cards"] * reps}) if fewest.get("cards") else None
            if priced:
                priced.update(unpriced_size=pick["flavor"], replicas=reps, per_replica=fewest["cards"])
                cards, card_price, pick = fewest, priced, None
        return {"name": name, "label": gpu.name, "gpu": gpu.id, "gpu_name": gpu.name, "bf16": gpu.bf16,
                "bf16_sources": [] if gpu.bf16 else NO_BF16_SOURCES,
                "consumer": "consumer" in gpu.positioning, "advice": advice, "pick": pick, "rented": rented,
                # no plan on file holds the job on it (not rented, or only in sizes that cannot): its own cards' count
                "cards": cards, "card_price": card_price,
                # the cloud the user named, and whether this side's plan had to go elsewhere (said in the answer)
                "cloud": cloud, "elsewhere": bool(cloud and pick and pick.get("provider") != cloud)}

    def _card_price(self, gid: str, cards: dict[str, Any]) -> dict[str, Any] | None:
        """A card rented on file only in sizes too small for the job (one H20 on a rental platform): the cards that
        hold the job priced at its cheapest price a card, said as such, so the comparison still weighs money."""
        n = cards.get("cards")
        priced = [f for f in self.kb.flavors_with_gpu(gid) if f.price and f.price.on_demand is not None]
        if not n or not priced:
            return None
        f = min(priced, key=lambda f: (self.kb.convert(f.price.on_demand / f.gpu_count, f.price.currency, "USD"),
                                       f.id))
        per = f.price.on_demand / f.gpu_count
        return {"cards": n, "per_card": round(per, 4), "hourly": round(per * n, 4), "currency": f.price.currency,
                "flavor": f.flavor, "provider": f.provider, "kind": f.price.kind,
                "sources": [*f.sources, *(f.price.sources or [])]}

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

    def _counted_cards(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                       gpu) -> dict[str, Any]:
        """The job on as many of a GPU's cards as the question said ('4x4090 vs 1xA100'), in _fewest_cards' shape:
        `cards` is that count when they hold it, else None."""
        return self._held_on(self._job(intent, slots, assumed, lang), gpu)

    def _fewest_cards(self, intent: str, slots: dict[str, Any], assumed: dict[str, Any], lang: str,
                      gpu) -> dict[str, Any]:
        """The fewest of a GPU's cards that hold the job: the one search a GPU named without a count gets
        (_fewest_that_hold: one server of 1, 2, 4 or 8, or two, least moved to host RAM first), as a dict."""
        return self._held_on(self._job(intent, {k: v for k, v in slots.items() if k != "gpus"}, assumed, lang), gpu)

    def _held_on(self, job, gpu) -> dict[str, Any]:
        plan = self._fewest_that_hold(job, gpu, gpu.memory_gib)
        return {"memory_gib": gpu.memory_gib, "usable_gib": gpu.memory_gib * (1 - MIN_HEADROOM),
                "need_gib": plan.estimate.per_gpu_gib, "fits": plan.fits, "steps": plan.steps, "gpus": plan.used,
                "sharding": plan.workload.sharding, "changes": plan.changes,
                "cards": plan.cards if plan.fits else None,
                # its time for the job's work on those cards (a training job with an amount of work): what a side no
                # flavor rents (an H800, a 4090 cluster) is judged on against a rented one, time and cost per job
                "hours": round(plan.hours, 2) if plan.fits and plan.hours else None}


def _compare_intent(slots: dict[str, Any], job_intent: str | None) -> str | None:
    """The job a comparison is about: the job words of the question ('训 ... 继续预训练' is training), else what the
    slots imply (a method is a fine-tune, tokens a training run); None when nothing says."""
    if slots.get("method") and job_intent in (None, "train"):
        return "finetune"
    if job_intent in ("train", "finetune", "inference"):
        return job_intent
    return "train" if slots.get("tokens") else ("inference" if slots.get("concurrency") or slots.get("qps") else None)
