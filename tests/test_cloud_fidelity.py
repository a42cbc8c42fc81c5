"""The cloud the user names is the cloud answered (issue 29 honesty; set3 class 'named cloud swapped': s3-01, s3-07,
s3-09, s3-21, s3-40).

- A cloud the knowledge base covers: every plan shown on another cloud (pick, cheapest, fastest) is labelled as
  elsewhere, and the answer says why (nothing suitable on file there).
- A cloud it does not cover (rules/lexicon.yaml `clouds`, data, not code): the first line says it is not covered, no
  plan is presented as that cloud's, every plan shown is labelled as elsewhere, and the default cloud is not said
  back as an assumption (the user named one). Billing and spot questions say it before another cloud's terms.
- The lexicon's names never shadow a model, GPU or provider name, and a cloud whose id becomes a provider of the
  knowledge base (another helper adding Alibaba's instances) is covered from then on, with no code change.

Properties over GENERATED jobs (hypothesis): job kinds x every cloud (covered or not, by any of its names) x
language; set3 rows as regressions.
"""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st



@functools.lru_cache(maxsize=1)
def _core():
    from bot.conversation.turn import Core
    return Core.load()


def _clouds() -> dict[str, list[str]]:
    lex = _core().parser.lex.get("clouds") or {}
    return {cid: [str(a) for a in v.get("aliases") or []] for cid, v in lex.items()}


def _covered() -> dict[str, list[str]]:
    kb = _core().kb
    return {pid: [a for a, p in kb.provider_aliases.items() if p == pid] for pid in kb.providers}


JOBS = {
    "sft": ("LoRA fine-tune qwen2.5-7b on 20k samples of 1024 tokens, 2 epochs, on {cloud}",
            "在{cloud}上用 LoRA 微调 qwen2.5-7b，2万条样本，每条 1024 token，2 个 epoch"),
    "serve": ("serve llama-3.1-8b on {cloud} for 50 concurrent users", "在{cloud}上部署 llama-3.1-8b 推理，50 个并发用户"),
    "pretrain": ("pre-train a 1B model on 20B tokens on {cloud}", "在{cloud}上预训练一个 1B 模型，200亿 token"),
    "full": ("full fine-tune qwen2.5-14b on {cloud}, 50k samples of 2k tokens", "在{cloud}上全参微调 qwen2.5-14b，5万条，每条 2k token"),
    "a100": ("on {cloud}, how many A100 to DPO qwen2.5-7b on 50k pairs of 1k tokens?",
             "在{cloud}上用DPO训练qwen2.5-7b，5万对，每条1k token，要几张A100？"),
}


def _shown(reply) -> list[tuple[str, str, str]]:
    """(section key, its label, the provider of the plan it shows) for each rental plan the answer names."""
    recs = [r for r in reply.recommendations if r.get("label") != "yours"]
    by_label = {r.get("label"): r for r in recs[1:]}
    out = []
    for s in reply.view.sections:
        row = recs[0] if s.key == "pick" and recs else by_label.get(s.key) if s.key in ("cheapest", "fastest") else None
        if row is not None:
            out.append((s.key, s.label, row["provider"]))
    return out


def _broken(reply, cloud: str, covered: bool, lang: str) -> list[str]:
    core, t = _core(), _core().templates
    out = []
    if reply.status != "answer":
        return out
    suffix = t.say("label.elsewhere", lang)
    shown = _shown(reply)
    name = core.cloud_name(cloud, lang)
    for key, label, provider in shown:
        if provider != cloud and not label.endswith(suffix):
            out.append(f"{key} on {provider} not labelled as elsewhere ({label!r})")
        if provider == cloud and label.endswith(suffix):
            out.append(f"{key} on {cloud} itself labelled as elsewhere")
    if not covered:
        keys = [s.key for s in reply.view.sections]
        lead = keys[1:2] if keys[:1] == ["changed"] else keys[:1]     # after what a follow-up changed, if it did
        first = next((s.lines[0] for s in reply.view.sections if s.key == "cloud"), "")
        if lead != ["cloud"] or name not in first:
            out.append(f"the answer does not open with {name} not covered: {keys[:3]} {reply.text[:120]!r}")
        default = core.kb.providers[core.advisor.default_provider].display_name(lang)
        said = t.say("assume.provider", lang, provider=default)
        if said.rstrip("。.") in " ".join(reply.assumptions):
            out.append("the default cloud said back as an assumption although the user named one")
        if reply.slots.get("provider") is not None:
            out.append("a cloud not covered was read as a covered provider")
    elif shown and shown[0][2] != cloud:
        lead = " ".join(" ".join(s.lines) for s in reply.view.sections if s.key in ("cloud", "lead"))
        if name not in lead:
            out.append(f"the pick is not on {name} and no line says why")
    return out


@st.composite
def named_cloud_jobs(draw):
    covered, uncovered = _covered(), {c: a for c, a in _clouds().items() if c not in _core().kb.providers}
    is_covered = draw(st.booleans())
    table = covered if is_covered else uncovered
    cloud = draw(st.sampled_from(sorted(table)))
    lang = draw(st.sampled_from(["en", "zh"]))
    names = [a for a in table[cloud] if lang == "zh" or a.isascii()]      # an English question names it in English
    alias = draw(st.sampled_from(sorted(names) or [cloud]))
    kind = draw(st.sampled_from(sorted(JOBS)))
    return JOBS[kind][lang == "zh"].format(cloud=alias), cloud, is_covered, lang


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job=named_cloud_jobs())
def test_a_named_cloud_is_answered_or_every_plan_elsewhere_is_labelled(job):
    question, cloud, covered, lang = job
    reply = _core().turn(question, {})[0]
    assert reply.lang == lang
    assert not _broken(reply, cloud, covered, lang), (question, _broken(reply, cloud, covered, lang), reply.text[:700])


def test_every_cloud_name_reads_as_its_cloud_and_shadows_no_other_name():
    core = _core()
    kb = core.kb
    for cloud, aliases in _clouds().items():
        for alias in aliases:
            s = core.parser.parse(f"serve llama-3.1-8b on {alias}").slots
            got = s.provider or s.provider_uncovered
            assert got == cloud, (alias, got)
            assert (s.provider == cloud) == (cloud in kb.providers), (alias, "covered iff a provider of the kb")
            key = alias.lower()
            assert key not in kb.model_aliases and key not in kb.gpu_aliases, alias
            assert kb.provider_aliases.get(key, cloud) == cloud, (alias, "another provider's name")


def test_a_cloud_the_knowledge_base_gains_is_covered_without_code():
    """When a provider record with a lexicon cloud's id exists (the china helper's aliyun), naming the cloud is naming
    that provider: the parse gives `provider`, not `provider_uncovered`."""
    core = _core()
    parser = core.parser
    providers = dict(core.kb.providers)
    fake = next(iter(providers.values())).model_copy(update={"id": "aliyun"})
    object.__setattr__(core.kb, "providers", {**providers, "aliyun": fake})
    try:
        s = parser.parse("在阿里云上部署 qwen2.5-7b").slots
        assert s.provider == "aliyun" and s.provider_uncovered is None
    finally:
        object.__setattr__(core.kb, "providers", providers)


def test_a_company_name_alone_is_not_a_cloud():
    for q in ["用阿里的Qwen2.5-7B做推理，要几张卡", "serve tencent's hunyuan-7b", "百度的文心模型怎么部署"]:
        s = _core().parser.parse(q).slots
        assert s.provider_uncovered is None and s.provider is None, q


# ----- set3 regressions ------------------------------------------------------------------------------------------
def _turns(*texts):
    state: dict = {}
    out = []
    for text in texts:
        reply, state = _core().turn(text, state)
        out.append(reply)
    return out


@pytest.mark.parametrize("turns", [
    # s3-01: LoRA on Alibaba, then 'cheaper? A10?'
    ["要在阿里云上LoRA微调Qwen2.5-14B，数据大概3万条，平均2k token左右，跑3个epoch，希望两天内搞完，用啥实例？",
     "有点贵，能不能便宜点，A10行不行"],
    # s3-07: full DPO on Alibaba, A100s
    ["在阿里云上用DPO对齐Qwen2.5-7B（全参），偏好数据5万对，chosen/rejected 各1k token左右，训2个epoch，要几张A100，多久？"],
    # s3-09: a service on Alibaba, then monthly vs pay-per-use
    ["我们要上线DeepSeek-R1-Distill-Qwen-32B的推理服务，每天大概20万次请求，平均输入800 token，输出（含思考）大概3000 token，"
     "高峰大约是平均的3倍。阿里云上要多少卡？", "包月和按量付费哪个划算？"],
], ids=["s3-01", "s3-07", "s3-09"])
def test_set3_alibaba_jobs_say_not_covered_and_label_elsewhere(turns):
    for reply in _turns(*turns):
        assert not _broken(reply, "aliyun", "aliyun" in _core().kb.providers, "zh"), reply.text[:600]
        if "aliyun" not in _core().kb.providers:
            assert "知识库没有覆盖阿里云" in "\n".join(reply.text.splitlines()[:2]), reply.text[:300]


def test_set3_alibaba_spot_says_not_covered_before_another_clouds_terms():
    """s3-21: '阿里云抢占式实例跑训练靠谱吗？': Huawei's spot terms were given as if they were Alibaba's."""
    reply = _turns("阿里云抢占式实例跑训练靠谱吗？我们有个72小时的LoRA任务，8卡A100，用抢占式比按量能省多少")[0]
    if "aliyun" in _core().kb.providers:
        pytest.skip("Alibaba Cloud is covered now: its own terms are answered")
    first = reply.text.splitlines()[0]
    assert first.startswith("知识库没有覆盖阿里云") and "其他云" in first, first


def test_set3_spot_after_naming_aws_flavors_is_answered_on_aws():
    """s3-40: 'is spot ok for that?' after 'g6e.xlarge vs g6.xlarge' was answered with Huawei Cloud's spot terms."""
    _first, second = _turns("whats the difference between g6e.xlarge and g6.xlarge? which one for running a 13B model?",
                           "is spot ok for that? how much cheaper")
    assert "Amazon Web Services" in second.text
    assert "Huawei Cloud Spot" not in second.text and "Huawei Cloud publishes" not in second.text, second.text[:800]


@pytest.mark.parametrize("question, cloud, other", [
    ("is spot ok on aws for training? how much cheaper", "Amazon Web Services", "Huawei Cloud"),
    ("阿里云的抢占式实例靠谱吗？比按量便宜多少", "阿里云", "华为云"),
    ("包月和按量哪个划算？在腾讯云上", "腾讯云", "华为云"),
])
def test_a_billing_topic_says_nothing_for_another_cloud(question, cloud, other):
    """A billing topic's sentences that speak for another cloud only ('On Huawei Cloud the price follows supply
    and demand') are left out of an answer about the cloud named (s3-21, s3-40)."""
    reply = _core().turn(question, {})[0]
    body = reply.text.rsplit("\n", 1)[0]            # the sources line may name any cloud's documents
    if reply.slots.get("provider") not in _core().kb.providers:
        pytest.skip("the cloud is not covered")
    assert cloud in body
    topic_lines = [x for x in body.splitlines() if x.split(":")[0].split("：")[0] in
                   {t.title_en for t in _core().kb.topics.values()} | {t.title_zh for t in _core().kb.topics.values()}]
    assert not any(other in x for x in topic_lines), topic_lines


@pytest.mark.parametrize("service, ask", [
    ("我们要上线DeepSeek-R1-Distill-Qwen-32B的推理服务，每天大概20万次请求，平均输入800 token，输出（含思考）大概3000 token，"
     "高峰大约是平均的3倍。阿里云上要多少卡？", "包月和按量付费哪个划算？"),
    ("serve llama 3.1 8b for 200 concurrent users on aws", "monthly or pay as you go, which is cheaper?"),
    ("部署 qwen2.5-7b，50 个并发用户", "包月划算吗"),
], ids=["s3-09", "en-users", "zh-users"])
def test_billing_after_a_service_is_judged_around_the_clock(service, ask):
    """s3-09 T2: monthly vs pay-per-use after sizing a service asked for the monthly hours although the service
    runs around the clock (its own answer costed it so): the verdict is at 730 h a month (the billing verdict's
    own reading of the conversation's job, bot/conversation/turn.py _billing_verdict)."""
    _first, second = _turns(service, ask)
    assert second.verdict and second.verdict.get("basis") != "no_hours", second.text[:300]
    # monthly, or for a fleet sized for a peak the average's replicas monthly and the rest pay-per-use ('split')
    assert second.verdict.get("hours_month") == 730 and second.verdict.get("preferred") in ("monthly", "split")
