"""A serving replica uses the instance it rents (issue 16): when the load needs several replicas of the fewest
cards that hold the model, the planner also splits a replica over more of the instance's cards (tensor
parallelism: the weights held once, the rest of the memory for KV cache) and keeps the plan needing fewer
instances, instead of renting several instances that each leave cards idle."""
from __future__ import annotations


def _rows(core, question: str) -> dict[str, dict]:
    reply, _ = core.turn(question, {})
    r = reply.model_dump()
    return {x["id"]: x for x in r["recommendations"] + r["considered"]}, r


def test_two_card_instance_serves_by_tensor_parallel_not_idle_cards(core):
    # in bf16: unstated, one L4 holds it in FP8 (issue 31 item 5) and the layout question does not arise
    rows, r = _rows(core, "Qwen3-8B 部署，bf16，给 30 个人用，要便宜")
    # 30 chats x 4096 tokens x 144 KiB of KV = 16.9 GiB + 15.3 GiB of weights: one L4 holds ~6 chats, two at TP 2
    # hold 40+; five one-card replicas on 2 x L4 instances would pay for five idle cards
    two_l4 = rows.get("huaweicloud/pi5e.8xlarge.4")
    assert two_l4 is not None, r["text"]
    assert two_l4["layout"]["tp"] == 2 and (two_l4["replicas"] or 1) == 1, two_l4
    assert two_l4["replica_concurrency"] >= 30
    pick = r["recommendations"][0]
    assert pick["gpus_total"] * (pick["replicas"] or 1) <= 2 and pick["hourly_total"] <= 3.0, r["text"]
    assert pick["gpu"] != "t4"                    # never four T4s over PCIe for a light load


def test_a_single_card_replica_is_kept_when_one_replica_is_enough(core):
    rows, r = _rows(core, "serve qwen2.5 7b for 4 users")
    two_l4 = rows.get("huaweicloud/pi5e.8xlarge.4")          # one L4 holds 4 users: no split, one replica
    assert two_l4 is not None, r["text"]
    assert two_l4["layout"]["tp"] == 1 and (two_l4["replicas"] or 1) == 1, two_l4
