"""How a training job's parameters are split over its GPUs when it is model-parallel: tensor and pipeline parallelism
split the dense parts, expert parallelism splits a mixture of experts' routed experts, and what is left is replicated
over the data-parallel groups (where ZeRO can shard it further).

The layout is Megatron-Core's (and DeepSpeed-MoE's): the expert-parallel group is carved out of the data-parallel
one, so with EP x PP GPUs holding one copy of the experts, the experts have GPUs / (EP x PP) data-parallel replicas
while the dense parts have GPUs / (TP x PP). Experts are not split by tensor parallelism (expert tensor parallel 1,
"MoE parallel folding", what Megatron-Bridge's MoE recipes set): with TP 2 and EP 32 on 256 GPUs and PP 8, a GPU
holds 1/16 of the dense parameters and 1/256 of the experts.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.estimate.arch import Arch
from bot.records.errors import InvalidRequest
from bot.records.models import Workload


def expert_params(a: Arch) -> float:
    """Parameters of the routed experts (gate, up and down of each, in every MoE layer); shared experts, the router,
    attention, embeddings and the dense layers are the dense part every expert-parallel rank holds."""
    if a.experts <= 1:
        return 0.0
    mats = 3 if a.gated_mlp else 2
    return a.experts * mats * a.hidden * a.expert_ffn * (a.layers - a.dense_layers)


@dataclass(frozen=True)
class Split:
    """One GPU's share of the parameters under tensor (tp), pipeline (pp) and expert (ep) parallelism."""
    params: float
    experts: float
    tp: int
    pp: int
    ep: int
    gpus: int

    @property
    def dense(self) -> float:
        return self.params - self.experts

    @property
    def local(self) -> float:
        """Parameters one GPU holds before ZeRO shards anything: its dense share and its experts' share."""
        return self.dense / (self.tp * self.pp) + self.experts / (self.ep * self.pp)

    @property
    def dp(self) -> int:
        """Data-parallel replicas of the dense parameters."""
        return max(1, self.gpus // (self.tp * self.pp))

    @property
    def edp(self) -> int:
        """Data-parallel replicas of the experts (each expert-parallel group holds one copy)."""
        return max(1, self.gpus // (self.ep * self.pp))

    def how(self) -> str:
        """The split in words, for a formula: 'dense / TP 1 x PP 2, experts / EP 8 x PP 2'."""
        dense = f"dense {self.dense / 1e9:.2f}B / (TP {self.tp} x PP {self.pp})"
        if not self.experts:
            return dense
        return f"{dense} + experts {self.experts / 1e9:.2f}B / (EP {self.ep} x PP {self.pp})"


def split_of(w: Workload, a: Arch) -> Split | None:
    """The model-parallel split of a training job, or None when every GPU holds the whole model (no TP, PP or EP)."""
    if w.method == "inference" or w.tensor_parallel * w.pipeline_parallel * w.expert_parallel == 1:
        return None
    return Split(params=a.params, experts=expert_params(a), tp=w.tensor_parallel, pp=w.pipeline_parallel,
                 ep=w.expert_parallel, gpus=w.gpus)


def check_expert_parallel(w: Workload, a: Arch, name: str) -> None:
    """Refuse an expert-parallel degree the model or the GPU count cannot take, saying which would do."""
    ep, pp = w.expert_parallel, w.pipeline_parallel
    if ep <= 1:
        return
    if a.experts <= 1:
        raise InvalidRequest(f"expert parallelism splits a mixture of experts' experts over GPUs; {name} is a dense "
                             "model", fix="drop --ep (use --tp or --pp to split a dense model)")
    if w.method == "inference":
        raise InvalidRequest("expert parallelism is modelled for training here; serving is split by tensor "
                             "parallelism", fix="drop --ep, or use --tp")
    if a.experts % ep:
        fits = ", ".join(str(d) for d in range(2, min(a.experts, 64) + 1) if a.experts % d == 0)
        raise InvalidRequest(f"EP {ep} does not divide {name}'s {a.experts} experts",
                             fix=f"use an expert-parallel degree that divides {a.experts}: {fits}")
    if w.gpus % (ep * pp):
        raise InvalidRequest(f"EP {ep} x PP {pp} = {ep * pp} GPUs hold one copy of the experts, and {w.gpus} GPUs "
                             "are not a whole number of such copies",
                             fix=f"give --gpus a multiple of {ep * pp}, or a smaller --ep")
