"""Understand a free-text question: intent, and the slots of DESIGN.md, with scores and runners-up.

Vocabulary is data (rules/lexicon.yaml, and the knowledge base's aliases). The steps:
1. normalise: NFKC (full width -> half width), lower case, control characters out, common Chinese typos and
   traditional characters mapped (lexicon zh_typos / zh_variants);
2. spelling: English tokens that are not known words are corrected to the closest vocabulary word when the
   optimal-string-alignment distance is within the lexicon's cut-off; a tie is no correction;
3. names: models, GPUs and providers as knowledge-base aliases on word boundaries (exact first). A family and a size
   ("llama 70b") or a generation without a size ("qwen2.5") that fits several models - or that omits the generation
   of the one model it fits - is kept as ambiguous with its candidates, never guessed; a misspelt name is matched
   fuzzily (rapidfuzz ratio, explicit cut-off and margin over the runner-up). Names are then masked out of the text;
4. numbers with their units (7B, 70亿, 千亿, 124M, 8k context, 两机十六卡, 8x A100, $3/hr, 两周内);
5. keyword cues for the other slots, and weighted cues for the intents, then a few explicit decision rules.
Deterministic: the same text always gives the same Parse. Fast: everything is compiled once per Parser.
"""
from __future__ import annotations
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from bot.conversation.relative import load_scale, work_scale
from bot.conversation.batch_slots import BatchReader
from bot.conversation.cues import Cue, CueSet, _both, set_zh_words
from bot.conversation.dataset_slots import DatasetReader
from bot.conversation.entities import G_MARK, M_MARK, EntityMatcher
from bot.conversation.usage import schedule_hours
from bot.conversation.hardware_limits import apply_limits, hardware_limits
from bot.conversation.intents import JOB_INTENTS, IntentScorer
from bot.conversation.normalise import MAX_CHARS, Normaliser
from bot.conversation.number_patterns import _DIGITS, _ZH_RUN, NumberPatterns
from bot.conversation.parsed import Match, Parse, load_lexicon
from bot.conversation.quantities import QuantityGrammar
from bot.conversation.slots import SlotReader
from bot.conversation.load_slots import LoadReader
from bot.conversation.work_slots import WorkReader
from bot.knowledge.loader import KnowledgeBase
from bot.records.models import Slots
from bot.records.text import has_cjk, normalize

# a model's name said between a count and its noun ('50k SDXL images a day', '5 万张 SDXL 图片', '300 路 Whisper 转写'):
# the name's mark is moved before the count (same length, so spans stay), so that the count reads with its noun
COUNT_BEFORE_MARK = re.compile(r"(\d[\d.,]*\s*(?:k|m|mn|million|thousand|b|bn|billion|万|亿|千|百万|千万)?\s*"
                               r"(?:张|条|个|篇|份|段|路|幅|次)?)(\s*" + M_MARK + r"\s*)(?=[a-z\u4e00-\u9fff])")


# a video stream's frame rate ('at 15 fps', '每路 10 fps', '每秒 25 帧', '15 frames per second'): frames each stream sends
FPS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:fps|frames?\s*(?:per|a|/)\s*(?:second|sec|s)(?![a-z])|帧\s*(?:/|每)\s*秒|帧每秒)"
                 r"|每秒\s*(\d+(?:\.\d+)?)\s*帧")


def mark_before_count(work: str) -> str:
    return COUNT_BEFORE_MARK.sub(lambda m: m.group(2) + m.group(1), work)


__all__ = ["Parser", "Parse", "Match", "Cue", "CueSet", "load_lexicon", "JOB_INTENTS", "MAX_CHARS", "M_MARK",
           "G_MARK"]


# 'assume 40% MFU', '40 % model flops utilization', 'MFU of 0.4', 'mfu=45%', 'MFU 按 40%', 'MFU 取 0.4'
_MFU_WORD = r"(?:(?<![a-z])mfu(?![a-z])|model\s+flops?\s+utili[sz]ation|模型算力利用率|算力利用率)"
STATED_MFU = re.compile(
    rf"(?<![\d.])(\d{{1,3}}(?:\.\d+)?)\s*%\s*(?:的\s*)?{_MFU_WORD}"
    rf"|{_MFU_WORD}\s*(?:\(mfu\)\s*)?(?:(?:of|at|is|=|:|按|为|是|取|假设|约|大概|around|about|~|≈|用|算|能到|达到|到)\s*)*"
    r"(\d{1,3}(?:\.\d+)?)\s*(%)?(?![\d.])")


# who each run is for, and what each run makes
_FOR_WHOM = (r"(?:customers?|clients?|tenants?|brands?|teams?|characters?|artists?|creators?|products?|stores?|"
             r"shops?|merchants?|styles?|subjects?|celebrities|influencers?|languages?|domains?)")
_ZH_WHOM = r"(?:客户|租户|品牌|团队|角色|人物|画师|博主|商家|店铺|商品|产品|门店|风格|主体|明星|网红|语言|领域)"
_RUN_THING = r"(?:loras?|adapters?|fine-?tunes?|finetunes?|models?|runs?|jobs?|checkpoints?|dreambooths?)"
_RUN_NUM = r"(?P<n>\d+(?:,\d{3})*|[一二两三四五六七八九十百千万]+)"
RUNS = [
    # 'for each of 50 customers', 'one LoRA per customer for 50 customers', '50 customers, one LoRA each'
    re.compile(rf"(?:for|to)\s+each\s+of\s+(?:our\s+|the\s+|my\s+)?{_RUN_NUM}\s+(?:\w+\s+)?{_FOR_WHOM}(?![a-z])"),
    re.compile(rf"(?<![\d.]){_RUN_NUM}\s+(?:\w+\s+)?{_FOR_WHOM}(?![a-z])[^.;!?\n]{{0,40}}?"
               rf"(?:(?<![a-z])(?:each|apiece|per\s+(?:customer|client|user|tenant|brand|character|person|product))(?![a-z])"
               rf"|(?:one|a|an|1)\s+(?:separate\s+|own\s+|dedicated\s+)?{_RUN_THING}\s+(?:each|per|for\s+each|for\s+every))"),
    re.compile(rf"(?:one|a|an|1)\s+(?:separate\s+|own\s+|dedicated\s+)?(?:\S+\s+){{0,3}}?{_RUN_THING}\s+"
               rf"(?:per|for\s+each|for\s+every)\s+(?:\w+\s+)?(?:of\s+)?(?:our\s+|the\s+|my\s+)?{_RUN_NUM}\s+{_FOR_WHOM}"),
    # '50 separate LoRAs', '50 different fine-tunes', 'train 50 LoRAs'
    re.compile(rf"(?<![\d.]){_RUN_NUM}\s+(?:separate|different|independent|distinct|individual|per-customer|custom)\s+"
               rf"(?:\S+\s+){{0,2}}?{_RUN_THING}(?![a-z])"),
    re.compile(rf"(?:train|fine-?tune|finetune|build|make|run)\s+{_RUN_NUM}\s+(?:\S+\s+){{0,2}}?{_RUN_THING}(?![a-z])"),
    # 'one LoRA per customer for 120 customers', 'a LoRA per brand, 30 brands'
    re.compile(rf"(?:per|for\s+each|for\s+every)\s+{_FOR_WHOM}\s*(?:,|;|:|for|across|x|×|-)?\s*(?:all\s+|our\s+|the\s+)*"
               rf"{_RUN_NUM}\s+(?:\w+\s+)?{_FOR_WHOM}(?![a-z])"),
    # '给 50 个客户每人训一个', '50 个客户各训一个 LoRA', '为 30 个品牌分别训练', '每个客户一个 LoRA，共 50 个客户'
    re.compile(rf"{_RUN_NUM}\s*(?:个|位|家|名)\s*{_ZH_WHOM}[^。；;，,]{{0,6}}?(?:每人|每个|每家|每位|各|分别|单独|一人一个)"),
    re.compile(rf"(?:每个|每位|每家|每一个)\s*{_ZH_WHOM}[^。；;]{{0,16}}?(?:共|一共|总共|有)\s*{_RUN_NUM}\s*(?:个|位|家|名)"),
    # '训 50 个 LoRA', '50 个独立的 LoRA', '跑 50 次微调'
    re.compile(rf"{_RUN_NUM}\s*(?:个|套)\s*(?:独立的?|不同的?|单独的?)?\s*(?:lora|适配器|微调模型|dreambooth)(?![a-z])"),
    re.compile(rf"(?:训|训练|跑|做)\s*{_RUN_NUM}\s*次\s*(?:lora|微调|训练)"),
]


class Parser(Normaliser, EntityMatcher, NumberPatterns, SlotReader, WorkReader, LoadReader, BatchReader,
             DatasetReader, IntentScorer):
    """Built once per (knowledge base, lexicon); `parse` is a pure function of the text. Each step lives in its own
    module (normalise, entities, number_patterns + slots, intents); this class holds the tables and the order."""

    def __init__(self, kb: KnowledgeBase, lexicon: dict[str, Any]):
        self.kb = kb
        self.lex = lexicon
        lx = lexicon
        self.words = {str(k): float(v) for k, v in (lx.get("number_words") or {}).items()}
        en_words = sorted((w for w in self.words if w.isascii() and w not in ("a", "an")), key=len, reverse=True)
        self.EN_NUM = "(?:" + "|".join(re.escape(w) for w in en_words) + ")"
        # a number starts where a run of digits (or numerals) starts: no quadratic scans of long digit runs
        self.NUM = rf"({_DIGITS}|{_ZH_RUN}|半|(?<![a-z]){self.EN_NUM}(?![a-z]))"
        self.NUM_A = rf"({_DIGITS}|{_ZH_RUN}|半|(?<![a-z])(?:an?|{self.EN_NUM[3:-1]})(?![a-z]))"
        self._compile_cues()
        self._compile_numbers()
        self._compile_batch()
        self._compile_datasets()
        self.quantities = QuantityGrammar(lx["quantities"], self.words)
        self._compile_work(lx["quantities"])
        self._compile_service_cues(lx["service_cues"])

    # ----- tables built once ------------------------------------------------------------------------------------
    def _compile_cues(self) -> None:
        lx = self.lex
        set_zh_words(lx.get("zh_compound_words") or [])      # '向量化' is not '量化': the longer word wins
        self.zh_map = {**(lx.get("zh_variants") or {}), **(lx.get("zh_typos") or {})}
        self.zh_map_rx = re.compile("|".join(re.escape(k) for k in sorted(self.zh_map, key=len, reverse=True))) \
            if self.zh_map else None
        self.en_typos = {str(k).lower(): str(v).lower() for k, v in (lx.get("en_typos") or {}).items()}
        # intent cues, longest first across all intents (a longer phrase masks what it covers)
        cues: list[tuple[Cue, str, float]] = []
        for intent, langs in lx["intents"].items():
            for lang in ("en", "zh"):
                for phrase, weight in ((langs or {}).get(lang) or {}).items():
                    cues.append((Cue(str(phrase)), intent, float(weight)))
        self.intent_cues = sorted(cues, key=lambda c: (-len(c[0].phrase), c[0].phrase, c[1]))
        self.intent_names = [i for i in lx["intents"] if i != "neutral"]
        self.recommend = CueSet(_both(lx.get("recommend_cues")))
        self.domain = CueSet(_both(lx.get("domain_cues")))
        self.refine = CueSet(_both(lx.get("refine_cues")))
        self.oos = CueSet(_both(lx.get("out_of_scope_cues")))
        self.unsure = CueSet(_both(lx.get("unsure")))
        self.help_words = CueSet(_both(lx.get("help_words")))
        self.reset_words = [normalize(str(r)) for r in lx.get("reset", [])]
        self.methods = {k: CueSet(v) for k, v in lx["methods"].items()}
        self.precisions = {k: CueSet(v) for k, v in lx["precisions"].items()}
        self.budget = {k: CueSet(v) for k, v in lx["budget"].items()}
        self.duration = {k: CueSet(v) for k, v in lx["duration"].items()}
        self.latency = {k: CueSet(v) for k, v in lx["latency"].items()}
        self.regions = {k: CueSet(v) for k, v in lx["regions"].items()}
        self.clouds = {k: CueSet(v.get("aliases") or []) for k, v in (lx.get("clouds") or {}).items()}
        self.topics = {k: CueSet(v) for k, v in lx["topics"].items()}
        self.sharding = {k: CueSet(v) for k, v in (lx.get("sharding") or {}).items()}
        self.offload = {k: CueSet(v) for k, v in (lx.get("offload") or {}).items()}
        self.job_kinds = {k: CueSet(v) for k, v in (lx.get("job_kinds") or {}).items()}
        self.algorithms = {k: CueSet(v) for k, v in (lx.get("algorithms") or {}).items()}
        self.modalities = {k: CueSet(v) for k, v in (lx.get("uncovered_modalities") or {}).items()}
        # one search before the cue sets: most questions name no such modality (the parse stays fast)
        words = sorted({normalize(str(w)) for v in (lx.get("uncovered_modalities") or {}).values() for w in v},
                       key=len, reverse=True)
        self.modality_hint = re.compile("|".join(re.escape(w) for w in words) or "(?!)")
        self.algorithm_of = dict(lx.get("algorithm_of") or {})
        self.ordinals = [(Cue(str(k)), int(v)) for k, v in sorted((lx.get("ordinals") or {}).items(),
                                                                 key=lambda kv: (-len(str(kv[0])), str(kv[0])))]
        self.short_days = float(lx.get("short_days", 14))
        self.long_days = float(lx.get("long_days", 180))
        self.qlora_precisions = set(lx.get("qlora_precisions", ["int4", "nf4"]))

    def _stated_mfu(self, t: str, slots: dict[str, Any]) -> str:
        """An MFU the user tells us to assume ('assume 40% MFU', 'MFU of 0.4', 'MFU 按 40%', '假设 MFU 40%'): a fraction
        of the dense peak, kept for the speed model; blanked so that no other reader takes '40%'."""
        m = STATED_MFU.search(t)
        if m is None:
            return t
        num, pct = (m.group(1), True) if m.group(1) else (m.group(2), bool(m.group(3)))
        value = float(num) / (100 if pct or float(num) > 1 else 1)
        if 0.01 <= value <= 1:
            slots["mfu"] = round(value, 4)
            return self._blank(t, m.span())
        return t

    def _runs(self, t: str, slots: dict[str, Any]) -> str:
        """The same job run once for each of N customers ('a LoRA for each of 50 customers', '给 50 个客户每人训一个',
        '50 个 LoRA', '50 separate fine-tunes'): N runs, whose work adds up; the count is blanked so that no other
        reader takes it (as users or a GPU count). Only a training job has runs ('500 users each sending ...' is load)."""
        if not self.rx_train_words.search(t):
            return t
        for rx in RUNS:
            for m in rx.finditer(t):
                n = self._num(m.group("n"))
                if n and n == int(n) and 2 <= n <= 1_000_000:
                    slots["runs"] = int(n)
                    return self._blank(t, m.span("n"))
        return t

    def _mask_generation(self, text: str, slots: dict[str, Any]) -> None:
        """A SAM model (or none) with an automatic-mask-generation cue ('automatic mask generation', '全图分割',
        'everything mode') is SAM's mask generator, timed by its measured seconds an image, not by the image
        encoder's rate: the mask decoder runs once per grid point (1,024 by default) and the masks are post-processed
        on the CPU. With no model named, SAM ViT-H (the default checkpoint)."""
        if not hasattr(self, "_amg_cues"):
            self._amg_cues = CueSet(self.lex.get("mask_generation_cues") or [])
        mid = slots.get("model")
        m = self.kb.models.get(mid or "")
        if mid and (m is None or m.family != "SAM"):
            return
        if not self._amg_cues.any(text):
            return
        if mid and mid.endswith("-amg"):
            return
        amg = f"{mid}-amg" if mid else "sam-vit-h-amg"
        if amg in self.kb.models:
            slots["model"], slots["params_b"] = amg, self.kb.models[amg].params_b

    # ----- the parse ---------------------------------------------------------------------------------------------
    def parse(self, raw: str, today: dt.date | None = None) -> Parse:
        """`today` dates 'by Friday' and '12月20日前' (a fixed day in tests; the real date otherwise)."""
        text = self.normalise(raw)
        # the language of what was typed: normalising drops a change's verb ('改成 6' -> '6'), not its language
        lang = "zh" if has_cjk(text) or has_cjk((raw or "")[:MAX_CHARS]) else "en"
        matches: list[Match] = []
        text = self._fix_typos(text, matches)
        ambiguous: dict[str, list[str]] = {}
        slots: dict[str, Any] = {}

        work, model = self._find_model(text, matches, ambiguous)
        if model:
            slots["model"] = model
            slots["params_b"] = self.kb.models[model].params_b
            if family := self.family_named(matches, model):
                slots["model_family"] = family
        where: list[tuple[str, int, int]] = []
        before_gpus = work
        work, gpus_named = self._find_gpus(work, matches, where)
        work, model2 = self._fuzzy_model(work, matches, ambiguous) if not model and "model" not in ambiguous \
            else (work, None)
        if model2:
            slots["model"] = model2
            slots["params_b"] = self.kb.models[model2].params_b
        self._mask_generation(text, slots)
        if not gpus_named and (odd := self.unknown_gpu(work)):
            # 'one RTX 3060 12GB at home': a card not on file, judged by its memory when said, never dropped
            name = _as_written(raw, odd[0])
            slots["gpu_name"] = name if name != name.lower() else \
                re.sub(r"\b(Ti|Super|Geforce)\b", lambda w: {"Geforce": "GeForce"}.get(w.group(), w.group()),
                       name.upper().title().replace("Rtx", "RTX").replace("Gtx", "GTX").replace("Rx", "RX"))
            # read on as a card of its memory ('one 12gb card', '一张 12gb card'): the count and the memory as said
            s, e = odd[2]
            work = work[:s] + (f" {odd[1]:g}gb card " if odd[1] else " card ") + work[e:]
        if len(gpus_named) >= 2:
            slots["gpu_models"] = gpus_named
        elif gpus_named:
            slots["gpu_model"] = gpus_named[0]
        apply_limits(slots, hardware_limits(before_gpus, where))     # 'no H100 quota, only A100 and A10'
        provider = self._find_provider(text)
        if provider:
            slots["provider"] = provider
        elif cloud := self.cloud_named(text) or self.cloud_company(text):
            # a cloud the knowledge base covers by an id the lexicon lists, or one it does not cover at all
            slots["provider" if cloud in self.kb.providers else "provider_uncovered"] = cloud
        work = self._card_memory(work, slots)
        self._renting(work, slots)
        if m := FPS.search(work):
            fps = float(m.group(1) or m.group(2))
            if 0 < fps <= 1000:
                slots["fps"] = fps
            work = self._blank(work, m.span())
        work = self._stated_mfu(work, slots)
        work = self._runs(work, slots)
        work = self._numbers(mark_before_count(work), slots, "model" in slots or "model" in ambiguous,
                             today or dt.date.today())
        if sched := schedule_hours(text, self._num):     # '8 hours a day on weekdays': a service's hours of use
            slots["usage_hours_month"] = sched["hours_month"]
            slots["usage_hours_day"] = sched["hours_day"]
            slots["usage_days_week"] = sched["days_week"]
        self._one_of_mine(work, slots)
        work = self._served_tuned_model(work)
        self._keywords(work, slots)
        if (slots.get("kind") in ("vision", "speech", "diffusion") or slots.get("modality")) and not any(
                k in slots for k in ("model", "params_b", "model_name")) and "model" not in ambiguous:
            if odd_name := self.unknown_kind_model(work):
                slots["model_name"] = _as_written(raw, odd_name)   # 'RT-DETR-L': not on file, said (turn.py)
        unknown = None
        if "model" not in slots and "model" not in ambiguous and "params_b" not in slots:
            unknown = self._unknown_model_word(work)
        elif "model" not in slots and "model" not in ambiguous:
            named = self._unknown_model_word(text)      # 'FooLM-13B': its size is known, its name is not on file
            if named:
                slots["model_name"] = _as_written(raw, named)
        more_work = work_scale(text)
        scale = None if more_work else load_scale(text)
        if scale and scale > 1:
            slots["load_scale"] = scale
        if more_work and more_work > 0:
            slots["work_scale"] = more_work
        scores, recommend = self._intent_scores(work, slots)
        intent, oos = self._decide_intent(work, scores, recommend, slots, ambiguous)
        intent = self._job_with_billing_ask(intent, text, scores, slots, ambiguous)
        invalid, absurd = slots.pop("_bad", {}), slots.pop("_absurd", {})
        if oos and slots.get("modality"):
            oos = False         # 'XTTS-v2' alone: a text-to-speech model named, answered as not on file
        if oos and unknown and self._unknown_family_size(unknown):
            oos = False         # 'use a smaller embedder, bge-small': a model named, not a question out of scope
        if oos:
            slots, ambiguous, unknown, invalid, absurd = {}, {}, None, {}, {}
        self._scope_slots(intent, slots)
        cparams = {c: self.kb.models[c].params_b for c in ambiguous.get("model", [])}
        lang_sure = lang == "zh" or any(w not in self._lang_neutral for w in re.findall(r"[a-z]{2,}", work))
        return Parse(text=text, lang=lang, intent=intent, intent_scores=scores, slots=Slots(**slots),
                     matches=matches, ambiguous=ambiguous, reset=self._is_reset(text), out_of_scope=oos,
                     unknown_model=unknown, unsure=self.unsure.any(text), candidate_params=cparams,
                     lang_sure=lang_sure, invalid=invalid, absurd=absurd,
                     job_words=not oos and (self.refine.any(text) or self.domain.any(text)))

    def _job_with_billing_ask(self, intent: str | None, text: str, scores: dict[str, float], slots: dict[str, Any],
                              ambiguous: dict[str, Any]) -> str | None:
        """'LoRA 微调 qwen2.5 7b，2 亿 token，按需还是包月？': a whole job (a model and its work or its load) named with a
        monthly-or-pay-per-use question is the job, planned, its billing verdict a sub-question answered from the
        plan's own hours (bot/conversation/sub_questions.py), not a billing primer asking for hours the job has."""
        if intent != "billing":
            return intent
        if not hasattr(self, "_billing_ask"):
            from bot.conversation.cues import CueSet, _both
            self._billing_ask = CueSet(_both((self.lex.get("sub_questions") or {}).get("billing_mode")))
        has_model = bool(slots.get("model") or slots.get("params_b") or ambiguous.get("model"))
        sized = any(slots.get(k) for k in ("tokens", "dataset_items", "items", "batch_tokens", "concurrency",
                                              "rate_rps", "users"))
        job = max(("finetune", "train", "inference", "rendering"), key=lambda k: scores.get(k, 0.0))
        if has_model and sized and scores.get(job, 0.0) > 0 and self._billing_ask.any(text):
            slots.pop("topic", None)
            return job
        return intent


def _as_written(text: str, word: str) -> str:
    """A word found in the normalised text, as the user wrote it ('FooLM-13B', not 'foolm-13b')."""
    m = re.search(re.escape(word), text, flags=re.IGNORECASE)
    return m.group(0) if m else word
