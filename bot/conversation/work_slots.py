"""The amount of a language model's training or post-training work, read with the quantity grammar
(quantities.py): how many samples, conversations, rows, preference pairs or prompts, how long each is, how many
completions per prompt and how long each completion, and whether sequences are packed.

'lora finetune qwen2.5 7b on 50k samples of 1024 tokens, 3 epochs' -> dataset_items 50,000 (samples), sample_tokens
1,024; '5万条样本，每条约2000 token，训练3个epoch' -> 50,000 samples of 2,000 tokens; 'DPO, 60k preference pairs, prompts
300 tokens and responses 500 tokens' -> 60,000 pairs of 800-token sequences; 'GRPO, 10k prompts, 8 samples per prompt,
1024 generation tokens' -> 10,000 prompts, 8 generations of 1,024 tokens. The epochs stay with dataset_slots.py.
What was read is blanked, so that no later pattern reads '1024 tokens' as a context or '60k' as a parameter count.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from bot.conversation.quantities import Quantity, QuantityGrammar, _alt, _either

TRAINING_ITEM_UNITS = ("samples", "pairs", "prompts")
MAX_TRAINING_ITEMS = 1e11          # more samples than any public training set by far (dataset_slots.MAX_ITEMS)
MAX_SAMPLE_TOKENS = 10_000_000     # the longest context any model on file takes
MAX_GENERATIONS = 1024             # completions per prompt (Workload.rl_group's bound)
MAX_TRAIN_STEPS = 100_000_000      # more optimizer steps than any training run

_PACKING_ON = re.compile(r"(?<![a-z])(?:with\s+)?(?:sample\s+|sequence\s+)?packing(?:\s+on|=true)?(?![a-z])|packed|打包|拼接")
_PACKING_OFF = re.compile(r"(?:no|without|not|w/o|disable|disabled)\s+(?:sample\s+|sequence\s+)?packing|packing\s*(?:off|=\s*false)"
                          r"|unpacked|不\s*(?:打包|拼接)|padding\s+to\s+max")
# a sample's length said with no unit ('每条4k', '平均长度2k', '50k samples, 4k each', 'avg length 1500'): tokens, as
# engineers mean a sample's length; not a count of something else ('每个 epoch', '每条 3 张图', '4k samples')
_NOT_A_LENGTH = r"(?![\d.]|\s*(?:条|个|张|万|亿|%|b(?![a-z])|samples?|rows?|pairs?|epochs?|images?|steps?|字|词|chars?|characters?|words?|tokens?))"
_UNITLESS_LENGTH = re.compile(
    r"(?:每条|每一条|单条|每个样本|每个|样本长度|平均长度|平均|(?<![回复出入最大])长度|(?<![a-z_])avg\.?\s*(?:length|len)"
    r"|(?<![a-z_])average\s+(?:length|len)|(?<![a-z_])(?<![a-z_]\s)length|(?<![a-z_])per\s+(?:sample|row))"
    r"\s*(?:约|大概|大约|差不多|在|为|是|~|≈|about|around|roughly|of|is|=|:)?\s*"
    rf"(\d+(?:\.\d+)?)\s*(k|千)?{_NOT_A_LENGTH}"
    r"|(?<![\d.])(\d+(?:\.\d+)?)\s*(k)?\s*(?:each|apiece|per\s+sample|long)(?![a-z])"
    # the length after the number: '10 万条 4k 长度数据', '2k 的长度', '4k长'
    r"|(?<![\d.])(\d+(?:\.\d+)?)\s*(k|千)?\s*(?:token\s*)?(?:的)?\s*(?:长度|长)(?!\s*的?\s*上下文)")
_POSTTRAIN_WORDS = re.compile(r"(?<![a-z])(?:dpo|grpo|ppo|orpo|kto|simpo|dapo|rlhf|reward model)(?![a-z])|偏好|强化学习")


class WorkReader:
    """Mixin of Parser: needs self.quantities (a QuantityGrammar), self._blank and rx_train_words (batch_slots)."""

    quantities: QuantityGrammar

    def _compile_work(self, vocab: dict[str, Any]) -> None:
        """The RL phrasings the unit grammar cannot see alone: a count said per prompt, and a generation length
        said as its limit without a unit ('回复最长4k')."""
        per = _either(vocab.get("per_prompt_before") or [])
        verbs = _either(vocab.get("sampling_verbs") or [])
        self.rx_per_prompt = re.compile(rf"{per}\s*(?:(?:要|需要|都)?\s*{verbs}\s*)?(?:出)?\s*$")
        self.rx_max_word = re.compile(_either(vocab.get("max_words") or []))
        outputs = [w for w, r in self.quantities.role_of.items() if r == "output"]
        self.rx_gen_limit = re.compile(
            rf"(?:{_either(outputs)})\s*(?:的)?\s*(?:长度|length|len)?\s*(?:{_either(vocab.get('max_words') or [])})"
            r"\s*(?:长度|length)?\s*(?:为|是|=|:|of)?\s*(\d+(?:\.\d+)?)\s*(k|千)?(?![a-z\d])"
            r"|max[_\s]*(?:response|completion|generation|new|output)[_\s]*(?:length|len|tokens)\s*(?:=|:|of|is)?\s*"
            r"(\d+(?:\.\d+)?)\s*(k)?(?![a-z\d])"
            r"|最大\s*(?:回复|生成|输出|回答)\s*长度\s*(?:为|是|=|:)?\s*(\d+(?:\.\d+)?)\s*(k|千)?(?![a-z\d])")

    def _per_prompt(self, t: str, qs: list[Quantity]) -> list[Quantity]:
        """'每个prompt采样8条', 'for each prompt sample 8 responses': a count of samples (or of times) said per prompt
        is the completions drawn for it, not the dataset."""
        out = []
        for q in qs:
            if q.unit in ("samples", "requests") and not q.rate and not q.each and \
                    self.rx_per_prompt.search(t[max(0, q.number_start - 24):q.number_start]):
                q = replace(q, unit="completions", each="prompt")
            out.append(q)
        return out

    def _generation_limit(self, t: str, slots: dict[str, Any]) -> str:
        """A completion's limit said without a unit ('回复最长4k', 'max_response_length=4096'): its tokens, as a limit."""
        m = self.rx_gen_limit.search(t)
        if m is None:
            return t
        groups = m.groups()
        num, k = next((groups[i], groups[i + 1]) for i in (0, 2, 4) if groups[i])
        value = float(num) * (1024 if k else 1)
        if 1 <= value <= MAX_SAMPLE_TOKENS:
            slots["generation_tokens"], slots["generation_max"] = int(round(value)), True
            return self._blank(t, m.span())
        return t

    def _training_work(self, t: str, slots: dict[str, Any]) -> str:
        """Samples, pairs or prompts with their lengths in a training question; nothing in a serving one."""
        qs = self.quantities.find(t)
        training = self.rx_train_words.search(t) or _POSTTRAIN_WORDS.search(t) or any(q.unit == "epochs" for q in qs)
        if not training:
            return t
        if _POSTTRAIN_WORDS.search(t) or any(q.unit in ("completions", "prompts") for q in qs):
            qs = self._per_prompt(t, qs)
        if _PACKING_OFF.search(t):
            slots["packing"] = False
        elif _PACKING_ON.search(t):
            slots["packing"] = True
        taken: list[Quantity] = []
        items = next((q for q in qs if q.unit in TRAINING_ITEM_UNITS and not q.each and not q.rate), None)
        if items is not None and self._training_items(items, slots):
            taken.append(items)
        gens = next((q for q in qs if q.unit == "completions" and not q.rate), None)
        if gens is not None and not gens.negative and 1 <= gens.value <= MAX_GENERATIONS:
            slots["generations"] = int(gens.value)
            taken.append(gens)
        taken += self._sample_lengths(qs, slots)
        if items is not None and "sample_tokens" not in slots:
            t = self._unitless_length(t, slots)
        # '1500 steps each' (each run's, each customer's) is the steps; '100 steps per image' is not
        steps = next((q for q in qs if q.unit == "steps" and not q.rate and q.each in (None, "item")), None)
        if steps is not None and not steps.negative and 1 <= steps.value <= MAX_TRAIN_STEPS:
            slots["train_steps"] = int(steps.value)      # '大概 3000 步': steps x batch images, not one epoch
            taken.append(steps)
        for q in taken:
            t = self._blank(t, q.span)
        if "generation_tokens" not in slots and _online(slots, qs):
            t = self._generation_limit(t, slots)
        return t

    def _unitless_length(self, t: str, slots: dict[str, Any]) -> str:
        """A sample's length with no unit beside a count of samples ('5万条，每条4k', '50k samples, 4k each'): its
        tokens ('4k' is 4,096, as '4k tokens' is), so the work is samples x that length, not a default."""
        m = _UNITLESS_LENGTH.search(t)
        if m is None:
            return t
        num, k = next((m.group(i), m.group(i + 1)) for i in (1, 3, 5) if m.group(i))
        value = float(num) * (1024 if k else 1)
        if 16 <= value <= MAX_SAMPLE_TOKENS:
            slots["sample_tokens"] = int(round(value))
            return self._blank(t, m.span())
        return t

    @staticmethod
    def _training_items(q: Quantity, slots: dict[str, Any]) -> bool:
        """The dataset's size: refused when negative or zero, beyond any dataset when over MAX_TRAINING_ITEMS."""
        if q.negative or q.value <= 0:
            slots.setdefault("_bad", {})["dataset_items"] = -q.value if q.negative else 0
            return True
        if q.value > MAX_TRAINING_ITEMS:
            slots.setdefault("_absurd", {})["dataset_items"] = q.value
            return True
        slots["dataset_items"] = float(round(q.value))
        slots["dataset_unit"] = q.unit
        if q.low is not None:
            slots["dataset_items_low"] = float(round(q.low))
        return True

    def _sample_lengths(self, qs: list[Quantity], slots: dict[str, Any]) -> list[Quantity]:
        """Each sample's tokens: one length ('of 1024 tokens', '每条约 2000 token', 'averaging 800 tokens'), or a
        prompt and a response ('prompts 300 tokens and responses 500 tokens': 800 a sequence); for online RL the
        generated length is the completion's ('1024 generation tokens')."""
        per_item = [q for q in qs if q.unit == "tokens" and not q.rate and (q.each or q.role or q.average)
                    and 1 <= q.value <= MAX_SAMPLE_TOKENS and not q.negative]
        taken = []
        prompt = next((q for q in per_item if q.role == "input"), None)
        output = next((q for q in per_item if q.role == "output"), None)
        plain = next((q for q in per_item if q.role is None), None)
        if output is not None and _online(slots, qs):
            slots["generation_tokens"] = output.as_length()       # what each completion generates
            if self.rx_max_word.search(output.text):
                slots["generation_max"] = True                      # 'responses up to 4096 tokens': a limit
            taken.append(output)
            output = None
        parts = [plain] if plain is not None else [q for q in (prompt, output) if q is not None]
        if parts:
            slots["sample_tokens"] = sum(q.as_length() for q in parts)   # a prompt and its response: one sequence
            taken += parts
        return taken


def _online(slots: dict[str, Any], qs: list[Quantity]) -> bool:
    """Online RL: completions per prompt said, or prompts counted as the dataset."""
    return any(q.unit == "completions" for q in qs) or any(q.unit == "prompts" and not q.each for q in qs)
