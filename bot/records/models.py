"""Types that cross module lines. Field names follow the public `ask --json` contract in DESIGN.md."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Method = Literal["full", "freeze", "lora", "qlora", "inference"]
Precision = Literal["fp32", "fp16", "bf16", "fp8", "int8", "int4", "nf4"]
Optimizer = Literal["adamw", "adamw8bit", "sgd", "adafactor"]
# hsdp: ZeRO-3/FSDP inside each node and data-parallel replicas across nodes (PyTorch FSDP HYBRID_SHARD, DeepSpeed
# ZeRO++ hpZ/MiCS): the per-layer gathers stay on the node's own link, only one gradient all-reduce a step crosses
# the network
Sharding = Literal["none", "ddp", "zero1", "zero2", "zero3", "fsdp", "hsdp"]
PARAM_SHARDED = ("zero3", "fsdp", "hsdp")      # the levels that shard the parameters themselves
Offload = Literal["none", "optimizer", "full"]
Status = Literal["answer", "follow_up", "info", "out_of_scope"]
Intent = Literal["train", "finetune", "inference", "rendering", "compare", "explain", "billing", "help"]
# what a job is, beyond train/serve: each kind has its own memory terms and its own speed unit (bot/estimate/kinds.py)
WorkloadKind = Literal["llm", "vision", "diffusion", "speech", "multimodal", "rendering"]
# how a language model is post-trained: supervised (one model), preference pairs against a frozen reference (DPO,
# KTO) or without one (ORPO, SimPO), online RL with a rollout engine (PPO: actor, critic, reward, reference; GRPO:
# actor and reference, G samples per prompt), or a reward model (a scalar head over chosen/rejected pairs)
Algorithm = Literal["sft", "dpo", "orpo", "kto", "simpo", "ppo", "grpo", "reward_model"]


class Slots(BaseModel):
    """What is known about the job so far. None = not said (the answer states what it assumed instead)."""
    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    model_family: str | None = None   # "bge" named alone: sized as its default member (rules/lexicon.yaml), said back
    # a model named with its size that the knowledge base does not know ("FooLM-13B"): sized by its size, and the
    # answer's first line says so (the critic's honesty invariant: never silently another model)
    model_name: str | None = None
    params_b: float | None = None
    # a job of a modality the knowledge base has no model and no estimator for ('XTTS-v2 for 200 TTS streams',
    # 'Wan2.1-T2V-14B video generation'): never planned as a language model; the answer says so (turn.py)
    modality: Literal["tts", "video_generation", "music_generation"] | None = None
    # a model not on file of an image or audio kind ('canary-1b' for speech recognition): the model on file of that
    # kind, of a like size, it is sized as (turn.py _unknown_non_llm; the answer's first line says so)
    sized_as_kind: str | None = None
    method: Literal["full", "freeze", "lora", "qlora"] | None = None
    precision: Precision | None = None
    gpus: int | None = None
    nodes: int | None = None
    gpu_model: str | None = None
    gpu_models: list[str] | None = None
    gpu_memory_gib: float | None = None   # "on a 24GB card": the memory of a GPU the user has in mind
    # a GPU named that the knowledge base does not have ('one RTX 3060 12GB at home'), as written: judged by the
    # memory said with it (gpu_memory_gib), and the answer says so; never silently replaced by a rented card
    gpu_name: str | None = None
    # GPUs the user cannot use ("we don't have H100 quota", "没有 H100 配额") and the only ones they can ("only A100
    # and A10", "只能用 A100"): the planner searches the allowed ones, never the excluded
    gpu_excluded: list[str] | None = None
    gpu_allowed: list[str] | None = None
    # 'what if usage triples', '用户翻倍': the load scaled by a factor; the dialogue turns it into the load slots
    load_scale: float | None = None
    work_scale: float | None = None     # '数据量翻倍', 'the dataset triples': the job's amount of work by a factor
    # the model FLOPs utilisation the user tells us to assume ('assume 40% MFU', 'MFU 按 40%'): a fraction, 0-1
    mfu: float | None = Field(default=None, gt=0, le=1)
    # the same job run this many times ('a LoRA for each of 50 customers', '给 50 个客户每人训一个'): the work, time and
    # cost are of all the runs, and the answer says one run's share too
    runs: int | None = Field(default=None, ge=2, le=1_000_000)
    renting: bool | None = None       # "rent 8 x H100": the GPUs named are to be rented, not the user's own
    rent_more: bool | None = None     # "how many extra A800s to rent": cards rented beside the user's own ones
    budget: Literal["low", "medium", "high"] | None = None
    budget_amount: float | None = None
    budget_currency: str | None = None
    budget_period: Literal["hour", "day", "month", "year", "total"] | None = None
    duration: Literal["short", "long"] | None = None
    concurrency: int | None = None
    # the concurrency said as people ('200 concurrent users', '50 人同时在线'), who read between answers: fewer requests
    # in flight (Little's law, bot/plan/load.py); None: requests in flight as said ('50 并发', '30 concurrent requests')
    concurrency_users: bool | None = None
    peak_factor: float | None = None          # the busy hours over the average, said ('高峰是平均的3倍')
    # a load said in tokens ('5,000 output tokens/s in total', '每秒 1 万 token', '1M tokens per minute'): tokens a
    # second, and whose tokens they are (output: generated; None: prompt and output together)
    daily_users: int | None = None            # daily active users ('日活 1 万', '50k DAU'): people a day, not at once
    # a working schedule said ('8 hours a day on weekdays', '只在工作日白天用'): the hours a month the service is used,
    # and its parts (usage.schedule_hours); billing compares pay-per-use for those hours against a month's commitment
    usage_hours_month: float | None = None
    fps: float | None = None                  # frames a second each video stream sends ('at 15 fps', '每路 10 fps')
    usage_hours_day: float | None = None
    usage_days_week: float | None = None
    token_rate: float | None = None
    token_role: Literal["input", "output"] | None = None
    # a live service: True when said ('production', '线上', '客服', 'customer-facing'), False when the user says one
    # copy is enough ('single replica', '测试', 'demo'); None: decided by whether a load was stated (load.py)
    production: bool | None = None
    qps: float | None = None
    # how the rate was said (bot/conversation/load_slots.py): at its peak, or as an average over a day, week or month
    # ('2 million requests per day'), which the planner raises by the peak factor; and the count as said
    qps_basis: Literal["peak", "average"] | None = None
    # the average said beside the peak that is sized ('average 5 QPS, peak 20'): said back, not sized
    qps_average: float | None = None
    load: dict[str, Any] | None = None       # {count, unit, period}: '2,000,000 requests a day'
    fanout: int | None = None                # a reranker's documents scored per query (an embedder's texts)
    fanout_unit: Literal["documents", "texts"] | None = None   # texts: an embedder's texts per request
    audio_rate: float | None = None          # hours of audio per hour to keep up with: the x real time needed
    output_tokens: int | None = None         # serving: tokens generated per request ('300 output tokens')
    latency: Literal["low", "normal"] | None = None
    ttft_ms: float | None = None      # "TTFT under 500 ms", "首 token 延迟 1 秒内": time to the first token
    tpot_ms: float | None = None      # "30 ms per token", "TPOT 50ms": time per output token
    e2e_ms: float | None = None       # "end-to-end under 5 s", "整个响应 3 秒以内": a whole response
    latency_ms: float | None = None   # "p95 latency under 2s", "响应时间 1 秒以内": read as time to first token
    seq_len: int | None = None
    # serving: prompt tokens per request the user states ("~2k-token conversations", "32k-token documents")
    request_tokens: int | None = None
    # serving a vision-language model: the vision tokens of a request's images as the user said them ('each image is
    # about 4000 vision tokens', '每个请求 2 张图，每张 1k token'), already counted in request_tokens
    image_tokens: int | None = None
    # serving: a mix of request sizes, {share (0-1), tokens (None: a chat of the default size)} per bucket
    # ("80% short chats (~500 tokens), 20% 30k-token documents", "80% 是短对话，20% 是 3 万 token 长文档")
    request_mix: list[dict[str, float | int | None]] | None = None
    batch_size: int | None = None
    tokens: float | None = None
    deadline_days: float | None = None
    # the training set: a well-known one by name (knowledge/datasets.yaml), or its size as said ('11.8 万张',
    # '1.2M images', '500 小时语音'), in dataset_unit; and the passes over it
    dataset: str | None = None
    dataset_items: float | None = None
    dataset_unit: Literal["images", "samples", "audio_hours", "pairs", "prompts"] | None = None
    dataset_items_low: float | None = None   # a range's lower end ('50-80k samples': dataset_items is 80,000)
    epochs: float | None = None
    image_size: int | None = None            # the image side a vision or diffusion job runs at ('1280px', '1024x1024')
    train_steps: int | None = None           # optimizer steps said ('3000 步', '1,500 steps'): steps x batch = samples
    sampling_steps: int | None = None        # a diffusion model's denoising steps per image ('30 steps')
    controlnet: bool | None = None           # 'SDXL + ControlNet': a control branch runs beside the denoiser each step
    # a language model's training work in the user's units (bot/conversation/work_slots.py): each sample's tokens
    # (a pair's: prompt + one response), whether sequences are packed, and for online RL (GRPO/PPO) the completions
    # sampled per prompt and the tokens each generates
    sample_tokens: int | None = None
    packing: bool | None = None
    generations: int | None = None
    generation_tokens: int | None = None
    generation_max: bool | None = None          # online RL: generation_tokens was said as a limit ("up to 4k")
    sharding: Sharding | None = None  # "deepspeed zero3", "FSDP": how the user shards (or will shard) the job
    offload: Offload | None = None    # "zero3 offload" (full), "offload_optimizer" (optimizer)
    region: str | None = None
    # the network between the user's own machines when they say it ("over 100GbE, no InfiniBand", "200G IB",
    # "RoCE 网络", "普通以太网"): rdma or tcp, and its rate when given
    network: Literal["rdma", "tcp"] | None = None
    network_gbps: float | None = None
    provider: str | None = None
    # a cloud the user named that the knowledge base does not cover (rules/lexicon.yaml `clouds`): every plan shown
    # is elsewhere, and the answer says so first
    provider_uncovered: str | None = None
    topic: str | None = None          # what an explain/billing question is about (nvlink, spot, ...)
    kind: WorkloadKind | None = None      # the kind of job when it is not a language model's (issue 17)
    algorithm: Algorithm | None = None    # a post-training algorithm (DPO, PPO, GRPO, reward model ...)
    # the architecture of a model not on file, from a config.json pasted into the chat (the keys hfconfig reads)
    arch: dict[str, Any] | None = None
    # a batch (offline) job: a total amount of work, sized for throughput and a deadline, not as a service
    # ('caption 2 million images', '离线跑 100 万条数据打标签'); bot/plan/batch.py
    offline: bool | None = None
    items: int | None = None              # items to process ('2 million images', '100 万条')
    item_unit: Literal["image", "document", "item", "page"] | None = None
    items_each: dict[str, Any] | None = None   # {count, container, per, unit}: '10k PDFs of 20 pages each' = 200k pages
    item_input_tokens: int | None = None  # prompt tokens of one item ('每条约 1k 输入', '~2k tokens each')
    item_output_tokens: int | None = None  # tokens generated per item ('200 输出', '50 output tokens')
    item_output_chars: int | None = None   # an output length asked in Chinese characters ('描述每条约 100 字')
    item_input_chars: int | None = None    # an input length in characters ('总结 5 万篇文档，每篇约 3000 字')
    item_input_words: int | None = None    # an input length in English words ('summarise 50k 2,000-word reports')
    item_output_words: int | None = None   # an output length asked in English words ('captions of about 80 words')
    batch_tokens: float | None = None     # the job's input tokens in all ('translate 50M tokens of documents')
    batch_task: Literal["caption", "translate", "summarise", "classify", "embed", "generate", "other"] | None = None

    def filled(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class WorkFactor(BaseModel):
    """One factor of a job's amount of work: a figure the user gave (said) or one assumed and said back."""
    value: float
    unit: str                  # samples, pairs, prompts, tokens, sequences, completions, epochs, images, hours
    said: bool = True
    bound: Literal["exact", "at_most", "at_least", "mean"] = "exact"   # a stated max length is an upper bound of each
    # sample; 'mean': the value is an assumed average under the stated `limit` (RL completions 'up to 4k')
    limit: float | None = None


class Work(BaseModel):
    """A job's amount of work in the user's own units and how it was derived: the product of `factors` is `amount`,
    in `unit` ('50,000 samples x 1,024 tokens x 3 epochs = 153.6M tokens'). The planner times it (an LLM's tokens,
    post-training's pairs or prompts), the renderer shows the multiplication, the verdicts read it ('is my budget
    enough for it')."""
    kind: Literal["training", "posttraining"]
    amount: float = Field(gt=0)
    unit: str                          # tokens (trained), or what post-training counts: pairs, samples, prompts
    factors: list[WorkFactor]
    tokens: float | None = None        # tokens trained in all (the amount when unit is tokens)
    generated_tokens: float | None = None     # online RL: tokens the rollout engine generates in all
    timed_as: Literal["tokens", "items"] = "tokens"   # timed by the LLM training speed model, or post-training's
    packing: bool | None = None        # sequences packed (True), padded (False), not said (None: packed assumed)
    assumed: list[str] = []            # the factors' units that were assumed, not said


class Load(BaseModel):
    """A service's load in the user's own units and the rate it is sized for: a count over a period ('2,000,000
    requests a day') is an average, raised by the peak factor to the busy hours' rate; a rate per second or minute,
    or one said at peak, is sized as said. Read by the planner (the rate), the renderer (the derivation) and the
    verdicts."""
    kind: Literal["serving"] = "serving"
    amount: float = Field(gt=0)        # the rate sized for, in `unit` per second
    unit: str                          # requests, images, documents, audio_hours (x real time)
    count: float | None = None         # the count as said, over `period`
    period: Literal["second", "minute", "hour", "day", "week", "month"] = "second"
    average_per_s: float | None = None     # the count spread evenly over its period
    average_said: float | None = None      # an average a second said beside the peak sized ('avg 5 qps, peak 20')
    # a rate of things that each hold items ('1,000 orders a day, each with 50 images'), or users each at a rate
    # ('300 users, each a request every 30 s'): how many, their word as said, the items (requests) each
    containers: float | None = None
    container: str | None = None
    per_container: float | None = None
    every_s: float | None = None           # a user's requests come once every this many seconds
    peak_factor: float = 1.0           # busy hours over the average (1: the rate was said as the one to sustain)
    peak_factor_said: bool = False     # the factor is the user's ('高峰是平均的3倍'), not the assumed one
    basis: Literal["peak", "average", "rate"] = "rate"
    fanout: int | None = None          # (query, document) pairs scored per query: the rate counts pairs
    pair_tokens: int | None = None     # tokens each pair (or text of a batch) runs through the encoder, as said
    tokens_per_s: float | None = None  # a load said in tokens a second: requests = tokens / tokens_per_request
    tokens_per_request: int | None = None
    tokens_role: Literal["input", "output"] | None = None    # whose tokens: generated, prompt, or both (None)
    daily_users: int | None = None     # daily active users the day's requests come from, at requests_per_user each
    requests_per_user: float | None = None
    input_tokens: int | None = None    # each request's prompt, as said
    output_tokens: int | None = None   # each request's generated tokens, as said
    min_replicas: int = 1              # a production service keeps serving while one replica fails or updates


class Workload(BaseModel):
    """Everything the estimator needs, every field defaulted explicitly (the defaults become assumptions)."""
    model_config = ConfigDict(extra="forbid")
    model: str | None = None
    params_b: float = Field(gt=0)
    task: Literal["train", "finetune", "inference"] = "finetune"
    method: Method = "lora"
    precision: Precision = "bf16"
    pure_bf16: bool = False           # 16-bit weights and optimizer states, no fp32 master copy (torchtune style)
    # FP8 training: the linear layers' GEMMs in FP8 (Transformer Engine, torchao float8) over bf16 mixed-precision
    # weights, gradients and optimizer states, as Megatron-LM and NeMo run it; precision stays the 16-bit type
    fp8_compute: bool = False
    # an MFU the user said to assume ('assume 40% MFU'): the speed model's throughput is that share of the dense peak
    # of the precision used, whatever layout the plan picks (None: the speed model's own estimate)
    mfu_stated: float | None = Field(default=None, gt=0, le=1)
    # the same job run this many times (Slots.runs): dataset_items is already all the runs' (bot/plan/work.runs_of)
    runs: int = Field(default=1, ge=1, le=1_000_000)
    optimizer: Optimizer = "adamw"
    batch_size: int = Field(default=1, ge=1, le=4096)
    seq_len: int = Field(default=1024, ge=1, le=10_000_000)
    gpus: int = Field(default=1, ge=1, le=100_000)
    nodes: int = Field(default=1, ge=1, le=10_000)
    sharding: Sharding = "none"
    offload: Offload = "none"
    grad_checkpointing: bool = False   # the same as checkpointing="full"; the two fields agree after validation
    # activation checkpointing (issue 23): "full" keeps each layer's input and recomputes the layer in backward;
    # "selective" recomputes only part of each layer (selective_policy says which part)
    checkpointing: Literal["none", "full", "selective"] = "none"
    # full checkpointing of one layer in every N, the others keeping all their activations (torchtitan's
    # selective_ac_option = N); 1 = every layer
    checkpoint_every: int = Field(default=1, ge=1, le=1000)
    # "attention": only the attention core is recomputed (Korthikanti et al. 2022, Megatron-LM's
    # --recompute-granularity selective); "alternate-mm": the outputs of every other matmul and of attention are kept,
    # the rest recomputed (torchtitan's per-op policy, selective_ac_option = "op")
    selective_policy: Literal["attention", "alternate-mm"] = "attention"
    # the serving engine: its prefill working set, KV-cache allocation and CUDA graphs differ (None: the chat's
    # default, a vLLM-like server, said as an assumption)
    engine: Literal["transformers", "vllm", "sglang", "tgi", "llama.cpp"] | None = None
    # the frozen base's dtype under LoRA / freeze tuning when it differs from the compute precision (some PEFT
    # distributed examples keep it in fp32 under bf16 autocast); None: the precision's own
    frozen_dtype: Literal["fp32", "bf16", "fp16"] | None = None
    flash_attention: bool = True
    chunked_loss: bool = False        # cross-entropy over chunks of the sequence (torchtune, Liger, unsloth)
    # the LM head and the loss fused and run chunk by chunk, the whole logits never held (Liger Kernel's
    # FusedLinearCrossEntropy, LLaMA-Factory enable_liger_kernel): what makes a 128k-token sample's loss fit
    fused_loss: bool = False
    # context parallelism: each sample's sequence split over this many GPUs, attention exchanging K/V in a ring
    # (Megatron-LM --context-parallel-size, torchtitan, DeepSpeed Ulysses); each GPU keeps seq / CP tokens' activations
    context_parallel: int = Field(default=1, ge=1, le=1024)
    # LoRA under FSDP with frozen and trainable parameters in the same FSDP units (use_orig_params=True): PyTorch
    # allocates gradients for the frozen parameters too, "equivalent to not freezing those parameters"
    fsdp_mixed_frozen: bool = False
    # gradient accumulation inside FSDP's no_sync() (Lightning Fabric's no_backward_sync): every GPU accumulates the
    # unsharded gradients until the step that syncs
    no_sync_accumulation: bool = False
    # PEFT's prepare_model_for_kbit_training casts every 16-bit parameter left unquantised to fp32 ("all": TRL's
    # SFTTrainer under fp16, PEFT called directly); TRL under bf16 casts embeddings and LM head back ("norms"). An fp32
    # norm weight makes the norm's output fp32 and bitsandbytes returns its input dtype, so the hidden states of every
    # layer become fp32 either way
    kbit_upcast: Literal["none", "norms", "all"] = "none"
    # NF4 quantisation constants: one fp32 absmax per 64 weights (4.5 bits a weight), or themselves quantised to 8 bits
    # per block of 256 (4.127 bits; the QLoRA recipe, bnb_4bit_use_double_quant=True, LitGPT's bnb.nf4-dq)
    double_quant: bool = True
    # the LM head quantised with the other linear layers: Lightning's BitsandbytesPrecision (LitGPT) converts every
    # nn.Linear; transformers keeps the output embeddings in 16-bit
    quantized_lm_head: bool = False
    # micro-batches per optimizer step: above 1 the gradients stay allocated through every forward and backward;
    # at 1 zero_grad(set_to_none=True) (PyTorch's default since 2.0) frees them before the next forward
    grad_accumulation: int = Field(default=1, ge=1, le=100_000)
    zero_grad_frees: bool = True       # False: zero_grad() zeroes in place and keeps them (PyTorch < 2.0)
    # torch.optim.AdamW's implementation: foreach (the default on CUDA) allocates one parameter-sized temporary in
    # its step; fused and the per-parameter loop do not
    adamw_impl: Literal["foreach", "fused", "for-loop"] = "foreach"
    # PyTorch's CUDA allocator: the default caching one, or expandable segments (PYTORCH_CUDA_ALLOC_CONF=
    # expandable_segments:True), which leaves less reserved beyond what is allocated under checkpointing
    allocator: Literal["caching", "expandable_segments"] = "caching"
    lora_rank: int = Field(default=16, ge=1, le=4096)
    lora_targets: Literal["all-linear", "attention", "qkv", "qv"] = "all-linear"
    # whose training code: "hf" (transformers + PEFT + the HF Trainer), LitGPT or torchtune. PEFT keeps LoRA adapters
    # in fp32 and every adapted layer casts its own copy of its input (kept for the adapter's gradient); LitGPT and
    # torchtune keep adapters in the model dtype and only copy through dropout (LitGPT's q, k, v are one fused layer
    # with one dropout); their attention and chunked losses keep different tensors too
    framework: Literal["hf", "litgpt", "torchtune"] = "hf"
    lora_dropout: float = Field(default=0.05, ge=0, lt=1)
    # bitsandbytes up to 0.42 saves the input of every 4-bit matmul for backward; 0.43 and later save only the weight
    bnb_saves_input: bool = False
    concurrency: int = Field(default=1, ge=1, le=100_000)
    context: int = Field(default=4096, ge=1, le=10_000_000)
    tokens: float | None = Field(default=None, gt=0)
    tensor_parallel: int = Field(default=1, ge=1, le=1024)
    # ----- the kind of job and its own dimensions (issue 17); an LLM SFT/serving job leaves them all at default
    kind: WorkloadKind = "llm"
    algorithm: Algorithm = "sft"
    rl_group: int = Field(default=8, ge=1, le=1024)          # GRPO: completions sampled per prompt (TRL default 8)
    rollout_len: int | None = Field(default=None, ge=1)       # RL: tokens generated per completion
    # RL: mean tokens generated per completion where it is known (a published run's log); None: every completion
    # runs to rollout_len. With a mean below rollout_len the engine still decodes until the longest one ends.
    rollout_mean: int | None = Field(default=None, ge=1)
    colocate: bool = True          # RL: policy, reference, critic, reward and rollout engine share the same GPUs
    ref_offload: bool = False      # the frozen reference/reward weights live in host memory (verl/OpenRLHF offload)
    image_size: int | None = Field(default=None, ge=8, le=16384)     # pixels per side (vision, diffusion)
    steps: int | None = Field(default=None, ge=1, le=1000)           # diffusion sampling steps per image
    controlnet: bool = False                                         # a ControlNet branch beside the denoiser
    dataset_items: float | None = Field(default=None, gt=0)          # images / samples / hours of audio in one epoch
    dataset_clips: int | None = Field(default=None, ge=1)            # audio: the utterances those hours are cut into
    epochs: float | None = Field(default=None, gt=0)
    streams: int | None = Field(default=None, ge=1, le=100_000)      # concurrent audio or video streams
    # live audio transcribed as it is spoken, with interim results (real time said): each update re-transcribes the
    # call's buffer (speech.REDECODE); without it each utterance is transcribed once, after its pause
    interim: bool = False
    # a service used on a schedule (Slots.usage_hours_month): the hours a month it runs, for billing (None: always on)
    usage_hours_month: float | None = Field(default=None, gt=0, le=730)
    fps: float | None = Field(default=None, gt=0, le=1000)           # frames per second per video stream
    scene_gib: float | None = Field(default=None, gt=0, le=4096)     # rendering: the scene's geometry and textures
    pipeline_parallel: int = Field(default=1, ge=1, le=1024)
    # interleaved pipeline: model chunks per pipeline stage (Megatron's virtual_pipeline_model_parallel_size), which
    # divides the 1F1B bubble by itself (Narayanan et al. 2021, section 2.2.2)
    virtual_pipeline: int = Field(default=1, ge=1, le=128)
    # expert parallelism (mixture of experts): the routed experts are split over this many GPUs of each data-parallel
    # group, every token sent to its experts' GPUs and back by all-to-all (Megatron-Core's expert_model_parallel_size,
    # DeepSpeed-MoE's ep_size); the dense parts are split by tensor/pipeline parallelism and ZeRO as before
    expert_parallel: int = Field(default=1, ge=1, le=1024)
    input_len: int | None = Field(default=None, ge=1, le=10_000_000)     # serving: prompt tokens per request
    output_len: int | None = Field(default=None, ge=1, le=10_000_000)    # serving: generated tokens per request
    kv_dtype: Precision | None = None       # serving: KV-cache element type (None: the weights' 16-bit type)
    target_rate: float | None = Field(default=None, gt=0)           # the rate asked for, in the kind's unit

    @model_validator(mode="after")
    def _one_checkpointing(self) -> "Workload":
        """grad_checkpointing (kept for old callers) means full checkpointing: make the two fields agree."""
        if self.grad_checkpointing and self.checkpointing == "none":
            self.checkpointing = "full"
        elif self.grad_checkpointing and self.checkpointing == "selective":
            raise ValueError("grad_checkpointing means full checkpointing, not selective: give checkpointing alone")
        self.grad_checkpointing = self.checkpointing == "full"
        return self


class MemoryTerm(BaseModel):
    name: str                  # e.g. "fp32 master weights"
    category: Literal["weights", "gradients", "optimizer", "activations", "kv_cache", "overhead"]
    gib: float
    formula: str               # how it was computed, in words and numbers


class MemoryBasis(BaseModel):
    """One way of reading GPU memory, so an estimate is compared like for like with a measurement."""
    name: Literal["allocated", "reserved", "device_total"]
    gib: float
    reads: str                 # the counter a measurement of this basis reads (torch.cuda.max_memory_allocated, ...)
    includes: list[str]        # the estimate's terms it counts


class MemoryEstimate(BaseModel):
    per_gpu_gib: float         # the device total (what nvidia-smi shows): the figure that must fit
    total_gib: float
    allocated_gib: float       # tensors only (what torch.cuda.max_memory_allocated reports)
    breakdown: dict[str, float]
    terms: list[MemoryTerm]
    assumptions: list[str]
    gpus: int
    assumption_keys: list[dict[str, Any]] = []     # the same assumptions as template keys, for other languages
    reserved_gib: float | None = None               # tensors + the caching allocator's slack (max_memory_reserved)
    bases: list[MemoryBasis] = []                   # allocated, reserved and device total, with the terms each counts


class Compute(BaseModel):
    flops: float
    gpu: str
    gpus: int
    utilization: float
    gpu_hours: float
    days: float
    basis: str
    costs: list[dict[str, Any]] = []     # the GPU-hours priced per billing mode (cost.job_costs)
    tokens_per_s_per_gpu: float | None = None    # the speed model's training throughput (speed.training_speed)
    mfu: float | None = None
    hours: float | None = None           # wall clock on `gpus` GPUs, goodput included
    tokens: float | None = None          # the figures `basis` is made of, for wording it in the user's language
    flops_per_token: float | None = None
    goodput: float | None = None


class Link(BaseModel):
    """How the GPUs of a job talk: inside a node (per GPU, one direction) and between nodes (per node)."""
    intra: Literal["nvlink", "pcie", "unknown"] = "unknown"
    intra_gbs: float | None = Field(default=None, gt=0)
    inter: Literal["rdma", "tcp", "none", "unknown"] = "unknown"
    inter_gbs: float | None = Field(default=None, gt=0)


class SpeedTerm(BaseModel):
    """One named quantity of a speed estimate, with the arithmetic that produced it."""
    name: str
    value: float
    unit: str
    formula: str


class TrainingSpeed(BaseModel):
    tokens_per_s_per_gpu: float
    tokens_per_s: float            # all w.gpus together
    mfu: float                     # model FLOPs (no recomputation) / dense peak of the precision used
    flops_per_token: float         # model FLOPs per token (what MFU counts)
    step_s: float                  # one optimizer step (w.batch_size x w.grad_accumulation micro-batches per GPU)
    goodput: float                 # share of wall-clock time that trains (restarts, checkpoints); hours divide by it
    terms: list[SpeedTerm]
    assumptions: list[str]
    assumption_keys: list[dict[str, Any]] = []     # the same assumptions as template keys, for other languages


class ServingSpeed(BaseModel):
    ttft_ms: float
    tpot_ms: float
    output_tokens_per_s: float     # the replica's w.gpus GPUs together, at w.concurrency, prefill included
    requests_per_s: float
    max_concurrency: int           # sequences of input_len + output_len tokens the KV cache holds
    decode_tokens_per_s_max: float # decode alone at max_concurrency
    prefill_tokens_per_s_max: float
    concurrency: int
    input_len: int
    output_len: int
    terms: list[SpeedTerm]
    assumptions: list[str]
    assumption_keys: list[dict[str, Any]] = []


class RateTerm(BaseModel):
    """One step of a throughput or time estimate, with its unit and how it was computed."""
    name: str
    value: float
    unit: str
    formula: str


class JobSpeed(BaseModel):
    """How fast a job of a non-LLM or post-training kind runs, in the unit that means something for it
    (images/s, x real time, samples/s), and how long the whole job takes when its size is known."""
    kind: WorkloadKind
    unit: str                  # e.g. "images/s", "x real time", "samples/s"
    rate: float                # in `unit`, for the whole job's GPUs
    gpus: int
    hours: float | None = None
    target: float | None = None            # the rate asked for (images/s, frames/s of the streams, live streams)
    gpus_for_target: int | None = None     # GPUs of this kind that reach it
    streams_per_gpu: int | None = None     # live streams (calls, video) one GPU keeps up with
    # training by items: one epoch's items (images, clips), the epochs, and their product, in `item_unit`
    items_per_epoch: float | None = None
    epochs: float | None = None
    items: float | None = None
    item_unit: str | None = None           # "images", "clips"
    terms: list[RateTerm] = []
    assumptions: list[str] = []
    assumption_keys: list[dict[str, Any]] = []


class FitStep(BaseModel):
    change: str
    per_gpu_gib: float
    fits: bool
    workload: dict[str, Any]


class Recommendation(BaseModel):
    provider: str
    flavor: str
    gpu: str
    gpu_count: int
    gpu_memory_gib: float
    interconnect: str | None
    rdma: bool | None
    instances: int
    price_per_hour: float | None
    spot_price_per_hour: float | None = None
    currency: str | None
    price_kind: str | None = None
    price_date: str | None = None
    fits: bool
    headroom_pct: float
    score: float = 0.0
    evidence: str | None = None
    region: str | None = None
    job_cost: float | None = None
    why: list[str] = []
    ruled_out: str | None = None


class ChecklistItem(BaseModel):
    item: Literal["oom", "topology", "data", "billing"]
    status: Literal["ok", "warn", "fail"]
    text: str
    citations: list[str]


class Citation(BaseModel):
    id: str
    title: str
    url: str | None


class TraceEntry(BaseModel):
    rule: str
    fired: bool
    because: str


class ViewSection(BaseModel):
    """One part of an answer as every surface shows it (bot/render/view.py builds it, the text, the Slack blocks
    and the JSON carry the same one): the decision, why, time and cost, a named alternative."""
    key: str                   # lead, pick, why, cost, cheapest, fastest, compute, speed, batch, throughput
    label: str = ""            # said before the first line in the text ("Pick"); empty: the lines stand alone
    title: str = ""            # the heading a layout groups it under ("Time and cost"); empty: none
    lines: list[str] = []      # the short form: the first line, then continuation lines (indented as shown)
    more: list[str] = []       # after the fold: the part's details, one whole line each
    folded: bool = False       # the whole part is after the fold (a rental beside the user's own cards that fit)


class CheckRow(BaseModel):
    """A checklist item as shown: its status and name in the reply's language, its text and source numbers."""
    item: str
    status: Literal["ok", "warn", "fail"]
    status_word: str
    name: str
    text: str
    refs: list[int] = []       # numbers into AnswerView.sources


class ConsideredRow(BaseModel):
    """A plan that lost, with its own figures and why it lost (never another row's)."""
    provider: str
    flavor: str
    gpu_count: int
    gpu_name: str
    instances: int = 1         # instances of the flavor the plan uses (replicas included)
    price_per_hour: float | None = None
    currency: str | None = None
    verdict: str               # why it lost, in the reply's language, from the plan's own reasons and numbers


class SourceRef(BaseModel):
    n: int                     # the marker number the answer's claims use ([n])
    id: str
    title: str
    url: str | None = None


class AnswerView(BaseModel):
    """An answer laid out once, for every surface: the short form (headline, the decision sections, the checklist at
    a glance, the sources they cite) and the details after the fold (each section's details, the checklist, the plans
    considered, notes, assumptions, the other sources)."""
    headline: str              # the decision in one line, with the counts: "Pick: 2 x p5s.40xlarge.12, 16 x H100"
    sections: list[ViewSection] = []
    checklist: list[CheckRow] = []
    considered: list[ConsideredRow] = []
    notes: list[str] = []      # each with its source markers
    assumed: str | None = None
    sources: list[SourceRef] = []
    short_sources: int = 0     # the short form cites sources 1..short_sources; the details cite the rest


# the version of the `ask --json` contract (bot/records/answer.py, docs/answer.schema.json): major.minor
SCHEMA_VERSION = "1.0"


class Reply(BaseModel):
    """One turn's reply: the `ask --json` object minus advice_id/session, which the surface adds."""
    schema_version: str = SCHEMA_VERSION
    status: Status
    lang: Literal["zh", "en"]
    intent: Intent | None
    slots: dict[str, Any] = {}
    missing: list[str] = []
    follow_up: str | None = None
    choices: list[str] = []            # quick answers for a follow-up (Slack buttons)
    text: str = ""                     # the short form: the decision first (`details` holds the rest)
    assumptions: list[str] = []
    memory: dict[str, Any] | None = None
    compute: dict[str, Any] | None = None
    speed: dict[str, Any] | None = None     # non-LLM and post-training jobs: JobSpeed (unit, rate, hours, terms)
    recommendations: list[dict[str, Any]] = []
    considered: list[dict[str, Any]] = []
    checklist: list[dict[str, Any]] = []
    citations: list[dict[str, Any]] = []
    rule_trace: list[dict[str, Any]] = []
    # each target the user stated (deadline, budget, ttft, tpot, users, rate, latency): {target, asked, plan, unit,
    # met (null: no figure to judge by), by (how far past the target, in its unit)}
    targets: list[dict[str, Any]] = []
    notes: list[str] = []
    billing: list[dict[str, Any]] = []      # the billing modes the rules recommend: {mode, text}
    # 'cheaper?' after an answer (bot/plan/cheaper.py): each concession that makes the job cheaper, cheapest first
    cheaper: list[dict[str, Any]] = []
    # the decision a compare / explain / billing / "enough?" / "how long?" question asked for, as data: `kind`, the
    # preferred side or answer, the numbers behind it, and `line` (its first line of text); bot/plan/verdicts.py
    verdict: dict[str, Any] | None = None
    kb_version: str | None = None
    # a batch job (bot/plan/batch.py): items, tokens per item, the pick's items/s per replica, replicas, hours
    batch: dict[str, Any] | None = None
    # the amount of work in the user's units: Work (bot/plan/work.py) and `derivation`, its multiplication as text
    work: dict[str, Any] | None = None
    details: str = ""                       # after the fold: what `ask --details` adds to `text` (answers only)
    # a follow-up that changed the job ('如果QPS涨到50呢', 'we only have A100 quota'): each slot it changed,
    # {slot, before, after}; the answer re-plans the same job with them and says so on its first line
    changed: list[dict[str, Any]] = []
    view: AnswerView | None = None          # an answer as laid out for every surface (text, Slack, JSON)
