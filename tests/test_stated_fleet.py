"""A fleet the user states ('we have 40 L4s', '用 40 台 g6.xlarge', 'rent 16 H100') for work that one card holds:
copies side by side, each timed on its share of the work; never one copy sharded over all of them, never an instance
paid for whole and run on one of its cards.

The first runs on fresh questions found '50k hours of Whisper on our 40 L4s' answered with 'give the tokens' (the
audio hours were never timed on owned cards), '40 台 g6.xlarge' read as 320 cards (8 a machine), 'rent 16 H100 for
an 8B' planned as tensor parallel over two machines, and an 8 x B200 instance timed on one card at the price of eight.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bot.conversation.turn import Core


@pytest.fixture(scope="module")
def core():
    return Core.load()


CARDS = [("L4", "l4"), ("A10", "a10"), ("A100", None), ("T4", "t4")]


def _audio_question(lang: str, n: int, card: str, hours: int, owned: bool) -> str:
    if lang == "en":
        return (f"we have {n}x {card}, need to transcribe {hours} hours of audio with whisper large-v3, how long?"
                if owned else f"transcribe {hours} hours of audio with whisper-large-v3 on {n} {card}s we own, how long")
    return f"我们有 {n} 张 {card}，用 whisper large-v3 转写 {hours} 小时录音，要多久？" if owned else \
        f"用自己的 {n} 张 {card} 跑 whisper-large-v3，{hours} 小时音频转写完要多久"


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(card=st.sampled_from(CARDS), n=st.sampled_from([2, 4, 8, 16]), hours=st.sampled_from([2000, 20000, 50000]),
       lang=st.sampled_from(["en", "zh"]), owned=st.booleans())
def test_audio_hours_on_stated_cards_are_timed_and_halve_with_twice_the_cards(core, card, n, hours, lang, owned):
    """Hours of audio on the user's n cards: a time on all n (not 'give the tokens'), and twice the cards take half
    the time (copies side by side share the audio; nothing is exchanged between them)."""
    one = core.turn(_audio_question(lang, n, card[0], hours, owned), {})[0].model_dump()
    two = core.turn(_audio_question(lang, 2 * n, card[0], hours, owned), {})[0].model_dump()
    for r, cards in ((one, n), (two, 2 * n)):
        v = r["verdict"] or {}
        assert v.get("hours") and v.get("cards") == cards, (cards, r["text"][:400])
        assert "tokens" not in r["text"].split("\n")[0], r["text"][:300]
    ratio = one["verdict"]["hours"] / two["verdict"]["hours"]
    assert 1.8 <= ratio <= 2.2, (one["verdict"], two["verdict"])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.sampled_from([4, 12, 40]), flavor=st.sampled_from([("g6.xlarge", 1), ("p4d.24xlarge", 8),
                                                               ("g6.12xlarge", 4)]),
       lang=st.sampled_from(["en", "zh"]))
def test_a_count_of_a_named_flavor_is_its_cards(core, n, flavor, lang):
    """'40 台 g6.xlarge', 'run 12 g5.12xlarge instances': the cards are the count times that size's cards, not
    a guessed 8 a machine."""
    text = f"用 {n} 台 {flavor[0]} 转写 3 万小时音频，whisper large-v3，要多久" if lang == "zh" else \
        f"transcribe 30000 hours of audio with whisper large-v3 on {n} {flavor[0]} instances, how long?"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"] or {}
    assert v.get("cards") == n * flavor[1], (text, v, r["text"][:300])
    assert v.get("hours"), r["text"][:300]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=st.sampled_from(["whisper large-v3", "yolov8m", "sdxl"]),
       cloud=st.sampled_from(["aws", "gcp", "azure"]), lang=st.sampled_from(["en", "zh"]))
def test_an_instance_of_several_cards_runs_a_copy_on_each(core, model, cloud, lang):
    """Work one card holds, on an instance of several cards: a copy on every card paid for (gpus_total a multiple of
    the instance's cards), never one card busy and seven idle."""
    work = {"whisper large-v3": ("transcribe 20000 hours of audio", "转写 2 万小时音频"),
            "yolov8m": ("run detection on 50 million images", "对 5000 万张图片做检测"),
            "sdxl": ("generate 2 million images at 1024x1024", "生成 200 万张 1024x1024 图片")}[model]
    text = f"{work[0]} with {model} on {cloud}, how long and how much?" if lang == "en" else \
        f"在 {cloud} 上用 {model} {work[1]}，要多久多少钱？"
    r = core.turn(text, {})[0].model_dump()
    for rec in r["recommendations"]:
        if rec.get("label") == "yours" or not rec.get("gpu_count") or rec.get("per_gpu_gib", 0) * 1.2 > \
                rec.get("gpu_memory_gib", 0):
            continue
        per_instance = rec["gpus_total"] / max(1, rec.get("instances") or 1)
        assert per_instance >= rec["gpu_count"], (text, rec["flavor"], rec["gpu_count"], rec["gpus_total"])


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.sampled_from([8, 16, 32]), gpu=st.sampled_from(["H100", "A100", "L40S"]),
       model=st.sampled_from(["llama 3 8b", "qwen2.5-7b", "mistral 7b"]), lang=st.sampled_from(["en", "zh"]))
def test_renting_many_cards_for_a_small_model_never_shards_one_copy_over_them(core, n, gpu, model, lang):
    """'rent 16 H100 to serve an 8B': a model one card holds is never planned as one copy over all 16 (tensor
    parallel over two machines); copies of the fewest cards that hold it, on the named-GPU line and in the pick."""
    text = f"rent {n} {gpu} to serve {model} for 300 concurrent users" if lang == "en" else \
        f"租 {n} 张 {gpu} 部署 {model}，并发 300"
    r = core.turn(text, {})[0].model_dump()
    for rec in r["recommendations"]:
        layout = rec.get("layout") or {}
        assert (layout.get("tp") or 1) <= 8 and (layout.get("pp") or 1) == 1, (text, rec["flavor"], layout)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.sampled_from([4, 8, 16]), gpu=st.sampled_from(["A100", "L4", "H100"]), lang=st.sampled_from(["en", "zh"]))
def test_a_count_to_rent_is_priced_for_the_hours_it_takes(core, n, gpu, lang):
    """'rent 16 A100 to transcribe ...': the count they mean to rent costs its cards' price a card-hour x cards x the
    hours the job takes on them, said on the same line family as the time."""
    text = f"rent {n} {gpu} to transcribe 10000 hours of audio with whisper-large-v3, how long and how much?" \
        if lang == "en" else f"租 {n} 张 {gpu} 用 whisper-large-v3 转写 1 万小时录音，要多久、多少钱？"
    r = core.turn(text, {})[0].model_dump()
    v = r["verdict"] or {}
    rent = v.get("rent")
    assert rent, f"no rental cost for the count asked: {r['text'][:400]}"
    assert rent["cards"] == n == v["cards"] and abs(rent["hours"] - v["hours"]) <= 0.05, (rent, v)
    assert v["line"] == r["text"].split("\n")[0] and f"{rent['cost']:,.0f}" in v["line"], (v["line"], rent)
    assert abs(rent["cost"] - rent["per_card"] * n * rent["hours"]) <= 0.01 * rent["cost"] + 0.05, rent
    assert f"{rent['cost']:,.0f}" in r["text"] or f"{rent['cost']:,.2f}" in r["text"], r["text"][:500]
