"""Two workloads in one message: a live service and a batch job ('serve qwen2.5 7b for 30 users during the day and
run a nightly batch of 500k classifications', '白天给 30 个人用 qwen2.5 7b 聊天，晚上再跑 50 万条文本分类').

Read as one job, one of the two is dropped: the batch's item count turns the whole question offline (the service's
users vanish), or the users say 'not a batch' (the 500k items vanish). Each is a job of its own, sized on its own
line. The message is split at the connective between its clauses ('and run', 'plus', '另外', '晚上再'), and a split is
kept only when one side reads as a service (a rate, users at once, daily users) and the other as a batch (items and
the offline flag). A batch side that names no model runs the service's; a nightly batch with no deadline of its own
runs in an assumed night window (NIGHT_HOURS), said with the answer.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

NIGHT_HOURS = 8
# the connective between two clauses, the second one starting a job of its own
SPLIT = re.compile(r"(?:,|;)?\s+(?:and|plus|also|then)\s+(?:also\s+)?(?=(?:run|do|process|need|want|have|handle|serve|host|deploy|"
                   r"a\s+|an\s+|nightly|every\s+night|each\s+night|at\s+night|overnight|batch|offline|separately)\b)"
                   r"|[;；]\s*|\.\s+(?=[a-z])"
                   r"|[，,]\s*(?=(?:另外|此外|同时还?|还要|还需要|并且|再|晚上|夜里|夜间|每晚|每天晚上|凌晨))")
NIGHT = re.compile(r"(?<![a-z])(?:nightly|overnight|every\s+night|each\s+night|at\s+night|night\s+batch|off-?hours)"
                   r"(?![a-z])|每晚|晚上|夜里|夜间|每天晚上|凌晨|半夜")


# a message can state both only when it says a batch (or a night run) and a service: the split is tried only then
BATCH_CUE = re.compile(r"batch|offline|bulk|overnight|nightly|at\s+night|every\s+night|离线|批量|批处理|跑一批|晚上|夜里|夜间|每晚|凌晨")
SERVICE_CUE = re.compile(r"serv|users?|qps|rps|requests?\s+(?:per|a|/)|concurren|chat|api|live|部署|用户|并发|在线|聊天|客服|每秒|服务|人用")
MAX_SPLITS = 4
# a sentence that asks about the whole ('Is a single T4 on AWS enough?', '用阿里云的话一张 A10 够吗？') belongs to both jobs
SENTENCE = re.compile(r"[^.?!。？！]+[.?!。？！]*")
ASKS = re.compile(r"[?？]|吗|么|(?<![a-z])(?:is|are|can|could|will|would|should|do|does|what|which|how)(?![a-z])")
JOB_SLOTS = ("qps", "concurrency", "daily_users", "token_rate", "items", "batch_tokens", "fanout", "request_tokens",
             "item_input_tokens", "item_output_tokens", "deadline_days", "deadline_hours")


@dataclass
class Split:
    serving: str
    batch: str
    serving_first: bool
    night_assumed: bool           # a nightly batch with no deadline said: NIGHT_HOURS assumed


def _is_service(s: dict[str, Any]) -> bool:
    return bool(s.get("qps") or s.get("concurrency") or s.get("daily_users") or s.get("token_rate")) \
        and not s.get("offline")


def _is_batch(s: dict[str, Any]) -> bool:
    return bool(s.get("offline") and (s.get("items") or s.get("batch_tokens")))


def _shared(parser: Any, *parts: str) -> tuple[str, str, str]:
    """The parts less their sentences that ask about the whole and state no job of their own, and those sentences."""
    out, shared = [], []
    for part in parts:
        keep = []
        for s in (m.group().strip() for m in SENTENCE.finditer(part)):
            if not s:
                continue
            slots = parser.parse(s).slots.filled() if ASKS.search(s.lower()) else None
            if keep and slots is not None and not any(slots.get(k) for k in JOB_SLOTS):
                shared.append(s)
            else:
                keep.append(s)
        out.append(" ".join(keep))
    return out[0], out[1], " ".join(shared)


def two_workloads(parser: Any, text: str) -> Split | None:
    """The message's two jobs, a service and a batch, when it states both; None otherwise (one job, or a split
    that does not give one of each)."""
    low = text.lower()
    if not (BATCH_CUE.search(low) and SERVICE_CUE.search(low)):
        return None
    for m in list(SPLIT.finditer(low))[:MAX_SPLITS]:
        first, second = text[:m.start()].strip(" ,，;；."), text[m.end():].strip(" ,，;；.")
        if len(first) < 8 or len(second) < 8:
            continue
        a, b = (parser.parse(x).slots.filled() for x in (first, second))
        if _is_service(a) and _is_batch(b):
            serving, batch, serving_first, s_slots, b_slots = first, second, True, a, b
        elif _is_batch(a) and _is_service(b):
            serving, batch, serving_first, s_slots, b_slots = second, first, False, b, a
        else:
            continue
        serving, batch, shared = _shared(parser, serving, batch)
        if shared:
            serving, batch = f"{serving} {shared}", f"{batch} {shared}"
        if s_slots.get("model") and not b_slots.get("model") and not b_slots.get("params_b"):
            batch = f"{batch} ({s_slots['model']})"      # the same model runs the batch
        elif b_slots.get("model") and not s_slots.get("model") and not s_slots.get("params_b"):
            serving = f"{serving} ({b_slots['model']})"  # 'and serve it': the batch's model
        night = bool(NIGHT.search(batch.lower())) and not (b_slots.get("deadline_days") or b_slots.get("deadline_hours"))
        if night:
            batch = f"{batch}, within {NIGHT_HOURS} hours" if parser.parse(batch).lang == "en" \
                else f"{batch}，{NIGHT_HOURS} 小时内跑完"
        return Split(serving=serving, batch=batch, serving_first=serving_first, night_assumed=night)
    return None
