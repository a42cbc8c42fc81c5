"""What the planner's stages hand each other and hand up: the job being advised on (`_Job`, made by job_stage.py) and
the advice it becomes (`Advice`, read by the conversation layer and rendered by render/)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.estimate.speed_encoder import generates
from bot.plan.candidates import Shapes, Sizer
from bot.plan.critic import JobView
from bot.plan.plans import Targets
from bot.records.kb import Model
from bot.records.models import Load, MemoryEstimate, Work, Workload


# Volta and Turing have fp16 tensor cores only: "They further support BF16 in Ampere architectures" (MMEngine)
NO_BF16_SOURCES = ["mmengine-amp-docs"]
SHOWN_PER_SHAPE = 3          # an answer shows at most 3 rows of one flavor shape; only the 3 cheapest can appear


@dataclass
class Advice:
    workload: Workload
    model: Model | None
    memory: MemoryEstimate
    assumptions: list[tuple[str, dict[str, Any]]]          # (template key, values)
    recommendations: list[dict[str, Any]]
    considered: list[dict[str, Any]]
    checklist: list[dict[str, Any]]
    notes: list[tuple[str, dict[str, Any], list[str]]]
    trace: list[dict[str, Any]]
    claim_sources: dict[str, list[str]]      # claim (memory, compute, speed) -> the sources the answer cites for it
    compute: dict[str, Any] | None = None
    throughput: dict[str, Any] | None = None
    speed: dict[str, Any] | None = None          # JobSpeed of a non-LLM or post-training job (bot/estimate/kinds.py)
    batch: dict[str, Any] | None = None          # a batch job's numbers (bot/plan/batch.py summary)
    gpu_verdict: dict[str, Any] | None = None
    # the whole job on one card as stated, nothing sharded or offloaded: what 'how much memory?' asks first
    one_copy: MemoryEstimate | None = None
    fallback: dict[str, Any] | None = None
    billing: list[str] = field(default_factory=list)
    plans_searched: int = 0      # flavor x instances x replicas evaluated for this answer
    # the amount of work in the user's units and its derivation (bot/plan/work.py), or a service's load (load.py)
    work: Work | Load | None = None
    targets: list[dict[str, Any]] = field(default_factory=list)     # each stated target, met or not (critic.py)


@dataclass
class _Job:
    """One question's state while it is being advised on."""
    intent: str
    slots: dict[str, Any]
    lang: str
    w: Workload
    model: Model | None
    assumptions: list[tuple[str, dict[str, Any]]]
    sizer: Sizer
    base: MemoryEstimate
    provider: str
    targets: Targets
    gpu_ids: list[str] | None = None          # a comparison: only flavors of these GPUs, on any cloud
    native: str | None = None                 # a precision the planner chose: only GPUs that compute in it
    flavor_ids: list[str] | None = None       # a comparison of clouds or flavors: only these flavors
    facts: dict[str, Any] = field(default_factory=dict)
    shapes: Shapes | None = None
    critic: dict[str, dict[str, Any]] = field(default_factory=dict)    # invariant -> its rule_trace entry

    def view(self) -> JobView:
        serving = self.w.method == "inference" and not self.targets.items
        encoder = serving and not generates(self.model)
        return JobView(training=self.w.method != "inference", deadline_days=self.slots.get("deadline_days"),
                       users=self.targets.concurrency if serving and not encoder else None,
                       rate=(self.targets.encoder_rate() if encoder else self.targets.qps) if serving else None,
                       kind=self.w.kind)


def meets(r: dict[str, Any]) -> bool:
    """A priced plan that misses no target and keeps to the budget."""
    return not r.get("breaks") and not r.get("over_budget") and r.get("hourly") is not None
