"""What would make a job fit on a given GPU: the cheapest changes first, each with its new estimate."""
from __future__ import annotations

from bot.records.errors import InvalidRequest
from bot.estimate.memory import estimate_memory
from bot.records.models import FitStep, Workload
from bot.records.kb import Model


EXPANDABLE = "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"


# ----- what would make it fit -----------------------------------------------------------------------------------
def make_it_fit(w: Workload, model: Model | None, gpu_memory_gib: float, headroom: float = 0.05,
                max_gpus: int = 64) -> list[FitStep]:
    """Cheapest changes first, applied cumulatively until the job fits in the given GPU memory.

    Kept as one ladder (about 65 lines) on purpose: the order of the rungs is the advice, and each rung's
    condition reads the job as the rungs above left it."""
    limit = gpu_memory_gib * (1 - headroom)
    steps: list[FitStep] = []
    current = w
    base = estimate_memory(current, model).per_gpu_gib
    if base <= limit:
        return steps

    def attempt(change: str, **update) -> bool:
        nonlocal current, base
        try:
            cand = Workload.model_validate(current.model_copy(update=update).model_dump())
            est = estimate_memory(cand, model).per_gpu_gib
        except (InvalidRequest, ValueError):
            return False
        if est < base * 0.98:
            current, base = cand, est
            steps.append(FitStep(change=change, per_gpu_gib=est, fits=est <= limit,
                                 workload=cand.model_dump(exclude_defaults=True)))
        return base <= limit

    if w.method == "inference":
        ladder = [("int8 weights", {"precision": "int8"}), ("int4 weights (AWQ/GPTQ)", {"precision": "int4"}),
                  ("fewer concurrent sequences", {"concurrency": max(1, w.concurrency // 4)}),
                  ("shorter context", {"context": max(512, w.context // 4)})]
        if w.engine == "transformers":      # the same model and requests, prompts taken 8,192 tokens at a time
            ladder.insert(0, ("a chunked-prefill server (vLLM)", {"engine": "vllm"}))
        for change, update in ladder:
            if attempt(change, **update):
                return steps
        for n in (2, 4, 8):
            if n > w.gpus and attempt(f"tensor parallel over {n} GPUs", gpus=n, tensor_parallel=n):
                return steps
        return steps
    ladder = [("gradient checkpointing", {"checkpointing": "full", "grad_checkpointing": True, "checkpoint_every": 1}),
              # free: checkpointed recomputation fragments the default caching allocator (arch.CHECKPOINTED_SLACK)
              (EXPANDABLE, {"allocator": "expandable_segments"}),
              ("chunked cross-entropy loss", {"chunked_loss": True}),
              ("micro-batch 1 with gradient accumulation", {"batch_size": 1}),
              ("8-bit AdamW", {"optimizer": "adamw8bit"})]
    if w.method in ("full", "freeze") and w.optimizer == "adamw" and w.adamw_impl == "foreach":
        ladder.insert(0, ("fused AdamW", {"adamw_impl": "fused"}))     # the same update, no step temporary
    if w.checkpointing == "none" and not w.grad_checkpointing:
        # recomputes less than full checkpointing (torchtitan's per-op policy keeps every other matmul's output)
        ladder.insert(0, ("selective activation checkpointing (per-op)",
                          {"checkpointing": "selective", "selective_policy": "alternate-mm"}))
    if w.kbit_upcast != "none":     # free, and faster: fms-acceleration's prepare without the fp32 cast
        ladder.insert(0, ("skip the fp32 upcast of prepare_model_for_kbit_training", {"kbit_upcast": "none"}))
    if w.method in ("full", "freeze"):
        ladder.append(("LoRA instead of full fine-tuning", {"method": "lora"}))
    if w.method in ("full", "freeze", "lora"):
        ladder.append(("QLoRA (4-bit base)", {"method": "qlora", "precision": "bf16"}))
    for change, update in ladder:
        if attempt(change, **update):
            return steps
    # every kind of weight shards and offloads, a LoRA's frozen base and a QLoRA's 4-bit one included (FSDP-QLoRA)
    sharding = "zero3" if current.method in ("full", "freeze") else "fsdp"
    for n in (2, 4, 8, 16, 32, 64):
        if n <= max_gpus and n > current.gpus and attempt(f"ZeRO-3 / FSDP over {n} GPUs", gpus=n,
                                                          sharding=sharding, nodes=max(1, n // 8)):
            return steps
    if current.method in ("full", "freeze"):
        attempt("offload optimizer state to CPU", offload="optimizer")
    if base > limit and current.sharding in ("zero3", "fsdp"):
        attempt("offload parameters too", offload="full")
    return steps
