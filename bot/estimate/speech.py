"""Speech recognition jobs (Whisper and kin): how many times real time one GPU transcribes, and so how many live
streams or hours of audio it handles.

Whisper's decoder generates a few tokens per second of audio, one step at a time, so it is bound by reading the
decoder's weights rather than by FLOPs: a FLOPs estimate would be 5-40x too fast (faster-whisper's own table: the
same large-v2 transcription takes 54 s with CTranslate2 and 4 m 30 s with openai/whisper on one V100S). The speed
therefore comes from a measured rate (x real time) on file for the family, scaled to another GPU by memory
bandwidth and to another model size by its parameter count; the implementation measured is named in the answer.
"""
from __future__ import annotations

import math

from bot.estimate.arch import Note
from bot.records.kb import GPU, Model
from bot.records.models import JobSpeed, RateTerm, Workload


def _basis_model(model: Model, models: list[Model]) -> Model | None:
    if model.speed_basis is not None:
        return model
    same = [m for m in models if m.family == model.family and m.speed_basis is not None]
    return same[0] if same else None


def real_time_factor(model: Model, gpu: GPU, gpus_by_id: dict, models: list[Model]) -> tuple[float, str]:
    """Seconds of audio one GPU transcribes per second (serially, one stream after another)."""
    ref = _basis_model(model, models)
    if ref is None or ref.speed_basis.gpu not in gpus_by_id:
        raise LookupError("no measured speech rate on file for this model family")
    b = ref.speed_basis
    ref_gpu = gpus_by_id[b.gpu]
    if not gpu.memory_bandwidth_gbs:        # the rate scales by bandwidth: without it there is no estimate
        raise LookupError(f"no memory bandwidth on file for {gpu.name}")
    bw = gpu.memory_bandwidth_gbs / (ref_gpu.memory_bandwidth_gbs or 1)
    size = ref.params_b / model.params_b
    how = (f"{b.rate:g}x real time for {ref.name} on {ref_gpu.name} ({b.at}) x {bw:.2f} (memory bandwidth ratio)"
           + (f" x {size:.2f} ({ref.params_b:g}B / {model.params_b:g}B parameters)" if model is not ref else ""))
    return b.rate * bw * size, how


def speech_speed(w: Workload, model: Model, gpu: GPU, gpus_by_id: dict, models: list[Model]) -> JobSpeed:
    """x real time on w.gpus GPUs, the live streams they keep up with, and hours for w.dataset_items hours of
    audio."""
    rtf, how = real_time_factor(model, gpu, gpus_by_id, models)
    total = rtf * w.gpus
    terms = [RateTerm(name="speed", value=round(total, 1), unit="x real time",
                      formula=f"{w.gpus} GPU(s) x " + how),
             RateTerm(name="live streams kept up with", value=math.floor(total), unit="streams",
                      formula=f"{total:.1f} seconds of audio per second, one window after another")]
    notes = [Note("sp.serial", "streams are transcribed one window after another; batching windows of several "
                  "streams (faster-whisper's BatchedInferencePipeline, vLLM) raises this")]
    hours = None
    if w.dataset_items:
        hours = round(w.dataset_items / total, 2)
        terms.append(RateTerm(name="transcription time", value=hours, unit="h",
                              formula=f"{w.dataset_items:g} h of audio / {total:.1f}x real time"))
    if w.streams and w.streams > total:
        need = math.ceil(w.streams / rtf)
        terms.append(RateTerm(name="GPUs for the streams", value=need, unit="GPUs",
                              formula=f"{w.streams} streams / {rtf:.1f} per GPU"))
    return JobSpeed(kind="speech", unit="x real time", rate=round(total, 2), gpus=w.gpus, hours=hours, terms=terms,
                    assumptions=[str(n) for n in notes], assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])
