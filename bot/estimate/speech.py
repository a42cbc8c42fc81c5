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
    if b.scale_by == "compute":
        # a non-autoregressive encoder (Paraformer, a streaming Conformer) is a stack of large matmuls: its rate
        # follows the dense 16-bit peak, as the vision encoders' do
        from bot.estimate.cost import peak_tflops
        peak, which = peak_tflops(gpu, "fp16")
        ref_peak, _ = peak_tflops(ref_gpu, "fp16")
        if not peak or not ref_peak:
            raise LookupError(f"no 16-bit throughput on file for {gpu.name}")
        ratio = peak / ref_peak
        capped = ref.streaming and ratio > 1
        if capped:
            # a small streaming model's batches of 600 ms chunks were measured at 60 concurrent tasks: nothing
            # measured says a bigger card keeps scaling (feature extraction, launches and the CPU side bind), so
            # the rate is never extrapolated above the card it was measured on
            ratio = 1.0
        how = (f"{b.rate:g}x real time for {ref.name} on {ref_gpu.name} ({b.at}) x {ratio:.2f} "
               + (f"(not extrapolated above the {ref_gpu.name} it was measured on: {gpu.name} has {peak:g} TFLOPS "
                  f"{which} but a small model's chunk batches do not fill it)" if capped else
                  f"({which} peak ratio {peak:g} / {ref_peak:g} TFLOPS)"))
        size = 1.0 if model is ref else ref.params_b / model.params_b
        if model is not ref:
            how += f" x {size:.2f} ({ref.params_b:g}B / {model.params_b:g}B parameters)"
        return b.rate * ratio * size, how
    if not gpu.memory_bandwidth_gbs:        # the rate scales by bandwidth: without it there is no estimate
        raise LookupError(f"no memory bandwidth on file for {gpu.name}")
    bw = gpu.memory_bandwidth_gbs / (ref_gpu.memory_bandwidth_gbs or 1)
    if model.relative_speed and ref.relative_speed:
        # the family's own published speeds (openai/whisper README, on an A100): turbo is ~8x large, not the 1.9x
        # its parameter count says, because its time is the 4-layer decoder's, not the 32-layer encoder's
        size = model.relative_speed / ref.relative_speed
        said = f" x {size:.2f} ({model.name} ~{model.relative_speed:g}x / {ref.name} {ref.relative_speed:g}x, README)"
    else:
        size = ref.params_b / model.params_b
        said = f" x {size:.2f} ({ref.params_b:g}B / {model.params_b:g}B parameters)"
    how = (f"{b.rate:g}x real time for {ref.name} on {ref_gpu.name} ({b.at}) x {bw:.2f} (memory bandwidth ratio)"
           + (said if model is not ref else ""))
    return b.rate * bw * size, how


# Recordings transcribed as a batch (hours of audio, or a day's recordings to keep up with) run through a batched
# engine: faster-whisper's BatchedInferencePipeline transcribes the README's 13 minutes of audio with large-v2, fp16,
# beam 5 in 17 s at batch_size=8 against 1 m 03 s one window after another, on the same RTX 3070 Ti (CUDA 12.4,
# faster-whisper 1.1.0; source wl-faster-whisper-batched): 63 / 17 = 3.7x.
BATCHED_GAIN = 63 / 17
SPEECH_BATCH = 8             # the windows the batched rate was measured at (batch_size=8)
BATCHED_SOURCE = "wl-faster-whisper-batched"
# Live calls served together: a streaming server cuts each call at its pauses (voice-activity detection) and
# transcribes the utterances of all calls in batches, as the batched pipeline does recordings, so each second of a
# call's audio is transcribed once (interim results redrawn every second cost more; the answer says so). A call is
# real time only while the GPU keeps ahead of it: the streams are sized at STREAM_UTILISATION of the batched rate,
# queueing theory's knee (an M/M/1 queue waits rho / (1 - rho) service times: 4 at 80 %, 19 at 95 %), so an
# utterance's transcript lags it by a few batch passes, not without bound.
STREAM_UTILISATION = 0.8
# Whisper is not a streaming model: a live transcript with interim results (words shown as they are spoken) is made by
# re-transcribing a growing buffer of the call at every new chunk and committing what two passes agree on
# (ufal/whisper_streaming's LocalAgreement policy: --min-chunk-size 1 s, the buffer trimmed at a confirmed sentence
# once it passes buffer_trimming_sec = 15 s). Each update re-processes the whole buffer, on average half the trim
# length, so each second of a call's audio is transcribed about 7.5 / 1 = 7.5 times: the offline (batched) rate
# divided by that factor is what one GPU gives live calls. Transcribing each utterance once, after its pause (final
# results only, a few seconds late), needs no re-decoding: the answer gives that fleet too.
STREAM_STEP_S = 1.0
STREAM_BUFFER_S = 15 / 2
REDECODE = STREAM_BUFFER_S / STREAM_STEP_S
STREAMING_SOURCE = "wl-whisper-streaming"


def batched_transcription(w: Workload) -> bool:
    """Recordings to transcribe (hours of audio, or a rate of them to keep up with), not live streams."""
    return bool(w.dataset_items or w.target_rate) and not w.streams and w.task == "inference"


def live_streams(w: Workload) -> bool:
    """Live audio (calls, meetings) transcribed as it arrives: streams, not recordings."""
    return bool(w.streams) and w.task == "inference" and not w.dataset_items


def streams_per_gpu(rtf_batched: float, redecode: float = 1.0) -> int:
    """Live streams one GPU keeps up with: its batched rate (seconds of audio a second) at STREAM_UTILISATION,
    over `redecode`, the times each second of audio is transcribed (REDECODE with interim results)."""
    return max(1, math.floor(rtf_batched * STREAM_UTILISATION / redecode))


def speech_speed(w: Workload, model: Model, gpu: GPU, gpus_by_id: dict, models: list[Model]) -> JobSpeed:
    """x real time on w.gpus GPUs, the live streams they keep up with, and hours for w.dataset_items hours of
    audio; live streams asked for: the GPUs that carry them, as the division it is."""
    rtf, how = real_time_factor(model, gpu, gpus_by_id, models)
    if is_streaming_model(model, models):
        return _native_streaming_speed(w, model, rtf, how)
    batched = batched_transcription(w) or live_streams(w)
    if batched:
        rtf *= BATCHED_GAIN
        how += f" x {BATCHED_GAIN:.2f} (faster-whisper batch_size=8 over one window at a time)"
    total = rtf * w.gpus
    live = live_streams(w)
    interim = live and w.interim
    per_gpu = streams_per_gpu(rtf, REDECODE if interim else 1.0) if batched else max(1, math.floor(rtf))
    terms = [RateTerm(name="speed", value=round(total, 1), unit="x real time",
                      formula=f"{w.gpus} GPU(s) x " + how),
             RateTerm(name="live streams kept up with", value=per_gpu * w.gpus, unit="streams",
                      formula=(f"{w.gpus} GPU(s) x {rtf:.1f}x real time x {STREAM_UTILISATION:.0%} utilisation"
                               + (f" / {REDECODE:g} (each second re-transcribed as the {STREAM_BUFFER_S:g} s buffer "
                                  f"is redrawn every {STREAM_STEP_S:g} s)" if interim else "")
                               if batched else f"{total:.1f} seconds of audio per second, one window after another"))]
    notes = [Note("sp.live", "live calls transcribed as they are spoken, interim results every "
                  f"{STREAM_STEP_S:g} s: each update re-transcribes the call's buffer (about {STREAM_BUFFER_S:g} s), "
                  f"so each second of audio is transcribed {REDECODE:g} times, at {STREAM_UTILISATION:.0%} of the "
                  "batched rate", share=f"{STREAM_UTILISATION:.0%}", redecode=f"{REDECODE:g}",
                  step=f"{STREAM_STEP_S:g}", buffer=f"{STREAM_BUFFER_S:g}") if interim else
             Note("sp.live_final", "live calls cut at their pauses (voice-activity detection) and each utterance "
                  f"transcribed once, in batches across calls, at {STREAM_UTILISATION:.0%} of the batched rate; "
                  f"interim results every {STREAM_STEP_S:g} s would re-transcribe each second about {REDECODE:g} "
                  "times", share=f"{STREAM_UTILISATION:.0%}", redecode=f"{REDECODE:g}") if live else
             Note("sp.batched", "recordings transcribed in batches of 8 windows (faster-whisper's "
                  "BatchedInferencePipeline, batch_size=8)") if batched else
             Note("sp.serial", "streams are transcribed one window after another; batching windows of several "
                  "streams (faster-whisper's BatchedInferencePipeline, vLLM) raises this")]
    hours = None
    if w.dataset_items:
        hours = round(w.dataset_items / total, 4)
        terms.append(RateTerm(name="transcription time", value=hours, unit="h",
                              formula=f"{w.dataset_items:g} h of audio / {total:.1f}x real time"))
    target = need = None
    if live:
        target, need = float(w.streams), math.ceil(w.streams / per_gpu)
        terms.append(RateTerm(name="GPUs for the streams", value=need, unit="GPUs",
                              formula=f"{w.streams} streams / {per_gpu} per GPU ({rtf:.1f}x real time batched x "
                                      f"{STREAM_UTILISATION:.0%}" + (f" / {REDECODE:g} re-transcriptions)" if interim
                                                                     else ", each utterance once)")))
    if live and not interim:
        with_interim = streams_per_gpu(rtf, REDECODE)
        terms.append(RateTerm(name="GPUs with interim results", value=math.ceil(w.streams / with_interim),
                              unit="GPUs", formula=f"{w.streams} streams / {with_interim} per GPU (each second "
                                                   f"re-transcribed {REDECODE:g} times as words are shown live)"))
    if interim:
        final = streams_per_gpu(rtf)
        terms.append(RateTerm(name="GPUs for final transcripts only", value=math.ceil(w.streams / final),
                              unit="GPUs", formula=f"{w.streams} streams / {final} per GPU (each utterance once, "
                                                   "after its pause: no interim results)"))
    return JobSpeed(kind="speech", unit="x real time", rate=round(total, 2), gpus=w.gpus, hours=hours, terms=terms,
                    target=target, gpus_for_target=need, streams_per_gpu=per_gpu if live else None,
                    assumptions=[str(n) for n in notes], assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])


def is_streaming_model(model: Model, models: list[Model]) -> bool:
    """A native streaming ASR model (Paraformer-streaming and kin): sized by its own measured rate, each second of a
    live call encoded once; never by Whisper's re-transcription of a buffer."""
    ref = _basis_model(model, models)
    return bool(model.streaming or (ref is not None and ref.streaming))


def _native_streaming_speed(w: Workload, model: Model, rtf: float, how: str) -> JobSpeed:
    """A streaming model's rate is already measured with the requests of many streams batched together (Triton's
    dynamic batching): one GPU carries floor(rate x STREAM_UTILISATION) live streams, each costing its own audio once;
    w.streams need ceil(streams / that) GPUs, and hours of audio take hours / (rate x GPUs)."""
    total = rtf * w.gpus
    per_gpu = max(1, math.floor(rtf * STREAM_UTILISATION))
    live = bool(w.streams) and w.task == "inference"
    terms = [RateTerm(name="speed", value=round(total, 1), unit="x real time", formula=f"{w.gpus} GPU(s) x " + how),
             RateTerm(name="live streams kept up with", value=per_gpu * w.gpus, unit="streams",
                      formula=f"{w.gpus} GPU(s) x {rtf:.1f}x real time x {STREAM_UTILISATION:.0%} utilisation "
                              "(each second of a call encoded once, in chunks against a cache)")]
    notes = [Note("sp.native_stream", f"{model.name} is a streaming model: each chunk of a call is encoded once, the "
                  f"streams of all calls batched on the GPU, sized at {STREAM_UTILISATION:.0%} of its measured rate",
                  model=model.name, share=f"{STREAM_UTILISATION:.0%}")]
    hours = target = need = None
    if w.dataset_items and not w.streams:
        hours = round(w.dataset_items / total, 4)
        terms.append(RateTerm(name="transcription time", value=hours, unit="h",
                              formula=f"{w.dataset_items:g} h of audio / {total:.1f}x real time"))
    if live:
        target, need = float(w.streams), math.ceil(w.streams / per_gpu)
        terms.append(RateTerm(name="GPUs for the streams", value=need, unit="GPUs",
                              formula=f"{w.streams} streams / {per_gpu} per GPU ({rtf:.1f}x real time x "
                                      f"{STREAM_UTILISATION:.0%})"))
    return JobSpeed(kind="speech", unit="x real time", rate=round(total, 2), gpus=w.gpus, hours=hours, terms=terms,
                    target=target, gpus_for_target=need, streams_per_gpu=per_gpu if live else None,
                    assumptions=[str(n) for n in notes], assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])


# One training sample is one clip, padded to Whisper's fixed 30 s window (transformers' WhisperFeatureExtractor pads
# every clip to 3,000 mel frames, which the encoder turns into 1,500 positions): training time follows the clips,
# not the hours. Where only hours are known, clips of LibriSpeech's mean length are assumed: 960 h over 281,241
# utterances = 12.3 s (knowledge/datasets.yaml).
MEAN_CLIP_S = 960 * 3600 / 281_241


def clips_of(w: Workload) -> tuple[float, bool]:
    """Clips in one epoch and whether their count was assumed from the hours."""
    if w.dataset_clips:
        return float(w.dataset_clips), False
    return (w.dataset_items or 0) * 3600 / MEAN_CLIP_S, True


def encoder_gflops(model: Model) -> float:
    """Forward FLOPs (billions) of one 30 s window through the encoder: 2 x its weights x 1,500 positions, plus the
    attention scores and their use (4 x layers x positions^2 x width). The decoder reads a few dozen text tokens a
    clip against the encoder's 1,500 positions and is left out (a few per cent)."""
    if not (model.layers and model.decoder_layers and model.hidden and model.encoder_tokens):
        raise LookupError("no encoder shape on file for this speech model")
    layers = model.layers - model.decoder_layers
    d, t = model.hidden, model.encoder_tokens
    per_layer = 4 * d * d + 2 * d * (model.ffn or 4 * d)
    return (2 * layers * per_layer * t + 4 * layers * t * t * d) / 1e9


def speech_training_speed(w: Workload, model: Model, gpu: GPU) -> JobSpeed:
    """Clips per second when fine-tuning a Whisper-style model: 3 x the forward FLOPs of a 30 s window at the
    planning utilisation of large matmuls (cost.TRAIN_MFU), data parallel over w.gpus; hours for the epochs."""
    from bot.estimate.cost import TRAIN_MFU, peak_tflops
    from bot.estimate.scaling import dp_efficiency, scaling_formula
    g = 3 * encoder_gflops(model)
    peak, which = peak_tflops(gpu, w.precision)
    if not peak:
        raise LookupError(f"no throughput on file for {gpu.name}")
    rate = w.gpus * peak * 1e3 * TRAIN_MFU / g * dp_efficiency(w.gpus, w.nodes)
    terms = [RateTerm(name="FLOPs per clip", value=round(g, 1), unit="GFLOPs",
                      formula=f"3 x encoder forward of one 30 s window ({model.encoder_tokens} positions)"),
             RateTerm(name="clips per second", value=round(rate, 2), unit="clips/s",
                      formula=f"{w.gpus} x {gpu.name} {which} {peak:g} TFLOPS x {TRAIN_MFU:.0%} / {g:,.0f} GFLOPs"
                              + scaling_formula(w.gpus, w.nodes))]
    notes = [Note("sp.train_window", "every clip is padded to one 30 s window, so time follows clips, not hours")]
    hours, items = None, {}
    if w.dataset_items or w.dataset_clips:
        clips, assumed = clips_of(w)
        if assumed:
            notes.append(Note("sp.clip_len", f"clips of {MEAN_CLIP_S:.1f} s on average assumed (LibriSpeech's mean)",
                              seconds=f"{MEAN_CLIP_S:.1f}"))
        epochs = w.epochs or 1
        hours = round(clips * epochs / rate / 3600, 4)
        terms.append(RateTerm(name="training time", value=hours, unit="h",
                              formula=f"{clips:,.0f} clips x {epochs:g} epochs / {rate:,.1f} clips/s"))
        items = {"items_per_epoch": round(clips), "epochs": epochs, "items": round(clips * epochs),
                 "item_unit": "clips"}
    return JobSpeed(kind="speech", unit="clips/s", rate=round(rate, 2), gpus=w.gpus, hours=hours, terms=terms,
                    **items, assumptions=[str(n) for n in notes], assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])
