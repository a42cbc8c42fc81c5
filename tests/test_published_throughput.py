"""Published throughput figures of non-LLM models against the estimators that size their fleets: each row is a
measurement from a source on file, on a card other than the one the estimate is scaled from where one exists, and
the estimate must stay within the row's factor of it (a fleet sized from an estimate 3x too fast is 3x too small).

Vision encoders (ViT, CLIP's image tower, SAM's image encoder) are timed from timm's RTX 4090 rows scaled by the
dense 16-bit peak; the RTX 3090 rows of the same benchmark are out-of-sample. Text encoders (BERT) are timed by FLOPs
at demoBERT's measured share of the peak. Live Whisper streams: the per-stream capacity is the batched offline rate
over the re-transcription factor of whisper_streaming, never the offline rate itself.
"""
from __future__ import annotations

import math

import pytest

from bot.estimate.kinds import job_speed
from bot.estimate.speech import REDECODE, STREAM_UTILISATION
from bot.estimate.speed_encoder import encoder_speed_at
from bot.records.models import Workload

# (model, gpu, published images/s, within a factor of, source, the row as published)
VISION = [
    ("clip-vit-l-14", "rtx-4090", 658.44, 1.01, "wl-timm-infer-4090", "vit_large_patch14_clip_224, AMP, batch 1024"),
    ("sam-vit-h", "rtx-4090", 9.99, 1.01, "wl-timm-infer-4090", "samvit_huge_patch16, 1024 px, AMP, batch 6"),
    ("vit-b-16", "rtx-3090", 1570.66, 1.5, "wl-timm-infer-4090", "vit_base_patch16_224, AMP, batch 1024 (RTX 3090 file)"),
    ("clip-vit-l-14", "rtx-3090", 359.73, 1.5, "wl-timm-infer-4090", "vit_large_patch14_clip_224 (RTX 3090 file)"),
    ("sam-vit-b", "rtx-3090", 22.72, 2.0, "wl-timm-infer-4090", "samvit_base_patch16, batch 12 (RTX 3090 file)"),
    ("sam-vit-h", "rtx-3090", 6.35, 2.0, "wl-timm-infer-4090", "samvit_huge_patch16, batch 6 (RTX 3090 file)"),
]
# (model, gpu, tokens, batch, published ms per batch, within, source): demoBERT FP16 rows
ENCODER = [
    ("bert-base", "a100-40gb", 128, 128, 16.14, 1.5, "trt-demobert-perf"),
    ("bert-base", "l4", 128, 128, 69.25, 1.5, "trt-demobert-perf"),
    ("bert-base", "l40s", 128, 128, 18.45, 1.5, "trt-demobert-perf"),
    ("bert-base", "a30", 384, 128, 107.15, 1.5, "trt-demobert-perf"),
    ("bert-base", "t4", 384, 128, 458.76, 1.5, "trt-demobert-perf"),
]


def _within(estimate: float, published: float, factor: float) -> bool:
    return published / factor <= estimate <= published * factor


@pytest.mark.parametrize("model, gpu, published, factor, source, row", VISION)
def test_vision_encoders_match_published_rates(kb, model, gpu, published, factor, source, row):
    assert source in kb.sources and source in kb.models[model].sources
    w = Workload(params_b=kb.models[model].params_b, kind="vision", task="inference", method="inference",
                 precision="fp16")
    speed = job_speed(w, kb.models[model], kb.gpus[gpu], kb.gpus, list(kb.models.values()))
    assert speed is not None and speed.unit == "images/s"
    assert _within(speed.rate, published, factor), (model, gpu, speed.rate, published, row)


@pytest.mark.parametrize("model, gpu, seq, batch, ms, factor, source", ENCODER)
def test_text_encoders_match_published_rates(kb, model, gpu, seq, batch, ms, factor, source):
    assert source in kb.sources
    w = Workload(params_b=kb.models[model].params_b, kind="llm", task="inference", method="inference",
                 precision="fp16")
    speed = encoder_speed_at(w, kb.models[model], kb.gpus[gpu], seq, batch)
    published = batch / (ms / 1e3)
    assert _within(speed.sequences_per_s, published, factor), (model, gpu, speed.sequences_per_s, published)


@pytest.mark.parametrize("model", ["whisper-large-v3", "whisper-large-v3-turbo"])
@pytest.mark.parametrize("gpu", ["t4", "l4", "a100-80gb", "h100-pcie"])
def test_live_streams_are_not_the_offline_rate(kb, model, gpu):
    """Real time with interim results: each second of a call is transcribed REDECODE times (whisper_streaming's
    buffer re-read every second), so a GPU carries the batched rate x utilisation / REDECODE calls; without interim
    results (each utterance once) it carries REDECODE times more, and the two are said side by side."""
    if gpu not in kb.gpus:
        pytest.skip(f"{gpu} not on file")
    m = kb.models[model]
    base = dict(params_b=m.params_b, kind="speech", task="inference", method="inference", precision="fp16",
                streams=300)
    live = job_speed(Workload(**base, interim=True), m, kb.gpus[gpu], kb.gpus, list(kb.models.values()))
    final = job_speed(Workload(**base), m, kb.gpus[gpu], kb.gpus, list(kb.models.values()))
    per_s = live.rate       # seconds of audio a second, batched
    assert live.streams_per_gpu == max(1, math.floor(per_s * STREAM_UTILISATION / REDECODE))
    assert final.streams_per_gpu == max(1, math.floor(per_s * STREAM_UTILISATION))
    assert live.gpus_for_target == math.ceil(300 / live.streams_per_gpu) >= final.gpus_for_target
    assert "wl-whisper-streaming" in kb.sources
