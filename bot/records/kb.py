"""Typed, immutable records of the knowledge base.

The YAML in knowledge/ is edited by people; these models are the contract it must meet. They are frozen so
that a loaded KnowledgeBase cannot be changed by a turn, and `extra="forbid"` so that a misspelt key is a
load error (with a "did you mean") rather than a silently ignored fact.
"""
from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


SourceKind = Literal[
    "article", "vendor-doc", "same-stack-doc", "datasheet", "paper", "model-card", "config",
    "catalog", "third-party", "measurement",
]


class Source(Record):
    """Where a fact comes from. The seed article has a title and section instead of a URL."""
    id: str
    title: str
    publisher: str
    kind: SourceKind
    url: str | None = None
    section: str | None = None
    published: dt.date | None = None
    read: dt.date
    note: str | None = None


class GPU(Record):
    """One accelerator model. Memory in GiB as sold ("80GB" card -> 80); bandwidth in GB/s; dense TFLOPS."""
    id: str
    name: str
    vendor: Literal["nvidia", "huawei", "amd"]
    architecture: str
    memory_gib: float = Field(gt=0)
    memory_type: str | None = None
    memory_bandwidth_gbs: float | None = Field(default=None, gt=0)
    fp32_tflops: float | None = None
    fp16_tflops: float | None = None       # dense tensor-core FP16, no sparsity
    bf16_tflops: float | None = None       # dense; null where the card has no bf16
    fp8_tflops: float | None = None        # dense; null where the card has no fp8
    int8_tops: float | None = None
    nvlink_gbs: float | None = None        # total bidirectional NVLink (or HCCS) bandwidth per GPU; null = none
    # cards one NVLink bridge joins (2: cards bridged in pairs, as the H100 NVL); null: no bridge limit on file (an
    # SXM board's NVSwitch joins every card of it). GPUs of different bridged groups talk over PCIe.
    nvlink_peers: int | None = Field(default=None, ge=2)
    # False: the card has no NVLink at all (its sources say so), so several of them in one instance talk over PCIe
    # by construction; null: not said (an NVLink bridge may exist: A30, A100 PCIe, RTX 3090)
    nvlink_capable: bool | None = None
    form_factor: str | None = None
    tdp_w: float | None = None
    positioning: list[Literal["training", "inference", "graphics", "hpc", "workstation", "consumer"]]
    aliases: list[str] = []
    sources: list[str] = Field(min_length=1)
    note: str | None = None

    @property
    def bf16(self) -> bool:
        return self.bf16_tflops is not None

    @property
    def fp8(self) -> bool:
        return self.fp8_tflops is not None


class MoE(Record):
    experts: int = Field(gt=0)
    active_experts: int = Field(gt=0)
    shared_experts: int = 0
    expert_ffn: int | None = None
    dense_layers: int = 0


class MLA(Record):
    """Multi-head latent attention caches a compressed latent instead of per-head K and V."""
    kv_lora_rank: int
    qk_rope_head_dim: int


class ActivationBasis(Record):
    """Activations per sample for non-transformer models, measured or derived at a stated input: for training
    (`gib_per_sample`) and/or for inference (`inference_gib_per_sample`)."""
    gib_per_sample: float | None = Field(default=None, gt=0)
    inference_gib_per_sample: float | None = Field(default=None, gt=0)
    at: str                      # e.g. "224x224, fp32, training"
    precision_bytes: int = 4
    source: str


class SpeedBasis(Record):
    """A measured rate of this model on one GPU, scaled to other GPUs by their dense 16-bit throughput (or memory
    bandwidth, for bandwidth-bound decoders): for models whose FLOPs do not predict their speed (UNets, Whisper)."""
    rate: float = Field(gt=0)
    unit: str                    # e.g. "denoiser evaluations/s", "x real time"
    gpu: str                     # a GPU id in gpus.yaml
    # "none": the measured rate is the rate on any GPU (a pipeline bound by its CPU post-processing, e.g. SAM's
    # automatic mask generation, which measured about the same on a 2080, 3080, 3090 and A100)
    scale_by: Literal["compute", "bandwidth", "none"] = "compute"
    px: int | None = Field(default=None, ge=8)      # image side the rate was measured at (diffusion)
    at: str                      # the measured condition
    source: str


class Dataset(Record):
    """A well-known training set: how many items one epoch reads, in the unit a job of its kind counts (images,
    clips, hours of audio), so that 'yolov8x on COCO, 100 epochs' is a number of images to train on."""
    id: str
    name: str
    unit: Literal["images", "samples", "audio_hours"]
    train_items: float = Field(gt=0)          # one epoch: the training split, in `unit`
    clips: int | None = Field(default=None, ge=1)    # audio: utterances in the training split (each one a window)
    tasks: list[Literal["classification", "detection", "segmentation", "speech", "text-to-image"]] = []
    aliases: list[str] = []
    sources: list[str] = Field(min_length=1)
    note: str | None = None


class Model(Record):
    id: str
    name: str
    family: str
    kind: Literal["llm", "encoder", "encoder-decoder", "vision-transformer", "cnn", "detector",
                  "diffusion", "speech", "multimodal"]
    params_b: float = Field(gt=0)
    active_params_b: float | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn: int | None = None
    vocab: int | None = None
    max_context: int | None = None
    attention: Literal["mha", "gqa", "mqa", "mla"] | None = None
    sliding_window: int | None = None
    sliding_window_layers: float | None = None   # share of layers with a sliding window (1.0 = all)
    # encoder-decoder models (T5, Whisper): `layers` counts both stacks; only the decoder's layers keep a KV cache
    decoder_layers: int | None = Field(default=None, ge=1)
    encoder_tokens: int | None = Field(default=None, ge=1)   # a fixed encoder length (Whisper: 1500 audio frames)
    tied_embeddings: bool = False
    fused_qkv: bool = False          # q, k and v are one Linear (Falcon's query_key_value, Qwen-1's c_attn)
    moe: MoE | None = None
    mla: MLA | None = None
    activation_basis: ActivationBasis | None = None
    # issue 17: weights as the model is published (DeepSeek-V3/R1 ship FP8 weights; serve them so), forward FLOPs of
    # one sample (an image, or one denoising step of one image) in billions at `gflops_at` pixels (2 x MACs), the
    # denoiser passes per step (2 under classifier-free guidance, 1 for guidance-distilled models), a measured rate
    release_precision: Literal["fp32", "fp16", "bf16", "fp8", "int8", "int4", "nf4"] | None = None
    # a reasoning model (R1-style, QwQ, Qwen3 in thinking mode): the tokens a typical answer generates, its thinking
    # included, from a published evaluation; a served request of it is sized at that unless the user says
    reasoning_output_tokens: int | None = Field(default=None, ge=1)
    gflops: float | None = Field(default=None, gt=0)
    gflops_at: int | None = Field(default=None, ge=8)
    guidance_passes: int | None = Field(default=None, ge=1, le=3)
    speed_basis: SpeedBasis | None = None
    # a family's published speed relative to its reference size (openai/whisper README: large 1x, turbo ~8x,
    # measured on an A100): scales a measured rate to a sibling better than the parameter count does where the
    # time is the decoder's (turbo keeps large-v3's encoder and cuts the decoder from 32 layers to 4)
    relative_speed: float | None = Field(default=None, gt=0)
    # a native streaming speech model (Paraformer-streaming, streaming Conformer/Zipformer): each chunk of a live call
    # is encoded once against a cache of the past, so a live stream costs its audio once (Whisper re-decodes a buffer)
    streaming: bool = False
    # a vision-language model: the vision tower's parameters (inside params_b) and the image tokens it feeds the LLM
    vision_params_b: float | None = Field(default=None, gt=0)
    image_tokens: int | None = Field(default=None, ge=1)
    aliases: list[str] = []
    sources: list[str] = Field(min_length=1)
    note: str | None = None

    @property
    def is_transformer(self) -> bool:
        return self.layers is not None and self.hidden is not None

    @property
    def kv_dim_per_token_layer(self) -> int:
        """Elements cached per token and layer (K and V together)."""
        if self.mla is not None:
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        kv = self.kv_heads or self.heads or 0
        hd = self.head_dim or (self.hidden // self.heads if self.hidden and self.heads else 0)
        return 2 * kv * hd


# list: the provider's published price as a catalog collected it; flagged: a catalog price whose row carries a
# data-quality warning (a SKU-mapping quirk...), shown but never called a list price nor used to derive others;
# indicative: derived from other prices (basis says how); local: the operator's own price file.
PriceKind = Literal["list", "flagged", "indicative", "local"]


class Price(Record):
    on_demand: float | None = Field(default=None, ge=0)
    spot: float | None = Field(default=None, ge=0)
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")   # ISO 4217
    unit: Literal["hour"] = "hour"
    kind: PriceKind
    # the date of the dated source the price is known from (a provider page read on that day, a dated third-party
    # reading that gives the same figure); null = no dated source gives this price: answers say "undated"
    date: dt.date | None
    # how `date` is known (which dated source matches, or why there is none); list and flagged prices must say
    date_basis: str | None = None
    spot_date: dt.date | None = None  # the spot price's own date where a dated source gives it; null = undated
    region: str | None = None     # where the price applies; list and flagged prices must name one
    flags: list[str] = []         # the catalog's data-quality warnings for this row, verbatim
    basis: str | None = None      # how an indicative price was derived
    sources: list[str] = []


Evidence = Literal["vendor", "same-stack", "third-party", "catalog"]
# How a flavor's interconnect / RDMA value is known. stated: a cited source says it for this flavor or family;
# derived: it follows from the hardware with a cited source (an 8-GPU HGX/SXM board is NVSwitch-connected);
# unknown: no source read says - the value is null and means "not documented", never "absent".
LinkEvidence = Literal["stated", "derived", "unknown"]


class Flavor(Record):
    """One rentable instance type. `interconnect`/`rdma` are None where no source documents them."""
    id: str                       # "<provider>/<flavor>"
    provider: str
    flavor: str
    family: str
    service: str = "ecs"          # ecs, bms, modelarts, cci, vm ...
    gpu: str
    gpu_count: int = Field(gt=0)
    gpu_memory_gib: float = Field(gt=0)
    vcpus: int | None = None
    memory_gib: float | None = None
    interconnect: Literal["nvlink", "nvswitch", "pcie", "hccs"] | None = None
    interconnect_evidence: LinkEvidence = "unknown"
    rdma: bool | None = None
    rdma_evidence: LinkEvidence = "unknown"
    network: str | None = None
    use: list[Literal["training", "inference", "graphics", "hpc", "general"]] = []
    vgpu: bool = False            # a virtual GPU slice (e.g. A40-8Q), not a whole GPU
    evidence: Evidence
    region: str | None = None
    price: Price | None = None
    sources: list[str] = Field(min_length=1)
    note: str | None = None

    @field_validator("id")
    @classmethod
    def _id_has_provider(cls, v: str) -> str:
        if "/" not in v:
            raise ValueError("flavor id must be '<provider>/<flavor name>'")
        return v

    @model_validator(mode="before")
    @classmethod
    def _evidence_defaults(cls, data):
        """A value given without its evidence was stated by the flavor's sources; a null value is unknown. An
        evidence level that contradicts the value (unknown with a value, stated/derived with null) is an error."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for field in ("interconnect", "rdma"):
            key = f"{field}_evidence"
            value, level = data.get(field), data.get(key)
            if level is None:
                data[key] = "unknown" if value is None else "stated"
            elif (value is None) != (level == "unknown"):
                raise ValueError(f"{key} '{level}' does not fit {field} {value!r}: "
                                 "null goes with unknown, a value with stated or derived")
        return data

    @property
    def nvlink(self) -> bool | None:
        if self.interconnect is None:
            return None
        return self.interconnect in ("nvlink", "nvswitch", "hccs")


class BillingMode(Record):
    id: str                       # pay-per-use, yearly-monthly, spot, reserved, savings-plan ...
    name_en: str
    name_zh: str
    summary_en: str
    summary_zh: str
    reclaim: str | None = None    # how a spot instance is reclaimed and notified
    discount: str | None = None   # only where a source states a figure
    sources: list[str] = Field(min_length=1)


class Provider(Record):
    id: str
    name: str
    name_zh: str | None = None
    aliases: list[str] = []
    currency: str = "USD"
    billing: list[BillingMode] = []
    networks: list[str] = []      # inter-node fabrics, described
    sources: list[str] = Field(min_length=1)
    note: str | None = None

    def display_name(self, lang: str) -> str:
        return self.name_zh if lang == "zh" and self.name_zh else self.name


class Topic(Record):
    """A short, sourced explanation for explain / billing questions (NVLink vs PCIe, how spot works...)."""
    id: str
    title_en: str
    title_zh: str
    text_en: str
    text_zh: str
    aliases: list[str] = []
    sources: list[str] = Field(min_length=1)


class EstimateSpread(Record):
    """How published measurements of one kind of job compared with the estimator (bench/memory_accuracy.py writes
    these; the advisor reads them to say how much room to leave)."""
    id: str                           # the method group: full (with freeze), lora, qlora, inference
    rows: int = Field(ge=1)           # comparable measured rows behind the figures
    median_ratio: float = Field(gt=0)  # measured / estimated
    p10_ratio: float = Field(gt=0)
    p90_ratio: float = Field(gt=0)
    max_ratio: float = Field(gt=0)
    sources: list[str] = Field(min_length=1)


class Rate(Record):
    """One exchange rate: units of `currency` per 1 `base` on `date` (the ECB's euro reference rates). Prices and
    budgets keep their currency; a comparison across currencies converts through this table and says its date."""
    id: str                       # "EUR-CNY"
    base: str = Field(pattern=r"^[A-Z]{3}$")
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    rate: float = Field(gt=0)
    date: dt.date
    sources: list[str] = Field(min_length=1)


class Claim(Record):
    """A statement of the seed article checked against vendor documentation."""
    id: str
    claim: str                    # as the article says it
    names: list[str] = []         # instance names the claim uses
    verdict: Literal["supported", "partly-supported", "contradicted", "unsupported"]
    finding_en: str
    finding_zh: str
    instead: list[str] = []       # flavor ids the vendor documents instead
    sources: list[str] = Field(min_length=1)
