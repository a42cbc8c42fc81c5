"""The published answer contract: what `gpu-advisor ask --json` prints (DESIGN.md "ask --json"), as pydantic models.

`docs/answer.schema.json` is generated from these (`gpu-advisor schema -o docs/answer.schema.json`); a test fails when
the committed file and the models drift, and every scenario answer is validated against it. The turn itself builds a
`Reply` (bot/records/models.py); the surface adds `advice_id` and `session`. Plan rows carry more figures than those
named here (every figure the planner computed); the named ones are the contract, the rest may change.

SCHEMA_VERSION: major.minor. The minor grows when a field is added; the major when a field is removed, renamed or
changes meaning (readers check the major).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.records.models import SCHEMA_VERSION, AnswerView, Reply
SCHEMA_ID = "urn:gpu-advisor:answer"


class PlanRow(BaseModel):
    """A plan: one flavor, how many of it, its price and whether the job fits (a recommendation or a considered
    plan). Rows carry more figures than these (the planner's own); those named here are the contract."""
    model_config = ConfigDict(extra="allow")
    provider: str
    flavor: str
    gpu: str | None = Field(description="the GPU's id in the knowledge base (null: a card known only by its memory)")
    gpu_count: int = Field(description="GPUs in one instance of the flavor")
    gpu_memory_gib: float
    interconnect: str | None = Field(None, description="nvlink, pcie, or null when unknown")
    rdma: bool | None = None
    instances: int = Field(description="instances of the flavor one copy of the plan uses")
    gpus_total: int | None = Field(None, description="GPUs of one copy (instances x gpu_count)")
    replicas: int | None = Field(None, description="serving: copies of the plan side by side")
    price_per_hour: float | None = Field(None, description="the whole plan's price per hour; null: no public price")
    currency: str | None = None
    price_kind: str | None = Field(None, description="list, indicative, ...: how the price was found")
    price_sources: list[str] = []
    fits: bool
    headroom_pct: float | None = None
    per_gpu_gib: float | None = None
    job_hours: float | None = Field(None, description="wall clock of the whole job; null for always-on serving")
    job_cost: float | None = None
    monthly_cost: float | None = None
    label: Literal["pick", "cheapest", "fastest", "yours", "single_type"] | None = None
    layout: dict[str, Any] | None = Field(None, description="the parallel layout (tp, pp, dp, ep, sharding, ...)")
    why: list[str] = Field([], description="why a plan lost (codes), for considered plans")
    ruled_out: str | None = Field(None, description="why a plan cannot serve the job at all (no_fit, a rule)")
    breaks: list[str] = Field([], description="the targets the plan misses")


class Answer(Reply):
    """One `ask --json` object: one conversation turn's reply, with the audit record's id and the session."""
    model_config = ConfigDict(title="gpu-advisor answer")
    schema_version: str = Field(SCHEMA_VERSION, description="the version of this contract (major.minor)",
                                pattern=r"^1\.\d+$")
    advice_id: str | None = Field(description="the audit record's id (`gpu-advisor audit show ID`)")
    session: str | None = Field(description="the conversation's id (`ask --session ID` continues it)")
    duplicate: bool = Field(False, description="the same event was answered before; this is that record")
    recommendations: list[PlanRow] = Field([], description="ranked plans, best first; label says which is which")
    considered: list[PlanRow] = Field([], description="the plans that lost, each with why")
    view: AnswerView | None = Field(None, description="the answer as every surface lays it out (short form, details)")


def answer_schema() -> dict[str, Any]:
    """The JSON Schema of `ask --json` (draft 2020-12), as committed in docs/answer.schema.json."""
    schema = Answer.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"{SCHEMA_ID}:{SCHEMA_VERSION}", **schema,
            "description": f"gpu-advisor `ask --json`, contract version {SCHEMA_VERSION} (docs/answer.md): "
                           + schema["description"]}
