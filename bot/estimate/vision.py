"""Vision jobs (classification, detection, segmentation, ViT): images per second and epochs -> hours.

Speed is FLOPs per image at a measured efficiency. Per-image forward FLOPs come from the model record (Ultralytics'
model summaries; torchvision's GFLOPS, which count multiply-adds, doubled) at its stated input size, scaled with
the pixel count; a ViT's from its parameters and patch count. Training costs 3x the forward (forward, and the
backward's two products). The efficiency, 20 % of the dense 16-bit peak, is NVIDIA's measured ResNet-50 training
on one A100 80GB (2,470 img/s under AMP x 24.5 GFLOPs = 60.6 TFLOPS = 19.4 % of 312): convolution networks with
batch norm and data loading reach far less of the peak than large matmuls do.
"""
from __future__ import annotations

import math

from bot.estimate.arch import Note
from bot.estimate.cost import peak_tflops
from bot.estimate.scaling import dp_efficiency, scaling_formula
from bot.records.kb import GPU, Model
from bot.records.models import JobSpeed, RateTerm, Workload

VISION_EFFICIENCY = 0.20
# A vision transformer trains as large matrix multiplies, at about twice the share of the peak a ResNet-50 reaches.
# timm's training benchmark on one RTX 3090 (AMP, NCHW, PyTorch 1.12; source wl-timm-train-3090) in images/s x
# forward FLOPs (twice timm's GMACs): vit_base_patch16_224 390.86 x 35.2 = 13.7 TFLOPS, vit_large_patch16_224
# 117.08 x 123.2 = 14.4, resnet50 826.06 x 8.18 = 6.8: ViT-B 2.03x and ViT-L 2.13x ResNet-50's utilisation on the same
# card and harness. The smaller ratio on top of NVIDIA's A100 ResNet-50 figure: 0.20 x 2.03 = 0.41 of the dense peak
# (ViT-L/16 on an A100: 312 x 0.41 / 371 GFLOPs = ~340 images/s, not the ~170 the ResNet figure gives).
VIT_TRAIN_OVER_RESNET = 2.03
VIT_TRAIN_EFFICIENCY = round(VISION_EFFICIENCY * VIT_TRAIN_OVER_RESNET, 2)
# Images one CPU core decodes and augments per second in a CPU input pipeline (torchvision/PIL or OpenCV DataLoader
# workers): tensorpack's ImageNet DataFlow ran 1k-2k images/s on 25 worker processes (JPEGs of ~400x350 px, the
# ResNet augmentations), 2,000 / 25 = 80 at best, and img2dataset measured decode + resize at ~80 per i7 core
# (source wl-tensorpack-efficient-dataflow). The best case: a larger image or heavier augmentation (Ultralytics'
# mosaic reads four images per sample) decodes fewer.
DECODE_IMAGES_PER_CORE = 80.0
DEFAULT_IMAGE = {"detector": 640, "cnn": 224, "vision-transformer": 224}


def image_size(w: Workload, model: Model | None) -> int:
    if w.image_size:
        return w.image_size
    if model is not None and model.gflops_at:
        return model.gflops_at
    return DEFAULT_IMAGE.get(model.kind if model else "", 224)


def forward_gflops(w: Workload, model: Model | None) -> tuple[float, str]:
    """Forward FLOPs of one image (billions) and how they were found."""
    px = image_size(w, model)
    if model is not None and model.gflops and model.gflops_at:
        scale = (px / model.gflops_at) ** 2
        return model.gflops * scale, (f"{model.gflops:g} GFLOPs at {model.gflops_at}px" +
                                      (f" x ({px}/{model.gflops_at})^2" if scale != 1 else ""))
    if model is not None and model.is_transformer and model.encoder_tokens:
        # the record's patch count is at 224 px; more pixels, more patches of the same size
        tokens = round((model.encoder_tokens - 1) * (px / 224) ** 2) + 1
        g = 2 * model.params_b * tokens + 4 * model.layers * tokens ** 2 * model.hidden / 1e9
        return g, f"2 x {model.params_b:g}B params x {tokens} patches + attention"
    raise LookupError("no FLOPs on file for this vision model")


def measured_rate(w: Workload, model: Model | None, gpu: GPU, gpus_by_id: dict | None) -> tuple[float, str] | None:
    """Images per second of one GPU serving the model, from a measured inference rate on file (timm's benchmark of
    the same network: CLIP's image tower, SAM's image encoder), scaled to `gpu` by the dense 16-bit peak (these
    passes are large matrix multiplies) and to the image size by the pixel count; None without one."""
    basis = model.speed_basis if model is not None else None
    if basis is None or not gpus_by_id or basis.gpu not in gpus_by_id or basis.unit != "images/s":
        return None
    ref = gpus_by_id[basis.gpu]
    if basis.scale_by == "none":
        # bound by the CPU post-processing of each image's masks, not by the GPU: the measured time is the time
        return basis.rate, (f"{basis.rate:g} images/s ({1 / basis.rate:.1f} s an image) measured on {ref.name} "
                            f"({basis.at}); not scaled to {gpu.name}: the sources measured about the same time on "
                            f"older and newer cards")
    peak, which = peak_tflops(gpu, w.precision)
    ref_peak, _ = peak_tflops(ref, w.precision)
    if not peak or not ref_peak:
        return None
    px = image_size(w, model)
    res = ((basis.px or px) / px) ** 2
    rate = basis.rate * peak / ref_peak * res
    return rate, (f"{basis.rate:g} images/s measured on {ref.name} ({basis.at}) x {peak:g} / {ref_peak:g} TFLOPS "
                  f"({which} peak ratio)" + (f" x {res:.2f} (pixels)" if res != 1 else ""))


def vision_speed(w: Workload, model: Model | None, gpu: GPU, gpus_by_id: dict | None = None) -> JobSpeed:
    """Images per second on w.gpus GPUs, training (3x forward) or serving; hours for epochs over a dataset; for
    video streams, how many streams at w.fps the GPUs keep up with. Serving a model with a measured inference rate
    on file (gpus_by_id given) scales that rate; otherwise FLOPs at VISION_EFFICIENCY."""
    g, how = forward_gflops(w, model)
    train = w.task != "inference"
    passes = 3 if train else 1
    peak, which = peak_tflops(gpu, w.precision)
    if not peak:
        raise LookupError(f"no throughput on file for {gpu.name}")
    # training replicas all-reduce their gradients every step; serving copies share nothing
    scale = dp_efficiency(w.gpus, w.nodes) if train else 1.0
    measured = None if train else measured_rate(w, model, gpu, gpus_by_id)
    vit = train and model is not None and model.kind == "vision-transformer"
    eff = VIT_TRAIN_EFFICIENCY if vit else VISION_EFFICIENCY
    rate = w.gpus * measured[0] if measured else w.gpus * peak * 1e3 * eff / (passes * g) * scale
    terms = [RateTerm(name="FLOPs per image", value=round(g * passes, 2), unit="GFLOPs",
                      formula=how + (" x 3 (forward and backward)" if train else "")),
             RateTerm(name="images per second", value=round(rate, 1), unit="images/s",
                      formula=f"{w.gpus} x {measured[1]}" if measured else
                      f"{w.gpus} x {gpu.name} {which} {peak:g} TFLOPS x {eff:.0%} / "
                      f"{g * passes:.1f} GFLOPs" + (scaling_formula(w.gpus, w.nodes) if train else ""))]
    basis = model.speed_basis if model is not None else None
    notes = [Note("vis.amg", "automatic mask generation (SamAutomaticMaskGenerator, default 32x32 point grid: the mask "
                  "decoder runs 1,024 times an image, then NMS and mask post-processing on the CPU) at the measured "
                  "time an image on any GPU; fewer points (points_per_side), larger points_per_batch, RLE output and "
                  "images resized to 1,024 px measured 2-4 s an image, crop layers (crop_n_layers) several times more")
             if measured and basis is not None and basis.scale_by == "none" else
             Note("vis.measured", "scaled from a measured inference rate of the same network (timm's benchmark) by "
                  "the GPUs' dense 16-bit peaks") if measured else
             Note("vis.efficiency_vit", f"{eff:.0%} of the dense peak: NVIDIA's A100 ResNet-50 training share x "
                  f"{VIT_TRAIN_OVER_RESNET:g}, the ratio timm measured between ViT and ResNet-50 training on one card",
                  eff=f"{eff:.0%}", ratio=f"{VIT_TRAIN_OVER_RESNET:g}") if vit else
             Note("vis.efficiency", f"{VISION_EFFICIENCY:.0%} of the dense peak, as NVIDIA measured ResNet-50 "
                  "training on an A100", eff=f"{VISION_EFFICIENCY:.0%}")]
    hours = None
    if train and w.dataset_items:
        epochs = w.epochs or 1
        hours = round(w.dataset_items * epochs / rate / 3600, 4)
        terms.append(RateTerm(name="training time", value=hours, unit="h",
                              formula=f"{w.dataset_items:,.0f} images x {epochs:g} epochs = "
                                      f"{w.dataset_items * epochs:,.0f} images / {rate:,.1f} images/s"))
    if not train and w.streams:
        need = w.streams * (w.fps or 25)
        terms.append(RateTerm(name="frames needed", value=need, unit="images/s",
                              formula=f"{w.streams} streams x {w.fps or 25:g} fps"))
        if not w.fps:
            notes.append(Note("vis.fps", "25 frames per second per stream assumed", fps=25))
    items = {"items_per_epoch": w.dataset_items, "epochs": w.epochs or 1,
             "items": w.dataset_items * (w.epochs or 1), "item_unit": "images"} if hours is not None else {}
    rate = round(rate, 1) if rate >= 10 else round(rate, 4)     # 0.18 images/s (SAM's mask generator) is not 0.2
    return JobSpeed(kind="vision", unit="images/s", rate=rate, gpus=w.gpus, hours=hours, terms=terms,
                    **items, assumptions=[str(n) for n in notes], assumption_keys=[{"key": n.key, "ctx": n.ctx} for n in notes])


def gpus_for_streams(w: Workload, model: Model | None, gpu: GPU) -> int:
    """GPUs needed to keep up with w.streams video streams at w.fps (25 when not said)."""
    one = vision_speed(w.model_copy(update={"gpus": 1}), model, gpu).rate
    return max(1, math.ceil((w.streams or 1) * (w.fps or 25) / one)) if one else 1


def decode_cores(images_per_s: float) -> int:
    """CPU cores a CPU input pipeline needs to decode and augment images_per_s (at DECODE_IMAGES_PER_CORE each)."""
    return math.ceil(images_per_s / DECODE_IMAGES_PER_CORE)
