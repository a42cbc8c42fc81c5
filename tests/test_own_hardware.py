"""The user's own cards as a plan of their own (issue 16, bot/plan/own.py): the `yours` row comes first, uses every
card named, says what was changed to make the job fit, and how long it takes; in both languages."""
from __future__ import annotations

import pytest

from bot.surfaces.slack.blocks import blocks
from bot.render.templates import default_templates


def _ask(core, q):
    return core.turn(q, {})[0].model_dump()


@pytest.mark.parametrize("question, lang, said", [
    # FSDP over both cards and the parameters offloaded to CPU, as Answer.AI's 70B recipe on two 24 GB cards
    ("we have 2x RTX 4090, can we QLoRA fine-tune llama 3 70b?", "en", ["What made it fit:", "CPU offload"]),
    ("我们有两张 4090，能 QLoRA 微调 llama 3 70b 吗？", "zh", ["为放下所做的调整：", "参数卸载到 CPU"]),
    # one card: two micro-batches of 2 with accumulation instead of batch 4 (about 25 -> 21 GiB of 24)
    ("I have a single 4090, lora finetune llama 3 8b?", "en", ["micro-batch 2 with 2-step gradient accumulation"]),
    ("我只有一张 4090，想 LoRA 微调 llama 3 8b", "zh", ["micro-batch 2、梯度累积 2 步"]),
])
def test_what_made_it_fit_is_said(core, question, lang, said):
    r = _ask(core, question)
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["fits"] and mine["gpus_total"] == mine["cards"]
    assert r["lang"] == lang
    head = r["text"].split("\n")
    assert head[0].startswith(default_templates().say("label.yours", lang))
    for words in said:
        assert words in r["text"] + r["details"], r["text"] + r["details"]
    # their cards hold it: that is the answer; the rental follows after the fold, introduced as sized on its own,
    # the pick its first rental
    rent, more = default_templates().say("yours.rent", lang), r["details"].split("\n")
    assert rent not in head and not any(x.startswith(default_templates().say("label.pick", lang)) for x in head)
    assert rent in more and more[more.index(rent) + 1].startswith(default_templates().say("label.pick", lang))


def test_how_long_on_their_cards(core):
    """8 x A100 80GB, full fine-tune of Qwen2.5-32B on 2B tokens: 6 x 32.8e9 x 2e9 = 3.9e20 FLOPs at ~1e15 FLOP/s
    (8 x 312 TFLOPS x 40 %) is ~108 h; with recomputation 8PD ~145 h. The yours row and the text give the time."""
    r = _ask(core, "we have 8 x A100 80GB, full fine-tune Qwen2.5-32B on 2B tokens, how long?")
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["gpus_total"] == 8 and 70 <= mine["job_hours"] <= 250
    assert mine["job_cost"] is None and mine["price_per_hour"] is None
    assert f"About {mine['job_hours']:,.0f} h" in r["text"] + r["details"]
    assert mine["layout"]["sharding"] == "zero3" and mine["layout"]["dp"] == 8


def test_no_tokens_asks_for_them(core):
    r = _ask(core, "我们有 4 张 3090，能 LoRA 微调 Qwen2.5-14B 吗，要多久？")
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["fits"] and mine["job_hours"] is None
    assert default_templates().say("yours.hours_unknown", "zh") in r["text"] + r["details"]


def test_tight_server_states_its_kv_budget(core):
    """2 x A100 80GB serving Llama 3 70B (TP 2): 65.7 GiB of weights per card leave ~16.8k tokens of KV cache:
    4 full 4,096-token sequences, or the 10 users at the 1,280-token requests assumed. It fits, and says so."""
    # 10 requests in flight (10 users are fewer: they read between answers, Little's law)
    r = _ask(core, "we have two A100 80GB, can we serve llama 3 70b on them for 10 concurrent requests?")
    mine = r["recommendations"][0]
    assert mine["fits"] and mine["layout"]["tp"] == 2 and mine["per_gpu_gib"] <= 80 * 0.95
    assert 12_800 <= mine["kv_tokens"] <= 25_000 and mine["full_sequences"] >= 1
    assert f"{mine['kv_tokens']:,} tokens" in r["text"] + r["details"]
    assert "pagedattention-paper" in [c["id"] for c in r["citations"]]


def test_no_fit_names_job_changes_never_more_cards(core):
    """Full fine-tuning of a 70B model on two 24 GB cards: > 1 TB of host RAM even to offload it, so it does not fit;
    what would make it fit changes the method (QLoRA), never the card count."""
    r = _ask(core, "we have 2 x RTX 4090, full finetune llama 3 70b?")
    mine = r["recommendations"][0]
    assert not mine["fits"] and mine["gpus_total"] == 2
    assert mine["fit_steps"] and all("GPUs" not in s["change"] for s in mine["fit_steps"])
    assert "will run out of memory" in r["text"].split("\n")[0]


def test_slack_header_names_their_cards(core):
    r = _ask(core, "we have 2x RTX 4090, can we QLoRA fine-tune llama 3 70b?")
    header = blocks(r, default_templates())[0]["text"]["text"]
    assert header.startswith("Yours: 2x NVIDIA GeForce RTX 4090")


def test_a_card_known_by_its_memory(core):
    r = _ask(core, "will lora of llama 2 13b fit on my 24GB card?")
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["gpu"] is None and not mine["fits"]
    assert r["text"].startswith("Yours: 1 x 24 GiB card")


@pytest.mark.parametrize("question, cards", [
    ("rent 8 x H100 to full finetune llama 3 8b", 8),
    ("租 4 张 A100 做 qwen2.5 14b 的 lora 微调", 4),
])
def test_cards_to_rent_are_not_theirs(core, question, cards):
    """'rent 8 x H100': the count is the rental's, so there is no `yours` plan and the rental uses that many."""
    r = _ask(core, question)
    assert r["slots"].get("renting") is True
    assert all(x["label"] != "yours" for x in r["recommendations"])
    assert r["recommendations"][0]["gpus_total"] == cards


def test_having_cards_and_asking_what_to_rent_is_about_theirs_first(core):
    r = _ask(core, "实验室就一张3090，想全参微调 chatglm3-6b 可以吗？不行的话租什么云服务器")
    assert not r["slots"].get("renting") and r["recommendations"][0]["label"] == "yours"


# ----- a card known only by its memory: judged as a generic card of that size, its speed bracketed ---------------
@pytest.mark.parametrize("question, lang, mem", [
    ("I have a 24GB card, lora finetune qwen2.5 7b on 100M tokens", "en", 24),
    ("我的显卡是 24G，LoRA 微调 qwen2.5-7b，1亿 token", "zh", 24),
    ("手上两张 48G 的卡，全参微调 Qwen2.5-7B，2亿 token", "zh", 48),
])
def test_an_unnamed_card_is_timed_on_the_cards_of_its_memory(core, question, lang, mem):
    """The tokens are given but not the card: no single time is invented, and 'say how many tokens' is not asked
    again. The plan is timed on each card on file with that memory (24 GiB: A30, A10, A10G, L4, RTX 3090/4090,
    Quadro RTX 6000), and the line states the fastest and slowest of them, as a range."""
    r = _ask(core, question)
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["gpu"] is None and mine["fits"] and mine["job_hours"] is None
    b = mine["bracket"]
    assert len(b) >= 2 and all(core.kb.gpus[x["gpu"]].memory_gib == mem for x in b)
    assert [x["hours"] for x in b] == sorted(x["hours"] for x in b) and b[0]["hours"] < b[-1]["hours"]
    t = default_templates()
    assert t.say("yours.hours_unknown", lang) not in r["text"] + r["details"]
    head = r["text"].split(t.say("yours.rent", lang))[0]
    assert b[0]["gpu_name"] in head and b[-1]["gpu_name"] in head
    assert f"{b[0]['hours']:,.0f}" in head and f"{b[-1]['hours']:,.0f}" in head


def test_an_unnamed_card_with_no_speed_on_file_says_so(core):
    """No 12 GiB card is on file: the time is unknown and the answer says what would give it (the card's name)."""
    r = _ask(core, "my GPU has 12 GB VRAM, qlora finetune qwen2.5 7b on 10M tokens")
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["fits"] and mine["bracket"] == []
    assert default_templates().say("yours.speed_unknown", "en", mem="12") in r["text"] + r["details"]


def test_an_unnamed_card_serving_states_its_range_per_token(core):
    r = _ask(core, "I have two 24GB cards, serve qwen2.5 7b for 20 users")
    mine = r["recommendations"][0]
    assert mine["cards"] == 2 and mine["fits"] and len(mine["bracket"]) >= 2
    assert mine["bracket"][0]["tpot_ms"] < mine["bracket"][-1]["tpot_ms"]
    assert "ms per output token" in r["text"].split("\n")[1]


def test_which_card_is_asked_only_when_it_decides_the_deadline(core):
    """LoRA on Qwen2.5-7B over 100M tokens on one 24 GiB card: about 15 h on an A30, 35 h on an A10G. A 1-day
    deadline falls inside that range, so which card it is decides the answer: asked, the cards as buttons. The
    answer to it times the job on that card. A 2-day deadline is met by every one of them: answered at once."""
    q = "I have a 24GB card, lora finetune qwen2.5 7b on 100M tokens"
    r, state = core.turn(q + ", need it done within 1 day", {})
    assert r.status == "follow_up" and r.missing == ["gpu_model"]
    assert "NVIDIA L4" in r.choices and "NVIDIA GeForce RTX 4090" in r.choices
    r2, _ = core.turn("NVIDIA L4", state)
    mine = r2.recommendations[0]
    assert r2.status == "answer" and mine["label"] == "yours" and mine["gpu"] == "l4" and mine["job_hours"]
    r3, _ = core.turn(q + ", need it done within 2 days", {})
    assert r3.status == "answer" and r3.recommendations[0]["card_decides"] is None


def test_not_sure_which_card_answers_with_the_range_and_says_the_card_decides(core):
    r, state = core.turn("我的显卡是 24G，LoRA 微调 qwen2.5-7b，1亿 token，一天内要跑完", {})
    assert r.status == "follow_up"
    r2, _ = core.turn("不确定", state)
    assert r2.status == "answer" and r2.recommendations[0]["card_decides"] == 1
    assert default_templates().say("yours.card_decides", "zh", days="1") in r2.text


# ----- no method said, cards of their own: which method fits is the answer, not a question back -------------------
@pytest.mark.parametrize("question, lang, chosen, fit, offload, unfit", [
    # 16 GiB card, a 7B model: bf16 weights alone are 13 GiB (LoRA 16.7 GiB at micro-batch 1 > 16), full fine-tuning
    # needs ~16 bytes a parameter (~110 GiB): only QLoRA's 4-bit base (~4 GiB of weights) fits
    ("我的显卡是 16G，能微调 7B 吗", "zh", "qlora", ["qlora"], [], ["full", "lora"]),
    # one 24 GiB RTX 4090 and Qwen2.5-7B: LoRA ~21 GiB at micro-batch 2 fits, full fine-tuning (~120 GiB) does not
    ("我有一张 4090，能微调 qwen2.5 7b 吗", "zh", "lora", ["lora", "qlora"], [], ["full"]),
    # 8 x A100 80GB: ZeRO-3 over 8 cards puts ~122 GiB of weights, gradients and AdamW state at ~15 GiB a card
    ("I have 8 A100 80GB, can we fine-tune qwen2.5 7b?", "en", "full", ["full", "lora", "qlora"], [], []),
    # two 24 GiB cards and a 70B model: bf16 weights alone are 130 GiB; QLoRA's ~37 GiB 4-bit base over two cards
    # plus activations is over 24 GiB a card, so it fits only with the parameters offloaded to the CPU (Answer.AI's
    # recipe); it is still the nearest: answered for it
    ("we have two 24GB cards, can we finetune llama 3 70b?", "en", "qlora", [], ["qlora"], ["full", "lora"]),
    # 8 x A100 80GB and Llama 2 70B: full fine-tuning's ~1.1 TB of weights, gradients and AdamW state is ~140 GiB a
    # card under ZeRO-3, so it fits only with the optimizer state on the CPU (~770 GiB of host RAM); LoRA's 130 GiB
    # bf16 base sharded is ~17 GiB a card: answered for LoRA, full named as needing offload
    ("dose 8 A100 80g enough to finetune 70b llama2 ?", "en", "lora", ["lora", "qlora"], ["full"], []),
])
def test_on_their_cards_the_method_that_fits_is_answered(core, question, lang, chosen, fit, offload, unfit):
    """The method that trains the most of the model among those that fit their cards as they are is answered for at
    once (one that fits only with state offloaded to host RAM comes after those); the first assumption says which
    fit, which only with offload, and which do not; the other methods are buttons."""
    r = _ask(core, question)
    t = default_templates()
    assert r["status"] == "answer" and r["slots"]["method"] == chosen
    mine = r["recommendations"][0]
    assert mine["label"] == "yours" and mine["fits"]
    clauses = r["assumptions"][0].split(t.say("fits_their_cards.answered", lang, chosen="|").split("|")[0])[0]
    said = {key: clause.split(t.say(f"fits_their_cards.{key}", lang, methods=""))[1]
            for clause in clauses.split(t.say("list.sep_clause", lang)) for key in ("fit", "offload", "unfit")
            if clause.startswith(t.say(f"fits_their_cards.{key}", lang, methods=""))}
    for key, methods in (("fit", fit), ("offload", offload), ("unfit", unfit)):
        want = t.say("list.sep", lang).join(t.say(f"method_name.{m}", lang) for m in methods)
        assert said.get(key, "") == want, (key, said)
    assert sorted(r["choices"]) == sorted(t.say(f"method.{m}", lang) for m in ("full", "lora", "qlora") if m != chosen)


def test_a_method_button_after_that_answers_for_it(core):
    """Pressing 'full' after the QLoRA answer on a 16 GiB card: the job is re-answered for full fine-tuning, which
    does not fit, with what would make it fit."""
    _r, state = core.turn("我的显卡是 16G，能微调 7B 吗", {})
    r2, _ = core.turn(default_templates().say("method.full", "zh"), state)
    assert r2.status == "answer" and r2.slots["method"] == "full"
    assert r2.recommendations[0]["label"] == "yours" and not r2.recommendations[0]["fits"]


def test_without_cards_of_their_own_the_method_is_still_asked(core):
    r, _ = core.turn("fine-tune qwen2.5 7b, which gpu?", {})
    assert r.status == "follow_up" and r.missing == ["method"]


# ----- a GPU named without a count: how many of them hold the job ------------------------------------------------
@pytest.mark.parametrize("intent, slots, cards, one_offload", [
    # Qwen2.5-72B bf16: 135 GiB of weights > 80 GiB; two cards carry 67.7 GiB each plus KV for 4 x 4096 tokens and
    # the allocator's slack, ~78 GiB > 76 usable; four (two replicas of two) hold it
    ("inference", {"model": "qwen2.5-72b", "gpu_model": "a100"}, {4}, None),
    # int4 72B: ~40 GiB of 4-bit weights + 4.6 GiB of 16-bit embeddings > 30.4 usable of a V100 32GB; two hold it
    ("inference", {"model": "qwen2.5-72b", "gpu_model": "v100-32gb", "precision": "int4"}, {2}, None),
    # 7B full fine-tune, ~122 GiB of weights, gradients and AdamW state: one 80 GiB card only with the optimizer
    # state on the CPU; two sharding it (ZeRO-3) hold it without
    ("finetune", {"model": "qwen2.5-7b", "gpu_model": "a100-80gb", "method": "full"}, {2}, "optimizer"),
    # LoRA of an 8B on one 24 GiB A10: ~21 GiB at micro-batch 2: one card, nothing more to say
    ("finetune", {"model": "llama-3-8b", "gpu_model": "a10", "method": "lora"}, {1}, None),
])
def test_a_gpu_named_without_a_count_is_judged_on_the_fewest_that_hold_it(core, intent, slots, cards, one_offload):
    advice = core.advisor.advise(intent, slots, {}, "en")
    row = advice.gpu_verdict["row"]
    assert row["fits"] and row["gpus_total"] in cards, row["gpus_total"]
    if row["gpus_total"] > 1:
        assert row["one_card_gib"] is not None and row["one_card_offload"] == one_offload
        if one_offload is None:
            assert row["one_card_gib"] > row["gpu_memory_gib"] * 0.95
    else:
        assert row["one_card_gib"] is None


def test_their_own_cards_are_never_resized(core):
    """'we have two A100 80GB': two, as they said, even when two are too tight (the answer says what would fit)."""
    advice = core.advisor.advise("inference", {"model": "qwen2.5-72b", "gpu_model": "a100-80gb", "gpus": 2}, {}, "en")
    assert advice.gpu_verdict["row"]["cards"] == 2 and advice.gpu_verdict["row"]["one_card_gib"] is None


@pytest.mark.parametrize("question, why, cards", [
    # 8 x 7e9 x 1e12 = 5.6e22 FLOP at 30-40 % of 989 TFLOPS in 720 h: 54-72 H100s; in the roomier pre-training
    # layout 6 x 7e9 x 1e12 = 4.2e22 at ~46 % / 0.9 goodput: ~28.5k GPU-h, 40 H100 over 720 h; the fewest whole
    # servers that meet it (OwnCards._fewest_servers), not the next power of two
    ("pretrain a 7B llama-style model on 1T tokens, how many H100s to finish in ~30 days", "deadline", {40, 48, 56, 64}),
    # no deadline: the 30-day run the rental is sized to. 2B (a MoE whose size is all we know) on 300B tokens:
    # 8 x 2e9 x 3e11 = 4.8e21 FLOP at ~25 % of 989 TFLOPS: ~5.4k GPU-h, 7.5 H800 over 720 h -> 8; pre-trained in
    # Megatron's roomier layout (micro-batch 4 x 2,048 tokens, no full recomputation: layouts.roomy_layouts)
    # 6 x 2e9 x 3e11 = 3.6e21 at ~40 %: ~2.5k GPU-h, 3.5 H800 -> 4
    ("有个2B的MoE想预训练，数据3000亿token，大概要多少H800", "horizon", {4, 6, 8, 16}),
])
def test_a_gpu_named_without_a_count_is_sized_to_the_time(core, question, why, cards):
    """'How many H100s to pre-train ...': the cards that hold the job would take years; the count doubles until the
    run meets the deadline (or, with none, the 30 days the rental is sized to), and the line says which."""
    r, _ = core.turn(question, {})
    # not theirs: the verdict is the answer's first line, its row the advisor's gpu_verdict
    slots = {k: v for k, v in r.slots.items() if v is not None}
    row = core.advisor.advise(r.intent, slots, {}, r.lang).gpu_verdict["row"]
    assert row["for_deadline"] == why and row["gpus_total"] in cards, row["gpus_total"]
    assert row["job_hours"] <= 720
    if why == "deadline" and row["gpus_total"] > 8:
        # the fewest whole servers: one server fewer misses the deadline
        fewer = core.advisor.advise(r.intent, {**slots, "gpus": row["gpus_total"] - 8}, {}, r.lang).gpu_verdict["row"]
        assert fewer["job_hours"] > 720, (row["gpus_total"], fewer["job_hours"])
    assert core.templates.say(f"yours.fits_for_{why}", r.lang, n=row["gpus_total"], need="", have="",
                              layout="").split(":")[0].split("：")[0] in r.text.split("\n")[0]
