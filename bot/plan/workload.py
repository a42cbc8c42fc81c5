"""The job as the estimator sees it: a conversation's slots -> a Workload, and its memory on n GPUs.

Defaults are stated back to the user as (template key, values) assumptions, so nothing is assumed silently.
"""
from __future__ import annotations

import math
from typing import Any

from bot.estimate.hfconfig import model_from_config
from bot.estimate.kinds import job_memory, kind_of_model
from bot.estimate.posttrain import rollout_tp
from bot.estimate.speech import SPEECH_BATCH
from bot.plan.batch import batch_spec, is_batch
from bot.plan.load import CHAT_OUTPUT, CHAT_PROMPT, load_notes, serving_load, sized_rate
from bot.plan.work import runs_of, training_work, with_work
from bot.knowledge.loader import KnowledgeBase
from bot.records.kb import Model
from bot.records.models import MemoryEstimate, Workload

Assumptions = list[tuple[str, dict[str, Any]]]


def build_workload(kb: KnowledgeBase, intent: str, slots: dict[str, Any], assumed: dict[str, Any]
                   ) -> tuple[Workload, Model | None, Assumptions]:
    """The workload the slots describe, the model it names (if known) and the defaults assumed for it."""
    notes: Assumptions = []
    model = kb.models.get(slots.get("model") or "") or _pasted_model(slots, notes)
    kind = job_kind(intent, slots, model)
    if kind == "rendering":
        w = _rendering(slots, notes)
        notes.append(_second_job(kb, model, slots))
        return w, None, notes
    if model is None and kind in KIND_DEFAULT_MODEL and not slots.get("params_b"):
        if kind == "speech" and intent == "inference" and slots.get("concurrency"):
            # live calls or meetings with no model named: a streaming ASR model, sized per stream (Whisper is not
            # a streaming model and would need ~10x the GPUs; a language model is never the answer)
            model = kb.models.get(LIVE_SPEECH_DEFAULT)
            notes.append(("assume.live_speech_model", {"model": model.name}))
        else:
            model = kb.models.get(KIND_DEFAULT_MODEL[kind])     # never a 7B language model for an image or audio job
            notes.append(("assume.kind_model", {"model": model.name}))
    if model is not None and slots.get("model_family"):
        notes.append(("assume.family_member", {"family": slots["model_family"], "model": model.name}))
    params_b = slots.get("params_b") or (model.params_b if model else None) or assumed.get("params_b", 7)
    if not model and not slots.get("params_b"):
        notes.append(("assume.params", {"params_b": params_b}))
    if intent == "inference":
        w, model, notes = _serving(model, params_b, slots, notes)
    else:
        w, model, notes = _training(intent, model, params_b, slots, assumed, notes)
    w = _with_kind(w, kind, slots, notes)
    w = _shard_a_big_frozen_base(w, model, slots)
    w = _with_dataset(kb, w, model, slots, notes)
    w = runs_of(with_work(w, training_work(slots, w), slots, notes), slots)
    return with_ultralytics_optimizer(w, model, notes), model, notes


# the usable memory of an 80 GB card (5 % kept spare): a LoRA base that does not fit one is sharded, not copied
BIG_CARD_USABLE_GIB = 80 * 0.95


def _shard_a_big_frozen_base(w: Workload, model: Model | None, slots: dict[str, Any]) -> Workload:
    """'LoRA fine-tune llama 3 70b on 8 GPUs': data parallelism would copy the 130 GiB frozen base onto every card
    (only a 180 GB card holds it); sharded with FSDP (PEFT's FSDP recipe; Answer.AI's FSDP+QLoRA) each of the 8
    holds an eighth. Where the user did not say how to share the GPUs and a replica per card does not fit an 80 GB
    card, the base is sharded; a small LoRA stays data parallel, as accelerate/torchrun run it."""
    if (w.method not in ("lora", "qlora") or w.gpus <= 1 or w.sharding != "ddp" or slots.get("sharding")
            or w.kind not in ("llm", "multimodal")):
        return w
    if job_memory(w, model).per_gpu_gib <= BIG_CARD_USABLE_GIB:
        return w
    return w.model_copy(update={"sharding": "fsdp"})


# the units a kind's training set may be counted in (a detector is not trained on hours of audio)
DATASET_UNITS = {"vision": ("images", "samples"), "diffusion": ("images", "samples"),
                 "speech": ("audio_hours", "samples")}
# epochs assumed when a dataset is named without them: what the usual recipe runs if nothing is passed.
# Ultralytics' cfg/default.yaml 'epochs: 100' (source wl-ultralytics-default-cfg); the ResNet-50 reference recipes
# train ImageNet for 90 epochs (NVIDIA DeepLearningExamples '(90E)', wl-nvidia-rn50-dle); otherwise one pass.
# a diffusion fine-tune with neither steps nor epochs said runs the trainer's default: kohya-ss sd-scripts
# (train_network.py and the other trainers) '--max_train_steps', default=1600 (source wl-kohya-max-train-steps)
KOHYA_MAX_TRAIN_STEPS = 1600
DEFAULT_EPOCHS = {"detector": (100, "assume.epochs_ultralytics"), "cnn": (90, "assume.epochs_classification"),
                  "vision-transformer": (90, "assume.epochs_classification")}


def _with_dataset(kb: KnowledgeBase, w: Workload, model: Model | None, slots: dict[str, Any], notes: Assumptions
                  ) -> Workload:
    """The training set's size and epochs on an image, audio or denoiser job: the named dataset's training split
    (knowledge/datasets.yaml) unless a size was stated; epochs as stated, else the usual recipe's (said back)."""
    items, unit = slots.get("dataset_items"), slots.get("dataset_unit")
    if not items or unit not in DATASET_UNITS.get(w.kind, ()):
        return _steps_alone(w, slots, notes)
    ds = kb.datasets.get(slots.get("dataset") or "")
    update: dict[str, Any] = {"dataset_items": float(items)}
    if ds is not None and ds.train_items == items:
        notes.append((f"assume.dataset_{ds.unit}", {"name": ds.name, "items": f"{ds.train_items:,.0f}"}))
        if ds.clips:
            update["dataset_clips"] = ds.clips
    elif unit == "samples" and w.kind == "speech":
        update = {"dataset_clips": int(items)}      # '50k clips' of speech: each one is a training window
    if w.task != "inference":
        epochs = slots.get("epochs")
        steps = slots.get("train_steps") or (None if epochs or w.kind != "diffusion" else KOHYA_MAX_TRAIN_STEPS)
        if steps:
            # '300 张图，大概 3000 步': the trainer runs steps x batch images, however few the photos
            epochs = steps * w.batch_size / float(items)
            notes.append(("assume.steps_batch" if slots.get("train_steps") else "assume.kohya_steps",
                          {"steps": f"{steps:,}", "batch": w.batch_size, "images": f"{steps * w.batch_size:,}",
                           "epochs": f"{epochs:.3g}"}))
        elif not epochs:
            epochs, key = DEFAULT_EPOCHS.get(model.kind if model else "", (1, "assume.epochs_one"))
            notes.append((key, {"epochs": epochs}))
        update["epochs"] = float(epochs)
    return w.model_copy(update=update)


def _steps_alone(w: Workload, slots: dict[str, Any], notes: Assumptions) -> Workload:
    """'FLUX LoRA, ~4000 steps' with no count of images read: the trainer still runs steps x batch images, and that
    is the work the time and the cost follow from (the dataset's size only says how many passes that is)."""
    steps = slots.get("train_steps")
    if not steps or w.task == "inference" or w.kind not in DATASET_UNITS or w.kind == "speech":
        return w
    images = float(steps * w.batch_size)
    notes.append(("assume.steps_batch_only", {"steps": f"{steps:,}", "batch": w.batch_size, "images": f"{images:,.0f}"}))
    return w.model_copy(update={"dataset_items": images, "epochs": 1.0})


def _pasted_model(slots: dict[str, Any], notes: Assumptions) -> Model | None:
    """The model of a config.json pasted into the chat (slots['arch']), while the size in the slots is still its
    own (a later '70B' means another model); the answer says the architecture came from the paste."""
    arch = slots.get("arch")
    if not arch or slots.get("model"):
        return None
    model, _ = model_from_config(arch, name=str(arch.get("_name_or_path") or "config.json"))
    if slots.get("params_b") and abs(slots["params_b"] - model.params_b) > 0.02 * model.params_b:
        return None
    notes.append(("assume.pasted_config", {"name": model.name, "params_b": f"{model.params_b:.2f}",
                                           "layers": model.layers, "hidden": model.hidden}))
    return model


# the model a job of this kind is sized with when none is named (said back as an assumption)
KIND_DEFAULT_MODEL = {"vision": "yolov8s", "diffusion": "sdxl", "speech": "whisper-large-v3",
                      "multimodal": "qwen2.5-vl-7b"}
# frames of many video streams batched through one forward pass (an assumption, said in the answer's memory terms)
VISION_STREAM_BATCH = 32
# live audio (calls, meetings, captions) with no model named: a native streaming ASR model
LIVE_SPEECH_DEFAULT = "paraformer-zh-streaming"


def job_kind(intent: str, slots: dict[str, Any], model: Model | None) -> str:
    """What the job is: the user's words (rendering, detection, text-to-image ...) before the model's own kind."""
    if intent == "rendering" or slots.get("kind") == "rendering":
        return "rendering"
    return slots.get("kind") or kind_of_model(model)


def _rendering(slots: dict[str, Any], notes: Assumptions) -> Workload:
    """A GPU render: sized by its scene (rendering.py), one card per render, no model and no training."""
    gpus, nodes = _gpus_nodes(slots, notes)
    return Workload(params_b=1.0, kind="rendering", task="inference", method="inference", precision="fp32",
                    gpus=max(gpus, nodes), nodes=nodes, scene_gib=slots.get("scene_gib"))


def _second_job(kb: KnowledgeBase, model: Model | None, slots: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Rendering plus training (the seed article's fourth case) is two workloads: the render holds a whole scene on
    one graphics card, the training of a named model is sized on its own and needs its own GPU(s) beside it."""
    if model is None and not slots.get("params_b"):
        return ("assume.render_train_unsized", {})
    train_slots = {k: v for k, v in slots.items() if k not in ("kind", "concurrency")}
    tw, tmodel, _ = _training("finetune", model, slots.get("params_b") or model.params_b, train_slots, {}, [])
    need = job_memory(tw, tmodel).per_gpu_gib
    return ("assume.render_train", {"model": tmodel.name if tmodel else f"{tw.params_b:g}B",
                                    "method": f"method.{tw.method}", "gib": f"{need:.0f}"})


def _with_kind(w: Workload, kind: str, slots: dict[str, Any], notes: Assumptions) -> Workload:
    """The kind and post-training algorithm on the workload; images and audio are served in fp16, which every
    GPU generation supports (Turing and Volta have no bf16)."""
    update: dict[str, Any] = {"kind": kind, "algorithm": slots.get("algorithm") or "sft"}
    if kind in ("vision", "diffusion", "speech") and not slots.get("precision"):
        update["precision"] = "fp16"
        notes[:] = [n for n in notes if n[0] not in ("assume.precision", "assume.serving", "assume.small_team",
                                                     "assume.serving_qps")]
        if w.method == "inference" and is_batch(slots):
            # a batch of images to generate or read: counted in images, not in prompt and output tokens
            items = batch_spec(slots, None).items
            notes[:] = [n for n in notes if not n[0].startswith("assume.batch_")]
            notes.append(("assume.batch_images", {"items": f"{items:,}"}))
        if w.method == "inference":
            if kind == "diffusion" and not slots.get("concurrency"):
                update["concurrency"] = 1    # a text-to-image API renders one image at a time per GPU unless batched
            notes.append(("assume.kind_batch", {"batch": update.get("concurrency", w.concurrency)}))
    if update["algorithm"] in ("ppo", "grpo") and w.method in ("lora", "qlora"):
        update["grad_checkpointing"] = True
    if kind == "diffusion" and w.method != "inference" and not slots.get("batch_size"):
        # kohya sd-scripts trains at train_batch_size 1 with gradient checkpointing on 24 GB cards
        update.update(batch_size=1, grad_checkpointing=True)
        notes[:] = [n for n in notes if n[0] != "assume.batch_samples"]
        notes.append(("assume.kohya", {}))
    elif kind == "diffusion" and w.method != "inference":
        # a batch said: trained as kohya's and diffusers' SDXL/FLUX LoRA recipes do, with gradient checkpointing
        update["grad_checkpointing"] = True
    if kind in DDP_KINDS and w.method != "inference" and w.gpus > 1 and not slots.get("sharding"):
        update["sharding"] = "ddp"
    if w.method != "inference" and slots.get("mfu"):
        update["mfu_stated"] = float(slots["mfu"])       # 'assume 40% MFU': the user's utilisation, not the model's
    if w.method == "inference" and slots.get("usage_hours_month"):
        update["usage_hours_month"] = float(slots["usage_hours_month"])     # used on a schedule, not around the clock
    if kind in ("vision", "diffusion") and slots.get("image_size"):
        update["image_size"] = int(slots["image_size"])     # FLOPs and activations grow with the square of it
    if kind == "diffusion" and w.method == "inference" and slots.get("sampling_steps"):
        update["steps"] = int(slots["sampling_steps"])
    if kind == "diffusion" and slots.get("controlnet"):
        update["controlnet"] = True
    if kind in ("vision", "diffusion", "speech") and (slots.get("qps") or slots.get("audio_rate")):
        update["target_rate"] = float(sized_rate(slots))     # a day's images at its busy hours' rate
    if kind in ("vision", "speech") and w.method == "inference" and slots.get("concurrency"):
        update["streams"] = slots["concurrency"]      # '20 路视频流', '100 concurrent calls': live streams
        if kind == "vision" and slots.get("fps"):
            update["fps"] = float(slots["fps"])        # 'at 15 fps': each stream's frames a second (25 when not said)
        if kind == "vision":
            # the streams' frames are batched a few dozen at a time through the detector (a DeepStream/Triton batch),
            # not all cameras in one forward pass: the memory is that batch's (2,000 cameras x a frame's
            # activations had made YOLOv8n need 64 GiB a card)
            update["concurrency"] = min(slots["concurrency"], VISION_STREAM_BATCH)
        if kind == "speech":
            update["interim"] = slots.get("latency") == "low"     # 'real-time', '实时', 'live': words as spoken
            # the calls are batched a few windows at a time (the batched engine's batch_size the speed rests on),
            # not all held in one forward pass: the memory is that batch's
            update["concurrency"] = min(slots["concurrency"], SPEECH_BATCH)
    return w.model_copy(update=update)


def _gpus_nodes(slots: dict[str, Any], notes: Assumptions) -> tuple[int, int]:
    """The GPU and node counts the user named; several nodes without a GPU count mean 8 GPUs a node."""
    nodes = slots.get("nodes") or 1
    gpus = slots.get("gpus") or (8 * nodes if nodes > 1 else 1)
    if nodes > 1 and not slots.get("gpus"):
        notes.append(("assume.gpus_per_node", {"gpus": gpus, "nodes": nodes}))
    return gpus, nodes




def request_buckets(slots: dict[str, Any]) -> list[tuple[float, int]]:
    """The load's request sizes as (share of requests, prompt tokens): the stated mix, one stated size, or none
    (a bucket stated as a chat without a count is a chat of the default size)."""
    mix = slots.get("request_mix") or []
    if len(mix) >= 2:
        return [(float(b["share"]), int(b.get("tokens") or CHAT_PROMPT)) for b in mix]
    if slots.get("request_tokens"):
        return [(1.0, int(slots["request_tokens"]))]
    return []


# An encoder's request when its length is not given: 512 tokens, the position limit of BERT-family models and the
# chunk an embedding pipeline usually cuts documents into (a model with longer positions, bge-m3's 8,192, is timed
# at 512 too unless the user says longer: its attention grows with the square of the length).
ENCODER_TOKENS = 512


def serving_window(slots: dict[str, Any], model: Model | None) -> int:
    """Tokens one request may hold (the engine's max_model_len): the context the user states, else 4,096 capped by
    the model's; never less than the longest stated request and its answer, which must fit. An encoder's request is
    its own tokens, no answer: the stated length, else ENCODER_TOKENS, within the model's positions."""
    if model is not None and model.kind == "encoder":
        stated = slots.get("seq_len") or max((t for _s, t in request_buckets(slots)), default=0)
        return min(stated or ENCODER_TOKENS, model.max_context or ENCODER_TOKENS)
    context = slots.get("seq_len") or min(4096, (model.max_context if model and model.max_context else 4096))
    longest = max((tokens for _share, tokens in request_buckets(slots)), default=0)
    output = slots.get("output_tokens")
    if output:         # the prompt and the answer as said: a 3,000-token answer needs a window that holds it
        return max(context, (longest or CHAT_PROMPT) + output)
    return max(context, longest + CHAT_OUTPUT) if longest else context


def _serving(model: Model | None, params_b: float, slots: dict[str, Any], notes: Assumptions
             ) -> tuple[Workload, Model | None, Assumptions]:
    # weights as the model is published (DeepSeek-V3/R1 and Kimi K2 in FP8, gpt-oss's MXFP4 experts), else 16-bit
    shipped = model.release_precision if model is not None else None
    precision = slots.get("precision") or shipped or "bf16"
    if is_batch(slots):
        return _batch(model, params_b, precision, shipped, slots, notes)
    concurrency = slots.get("concurrency") or 4
    context = serving_window(slots, model)
    if model is not None and model.max_context and context > model.max_context:
        # '30k-token documents' on Llama 3 (8k): sized as asked, but the model cannot take them as released
        notes.append(("assume.context_over_model", {"model": model.name, "max": f"{model.max_context:,}",
                                                    "context": f"{context:,}"}))
    if model is not None and model.image_tokens and not slots.get("image_tokens"):
        # (the image's tokens said by the user are in the request's prompt already)
        context += model.image_tokens     # a vision-language model: each request's image becomes tokens too
        notes.append(("assume.image_tokens", {"tokens": model.image_tokens}))
    load = serving_load(slots)
    if load is not None and load.basis == "average" and not slots.get("concurrency"):
        notes.extend(load_notes(load))      # a day's count: its busy hours' rate, and two replicas
    elif slots.get("qps") and not slots.get("concurrency"):
        # the load is a request rate: the fleet is sized from it (Little's law), not from a small team's users
        qps = f"{slots['qps']:,.1f}".rstrip("0").rstrip(".")
        notes.append(("assume.serving_qps", {"qps": qps, "context": context}))
    else:
        if not slots.get("concurrency"):
            notes.append(("assume.small_team", {}))
        notes.append(("assume.serving", {"concurrency": concurrency, "context": context}))
    if not slots.get("precision"):
        notes.append(("assume.release_precision", {"precision": precision}) if shipped else
                     ("assume.precision", {"precision": precision}))
    gpus, nodes = _gpus_nodes(slots, notes)
    w = Workload(model=model.id if model else None, params_b=params_b, task="inference", method="inference",
                 precision=precision, concurrency=concurrency, context=context, kv_dtype=slots.get("kv_dtype"),
                 gpus=max(gpus, nodes), nodes=nodes, tensor_parallel=max(gpus, nodes))
    return w, model, notes


def _batch(model: Model | None, params_b: float, precision: str, shipped: str | None, slots: dict[str, Any],
           notes: Assumptions) -> tuple[Workload, Model | None, Assumptions]:
    """A batch job (batch.py): one request per item, its window the item's prompt, image and output tokens; each
    size the user did not give is said back, with the count of items when that too was assumed."""
    spec = batch_spec(slots, model)
    context = spec.input_tokens + spec.output_tokens
    notes.append(("assume.batch_job", {"items": f"{spec.items:,}", "unit": f"unit.item.{spec.unit}",
                                       "prompt": f"{spec.prompt_tokens:,}", "output": f"{spec.output_tokens:,}",
                                       "task": f"batch_task.{spec.task}"}))
    if spec.image_tokens:
        notes.append(("assume.batch_image_tokens", {"tokens": f"{spec.image_tokens:,}"}))
    if "items" in spec.assumed:
        notes.append(("assume.batch_items", {"items": f"{spec.items:,}"}))
    for side, tokens in (("input", spec.prompt_tokens), ("output", spec.output_tokens)):
        chars, words = slots.get(f"item_{side}_chars"), slots.get(f"item_{side}_words")
        if (chars or words) and not slots.get(f"item_{side}_tokens"):
            notes.append((f"assume.batch_{side}_{'chars' if chars else 'words'}",
                          {"n": f"{chars or words:,}", "tokens": f"{tokens:,}"}))
    if "output_reasoning" in spec.assumed and model is not None:
        notes.append(("assume.reasoning_output", {"model": model.name, "tokens": f"{spec.output_tokens:,}"}))
    # every prompt prefilled in full: an instruction shared by all items is prefilled once with vLLM's prefix
    # caching, so a job whose prompts are mostly that instruction runs faster than planned (said, not counted)
    notes.append(("assume.batch_no_prefix_cache", {}))
    if not slots.get("precision"):
        notes.append(("assume.release_precision", {"precision": precision}) if shipped else
                     ("assume.precision", {"precision": precision}))
    gpus, nodes = _gpus_nodes(slots, notes)
    w = Workload(model=model.id if model else None, params_b=params_b, task="inference", method="inference",
                 precision=precision, concurrency=4, context=context, input_len=spec.input_tokens,
                 output_len=spec.output_tokens, kv_dtype=slots.get("kv_dtype"), gpus=max(gpus, nodes), nodes=nodes,
                 tensor_parallel=max(gpus, nodes))
    return w, model, notes


def _training(intent: str, model: Model | None, params_b: float, slots: dict[str, Any], assumed: dict[str, Any],
              notes: Assumptions) -> tuple[Workload, Model | None, Assumptions]:
    transformer = model is None or model.is_transformer
    method = slots.get("method") or assumed.get("method") or ("full" if intent in ("train", "rendering") else "lora")
    if not slots.get("method") and not assumed.get("method_why"):     # (a usual method is said by the dialogue)
        notes.append(("assume.method", {"method": f"method.{method}"}))
    precision = slots.get("precision") or "bf16"
    fp8_compute = False
    if precision in ("int4", "nf4", "int8") and method in ("lora", "qlora"):
        method, precision = "qlora", "bf16"
    elif precision in ("int4", "nf4", "int8", "fp8") and method in ("full", "freeze"):
        # FP8 full training is FP8 GEMMs over bf16 mixed precision (Transformer Engine), not FP8 weights
        fp8_compute = precision == "fp8" and method == "full"
        precision = "bf16"
    if model is not None and model.encoder_tokens and not model.decoder_layers:
        transformer = False     # a fixed input (ViT: one image's patches): batches are counted in samples
    default_batch = 4 if method in ("lora", "qlora") else (16 if not transformer else 1)
    seq = slots.get("seq_len") or (1024 if intent == "finetune" else 2048)
    long_context = transformer and seq >= LONG_CONTEXT
    if long_context:
        default_batch = 1       # one long sample a micro-batch: what long-context recipes run (tokens a step said)
    batch = slots.get("batch_size") or default_batch
    gpus, nodes = _gpus_nodes(slots, notes)
    accumulation, accum_note = grad_accumulation(method, model, batch)
    # torchvision's reference script trains a classifier with SGD, momentum 0.9 (--opt sgd): one fp32 buffer a weight
    sgd = method in ("full", "freeze") and model is not None and model.kind == "cnn"
    w = Workload(model=model.id if model else None, params_b=params_b,
                 task="finetune" if intent == "finetune" else "train", method=method, precision=precision,
                 batch_size=batch, seq_len=seq, gpus=max(gpus, nodes), nodes=nodes,
                 # what the user said they shard with ("deepspeed zero3", "FSDP") and offload, else the usual default
                 sharding=(slots.get("sharding") if gpus > 1 else None) or (
                     # parameter offload ("offload ds config") runs under ZeRO-3: it is what that config shards with
                     "zero3" if gpus > 1 and (method in ("full", "freeze") or _offload(slots) == "full")
                     else ("ddp" if gpus > 1 else "none")),
                 offload=_offload(slots) if gpus > 1 else "none",
                 grad_checkpointing=transformer, lora_rank=16, tokens=slots.get("tokens"),
                 grad_accumulation=accumulation, optimizer="sgd" if sgd else "adamw", fused_loss=long_context,
                 fp8_compute=fp8_compute)
    optimizer_note = ("assume.optimizer_torchvision", {}) if sgd else ("assume.optimizer", {"optimizer": "AdamW"})
    notes.extend(_training_notes(method, transformer, batch, seq, accum_note, optimizer_note))
    if long_context:
        notes.append(("assume.long_context", _long_context_ctx(model, params_b, seq)))
    if fp8_compute:
        notes.append(("assume.fp8_training", {}))
    return w, model, notes


# Sequences from this long on are long-context training: one sample a micro-batch, the loss fused with the LM head
# (Liger Kernel), and a sample one GPU cannot hold split along the sequence over up to a node's GPUs
LONG_CONTEXT = 32_768
CONTEXT_PARALLEL_MAX = 8        # ring attention inside a node (NVLink); Megatron-LM's long-context recipes use 2-8
CONTEXT_PARALLEL_MIN_TOKENS = 4_096     # below this many tokens a GPU, the ring's K/V exchange is no longer hidden


def _long_context_ctx(model: Model | None, params_b: float, seq: int) -> dict[str, Any]:
    """What the long-context note says: the whole logits the fused loss avoids (fp32, as the HF loss upcasts)."""
    vocab = (model.vocab if model is not None and model.vocab else 128_000)
    return {"seq": f"{seq:,}", "logits": f"{seq * vocab * 4 / 2**30:,.0f}"}


def context_parallel_on(w: Workload, n: int) -> int:
    """The context-parallel degree for n GPUs: the largest power of two up to a node's GPUs that leaves each at
    least CONTEXT_PARALLEL_MIN_TOKENS of the sequence; 1 for short sequences."""
    if w.seq_len < LONG_CONTEXT or w.method == "inference" or w.kind != "llm":
        return 1
    cp = 1
    while cp * 2 <= min(n, CONTEXT_PARALLEL_MAX) and w.seq_len // (cp * 2) >= CONTEXT_PARALLEL_MIN_TOKENS \
            and n % (cp * 2) == 0:
        cp *= 2
    return cp


# Ultralytics' nominal batch (cfg/default.yaml 'nbs: 64'): its trainer accumulates gradients up to it
ULTRALYTICS_NBS = 64
# Ultralytics' default optimizer=auto (engine/trainer.py build_optimizer, source wl-ultralytics-build-optimizer):
# above this many iterations it trains with SGD (lr 0.01, momentum 0.9, Nesterov), else with AdamW
ULTRALYTICS_AUTO_ITERATIONS = 10_000


def ultralytics_iterations(w: Workload) -> int | None:
    """The iterations Ultralytics' trainer counts for optimizer=auto: ceil(images / max(batch, nbs)) x epochs, its
    batch being the whole batch over the GPUs (each GPU runs batch / world size). None without a dataset size."""
    if not w.dataset_items:
        return None
    batch = w.batch_size * max(1, w.gpus)
    return math.ceil(w.dataset_items / max(batch, ULTRALYTICS_NBS)) * int(w.epochs or 1)


def with_ultralytics_optimizer(w: Workload, model: Model | None, notes: Assumptions) -> Workload:
    """A detector trained in full runs under Ultralytics, whose default optimizer=auto picks by the job's iterations:
    SGD above 10,000 (one momentum buffer a weight), AdamW at or below (two moments). The job's own count decides,
    and the answer says which and why; a job of unknown size keeps AdamW (the larger state) as assumed."""
    iterations = ultralytics_iterations(w)
    if (model is None or model.kind != "detector" or w.method not in ("full", "freeze") or w.task == "inference"
            or iterations is None):
        return w
    sgd = iterations > ULTRALYTICS_AUTO_ITERATIONS
    ctx = {"iterations": f"{iterations:,}", "images": f"{w.dataset_items:,.0f}", "epochs": f"{w.epochs or 1:g}",
           "batch": w.batch_size * max(1, w.gpus), "nbs": ULTRALYTICS_NBS,
           # newer releases pick MuSGD at the same switch: a second momentum buffer, 4 bytes a parameter more
           "extra": f"{model.params_b * 1e9 * 4 / 2 ** 30:.2f}"}
    note = ("assume.optimizer_ultralytics_sgd" if sgd else "assume.optimizer_ultralytics_adamw", ctx)
    notes[:] = [note if n[0] in ("assume.optimizer", "assume.optimizer_torchvision") else n for n in notes]
    return w.model_copy(update={"optimizer": "sgd" if sgd else "adamw"})


def grad_accumulation(method: str, model: Model | None, batch: int) -> tuple[int, tuple[str, dict[str, Any]] | None]:
    """Micro-batches per optimizer step as the job's framework runs them, and the assumption that says so. A
    detector trains under Ultralytics, whose trainer accumulates to its nominal batch (engine/trainer.py:
    accumulate = max(round(nbs / batch), 1), nbs 64: batch 16 -> 4 steps); a classifier or ViT under torchvision's
    reference script, which steps the optimizer every batch; a language model's full fine-tune at a small
    micro-batch accumulates (8), its gradients staying through every forward; a denoiser under diffusers' scripts
    steps every batch (gradient_accumulation_steps=1)."""
    if method not in ("full", "freeze"):
        return 1, None
    kind = model.kind if model is not None else None
    if kind == "detector":
        steps = max(round(ULTRALYTICS_NBS / batch), 1)
        key = "assume.grad_accum_ultralytics" if steps > 1 else "assume.no_grad_accum_ultralytics"
        return steps, (key, {"steps": steps, "batch": batch, "nbs": ULTRALYTICS_NBS})
    if kind in ("cnn", "vision-transformer"):
        return 1, ("assume.no_grad_accum_torchvision", {})
    if kind == "diffusion":
        return 1, None        # diffusers' training scripts: gradient_accumulation_steps defaults to 1
    return 8, ("assume.grad_accum", {})


def _offload(slots: dict[str, Any]) -> str:
    """The offload the user named; parameters can only be offloaded when sharded (ZeRO-3, FSDP), so with ZeRO-1/2
    or DDP "offload" means the optimizer state."""
    offload = slots.get("offload") or "none"
    if offload == "full" and slots.get("sharding") not in (None, "zero3", "fsdp"):
        return "optimizer"
    return offload


def _training_notes(method: str, transformer: bool, batch: int, seq: int,
                    accum_note: tuple[str, dict[str, Any]] | None, optimizer_note: tuple[str, dict[str, Any]]
                    ) -> Assumptions:
    notes: Assumptions = []
    if transformer:
        notes.append(("assume.batch", {"batch": batch, "seq": seq}))
    else:
        notes.append(("assume.batch_samples", {"batch": batch}))
    if method in ("lora", "qlora"):
        notes.append(("assume.lora", {"rank": 16}))
    if transformer:
        notes.append(("assume.ckpt_on", {}))
    if accum_note:
        notes.append(accum_note)
    notes.append(optimizer_note)
    return notes


def estimate_on(w: Workload, model: Model | None, n: int, cache: dict[int, MemoryEstimate]) -> MemoryEstimate:
    """Estimate with n GPUs in total: sharded training (ZeRO-3) or tensor-parallel serving when n > 1."""
    if n not in cache:
        if n == w.gpus:
            cw = w
        elif w.method == "inference" and w.kind in ("vision", "diffusion", "speech", "rendering"):
            # one whole model (or scene) per GPU: these are served as replicas, never split by tensor parallelism
            cw = w.model_copy(update={"gpus": 1, "nodes": 1, "tensor_parallel": 1})
        elif w.method == "inference":
            cw = w.model_copy(update={"gpus": n, "tensor_parallel": n, "nodes": max(1, math.ceil(n / 8))})
        else:
            # ZeRO-3 when several GPUs share the job; one GPU has nothing to shard with, so parameter offload
            # (which needs ZeRO-3/FSDP) becomes optimizer offload there
            update: dict[str, Any] = {"gpus": n, "sharding": _sharding_on(w, n), "nodes": max(1, math.ceil(n / 8)),
                                      "context_parallel": context_parallel_on(w, n)}
            if n == 1 and w.offload == "full":
                update["offload"] = "optimizer"
            if w.algorithm in ("ppo", "grpo") and w.tensor_parallel <= 1 and n > 1:
                update["tensor_parallel"] = rollout_tp(w, model, n)     # the rollout engine split like vLLM's
            cw = w.model_copy(update=update)
        cache[n] = job_memory(cw, model)
    return cache[n]


# kinds trained data parallel with a whole replica per GPU (torchrun / Ultralytics DDP, HF Trainer for Whisper):
# their models are small enough that sharding would only add communication
DDP_KINDS = ("vision", "speech")


def _sharding_on(w: Workload, n: int) -> str:
    """How n GPUs share a training job the planner sizes: none on one, DDP for images and audio, else ZeRO-3."""
    if n <= 1:
        return "none"
    return "ddp" if w.kind in DDP_KINDS else "zero3"


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
    """Did the user fix the GPU or node count of the rental? Then every plan uses it rather than sizing its own.
    A count that comes with a named GPU ("we have 2x RTX 4090") or a card size ("我只有一张48G的显卡") is their
    hardware: it is judged as theirs, and the rental is sized on its own merits; unless they say they mean to rent
    that many ("rent 8 x H100")."""
    if (slots.get("gpu_model") or slots.get("gpu_memory_gib")) and not slots.get("nodes") \
            and not slots.get("renting"):
        return False
    if own_cards(slots) and (slots.get("rent_more") or slots.get("deadline_days")):
        return False              # their cluster misses a deadline: the rental is sized for it, not to their count
    if not slots.get("gpus") and (slots.get("nodes") or 0) <= 1:
        return False              # 'on one machine', 'a local machine': no count to hold every plan to
    if w is not None and w.method == "inference" and slots.get("renting"):
        # 'rent 16 H100 to serve an 8B', '40 台 g6.xlarge 转写': a fleet of copies, never one copy sharded over all of
        # them (TP16 over two machines for a model one card holds); the count said is judged on the named-GPU line
        # (copies of the fewest cards that hold it, their time and load), the pick sized on its own merits
        return False
    return bool(slots.get("gpus") or slots.get("nodes"))


def own_cards(slots: dict[str, Any]) -> bool:
    """Are the cards named the user's own? A count named with the GPU ("we have 2x RTX 4090", "I have a single
    4090") or a card known by its memory ("my 24GB card"), unless they said they mean to rent them."""
    return bool(slots.get("gpus") and slots.get("gpu_model") or slots.get("gpu_memory_gib")) \
        and not slots.get("renting")
