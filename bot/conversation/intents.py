"""Step 5 of the parse: weighted intent cues (longest first, a phrase masks what it covers), then a few explicit
decision rules between the job intents, help, compare, billing and explain; and the reset phrases."""
from __future__ import annotations

import re
from typing import Any

JOB_INTENTS = ("finetune", "train", "inference", "rendering")     # order breaks ties
COST_OF_CHANGE = re.compile(r"钱|费用|成本|省多少|(?<![a-z])(?:cost|costs|save|saves|saving|savings|cheaper|price)(?![a-z])")
# post-training algorithms that train a policy (a reward model may also only score: not here)
TRAINING_ALGORITHMS = frozenset({"grpo", "dpo", "orpo", "simpo", "kto", "ppo", "rlhf"})


class IntentScorer:
    """Mixin of Parser: needs self.intent_cues, self.intent_names and the cue sets of Parser._compile_cues."""

    rx_why = re.compile(r"为什么|为啥|怎么会|(?<![a-z])why(?![a-z])")
    # a model described by how it was made ('my LoRA fine-tuned llama', '模型为qlora微调后qwen72b', '微调过的 7B'): the
    # participle names the model's history, not the job asked about
    rx_tuned = re.compile(r"(?:(?<![a-z])(?:q-?lora|lora|peft|sft|dpo|full|全参|全量)[\s-]*)?"
                          r"(?:(?<![a-z])fine[\s-]?tuned(?![a-z])|(?<![a-z])finetuned(?![a-z])"
                          r"|微调(?:后|过|好|完)的?|训练好的|训好的)")

    def _served_tuned_model(self, text: str) -> str:
        """'serve my LoRA fine-tuned llama 3 8b for 20 users', 'rtx-4090多卡推理（模型为qlora微调后qwen72b）': the text
        with the participle blanked when, without it, the question is about serving (its method word with it: the
        adapter is merged or loaded at serving time, not trained). Otherwise the text as it is ('I fine-tuned llama
        on 8 A100s, now want to fine-tune again' keeps its job)."""
        spans = [m.span() for m in self.rx_tuned.finditer(text)]
        if not spans:
            return text
        blanked = text
        for s, e in spans:
            blanked = blanked[:s] + " " * (e - s) + blanked[e:]
        scores, _ = self._intent_scores(blanked, {})
        training = max(scores.get("finetune", 0.0), scores.get("train", 0.0))
        return blanked if scores.get("inference", 0.0) > training else text

    def _intent_scores(self, text: str, slots: dict[str, Any]) -> tuple[dict[str, float], bool]:
        scores = {k: 0.0 for k in self.intent_names}
        work = text
        for cue, intent, weight in self.intent_cues:
            spans = cue.spans(work)
            if not spans:
                continue
            if intent in scores:
                scores[intent] += weight
            if cue.literal is None:
                continue                  # a pattern spans words that other cues still need ('how does spot .. work')
            for s, e in spans:
                work = work[:s] + "\x00" * (e - s) + work[e:]
        method = slots.get("method")
        if method in ("lora", "qlora", "freeze"):
            scores["finetune"] += 2.0
        elif method == "full" and scores["train"] == 0:
            scores["finetune"] += 1.0
        if slots.get("concurrency") or slots.get("qps") or slots.get("latency") == "low" or slots.get("token_rate"):
            scores["inference"] += 1.5      # a load to carry ('300 tok/s', '50 users'): a service
        if slots.get("tokens"):
            scores["train"] += 1.5
        if slots.get("offline"):
            scores["inference"] += 3.0      # 'caption 2M images', '离线跑 100 万条': a batch job is inference
        return {k: round(v, 2) for k, v in scores.items()}, self.recommend.any(text)

    def _is_reset(self, text: str) -> bool:
        """'reset', 'start over please', 'ok, start over', '算了，重新开始': a short message that starts or ends with
        a reset phrase."""
        stripped = re.sub(r"[\s.!?,。！？~:;]+", " ", text).strip()
        if len(stripped) >= 40:
            return False
        return any(stripped == r or stripped.startswith(r + " ") or stripped.endswith(" " + r)
                   or (not r.isascii() and (stripped.startswith(r) or stripped.endswith(r)))
                   for r in self.reset_words)

    def _decide_intent(self, text: str, scores: dict[str, float], recommend: bool, slots: dict[str, Any],
                       ambiguous: dict[str, list[str]]) -> tuple[str | None, bool]:
        if not text.strip():
            return None, not (slots.keys() - {"topic"})      # all of it read as slots ('by tomorrow', '8 gpus')
        job_scores = {k: scores.get(k, 0.0) for k in JOB_INTENTS}
        best_job = max(JOB_INTENTS, key=lambda k: (job_scores[k], -JOB_INTENTS.index(k)))
        if job_scores["rendering"] >= 3 and job_scores["train"] > 0 and best_job == "train":
            best_job = "rendering"        # rendering plus training is the seed's scenario 4
        job = job_scores[best_job]
        if slots.get("algorithm") in TRAINING_ALGORITHMS and (best_job == "inference" or job == 0):
            # 'GRPO ..., rollout 8 条, 最长生成 4k', 'DAPO 训 ...': the algorithm trains a policy; its rollouts'
            # generation words serve that training (the post-training estimator refuses an inference GRPO)
            best_job, job = "finetune", max(job, 1.0)
        n_gpus = len(slots.get("gpu_models") or []) or (1 if slots.get("gpu_model") else 0)
        has_model = bool(slots.get("model") or slots.get("params_b") or ambiguous.get("model"))
        entity = has_model or n_gpus > 0
        oos_cue = self.oos.any(text)
        if oos_cue and not entity and job < 3:
            return None, True
        compare, billing, help_ = scores.get("compare", 0.0), scores.get("billing", 0.0), scores.get("help", 0.0)
        # a comparison of concepts, not of GPUs, asks for an explanation ("bf16 和 fp16 有啥区别")
        explain = scores.get("explain", 0.0) + (compare if n_gpus < 2 else 0.0)
        if help_ >= 2 and help_ >= job + 2 and help_ >= max(explain, billing):
            return "help", False
        if n_gpus >= 2 and compare > 0:
            return "compare", False
        # 'how long and how much' for a named model's job with its work said ('用 whisper 转写 1 万小时录音，要多久、
        # 多少钱'): the job's plan and cost, not how billing works; a billing word (spot, 包月) keeps it billing
        work = any(slots.get(k) for k in ("tokens", "dataset_items", "items", "batch_tokens"))
        if has_model and work and job > 0 and not slots.get("topic"):
            billing = 0.0
        # 'qlora 能省多少钱', 'how much does it cost with qlora': a method and the money it saves or costs is that job's
        # plan and cost (a refinement of the session's job), not an explanation of the method or of billing
        priced_method = bool(slots.get("method")) and COST_OF_CHANGE.search(text) is not None \
            and job >= max(explain, billing)
        # how billing works is a billing question ('how does spot pricing work')
        if billing >= 2.5 and not priced_method and (job == 0 or billing > job or (not has_model and (not recommend or billing >= job))):
            return "billing", False
        # a what/why word around a named model and a job word asks for that job's answer ("what's the minimum VRAM to
        # LoRA fine-tune qwen2.5-14b?"): the answer carries the memory estimate and its explanation
        why = self.rx_why.search(text) is not None
        if explain >= 2.5 and explain >= billing and not priced_method and (
                job == 0 or not (recommend or (has_model and job >= explain and not why))):
            return "explain", False
        if job > 0:
            return best_job, False
        domain = (entity or bool(slots.keys() - {"topic"}) or self.domain.any(text) or self.refine.any(text)
                  or bool(slots.get("topic")))
        if entity:
            return None, False            # a name alone: the dialogue decides from the session
        if max(explain, billing) > 0 and domain:
            return ("billing" if billing > explain else "explain"), False
        if help_ > 0 or self.help_words.any(text):
            return "help", False
        return None, not domain
