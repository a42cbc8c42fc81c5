"""Batch (offline) inference: a job with a total amount of work, not an always-on service.

'Caption 2 million images with Qwen2.5-VL-7B', '用 Qwen2.5-72B 离线跑 100 万条数据打标签，三天内跑完': the work is
items x tokens per item. One replica runs at its maximum batch throughput (vLLM-style continuous batching with no
latency target, so the sequences in flight are bounded by the KV cache and the engine's max_num_seqs); the job takes
items / (items per second per replica x replicas), plus each replica's start-up. With a deadline the plan uses the
fewest replicas that finish in time; without one, the fewest that finish within the planner's horizon (30 days),
and the answer offers a faster plan. On pay-per-use the cost barely depends on the replica count (the same
GPU-hours, plus one start-up per replica), which is why a deadline costs little more than no deadline.

The item sizes the user does not state are the defaults below, each said back as an assumption.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from bot.records.kb import GPU, Model

DEFAULT_ITEMS = 1_000_000          # no count given: the answer is sized for a million items and says so
# Prompt and output tokens per item by task, when the user does not say (each stated back as an assumption):
#   caption: a short instruction (~64 tokens) beside the image tokens; a one-paragraph caption, ~100 words = ~128
#     tokens (English text runs about 0.75 words per token: OpenAI's tokenizer guide, "1 token ~= 3/4 of a word").
#   translate: a 1,000-token passage in, about as many tokens out (the same text in another language).
#   summarise: a 2,000-token document in, a 200-token summary out (a ~150-word abstract).
#   classify / label: the item (512 tokens) and the label set in, a short label or JSON out (32 tokens).
#   embed: the text in, no tokens generated (one prefill per item).
#   generate / other: a chat-sized request, 1,024 in and 256 out (plans.py's defaults for a request).
TASK_TOKENS = {"caption": (64, 128), "translate": (1000, 1000), "summarise": (2000, 200), "classify": (512, 32),
               "embed": (512, 1), "generate": (1024, 256), "other": (1024, 256)}
# An output length asked in characters or words, as tokens: 0.6 a Chinese character (DeepSeek API docs, source
# deepseek-token-usage), 4/3 an English word ("1 token ~= 3/4 words", source openai-tokens-words); tokenizers differ,
# said back as an assumption.
TOKENS_PER_CHAR_ZH = 0.6
TOKENS_PER_WORD_EN = 4 / 3
ITEM_TOKENS_DOCUMENT = 1000        # '50M tokens of documents' with no item size: items of 1,000 tokens (a page)
STARTUP_H = 10 / 60                # each replica: instance up, image pulled, weights loaded (billing.RESTART_H)
HORIZON_H = 30 * 24                # no deadline: the fewest replicas that finish within 30 days (plans.HORIZON_DAYS)
MAX_GPUS = 4096                    # the largest fleet planned (plans.MAX_SCALE_GPUS)
# vLLM's default max_num_seqs for offline runs (the LLM class): 1024 on GPUs of 70 GiB or more other than the A100,
# else 256 (vllm/engine/arg_utils.py get_batch_defaults; source vllm-batch-defaults)
MAX_SEQS_LARGE, MAX_SEQS = 1024, 256


@dataclass(frozen=True)
class BatchSpec:
    """The batch job: how many items, and the tokens of one (prompt text, image tokens, output)."""
    items: int
    prompt_tokens: int                 # text tokens of one item's prompt
    image_tokens: int                  # vision tokens of one image (0 for text)
    output_tokens: int
    task: str
    unit: str                          # what an item is: image, document, item
    assumed: tuple[str, ...] = ()      # which of items / prompt / output were assumed

    @property
    def input_tokens(self) -> int:
        return self.prompt_tokens + self.image_tokens

    @property
    def total_tokens(self) -> int:
        return self.items * (self.input_tokens + self.output_tokens)


def is_batch(slots: dict[str, Any]) -> bool:
    return bool(slots.get("offline"))


def batch_spec(slots: dict[str, Any], model: Model | None) -> BatchSpec:
    """The job the slots describe; a count of total tokens ('50M tokens of documents') becomes items of the stated
    size, else of ITEM_TOKENS_DOCUMENT. A vision-language model's image adds its image tokens to each item."""
    encoder = getattr(model, "kind", None) == "encoder"      # it cannot generate: each item is one forward pass
    task = slots.get("batch_task") or "other"
    if encoder and task in ("generate", "other"):        # '生成向量' reads as generating; an encoder embeds
        task = "embed"
    prompt_default, out_default = TASK_TOKENS.get(task, TASK_TOKENS["other"])
    assumed = []
    prompt = slots.get("item_input_tokens") or slots.get("request_tokens") or _said_in_text(slots, "input")
    if not prompt:
        prompt = ITEM_TOKENS_DOCUMENT if slots.get("batch_tokens") and task not in TASK_TOKENS else prompt_default
        if slots.get("item_unit") == "page" and task not in ("caption", "embed"):
            prompt = ITEM_TOKENS_DOCUMENT      # '10k PDFs of 20 pages each': each item is a page of text
        assumed.append("prompt")
    out, how = _output_tokens(slots, model, encoder, task, prompt, out_default)
    if how:
        assumed.append(how)
    image = model.image_tokens if model is not None and model.image_tokens else 0
    items = slots.get("items")
    if not items and slots.get("batch_tokens"):
        items = math.ceil(slots["batch_tokens"] / max(1, prompt + image))
    if not items:
        items = DEFAULT_ITEMS
        assumed.append("items")
    unit = slots.get("item_unit") or ("image" if image or task == "caption" else "item")
    return BatchSpec(items=int(items), prompt_tokens=int(prompt), image_tokens=int(image), output_tokens=int(out),
                     task=task, unit=unit, assumed=tuple(assumed))


def _said_in_text(slots: dict[str, Any], side: str) -> int | None:
    """An input or output length said in Chinese characters or English words, in tokens at the cited ratios."""
    chars, words = slots.get(f"item_{side}_chars"), slots.get(f"item_{side}_words")
    if chars:
        return max(1, round(chars * TOKENS_PER_CHAR_ZH))
    return max(1, round(words * TOKENS_PER_WORD_EN)) if words else None


def _output_tokens(slots: dict[str, Any], model: Model | None, encoder: bool, task: str, prompt: int,
                   default: int) -> tuple[int, str | None]:
    """Tokens generated per item and how they were had: as said; from a length said in characters or words
    ('output_length'); a reasoning model's published mean answer length when nothing was said ('output_reasoning':
    R1-style models think for thousands of tokens, not a chat's 256); else the task's default ('output')."""
    if slots.get("item_output_tokens"):
        return int(slots["item_output_tokens"]), None
    if encoder:
        return 1, "output"
    if _said_in_text(slots, "output"):
        return _said_in_text(slots, "output"), "output_length"
    reasoning = getattr(model, "reasoning_output_tokens", None)        # a stand-in model may lack the field
    if reasoning and task in ("generate", "other"):
        return reasoning, "output_reasoning"
    return (prompt if task == "translate" else default), "output"       # a translation: as long as its source


def max_num_seqs(gpu: GPU) -> int:
    """The sequences one vLLM engine schedules at once by default in an offline run (get_batch_defaults)."""
    return MAX_SEQS_LARGE if gpu.memory_gib >= 70 and not gpu.id.startswith("a100") else MAX_SEQS


def job_hours(items: int, items_per_s: float, replicas: int) -> float:
    """Wall clock: each replica starts (STARTUP_H), then the items split evenly across the replicas."""
    return STARTUP_H + items / (items_per_s * replicas) / 3600


def replicas_for(items: int, items_per_s: float, deadline_h: float | None, gpus_per_replica: int,
                 share: float = 1.0) -> tuple[int, bool]:
    """(replicas, meets): the fewest replicas that finish within `share` of the deadline (rules/critic.yaml
    headroom: a restart or a slower run still meets it), or within the horizon when none is given; never more than
    MAX_GPUS GPUs in all (then the deadline is met without the margin, said as tight, or missed, said so)."""
    most = max(1, MAX_GPUS // max(1, gpus_per_replica))

    def need(limit_h: float) -> int | None:
        work_h = limit_h - STARTUP_H
        return max(1, math.ceil(items / (items_per_s * work_h * 3600))) if work_h > 0 else None

    if not deadline_h:
        n = need(HORIZON_H)
        return (most, False) if n is None else (min(n, most), n <= most)
    sized, edge = need(deadline_h * share), need(deadline_h)
    if edge is None:
        return most, False
    if sized is not None and sized <= most:
        return sized, True
    return min(edge, most), edge <= most


def summary(spec: BatchSpec, sized, gpus_per_replica: int, tokens: bool = True) -> dict[str, Any]:
    """The pick's batch numbers for the answer and `ask --json` (`batch`); an image generator's items are images,
    not tokens (tokens=False: its token fields are None)."""
    rate = sized.items_per_s or 0.0
    engines = (sized.layout or {}).get("engines_per_replica", 1)
    out = {"items": spec.items, "unit": spec.unit, "task": spec.task if tokens else "images",
           "prompt_tokens": spec.prompt_tokens if tokens else None,
           "image_tokens": spec.image_tokens if tokens else None,
           "output_tokens": spec.output_tokens if tokens else None,
           "total_tokens": spec.total_tokens if tokens else None, "assumed": list(spec.assumed),
           "items_per_s_per_replica": round(rate, 3) if rate else None,
           "output_tokens_per_s_per_replica": round(rate * spec.output_tokens) if rate and tokens else None,
           "replica_concurrency": (sized.replica_concurrency or 0) * engines or None,
           "engines_per_replica": engines, "gpus_per_replica": gpus_per_replica,
           "encoder": bool(getattr(sized, "encoder_batch", None)),    # one forward pass an item, no KV cache
           "replicas": sized.replicas, "hours": round(sized.hours, 2) if sized.hours else None,
           "gpu_hours": round(spec.items / rate / 3600 * gpus_per_replica, 1) if rate else None,
           "startup_h": round(STARTUP_H, 3)}
    return out


# Patches the vision encoder runs per image token the language model sees. Qwen2-VL / Qwen2.5-VL merge 2 x 2 patches
# of 14 px into one token (vision_config.spatial_merge_size = 2: "an image costs one token per 28 x 28 pixels", the
# model's note in knowledge/models.yaml); LLaVA-1.5 passes every 14 px patch as a token (576 for 336 px). Others: 1,
# which understates encoders that compress harder (MiniCPM-V's resampler) and is said so in the docstring below.
PATCHES_PER_IMAGE_TOKEN = {"Qwen2.5-VL": 4, "Qwen2-VL": 4}


def vision_encoder_s(model: Model | None, gpu: GPU, gpus: int, precision: str) -> float:
    """Seconds of one replica's compute the vision encoder spends on one image: 2 x encoder params x patches FLOPs
    at the share of peak prefill reaches (speed_hw.PREFILL_EFFICIENCY). The language-model prefill of the image
    tokens is in the serving speed model already; the encoder is not (it runs once per image, before it). A
    resampler that compresses more patches per token than PATCHES_PER_IMAGE_TOKEN knows is undercounted."""
    if model is None or not model.image_tokens or not model.vision_params_b:
        return 0.0
    from bot.estimate.speed_hw import PREFILL_EFFICIENCY, PREFILL_EFFICIENCY_DEFAULT, compute_type, generation, \
        peak_flops
    patches = model.image_tokens * PATCHES_PER_IMAGE_TOKEN.get(model.family or "", 1)
    flops = 2 * model.vision_params_b * 1e9 * patches
    peak, _ = peak_flops(gpu, compute_type(precision, gpu, training=False))
    eff = PREFILL_EFFICIENCY.get(generation(gpu), PREFILL_EFFICIENCY_DEFAULT)
    return flops / (peak * gpus * eff) if peak else 0.0


def batch_targets(t, spec: BatchSpec, w):
    """The serving targets as a batch job reads them: its items and their lengths, a KV cache holding each
    sequence's own tokens, no latency target (throughput decides) and no users or request rate."""
    from dataclasses import replace
    return replace(t, items=spec.items, input_len=spec.input_tokens, output_len=spec.output_tokens,
                   kv_tokens=spec.input_tokens + spec.output_tokens, window=w.context, tpot_ms=math.inf,
                   request_ms=math.inf,
                   ttft_ms=math.inf, concurrency=None, qps=None, latency_stated=False, buckets=())
