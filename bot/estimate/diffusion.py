"""Diffusion jobs: images per second when serving (resolution, steps, guidance), images per second and hours when
training (full, LoRA/DreamBooth), in units that mean something for them.

A denoiser's speed comes from a measured rate where one is on file (UNets: diffusers' PyTorch 2.0 benchmark and
the SDXL optimisation blog), scaled to another GPU as the record says (the UNets by memory bandwidth: diffusers'
SD 1.5 rows on V100, T4, RTX 3090 and RTX 4090 follow bandwidth within 6-38 %, dense FLOPS only within 27-59 %)
and to another resolution by the pixel count; otherwise from its forward FLOPs per step (transformer denoisers: 2 x parameters x latent tokens) at
the planning utilisation of large matmuls (cost.TRAIN_MFU). Classifier-free guidance runs the denoiser twice per
step; guidance-distilled models (FLUX.1-dev) once. Training draws one timestep per image: one forward and its
backward (3 forwards' worth for full training, 2 for LoRA, whose frozen weights need no weight gradients).
"""
from __future__ import annotations

from bot.estimate.arch import Note
from bot.estimate.cost import TRAIN_MFU, peak_tflops
from bot.estimate.scaling import dp_efficiency, scaling_formula
from bot.records.kb import GPU, Model
from bot.records.models import JobSpeed, RateTerm, Workload

DEFAULT_STEPS = 30
# A training step is not a batched sampling step: one image at a time, fp32 master weights and the optimizer, the VAE
# and text encoders run on every image, data loading. Measured: diffusers' LoRA example (SD 1.5, 512 px, batch 1 x 4
# accumulation, 15,000 steps = 60,000 images) 'takes about 5 hours on a 2080 Ti': 3.33 images/s, where the sampling
# rate (basis scaled by bandwidth, / 2 for LoRA) gives 19.3: a share of 3.33 / 19.3 = 0.173. A third-party SDXL LoRA
# run (diffusers 0.19.3, RTX 4090, 25,200 images in 12.5 h = 0.56 images/s) is 3.5x slower still: the README bench
# keeps it as a row the estimate misses.
TRAIN_SHARE = 0.173
# A ControlNet is a trainable copy of the denoiser's encoder and middle blocks, run beside it at every step (Zhang &
# Agrawala, 'Adding Conditional Control to Text-to-Image Diffusion Models', arXiv 2302.05543: 'about 23% more GPU
# memory and 34% more time in each training iteration' on an A100 PCIe 40GB); serving guides time its inference
# overhead at 35-50% ('a ControlNet inference pass adds 35-50% overhead to base diffusion (e.g., 8 seconds -> 11
# seconds on an A100)', theneuralbase.com ControlNet ROI guide). 1.4 x the denoiser's time per step, the middle.
CONTROLNET_FACTOR = 1.4


def pixels(w: Workload, model: Model | None) -> int:
    if w.image_size:
        return w.image_size
    basis = model.speed_basis if model else None
    return (basis.px if basis and basis.px else None) or (model.gflops_at if model and model.gflops_at else 1024)


def denoiser_evals(w: Workload, model: Model | None, gpu: GPU, kb_gpus: dict) -> tuple[float, str]:
    """Denoiser forward passes of one image per second on one GPU, and how that was found."""
    px = pixels(w, model)
    peak, which = peak_tflops(gpu, w.precision)
    basis = model.speed_basis if model else None
    if basis is not None and basis.gpu in kb_gpus:
        ref = kb_gpus[basis.gpu]
        ref_peak, _ = peak_tflops(ref, w.precision)
        ratio = (gpu.memory_bandwidth_gbs or 1) / (ref.memory_bandwidth_gbs or 1) if basis.scale_by == "bandwidth" \
            else peak / ref_peak
        res = ((basis.px or px) / px) ** 2
        return basis.rate * ratio * res, (f"{basis.rate:g} {basis.unit} measured on {ref.name} ({basis.at}) x "
                                          f"{ratio:.2f} ({'memory bandwidth' if basis.scale_by == 'bandwidth' else which + ' peak'} ratio)" + (f" x {res:.2f} (pixels)" if res != 1
                                                                                 else ""))
    if model is not None and model.gflops and model.gflops_at:
        g = model.gflops * (px / model.gflops_at) ** 2
        return peak * 1e3 * TRAIN_MFU / g, (f"{gpu.name} {which} {peak:g} TFLOPS x {TRAIN_MFU:.0%} / {g:,.0f} "
                                             f"GFLOPs per step at {px}px")
    raise LookupError("no speed basis or FLOPs on file for this diffusion model")


def image_seconds(w: Workload, model: Model | None, evals: float) -> float:
    """Seconds one image takes on one GPU (its steps one after another, each with its guidance passes and the
    ControlNet branch): the shortest wait a user can get from that card, whatever the fleet's size."""
    steps = w.steps or DEFAULT_STEPS
    passes = (model.guidance_passes if model and model.guidance_passes else 2)
    return steps * passes * (CONTROLNET_FACTOR if w.controlnet else 1.0) / evals


def diffusion_speed(w: Workload, model: Model | None, gpu: GPU, kb_gpus: dict) -> JobSpeed:
    """Images per second on w.gpus GPUs (one image per GPU at a time: no tensor parallelism for denoisers)."""
    evals, how = denoiser_evals(w, model, gpu, kb_gpus)
    if evals <= 0:
        raise LookupError(f"no speed on file for {gpu.name}")
    notes: list[Note] = []
    terms = [RateTerm(name="denoiser passes per second per GPU", value=round(evals, 2), unit="passes/s", formula=how)]
    if w.task == "inference":
        steps = w.steps or DEFAULT_STEPS
        if not w.steps:
            notes.append(Note("dif.steps", f"{DEFAULT_STEPS} sampling steps assumed", steps=DEFAULT_STEPS))
        passes = (model.guidance_passes if model and model.guidance_passes else 2)
        control = CONTROLNET_FACTOR if w.controlnet else 1.0
        rate = w.gpus * evals / (steps * passes * control)
        terms.append(RateTerm(name="images per second", value=round(rate, 3), unit="images/s",
                              formula=f"{w.gpus} GPU(s) x {evals:.1f} / ({steps} steps x {passes} pass"
                                      f"{'es' if passes > 1 else ''} per step"
                                      + (f" x {CONTROLNET_FACTOR:g} ControlNet branch" if w.controlnet else "") + ")"))
        terms.append(RateTerm(name="seconds per image", value=round(image_seconds(w, model, evals), 2), unit="s",
                              formula=f"one image on one GPU: {steps} steps x {passes} x {control:g} / {evals:.1f} "
                                      "passes/s (batching adds throughput, not a shorter wait)"))
        if w.controlnet:
            notes.append(Note("dif.controlnet", f"ControlNet: {CONTROLNET_FACTOR:g} x the denoiser's time per step "
                              "(ControlNet paper: +34% per training step; serving guides: +35-50%)",
                              factor=f"{CONTROLNET_FACTOR:g}"))
        hours = None
    else:
        cost = 2 if w.method in ("lora", "qlora") else 3
        rate = w.gpus * evals / cost * TRAIN_SHARE * dp_efficiency(w.gpus, w.nodes)
        terms.append(RateTerm(name="training images per second", value=round(rate, 2), unit="images/s",
                              formula=f"{w.gpus} GPU(s) x {evals:.1f} / {cost} (one timestep per image: forward + "
                                      f"backward{', no weight gradients for the frozen base' if cost == 2 else ''})"
                                      f" x {TRAIN_SHARE} (measured training share of the sampling rate)"
                                      + scaling_formula(w.gpus, w.nodes)))
        notes.append(Note("dif.train_share", f"training at {TRAIN_SHARE} of the sampling rate (diffusers' SD 1.5 LoRA "
                          "example); a measured SDXL LoRA run was 3.5x slower still", share=f"{TRAIN_SHARE}"))
        items = (w.dataset_items or 0) * (w.epochs or 1)
        hours = round(items / rate / 3600, 4) if items else None
        if hours is not None:
            terms.append(RateTerm(name="training time", value=hours, unit="h",
                                  formula=f"{items:,.0f} image steps / {rate:.2f} images/s"))
    items = {"items_per_epoch": w.dataset_items, "epochs": w.epochs or 1,
             "items": (w.dataset_items or 0) * (w.epochs or 1), "item_unit": "images"} if hours is not None else {}
    return JobSpeed(kind="diffusion", unit="images/s", rate=round(rate, 3), gpus=w.gpus, hours=hours, terms=terms,
                    **items, assumptions=[str(n) for n in notes], assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])
