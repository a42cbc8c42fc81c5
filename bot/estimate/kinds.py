"""One entry point for every kind of job: which estimator sizes it, and in which unit its speed is told.

The planner calls job_memory() where it called estimate_memory(), and job_speed() for the kinds whose speed is not
tokens: an LLM's SFT and serving go to memory.py as before; post-training algorithms to posttrain.py; rendering to
rendering.py; vision, diffusion and speech jobs use the dense estimator for memory (their measured activation
bases) and their own modules for speed.
"""
from __future__ import annotations

import math

from bot.estimate.cost import peak_tflops
from bot.estimate.diffusion import diffusion_speed
from bot.estimate.memory import estimate_memory
from bot.estimate.posttrain import posttrain_memory, posttrain_speed
from bot.estimate.rendering import rendering_memory
from bot.estimate.speech import speech_speed, speech_training_speed
from bot.estimate.vision import vision_speed
from bot.records.kb import GPU, Model
from bot.records.models import JobSpeed, Link, MemoryEstimate, Workload, WorkloadKind

_MODEL_KIND = {"cnn": "vision", "detector": "vision", "vision-transformer": "vision", "diffusion": "diffusion",
               "speech": "speech", "multimodal": "multimodal", "llm": "llm", "encoder": "llm",
               "encoder-decoder": "llm"}


def kind_of_model(model: Model | None) -> WorkloadKind:
    """The workload kind a model implies (a ViT is a vision job, Whisper a speech job)."""
    return _MODEL_KIND.get(model.kind, "llm") if model is not None else "llm"  # type: ignore[return-value]


def job_memory(w: Workload, model: Model | None) -> MemoryEstimate:
    if w.kind == "rendering":
        return rendering_memory(w)
    if w.algorithm != "sft":
        return posttrain_memory(w, model)
    est = estimate_memory(w, model)
    if w.kind in ("vision", "diffusion", "speech"):
        est = _without(est, LLM_ONLY_NOTES)
    return est


# notes about language-model serving engines (chunked prefill of token prompts) that say nothing about an image,
# audio or denoising job
LLM_ONLY_NOTES = {"est.engine_default"}


def _without(est: MemoryEstimate, keys: set[str]) -> MemoryEstimate:
    pairs = [(a, k) for a, k in zip(est.assumptions, est.assumption_keys) if k["key"] not in keys]
    return est.model_copy(update={"assumptions": [a for a, _ in pairs], "assumption_keys": [k for _, k in pairs]})


def job_speed(w: Workload, model: Model | None, gpu: GPU, gpus_by_id: dict, models: list[Model],
              link: Link | None = None) -> JobSpeed | None:
    """Speed in the job's own unit, or None where the token-based speed model (LLMs) or nothing applies. `link`:
    the plan's link between GPUs, which post-training's training passes are timed over (the GPU's usual link when
    None)."""
    try:
        if w.algorithm != "sft":      # a card whose throughput is not on file has no speed to give
            return posttrain_speed(w, model, gpu, link) if peak_tflops(gpu, w.precision)[0] else None
        if w.kind == "vision" and model is not None:
            return _target(w, vision_speed(w, model, gpu, gpus_by_id))
        if w.kind == "diffusion" and model is not None:
            return _target(w, diffusion_speed(w, model, gpu, gpus_by_id))
        if w.kind == "speech" and model is not None and w.task != "inference":
            return speech_training_speed(w, model, gpu)
        if w.kind == "speech" and model is not None:
            return _target(w, speech_speed(w, model, gpu, gpus_by_id, models))
    except LookupError:
        return None
    return None


def _target(w: Workload, speed: JobSpeed) -> JobSpeed:
    """GPUs of this kind that reach the rate the user asked for: images/s, the frames of w.streams video streams,
    or w.streams live audio streams."""
    if speed.gpus_for_target:
        return speed              # its own model sized it (live speech streams: speech.speech_speed)
    if w.target_rate:
        target = w.target_rate
    elif w.streams and w.task == "inference" and speed.unit in ("images/s", "x real time"):
        target = w.streams * ((w.fps or 25) if speed.unit == "images/s" else 1)
    else:
        return speed
    per_gpu = speed.rate / max(1, speed.gpus)
    need = math.ceil(target / per_gpu) if per_gpu else None
    return speed.model_copy(update={"target": target, "gpus_for_target": need})


def timed_by_items(w: Workload) -> bool:
    """A training job of images, audio or denoising steps, or a language model's post-training, whose size is known
    (a dataset and its epochs): it is timed by its own speed model (images/s, clips/s, pairs or prompts/s), as an
    LLM's supervised training is by its tokens."""
    items_kind = w.kind in ("vision", "diffusion", "speech") and w.algorithm == "sft"
    # post-training counts its pairs or prompts (posttrain_speed: samples/s), as the user does
    posttraining = w.kind in ("llm", "multimodal") and w.algorithm != "sft"
    return (items_kind or posttraining) and w.task != "inference" and bool(w.dataset_items or w.dataset_clips)
