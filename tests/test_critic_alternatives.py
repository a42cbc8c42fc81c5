"""No alternative an engineer would not list (issue 29 plausibility; set3 s3-26: 'Cheapest: 6 x g4dn.metal (48 T4)'
for serving DeepSeek-V3): the critic's `replica-span` invariant rules out a serving plan whose one copy of the model
spans more than two machines, so no pick, cheapest or fastest plan is one.

A property over GENERATED serving jobs (large and small models x clouds x load x language): every rental offered
spans at most two machines a replica, and each such row that was searched is in the considered rows with the
invariant's reason, never silently dropped; a table test of the check itself.
"""
from __future__ import annotations

import functools

from hypothesis import HealthCheck, given, settings, strategies as st

from bot.plan.critic import Critic, JobView

MODELS = ["deepseek-v3", "llama-3.1-405b", "qwen2.5-72b", "llama-3.1-70b", "qwen2.5-7b"]
CLOUDS = ["aws", "gcp", "azure", "huawei cloud", "lambda"]


@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


@st.composite
def serving_jobs(draw):
    model, cloud = draw(st.sampled_from(MODELS)), draw(st.sampled_from(CLOUDS))
    users, lang = draw(st.sampled_from([10, 100])), draw(st.sampled_from(["en", "zh"]))
    q = f"serve {model} on {cloud} for {users} concurrent users" if lang == "en" else \
        f"在 {cloud} 上部署 {model} 推理服务，{users} 个并发用户"
    return q, lang


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=serving_jobs())
def test_no_serving_plan_offered_spans_more_than_two_machines_a_replica(job):
    q, lang = job
    reply = _core().turn(q, {})[0]
    assert reply.lang == lang
    limit = _core().rules.invariants["replica-span"].limit("instances_max")
    for r in reply.recommendations:
        if r.get("label") == "yours":
            continue
        assert (r.get("instances") or 1) <= limit, (q, r["flavor"], r.get("instances"), r.get("label"))


class _F:
    def __init__(self, n):
        self.flavor, self.gpu_count = "g4dn.metal", n


def test_the_check_reads_machines_a_replica_and_spares_training():
    critic = Critic(_core().rules.invariants)
    row = {"instances": 6, "flavor": _F(8), "gpu": "t4", "gpu_name": "NVIDIA T4", "ruled_out": None}
    assert critic._replica_span(row, JobView(training=False), {})["gpus"] == 48
    assert critic._replica_span({**row, "instances": 2}, JobView(training=False), {}) is None
    assert critic._replica_span(row, JobView(training=True), {}) is None


def test_s3_26_no_48_t4_for_deepseek_v3():
    reply = _core().turn("can a single p5.48xlarge serve DeepSeek-V3 (671B)? we only need it to work for ~10 "
                         "concurrent users", {})[0]
    offered = [r for r in reply.recommendations if r.get("label") != "yours"]
    assert offered and all(r["gpu"] != "t4" for r in offered), [(r["flavor"], r["gpu"]) for r in offered]
    assert "g4dn.metal" not in reply.text.split("\n(")[0]
