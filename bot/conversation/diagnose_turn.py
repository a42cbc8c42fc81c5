"""Two question kinds that are not a new job to size (they were answered as one, or with a spec dump):

- troubleshooting: a number the user MEASURED (output tokens/s, MFU, MFU that fell when adding nodes) with a
  question about it ('is that normal?', 'why so slow', '为什么只有 15%', 'dropped from 45% to 20%'). The answer sets it
  against the advisor's own estimate for that hardware (bot/plan/diagnose.py), says a verdict (normal / low / high)
  and the likely causes with the estimate's figures; intent `explain`, status `info`.
- a platform move: a non-CUDA platform named (an Ascend NPU, an AMD GPU) with 'what breaks / move to / migrate / 会有什么问题 /
  迁移 / 兼容'. The answer leads with that platform's notes (torch_npu + HCCL, ops that fall back to the CPU, MindSpeed
  / vLLM-Ascend support lists, HCCS/RoCE) and the job planned on that platform; with no job known, the notes and a
  request for the job.

The cue words are the lexicon's `diagnose` and `platform_move` sections (rules/lexicon.yaml).
"""
from __future__ import annotations

import re
from typing import Any

from bot.conversation.cues import CueSet, _both
from bot.plan import diagnose as diag
from bot.records.models import Reply
from bot.render.reply import Citer, sources_line

_K = r"(k|千)?"
_N = r"(\d+(?:\.\d+)?)"
# a measured output rate: '300 tok/s', '1.2k tokens/s', '300 tokens per second', '300 tps', '每秒 300 token',
# '300 token/s', '300 个 token 每秒'
TPS = [re.compile(rf"(?<![\d.]){_N}\s*{_K}\s*(?:output\s+|generated\s+)?(?:tok(?:en)?s?|t)\s*(?:/\s*s(?:ec)?|"
                  rf"(?:per|a|each)\s+s(?:ec(?:ond)?)?|每秒)(?![a-z])"),
       re.compile(rf"(?<![\d.]){_N}\s*{_K}\s*tps(?![a-z])"),
       re.compile(rf"每秒\s*(?:只有|才|约|大概|能)?\s*{_N}\s*{_K}\s*(?:个)?\s*(?:token|tok)"),
       re.compile(rf"(?<![\d.]){_N}\s*{_K}\s*(?:个)?\s*token\s*(?:/\s*秒|每秒)")]
# 'we need 300 tok/s but only get 100': the number after the measuring verb is the measured one, unit or not
BARE_MEASURED = re.compile(r"(?:(?<![a-z])(?:get|getting|got|see|seeing|reach|reaching|hit|only)|只有|才|只能跑到|跑出|实测)"
                           r"\s*(?:about|around|~|约|大概)?\s*(\d+(?:\.\d+)?)\s*(k)?"
                           r"(?!\s*(?:gpus?|cards?|nodes?|张|卡|台|b(?![a-z])|%|\.\d))")
PER_GPU = re.compile(r"(?<![a-z])(?:per|each|a|/)\s*(?:gpu|card|device|npu)(?![a-z])|每卡|每张卡|单卡")
MFU_WORD = re.compile(r"(?<![a-z])mfu(?![a-z])|model\s+flops?\s+utili[sz]ation|算力利用率")
PCT = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*%")
FRACTION = re.compile(r"(?<![a-z])mfu\s*(?:of|is|was|=|:|只有|才|为|是)?\s*(0\.\d+)(?![\d%])")
_ZH_N = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "八": 8, "十": 10, "十六": 16, "单": 1}
NODES = re.compile(r"(?<![\d.])(\d+|one|two|three|four|eight|sixteen|十六|[一两二三四五六八十单])\s*(?:-\s*)?"
                   r"(?:nodes?|machines?|servers?|hosts?|台(?:机器|服务器)?|个节点|节点|机)(?![a-z])")
_EN_N = {"one": 1, "two": 2, "three": 3, "four": 4, "eight": 8, "sixteen": 16}
NET = re.compile(r"(?<![\d.])(\d+)\s*(?:g|gb|gbit|gbps|gbit/s|gb/s|g\s*bps)?\s*(?:e(?![a-z])|gbe|ethernet|以太网|网卡|"
                 r"网络|nic|network|link|tcp|roce|ib|infiniband)", re.IGNORECASE)
NO_RDMA = re.compile(r"(?:no|without|not|w/o|没有|无|不支持|不带)\s*(?:rdma|ib|infiniband|roce)|tcp|ethernet|以太网|gbe")
RDMA = re.compile(r"(?<![a-z])(?:rdma|infiniband|roce|ib)(?![a-z])")
def _num(s: str) -> float | None:
    if s in _ZH_N:
        return float(_ZH_N[s])
    if s in _EN_N:
        return float(_EN_N[s])
    try:
        return float(s)
    except ValueError:
        return None


class DiagnoseReader:
    """The lexicon's cue sets, compiled once (the Core keeps one)."""

    def __init__(self, lex: dict[str, Any]):
        d = lex.get("diagnose") or {}
        self.asks = CueSet(_both(d.get("asks")))
        self.said_measured = CueSet(_both(d.get("measured")))
        self.targets = CueSet(_both(d.get("targets")))
        self.moves = CueSet(_both(lex.get("platform_move")))

    def measured(self, text: str, slots: Any = None) -> dict[str, Any] | None:
        """{'tps': ..}, {'mfu': .., 'mfu_before': ..} or {'ttft_ms' | 'tpot_ms': ..} (the parser's latency slots): a
        number measured and asked about, else None."""
        tps = None
        for rx in TPS:
            m = rx.search(text)
            if m:
                tps = float(m.group(1)) * (1000 if m.group(2) else 1)
                break
        mfu, before = None, None
        if MFU_WORD.search(text):
            pcts = [float(x) / 100 for x in PCT.findall(text) if 0 < float(x) <= 100]
            if not pcts and (f := FRACTION.search(text)):
                pcts = [float(f.group(1))]
            if len(pcts) >= 2 and pcts[0] > pcts[-1]:
                before, mfu = pcts[0], pcts[-1]
            elif pcts:
                mfu = pcts[-1] if len(pcts) == 1 else min(pcts)
        ttft = getattr(slots, "ttft_ms", None) if tps is None and mfu is None else None
        tpot = getattr(slots, "tpot_ms", None) if tps is None and mfu is None and not ttft else None
        if tps is None and mfu is None and not ttft and not tpot:
            return None
        if ttft or tpot:
            measured = self.said_measured.any(text)
            if (self.asks.any(text) and (measured or not self.targets.any(text))) or \
                    (measured and not self.targets.any(text)):
                return {"ttft_ms": ttft, "tpot_ms": tpot}
            return None
        if tps is not None and self.targets.any(text) and (b := BARE_MEASURED.search(text)):
            tps = float(b.group(1)) * (1000 if b.group(2) else 1)
        # asked about and not a target ('we need 300 tok/s, is an A10G enough?'), or said as measured
        measured = self.said_measured.any(text) or before is not None
        target = self.targets.any(text)
        if not ((self.asks.any(text) and (measured or not target)) or (measured and not target)):
            return None
        return {"tps": tps, "mfu": mfu, "mfu_before": before, "per_gpu": bool(PER_GPU.search(text))}

    def platform_move(self, text: str) -> bool:
        return self.moves.any(text)


def nodes_said(text: str) -> int | None:
    found = [_num(m.group(1)) for m in NODES.finditer(text)]
    found = [int(n) for n in found if n and n >= 1]
    return max(found) if found else None


def network_said(text: str) -> tuple[float | None, bool]:
    """(Gbit/s per node said, RDMA?) of the network between nodes."""
    m = NET.search(text)
    gbits = float(m.group(1)) if m and 1 <= float(m.group(1)) <= 3200 else None
    rdma = bool(RDMA.search(text)) and not NO_RDMA.search(text)
    return gbits, rdma


SHARDING_NAMES = {"ddp": "DDP", "zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3", "fsdp": "FSDP",
                  "hsdp": "HSDP", "none": "DDP"}


def _training(parse) -> bool:
    """Tokens/s measured in training ('3000 tokens/s per GPU training llama 8b'): the job words say training."""
    sc = parse.intent_scores
    return max(sc.get("train", 0.0), sc.get("finetune", 0.0)) > sc.get("inference", 0.0)


def _pct(x: float) -> str:
    return f"{x * 100:.0f}%" if x >= 0.1 else f"{x * 100:.1f}%"


def _n(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.3g}"


def answer_diagnosis(core, parse, state: dict[str, Any], found: dict[str, Any]) -> tuple[Reply, dict[str, Any]]:
    """The measured number against the advisor's estimate, the verdict, and the likely causes."""
    t, kb = core.templates, core.kb
    lang = parse.lang
    s = parse.slots.filled()
    old = (state or {}).get("slots") or {}
    slots = {**{k: v for k, v in old.items() if k in ("model", "params_b", "gpu_model", "gpus", "precision")}, **s}
    if not s.get("gpu_model"):
        # 'llama 8b on an A10G only does 69 tok/s': 'only <card>' read as a limit is the card the number is from;
        # after a plan, 'we only get 100 tok/s on it, why?' is about the plan's card
        plan = (state or {}).get("plan") or {}
        named = [*(s.get("gpu_allowed") or []), *(s.get("gpu_models") or []),
                 *([plan["gpu"]] if plan.get("gpu") and not slots.get("gpu_model") else [])]
        if named:
            slots["gpu_model"] = named[0]
    text = parse.text
    nodes = nodes_said(text) or slots.get("nodes")
    gbits, rdma = network_said(text)
    lines: list[str] = []
    causes: list[str] = []
    assumed: list[str] = []

    def model_name(v: dict[str, Any]) -> str:
        if v["model"]:
            return kb.models[v["model"]].name
        if v["params_assumed"]:
            assumed.append(t.say("diag.assumed.model", lang, p=f"{v['params_b']:g}"))
        return t.say("diag.model_size", lang, p=f"{v['params_b']:g}")

    def gpu_name(v: dict[str, Any]) -> str:
        name = kb.gpus[v["gpu"]].name
        if v["gpu_assumed"]:
            assumed.append(t.say("diag.assumed.gpu", lang, gpu=name))
        return name

    if found.get("mfu") is not None and (found.get("mfu_before") is not None or (nodes and nodes > 1)):
        v = diag.scaling_check(kb, slots, found.get("mfu_before"), found["mfu"], int(nodes or 2), gbits, rdma)
        how = t.say("diag.scaling.rdma" if rdma else "diag.scaling.tcp", lang)
        verdict = t.say(f"diag.verdict.{'expected' if v['verdict'] == 'expected' else 'low'}", lang)
        if v["before"]:
            lines.append(t.say("diag.scaling.head", lang, verdict=verdict, nodes=v["nodes"], gbits=f"{v['gbits']:g}",
                               how=how, before=_pct(v["before"]), measured=_pct(v["measured"]),
                               x=f"{v['before'] / v['measured']:.2g}", share=_pct(v["implied_share"])))
        else:
            lines.append(t.say("diag.scaling.head_one", lang, verdict=verdict, nodes=v["nodes"],
                               gbits=f"{v['gbits']:g}", how=how, measured=_pct(v["measured"])))
        lines.append(t.say("diag.scaling.comm", lang, model=model_name(v), per_node=v["per_node"], gpu=gpu_name(v),
                           grad=f"{v['grad_gb']:.3g}", nodes=v["nodes"], ring=f"{v['ring_gb']:.3g}",
                           ar=f"{v['allreduce_s']:.2g}", wire=f"{v['wire_gbs']:.3g}",
                           compute=f"{v['compute_s']:.2g}", one=_pct(v["one_mfu"]), now=_pct(v["expected"])))
        lines.append(t.say("diag.scaling.fixes", lang, nodes=v["nodes"]))
        f = v["fixes"]
        causes = [t.say("diag.scaling.fix.rdma", lang, rdma=f"{v['rdma_gbits']:g}", mfu=_pct(f["rdma"])),
                  t.say("diag.scaling.fix.zero", lang, zero3=_pct(f["zero3"]), hsdp=_pct(f["hsdp"])),
                  t.say("diag.scaling.fix.accumulation", lang, accum=v["grad_accumulation"],
                        accum4=v["grad_accumulation"] * 4, mfu=_pct(f["accumulation"])),
                  t.say("diag.scaling.fix.overlap", lang)]
        header = None
    elif found.get("ttft_ms") or found.get("tpot_ms"):
        v = diag.latency_check(kb, slots, found.get("ttft_ms"), found.get("tpot_ms"))
        lines.append(t.say("diag.latency.head", lang, verdict=t.say(f"diag.verdict.{v['verdict']}", lang),
                           what=t.say(f"diag.latency.{v['what']}", lang), measured=_n(v["measured"]),
                           model=model_name(v), n=v["gpus"], gpu=gpu_name(v), one=_n(v["expected"]),
                           c1=v["concurrency"], full=_n(v["full"]), c=v["max_concurrency"],
                           inp=v["input_len"], out=v["output_len"]))
        causes = [t.say("diag.latency.cause.queue", lang)] if v["verdict"] != "normal" else []
        if v["verdict"] == "slow":
            causes += [t.say("diag.serving.cause.prefill", lang), t.say("diag.serving.cause.eager", lang),
                       t.say("diag.serving.cause.kv", lang)]
        header = t.say("diag.causes", lang) if causes else None
    elif found.get("mfu") is not None or _training(parse):
        v = diag.training_check(kb, slots, found.get("mfu"), found.get("tps"), found.get("per_gpu", False))
        tps = v["measured_tps_gpu"] is not None
        measured = _pct(v["measured"]) if not tps else t.say(
            "diag.training.tps", lang, tps=_n(v["measured_tps_gpu"]), mfu=_pct(v["measured"]),
            expected=_n(v["expected_tps_gpu"]))
        lines.append(t.say("diag.training.head_tps" if tps else "diag.training.head", lang, verdict=t.say(f"diag.verdict.{v['verdict']}", lang),
                           measured=measured, model=model_name(v), n=v["gpus"], gpu=gpu_name(v),
                           sharding=SHARDING_NAMES.get(v["sharding"], v["sharding"]) if v["gpus"] > 1 else t.say("diag.one_card", lang),
                           batch=v["batch_size"], seq=v["seq_len"], expected=_pct(v["expected"])))
        if v["gpus"] > 1 and v["comm_share"] >= 0.02:
            lines.append(t.say("diag.training.comm", lang, step=f"{v['step_s']:.2g}", comm=f"{v['comm_s']:.2g}",
                               share=_pct(v["comm_share"]),
                               link="" if v["nvlink"] else t.say("diag.training.pcie", lang)))
        if v["gpus"] > 1 and not v["nvlink"]:
            causes.append(t.say("diag.training.cause.p2p", lang, ddp=t.say("diag.training.ddp", lang,
                                                                         mfu=_pct(v["ddp_mfu"]))
                                if v.get("ddp_mfu") else ""))
        causes += [t.say("diag.training.cause.batch", lang), t.say("diag.training.cause.kernels", lang),
                   t.say("diag.training.cause.input", lang)]
        if v["gpus"] > 1 and v["nvlink"] and v["sharding"] in ("zero3", "fsdp"):
            causes.append(t.say("diag.training.cause.sharding", lang, ddp=t.say("diag.training.ddp", lang,
                                                                              mfu=_pct(v["ddp_mfu"]))
                                if v.get("ddp_mfu") else ""))
        header = t.say("diag.causes", lang)
    else:
        v = diag.serving_check(kb, slots, found["tps"])
        at = t.say("diag.serving.at_said", lang, c=v["concurrency"]) if v["concurrency"] else \
            t.say("diag.serving.at_full", lang, c=v["max_concurrency"])
        lines.append(t.say("diag.serving.head", lang, verdict=t.say(f"diag.verdict.{v['verdict']}", lang),
                           measured=_n(v["measured"]), model=model_name(v), n=v["gpus"], gpu=gpu_name(v),
                           expected=_n(v["expected"]), at=at))
        lines.append(t.say("diag.serving.range", lang, one=_n(v["one_tps"]), tpot=f"{v['one_tpot_ms']:.0f}",
                           weights=f"{v['params_b'] * 2:.3g}", bw=f"{kb.gpus[v['gpu']].memory_bandwidth_gbs or 0:g}",
                           full=_n(v["full_tps"]), c=v["max_concurrency"], inp=v["input_len"], out=v["output_len"]))
        if v["implied_concurrency"]:
            lines.append(t.say("diag.serving.implied", lang, measured=_n(v["measured"]),
                               c=v["implied_concurrency"]))
        if v["verdict"] == "high":
            causes = [t.say("diag.serving.cause.high", lang)]
        elif v["verdict"] == "normal":
            causes = [t.say("diag.serving.faster", lang)]
        else:
            causes = [t.say("diag.serving.cause.load", lang), t.say("diag.serving.cause.kv", lang),
                      t.say("diag.serving.cause.eager", lang), t.say("diag.serving.cause.prefill", lang),
                      t.say("diag.serving.cause.measure", lang)]
        header = t.say("diag.causes", lang) if v["verdict"] not in ("normal",) else None
    if header:
        lines.append(header)
    lines += [f"• {c}" for c in causes]
    if assumed:
        lines.append(t.say("diag.assumed", lang, what=("、" if lang == "zh" else ", ").join(dict.fromkeys(assumed))))
    text = "\n".join(lines)
    verdict = {k: x for k, x in v.items() if k != "fixes"} | ({"fixes": v["fixes"]} if "fixes" in v else {})
    verdict.update(kind=f"diagnose_{v['kind']}", line=lines[0])
    reply = Reply(status="info", lang=lang, intent="explain",
                  slots={k: x for k, x in slots.items() if k != "topic"}, kb_version=core.version, text=text,
                  verdict=verdict)
    return reply, {**(state or {}), "lang": lang}


# ----- a platform move ------------------------------------------------------------------------------------------
# a platform named by word, and the card it means: Ascend (the 910B, what Huawei Cloud's Snt9B nodes carry), AMD
PLATFORM_WORDS = [(re.compile(r"昇腾|(?<![a-z])ascend(?![a-z])|(?<![a-z])npus?(?![a-z])|910[bc]?(?![0-9])"), "ascend-910b"),
                  (re.compile(r"(?<![a-z])(?:rocm|amd|instinct|mi300x?)(?![a-z])"), "mi300x")]
# each non-CUDA vendor's notes: knowledge/topics.yaml ids
PLATFORM_TOPICS = {"huawei": ("ascend_porting", "ascend_frameworks"), "amd": ("rocm_porting",)}


def platform_named(core, parse) -> str | None:
    """The non-CUDA card the move is to: the one named (among several, the one not NVIDIA's), else the card a
    platform word means ('昇腾', 'Ascend', 'NPU': the 910B; 'ROCm', 'AMD': the MI300X)."""
    s = parse.slots
    for g in [s.gpu_model, *(s.gpu_models or [])]:
        if g in core.kb.gpus and core.kb.gpus[g].vendor in PLATFORM_TOPICS:
            return g
    for rx, gid in PLATFORM_WORDS:
        if rx.search(parse.text) and gid in core.kb.gpus:
            return gid
    return None


def asks_platform_move(core, parse) -> str | None:
    """'what breaks if we move this to Ascend 910B', '换到昇腾 910B 会有什么问题', '迁移到昇腾要改什么': the card moved
    to, else None."""
    if not core.diagnose.platform_move(parse.text):
        return None
    return platform_named(core, parse)


def platform_section(core, lang: str, gpu: str) -> dict[str, Any]:
    """The platform's notes, each a sourced topic of the knowledge base, as a section said first."""
    t, kb = core.templates, core.kb
    lines = [t.say("platform.head", lang, platform=kb.gpus[gpu].name)]
    sources: list[str] = []
    for tid in PLATFORM_TOPICS.get(kb.gpus[gpu].vendor, ()):
        tp = kb.topics.get(tid)
        if tp is None:
            continue
        lines.append(f"• {tp.text_zh if lang == 'zh' else tp.text_en}")
        sources += [x for x in tp.sources if x not in sources]
    return {"key": "platform", "lines": lines, "sources": sources}


def answer_platform_only(core, parse, state: dict[str, Any], gpu: str) -> tuple[Reply, dict[str, Any]]:
    """No job known: the platform's notes, and what to say for a plan on it."""
    lang = parse.lang
    lines, citations = platform_lines(core, lang, gpu)
    lines.append(core.templates.say("platform.ask_job", lang, platform=core.kb.gpus[gpu].name))
    text = "\n".join(lines) + ("\n" + sources_line(citations, lang, core.templates) if citations else "")
    reply = Reply(status="info", lang=lang, intent="explain", slots={"gpu_model": gpu}, kb_version=core.version,
                  text=text, citations=citations, verdict={"kind": "platform", "gpu": gpu, "line": lines[0]})
    new_state = {**(state or {}), "lang": lang}
    new_state["slots"] = {**(new_state.get("slots") or {}), "gpu_model": gpu}
    return reply, new_state


def platform_lines(core, lang: str, gpu: str) -> tuple[list[str], list[dict[str, Any]]]:
    """The platform's notes as plain lines with their source markers, and the citations they use."""
    sec = platform_section(core, lang, gpu)
    cite = Citer(core.kb)
    return [*sec["lines"][:-1], cite.after(sec["lines"][-1], sec["sources"])], cite.citations()


def platform_before_question(core, reply: Reply, lang: str, gpu: str) -> None:
    """A follow-up asked about a job moved to the platform ('serve or fine-tune?'): the notes said before it."""
    lines, citations = platform_lines(core, lang, gpu)
    reply.text = "\n".join([*lines, reply.text]) + "\n" + sources_line(citations, lang, core.templates)
    reply.citations = citations


class NcclReader:
    """The lexicon's `nccl_troubleshoot` cues: a collective-communication / network troubleshooting question."""

    def __init__(self, lex: dict[str, Any]):
        d = lex.get("nccl_troubleshoot") or {}
        self.socket = CueSet(_both(d.get("socket")))
        self.words = CueSet(_both(d.get("words")))

    def topics(self, text: str, job_named: bool) -> list[str]:
        """The NCCL topics a question asks about, the most pressing first: the TCP fallback ('NET/Socket inside
        docker') before the busbw reading; none for a job to size that merely names NCCL ('NCCL timeouts training
        llama 70B on 4 nodes, which instance?')."""
        if self.socket.any(text):
            return ["nccl_socket", "nccl_busbw"] if re.search(r"busbw|bus bw|algbw|nccl-tests|all_?reduce", text) \
                else ["nccl_socket"]
        if self.words.any(text) and not job_named:
            return ["nccl_busbw", "nccl_socket"]
        return []


def answer_nccl(core, parse, state: dict[str, Any], topics: list[str]) -> tuple[Reply, dict[str, Any]]:
    """'nccl-tests all_reduce busbw shows ~40 GB/s. is that normal?', 'NCCL says NET/Socket inside docker': the
    knowledge base's NCCL topics, cited (status info, intent explain); the job discussed so far is kept."""
    lang = parse.lang if parse.lang_sure else ((state or {}).get("lang") or parse.lang)
    cite = Citer(core.kb)
    lines = []
    for tid in topics:
        tp = core.kb.topics[tid]
        title, body = (tp.title_zh, tp.text_zh) if lang == "zh" else (tp.title_en, tp.text_en)
        lines.append(cite.after(f"{title}: {body}", tp.sources))
    citations = cite.citations()
    text = "\n".join(lines) + "\n" + sources_line(citations, lang, core.templates)
    reply = Reply(status="info", lang=lang, intent="explain", slots={"topic": topics[0]}, kb_version=core.version,
                  text=text, citations=citations, verdict={"kind": "explain", "topic": topics[0], "line": lines[0]})
    return reply, {**(state or {}), "lang": lang}
