"""Post-training jobs: several models on the same GPUs, sized as the common frameworks lay them out.

- DPO / KTO: the policy trains, a frozen reference scores the same sequences. DPO runs chosen and rejected
  through the model together (TRL's concatenated forward), so a sample is two sequences; KTO's samples are
  unpaired. With LoRA/QLoRA the reference is the base model with the adapters switched off, so it costs no memory
  (TRL DPOTrainer: "if you use PEFT ... the reference model is the base model without adapters").
- ORPO / SimPO: pairs, no reference model.
- Reward model: pairs through a model whose head is one scalar, so no vocabulary logits.
- PPO: actor and critic train, reference and reward model score, a rollout engine (vLLM) generates. OpenRLHF's
  `--colocate_all_models` and verl's hybrid engine put all of them on the same GPUs, the engine sleeping (its KV
  cache freed, weights offloaded) while the models train; without it each model has its own group of GPUs.
- GRPO: actor and reference, G completions per prompt from the rollout engine (TRL `num_generations`, default 8;
  verl `rollout.n`); no critic and, with rule-based rewards, no reward model.

Each model's terms come from the dense estimator (memory.py); this module decides which models exist, how many
sequences each sees and which phases overlap.
"""
from __future__ import annotations

from bot.estimate.arch import ALLOCATOR_SLACK, CUDA_CONTEXT_GIB, GIB, Note, arch_of
from bot.estimate.cost import decode_tokens_per_second, on_gpus, training_flops
from bot.estimate.speed import training_speed
from bot.estimate.memory import estimate_memory
from bot.records.errors import InvalidRequest
from bot.records.kb import GPU, Model
from bot.records.models import JobSpeed, Link, MemoryEstimate, MemoryTerm, RateTerm, Workload

PAIRED = ("dpo", "orpo", "simpo", "reward_model")       # chosen + rejected: two sequences per sample
REFERENCE = ("dpo", "kto", "ppo", "grpo")               # a frozen copy of the starting policy scores every sequence
ONLINE = ("ppo", "grpo")                                # generate with a rollout engine, then train
DEFAULT_ROLLOUT_LEN = 256          # TRL GRPOConfig max_completion_length default
# A completion limit said without its mean ('responses up to 4k'): completions average half of it. NeMo RL's published
# on-policy GRPO runs (source wl-nemo-rl-perf-summary, tests/data/measured_kinds.yaml) average 23 % (Llama 3.1 8B,
# 932 of 3,968) to 78 % (Qwen3-32B, 3,078 of 3,968) of their limit; half is the middle of that spread, said back.
ROLLOUT_MEAN_SHARE = 0.5
ROLLOUT_BATCH_SEQS = 256           # vLLM's default max_num_seqs: sequences decoded together per engine


def validate(w: Workload) -> None:
    """Refuse post-training settings that do not exist, saying what to use instead."""
    if w.algorithm == "sft":
        raise InvalidRequest("plain supervised fine-tuning is not a post-training algorithm here",
                             fix="use the memory estimator directly (bot.estimate.memory.estimate_memory)")
    if w.method == "inference":
        raise InvalidRequest(f"{w.algorithm.upper()} trains a model", fix="use --method full, lora or qlora")
    if w.algorithm not in ONLINE and not w.colocate:
        raise InvalidRequest(f"{w.algorithm.upper()} has no rollout engine to place on other GPUs",
                             fix="drop --split (it applies to PPO and GRPO)")


def rollout_len(w: Workload) -> int:
    return w.rollout_len or DEFAULT_ROLLOUT_LEN


def train_seq(w: Workload) -> int:
    """Tokens per trained sequence: the prompt (seq_len) plus, for online RL, the generated completion."""
    return w.seq_len + (rollout_len(w) if w.algorithm in ONLINE else 0)


def rollout_sequences(w: Workload) -> int:
    """Sequences one rollout engine decodes at once: its GPUs' prompts of a step (batch_size per GPU) times G
    (GRPO), capped by vLLM's max_num_seqs, unless a concurrency was given."""
    if w.concurrency > 1:
        return w.concurrency
    per_prompt = w.rl_group if w.algorithm == "grpo" else 1
    return min(ROLLOUT_BATCH_SEQS, w.batch_size * per_prompt * max(1, w.tensor_parallel))


def _policy(w: Workload) -> Workload:
    """The trained model's own job: its sequences per micro-batch and their length (sharded by ZeRO-3/FSDP; the
    workload's tensor_parallel is the rollout engine's)."""
    seqs = w.batch_size * (2 if w.algorithm in PAIRED else 1)
    return w.model_copy(update={"algorithm": "sft", "kind": "llm", "batch_size": seqs, "seq_len": train_seq(w),
                                "task": "finetune", "tensor_parallel": 1})


# policy: a rollout engine's weight shard leaves room for the sharded training states and the KV cache beside it.
# verl's DAPO recipe for Qwen2.5-32B generates at gen_tp=4 (61 GiB of bf16 weights, 15 GiB a GPU); at 40 GiB a shard
# a 32B engine took TP 2 (30.5 GiB) and, with its KV cache, no 80 GB card held the colocated job (set3 s3-39)
ROLLOUT_WEIGHTS_PER_GPU_GIB = 20.0


def rollout_tp(w: Workload, model: Model | None, gpus: int) -> int:
    """The rollout engine's tensor-parallel degree on `gpus` GPUs: the fewest (a power of two, within one 8-GPU
    node) whose 16-bit weight shard stays under about 40 GiB, as verl (actor_rollout_ref.rollout.
    tensor_model_parallel_size) and OpenRLHF (--vllm_tensor_parallel_size) are configured for large policies; a
    32B policy rolls out on 4 GPUs (verl's DAPO recipe), a 70B one on 8, an 8B one on 1. Without it every GPU held the whole 70B engine (131 GiB).
    A policy too big for one node (DeepSeek-V3's 671B) rolls out across nodes, as NeMo RL's DeepSeek-V3 GRPO
    runs generate with tensor parallelism over 2-4 nodes (up to 64 GPUs here)."""
    P = arch_of(model, w.params_b).params
    per_param = 1 if w.precision in ("fp8", "int8") else 2
    tp = 1
    while tp < min(64, gpus) and P * per_param / tp / GIB > ROLLOUT_WEIGHTS_PER_GPU_GIB:
        tp *= 2
    return tp


def _frozen(w: Workload, role: str, model: Model | None, n: int) -> MemoryTerm:
    """A frozen model that only scores (reference, reward): 16-bit weights, sharded like the policy's under
    ZeRO-3/FSDP (OpenRLHF and verl shard them too), or in host memory when offloaded."""
    P = arch_of(model, w.params_b).params
    shard = (max(1, n // max(1, w.nodes)) if w.sharding == "hsdp" else
             n if w.sharding in ("zero3", "fsdp") else 1)
    where = "in host memory (offloaded)" if w.ref_offload else f"{P / 1e9:.2f}B params x 2 B" + (
        f" / {shard} GPUs (sharded)" if shard > 1 else "")
    return MemoryTerm.model_construct(name=f"{role} weights (frozen, 16-bit)", category="weights",
                                      gib=0.0 if w.ref_offload else round(P * 2 / shard / GIB, 4), formula=where)


def _rollout(w: Workload, model: Model | None) -> list[MemoryTerm]:
    """The rollout engine's weights and KV cache for the sequences it decodes together."""
    seqs = rollout_sequences(w)
    tp = max(1, w.tensor_parallel)
    serve = w.model_copy(update={"task": "inference", "method": "inference", "algorithm": "sft", "kind": "llm",
                                 "concurrency": seqs, "context": train_seq(w), "gpus": tp, "nodes": 1,
                                 "sharding": "none", "offload": "none", "grad_accumulation": 1,
                                 "precision": "bf16" if w.precision in ("fp32", "fp16", "bf16") else w.precision,
                                 "kbit_upcast": "none", "bnb_saves_input": False, "fsdp_mixed_frozen": False,
                                 "no_sync_accumulation": False})
    est = estimate_memory(serve, model)
    return [t.model_copy(update={"name": f"rollout engine: {t.name}"}) for t in est.terms
            if t.category in ("weights", "kv_cache", "activations")]


def _strip_overhead(est: MemoryEstimate, prefix: str) -> list[MemoryTerm]:
    return [t.model_copy(update={"name": f"{prefix}: {t.name}"}) for t in est.terms if t.category != "overhead"]


def _reward_head(w: Workload, model: Model | None) -> MemoryEstimate:
    """A reward model's head is one scalar: estimated as the same model with a one-wide output, so no vocabulary
    logits (QLoRA keeps the real model's 16-bit embeddings, which the one-wide copy would drop)."""
    if model is None or not model.is_transformer:
        return estimate_memory(_policy(w), model)
    est = estimate_memory(_policy(w), model.model_copy(update={"vocab": 1}))
    if w.method != "qlora":
        return est
    real = estimate_memory(_policy(w), model)
    weights = [t for t in real.terms if t.category == "weights"]
    return est.model_copy(update={"terms": weights + [t for t in est.terms if t.category != "weights"]})


def posttrain_memory(w: Workload, model: Model | None = None) -> MemoryEstimate:
    """Per-GPU memory of a post-training job: resident model states, plus the larger of the training phase's
    activations and (online RL, colocated) the rollout engine's weights and KV cache."""
    validate(w)
    notes: list[Note] = []
    policy = _reward_head(w, model) if w.algorithm == "reward_model" else estimate_memory(_policy(w), model)
    n = w.gpus
    resident = [t for t in _strip_overhead(policy, "policy") if t.category != "activations"]
    train_acts = [t for t in _strip_overhead(policy, "policy") if t.category == "activations"]
    lora = w.method in ("lora", "qlora")
    if w.algorithm in REFERENCE:
        if lora:
            notes.append(Note("pt.ref_is_base", "the reference is the base model with the adapters switched off: "
                              "no second copy of the weights"))
        else:
            resident.append(_frozen(w, "reference", model, n))
    if w.algorithm == "ppo":
        critic = estimate_memory(_policy(w), model)
        resident += [t for t in _strip_overhead(critic, "critic") if t.category != "activations"]
        resident.append(_frozen(w, "reward model", model, n))
        notes.append(Note("pt.ppo_models", "PPO keeps four models: actor and critic train (the critic the size of "
                          "the actor, as OpenRLHF and verl initialise it), reference and reward model score"))
    if w.algorithm in PAIRED:
        notes.append(Note("pt.pairs", f"each sample is a chosen and a rejected sequence: {w.batch_size} samples = "
                          f"{2 * w.batch_size} sequences of {w.seq_len} tokens", batch=w.batch_size,
                          seqs=2 * w.batch_size, seq=w.seq_len))
    rollout: list[MemoryTerm] = []
    if w.algorithm in ONLINE:
        rollout = _rollout(w, model)
        seqs = rollout_sequences(w)
        notes.append(Note("pt.rollout", f"the rollout engine decodes {seqs} sequences of up to {train_seq(w)} "
                          f"tokens ({w.seq_len} prompt + {rollout_len(w)} generated)"
                          + (f", {w.rl_group} per prompt" if w.algorithm == "grpo" else ""),
                          seqs=seqs, ctx=train_seq(w), prompt=w.seq_len, gen=rollout_len(w), group=w.rl_group))
    terms = resident + _phase(w, train_acts, rollout, notes)
    return _finish(w, terms, notes, policy)


def _phase(w: Workload, train_acts: list[MemoryTerm], rollout: list[MemoryTerm], notes: list[Note]
           ) -> list[MemoryTerm]:
    """Colocated, the engine sleeps while the models train (verl's hybrid engine frees its KV cache; OpenRLHF
    --vllm_enable_sleep): the peak is the larger phase. Split, the engine is on its own GPUs and is sized alone."""
    if not rollout:
        return train_acts
    r, t = sum(x.gib for x in rollout), sum(x.gib for x in train_acts)
    if not w.colocate:
        notes.append(Note("pt.split", f"the rollout engines run on a group of {w.gpus} more GPUs and need {r:.1f} "
                          "GiB on each; the training GPUs below hold the models", gib=f"{r:.1f}", gpus=w.gpus))
        return train_acts
    notes.append(Note("pt.phases", f"generation ({r:.1f} GiB of engine weights and KV cache) and training "
                      f"({t:.1f} GiB of activations) take turns on the same GPUs; the larger one counts",
                      rollout=f"{r:.1f}", train=f"{t:.1f}"))
    return rollout if r > t else train_acts


def _finish(w: Workload, terms: list[MemoryTerm], notes: list[Note], policy: MemoryEstimate) -> MemoryEstimate:
    tensors = sum(t.gib for t in terms)
    terms = terms + [
        MemoryTerm.model_construct(name="allocator slack", category="overhead", gib=round(tensors * ALLOCATOR_SLACK, 4),
                                   formula=f"{ALLOCATOR_SLACK:.0%} of tensor memory"),
        MemoryTerm.model_construct(name="CUDA context", category="overhead", gib=CUDA_CONTEXT_GIB,
                                   formula="CUDA context, cuBLAS/cuDNN kernels")]
    per_gpu = sum(t.gib for t in terms)
    breakdown = {c: 0.0 for c in ("weights", "gradients", "optimizer", "activations", "kv_cache", "overhead")}
    for t in terms:
        breakdown[t.category] += t.gib
    all_notes = [n for n in policy.assumptions] + [str(n) for n in notes]
    keys = list(policy.assumption_keys) + [{"key": n.key, "ctx": n.ctx} for n in notes]
    return MemoryEstimate(per_gpu_gib=round(per_gpu, 2), total_gib=round(per_gpu * w.gpus, 2),
                          allocated_gib=round(tensors, 2), breakdown={k: round(v, 2) for k, v in breakdown.items()},
                          terms=terms, assumptions=all_notes, gpus=w.gpus, assumption_keys=keys)


def mean_completion(w: Workload) -> int:
    """Generated tokens of the average completion: the published mean when known, else every one at the limit."""
    return min(w.rollout_mean, rollout_len(w)) if w.rollout_mean else rollout_len(w)


def _flops_per_token(w: Workload, model: Model | None) -> tuple[float, float, str]:
    """Training FLOPs per trained token of every model the algorithm runs, and the policy's own share.

    Online RL recomputes the log-probabilities of the sampled tokens under the policy that generated them
    before it trains (verl's actor.compute_log_prob, OpenRLHF's make_experience, NeMo RL counts "policy logprobs"
    in its step time): one more forward pass. PPO's critic also scores the rollout (values) before it trains."""
    policy, how = training_flops(_policy(w).model_copy(update={"tokens": 1.0}), model)
    fwd = 2 * arch_of(model, w.params_b).active_params
    total, parts = policy, [f"policy {how}"]
    if w.algorithm in REFERENCE:
        total, parts = total + fwd, parts + ["reference forward 2 x active params"]
    if w.algorithm in ONLINE:
        total, parts = total + fwd, parts + ["old-policy log-probs forward 2 x active params"]
    if w.algorithm == "ppo":
        total += policy + 2 * fwd
        parts += ["critic as the policy", "critic values and reward model forwards 2 x 2 x active params"]
    return total, policy, " + ".join(parts)


def _training_s(w: Workload, model: Model | None, gpu: GPU, tokens: int, link: Link | None = None
                ) -> tuple[float, str]:
    """Seconds to train on `tokens` tokens on w.gpus GPUs: the policy's rate from the training speed model (the
    one the LLM training rows check: efficiency, MoE routing, network), stretched by the FLOPs of the other
    passes. Sharded data parallel over all the GPUs, as OpenRLHF, verl's FSDP and TRL run it."""
    total, policy, how = _flops_per_token(w, model)
    job = on_gpus(_policy(w).model_copy(update={"seq_len": w.seq_len + mean_completion(w), "tensor_parallel": 1,
                                                "pipeline_parallel": 1}), w.gpus)
    sp = training_speed(job, model, gpu, link)
    if sp.tokens_per_s <= 0:
        return 0.0, how
    seconds = tokens / sp.tokens_per_s * total / policy
    return seconds, (f"{how}; the policy trains at {sp.tokens_per_s_per_gpu:,.0f} tokens/s per GPU on {gpu.name} "
                     f"(MFU {sp.mfu:.0%}), the other passes in proportion to their FLOPs")


def _generation_s(w: Workload, model: Model | None, gpu: GPU, seqs: int) -> tuple[float, str]:
    """Seconds of rollout per sample: the mean completion decoded by every engine at its batch, plus, when the
    mean is below the limit, the longest completion's remaining tokens decoded nearly alone (a synchronous step
    waits for its last sequence)."""
    tp = max(1, w.tensor_parallel)
    engines = max(1, w.gpus // tp)      # split: a group as large as the training one (OpenRLHF's 1:1)
    batch = rollout_sequences(w)
    serve = w.model_copy(update={"concurrency": batch, "context": train_seq(w), "precision": "bf16"})
    rate = decode_tokens_per_second(serve, model, gpu, tp) or 0.0
    if not rate:
        return 0.0, "no memory bandwidth on file for this GPU"
    mean = mean_completion(w)
    gen_s = mean * seqs / (rate * engines)
    how = f"{seqs} completions x {mean} tokens / ({engines} engine(s) x {rate:,.0f} decode tokens/s at {batch} sequences)"
    tail = rollout_len(w) - mean
    if tail > 0:
        alone = decode_tokens_per_second(serve.model_copy(update={"concurrency": 1}), model, gpu, tp) or rate
        samples_per_round = max(1.0, engines * batch / seqs)
        gen_s += tail / alone / samples_per_round
        how += (f" + the longest completion's last {tail} tokens at {alone:,.0f} tokens/s alone, once per "
                f"{samples_per_round:g} samples")
    return gen_s, how


def posttrain_speed(w: Workload, model: Model | None, gpu: GPU, link: Link | None = None) -> JobSpeed:
    """Samples (preference pairs, or prompts for PPO/GRPO) per second on w.gpus GPUs: the training passes timed by
    the training speed model (over `link`, the speed model's default for the GPU when None), plus for online RL the
    rollout's decode time (bandwidth-bound), in turns when colocated."""
    validate(w)
    seqs = (2 if w.algorithm in PAIRED else 1) * (w.rl_group if w.algorithm == "grpo" else 1)
    trained = w.seq_len + (mean_completion(w) if w.algorithm in ONLINE else 0)
    tokens = trained * seqs
    train_s, how = _training_s(w, model, gpu, tokens, link)
    terms = [RateTerm(name="training compute per sample", value=round(train_s * 1e3, 2), unit="ms",
                      formula=f"{tokens} tokens ({seqs} sequences x {trained}) x ({how})")]
    gen_s = 0.0
    if w.algorithm in ONLINE:
        gen_s, gen_how = _generation_s(w, model, gpu, seqs)
        terms.append(RateTerm(name="generation per sample", value=round(gen_s * 1e3, 2), unit="ms", formula=gen_how))
    step = train_s + gen_s if w.colocate else max(train_s, gen_s)
    rate = 1 / step if step else 0.0
    terms.append(RateTerm(name="samples per second", value=round(rate, 3), unit="samples/s",
                          formula=("training + generation in turns" if w.colocate and gen_s else
                                   "the slower of training and generation (separate GPUs)" if gen_s else
                                   "1 / training time per sample")))
    items = (w.dataset_items or 0) * (w.epochs or 1)
    hours = float(f"{items / rate / 3600:.4g}") if items and rate else None     # 8 prompts: 0.0033 h, not 0
    return JobSpeed(kind="llm", unit="samples/s", rate=round(rate, 3), gpus=w.gpus * (1 if w.colocate or not gen_s else 2), hours=hours, terms=terms)
