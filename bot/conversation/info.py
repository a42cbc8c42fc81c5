"""Info answers from the knowledge base: compare GPUs, explain a topic, billing modes, "is this flavor real?"."""
from __future__ import annotations

import re
from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.knowledge.loader import GPU_FAMILIES
from bot.knowledge.problems import did_you_mean

BILLING_TOPICS = {"spot": ["spot", "spot-guaranteed"], "reserved": ["reserved", "reservation", "savings-plan"],
                  "yearly": ["yearly-monthly", "reserved"], "pay_per_use": ["pay-per-use", "on-demand", "pay-as-you-go"],
                  "autoscaling": ["pay-per-use", "on-demand", "pay-as-you-go"]}


def gpu_facts(kb: KnowledgeBase, gid: str) -> dict[str, Any]:
    g = kb.gpus[gid]
    return {"id": g.id, "name": g.name, "memory_gib": g.memory_gib, "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
            "bf16_tflops": g.bf16_tflops, "fp16_tflops": g.fp16_tflops, "fp8_tflops": g.fp8_tflops,
            "nvlink_gbs": g.nvlink_gbs, "architecture": g.architecture, "positioning": list(g.positioning),
            "tdp_w": g.tdp_w, "vendor": g.vendor, "sources": list(g.sources)}


def cheapest_price(kb: KnowledgeBase, gid: str) -> dict[str, Any] | None:
    """The lowest list price per GPU-hour of a GPU across the catalog, for comparisons; prices in other currencies
    compared in USD at the dated rates, shown in their own."""
    best, best_usd = None, None
    for f in kb.flavors_with_gpu(gid):
        if f.price and f.price.kind == "list" and f.price.on_demand:
            per = f.price.on_demand / f.gpu_count
            usd = kb.convert(per, f.price.currency, "USD")
            if best_usd is None or usd < best_usd:
                best_usd = usd
                best = {"per_gpu_hour": round(per, 3), "currency": f.price.currency, "flavor": f.id,
                        "date": f.price.date.isoformat() if f.price.date else None,
                        "sources": list(f.price.sources)}
    return best


def compare(kb: KnowledgeBase, slots: dict[str, Any]) -> dict[str, Any]:
    names = slots.get("gpu_models") or ([slots["gpu_model"]] if slots.get("gpu_model") else [])
    ids: list[str] = []
    for n in names:
        for gid in GPU_FAMILIES.get(n, [n]):
            if gid in kb.gpus and gid not in ids:
                ids.append(gid)
    rows = []
    for gid in ids:
        row = gpu_facts(kb, gid)
        row["price"] = cheapest_price(kb, gid)
        rows.append(row)
    return {"kind": "compare", "gpus": rows}


def explain(kb: KnowledgeBase, slots: dict[str, Any], text: str) -> dict[str, Any]:
    """A topic from knowledge/topics.yaml; a flavor name the article uses gets its claim check."""
    claims = []
    for word in text.replace(",", " ").split():
        for c in kb.claims_naming(word.strip("?？。.!")):
            if c not in claims:
                claims.append(c)
    topic = slots.get("topic")
    found = kb.topics.get(topic) if topic else None
    if found is None and topic:
        found = next((t for t in kb.topics.values() if topic in t.aliases), None)
    return {"kind": "explain", "topic": found.id if found else None, "claims": [c.id for c in claims]}


def billing(kb: KnowledgeBase, slots: dict[str, Any], provider: str) -> dict[str, Any]:
    prov = kb.providers.get(slots.get("provider") or provider) or kb.providers[provider]
    topic = slots.get("topic")
    want = BILLING_TOPICS.get(topic or "")
    modes = [m for m in prov.billing if want is None or m.id in want]
    return {"kind": "billing", "provider": prov.id, "modes": [m.id for m in (modes or prov.billing)],
            "topic": topic if topic in kb.topics else None}


# ----- flavors named in a question ------------------------------------------------------------------------------
# Alibaba's sizes carry its service's prefix ('ecs.gn7i-c8g1.2xlarge')
FLAVOR_TOKEN = re.compile(r"(?<![a-z0-9_.-])((?:ecs\.)?[a-z][a-z0-9_-]*\d[a-z0-9_-]*\.[a-z0-9]+(?:\.\d+)?)(?![a-z0-9_-])")
_INDEX: dict[str, tuple[dict[str, list[str]], dict[str, list[str]]]] = {}
_DOTLESS: dict[str, re.Pattern | None] = {}


def _dotless_rx(kb: KnowledgeBase) -> re.Pattern | None:
    """Flavor names with no dot ('a3-highgpu-8g', 'gpu_8x_h100_sxm5'), as one pattern on word boundaries: the
    token pattern above only sees names with a size after a dot."""
    if kb.version not in _DOTLESS:
        names, _ = _flavor_index(kb)
        dotless = sorted((n for n in names if "." not in n and re.search(r"[-_]", n) and re.search(r"\d", n)),
                         key=lambda n: (-len(n), n))
        _DOTLESS[kb.version] = re.compile(r"(?<![a-z0-9_.-])(" + "|".join(re.escape(n) for n in dotless) +
                                          r")(?![a-z0-9_-])") if dotless else None
    return _DOTLESS[kb.version]


def _flavor_index(kb: KnowledgeBase) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """flavor name -> ids, and family word -> ids (families that are one word and not a GPU's name: 'p2s', 'pi2',
    'g6e'; 'a100' is Lambda's family and a GPU, so it stays a GPU). Built once per knowledge base version."""
    if kb.version not in _INDEX:
        names: dict[str, list[str]] = {}
        families: dict[str, list[str]] = {}
        for f in sorted(kb.flavors.values(), key=lambda f: (f.gpu_count, f.id)):
            names.setdefault(f.flavor.lower(), []).append(f.id)
            fam = f.family.lower()
            if re.fullmatch(r"[a-z][a-z0-9_-]*\d[a-z0-9_-]*", fam) and fam not in kb.gpu_aliases \
                    and fam not in GPU_FAMILIES:
                families.setdefault(fam, []).append(f.id)
        _INDEX[kb.version] = (names, families)
    return _INDEX[kb.version]


def flavors_named(kb: KnowledgeBase, text: str, provider: str | None = None) -> dict[str, Any]:
    """The flavors a question names: whole flavor names ('p2s.2xlarge.8'), family words ('p2s', 'Pi2', 'G6'),
    and names shaped like a flavor that are not on file (with the nearest names on file). A family two clouds use
    ('g6': AWS and Huawei) is read as the cloud named, else the default one first."""
    names, families = _flavor_index(kb)
    low = text.lower()
    found: list[list[str]] = []
    unknown: list[dict[str, Any]] = []
    of_family: list[list[str]] = []
    for m in FLAVOR_TOKEN.finditer(low):
        tok = m.group(1)
        if tok in names:
            found.append(names[tok])
        else:
            if re.fullmatch(r"[a-z][a-z0-9-]*\.(?:\d*x?large|medium|small|micro)(?:\.\d+)?", tok):
                # shaped like an instance size ('p9s.2xlarge.8', 'g9.xlarge') but not on file
                unknown.append({"name": tok, "did_you_mean": did_you_mean(tok, list(names), limit=3, cutoff=70)})
            fam = next((families[w] for seg in tok.split(".") for w in (seg, seg.split("-")[0]) if w in families),
                       None)
            if fam:      # 'g5.12xlarge', 'ecs.gn7i-c8g1.2xlarge': a size not on file of a family that is
                mine = [i for i in fam if kb.flavors[i].provider == provider] if provider else []
                of_family.append(mine or fam)
        low = low.replace(tok, " ")
    rx = _dotless_rx(kb)
    for m in list(rx.finditer(low)) if rx else []:
        found.append(names[m.group(1)])
        low = low.replace(m.group(1), " ")
    guessed: list[dict[str, Any]] = []
    for m in LONG_NAME.finditer(low):
        ids = _guess_by_card(kb, m.group(1), provider)
        if ids:        # 'modelarts.bm.npu.arm.8snt9b3.d': not on file by that name; its name says 8 x Snt9B
            guessed.append({"name": m.group(1), "ids": ids})
            found.append(ids)
            low = low.replace(m.group(1), " ")
    for fam, ids in families.items():
        if re.search(rf"(?:(?<=ecs\.)|(?<![a-z0-9_.-])){re.escape(fam)}(?![a-z0-9_-])", low):
            mine = [i for i in ids if kb.flavors[i].provider == provider] if provider else []
            found.append(mine or ids)
    # the families of sizes not on file: the cloud and card the user means, for a job planned on them
    return {"groups": found, "unknown": unknown, "guessed": guessed, "of_family": of_family}


LONG_NAME = re.compile(r"(?<![a-z0-9_.-])([a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+){2,})(?![a-z0-9_.-])")


def _guess_by_card(kb: KnowledgeBase, name: str, provider: str | None) -> list[str]:
    """A flavor code not on file whose parts name a card and a count ('8snt9b3' = 8 x Snt9B): the sizes on file with
    that card and count (the cloud named first), else []."""
    for seg in re.split(r"[._-]", name):
        m = re.fullmatch(r"(\d{0,2})([a-z][a-z0-9]{2,})", seg)
        if not m:
            continue
        word = m.group(2)
        gid = next((kb.gpu_aliases[word[:n]] for n in range(len(word), 3, -1) if word[:n] in kb.gpu_aliases), None)
        if not gid:
            continue
        count = int(m.group(1)) if m.group(1) else None
        fs = [f for f in kb.flavors_with_gpu(gid) if count is None or f.gpu_count == count]
        mine = [f.id for f in fs if f.provider == provider]
        return sorted(mine or [f.id for f in fs])[:4]
    return []


def flavor_facts(kb: KnowledgeBase, fid: str) -> dict[str, Any]:
    f = kb.flavors[fid]
    p = f.price
    return {"id": f.id, "flavor": f.flavor, "provider": f.provider, "family": f.family, "service": f.service,
            "gpu": f.gpu, "gpu_name": kb.gpus[f.gpu].name if f.gpu in kb.gpus else f.gpu, "gpu_count": f.gpu_count,
            "gpu_memory_gib": f.gpu_memory_gib, "vcpus": f.vcpus, "memory_gib": f.memory_gib,
            "interconnect": f.interconnect, "rdma": f.rdma, "network": f.network, "use": list(f.use),
            "price": None if not p or p.on_demand is None else {"per_hour": p.on_demand, "currency": p.currency,
                                                                "kind": p.kind, "date": p.date.isoformat() if p.date else None,
                                                                "spot": p.spot},
            "evidence": f.evidence, "sources": [*f.sources, *((p.sources if p else []) or [])]}


# ----- billing: the hourly price the verdict weighs -----------------------------------------------------------------
def published_discounts(kb: KnowledgeBase, provider: str) -> list[dict[str, Any]]:
    """The commitment and spot discounts a provider publishes as a figure ('up to 72%'), with their sources."""
    out = []
    for m in kb.providers[provider].billing:
        hit = re.search(r"(\d+(?:\.\d+)?)\s*%", m.discount or "")
        if hit and not (m.discount or "").lower().startswith("no figure"):
            out.append({"mode": m.id, "pct": float(hit.group(1)), "text": m.discount, "sources": list(m.sources),
                        "spot": "spot" in m.id})
    return out


def priced_flavor(kb: KnowledgeBase, provider: str, gpu_ids: list[str], gpus: int | None) -> tuple[Any, int] | None:
    """The provider's cheapest priced flavor of these GPUs for `gpus` cards (the size that holds them in the
    fewest instances), and how many instances: what an 'I need 8 x A100' billing question is priced on."""
    fs = [f for f in kb.flavors_of(provider) if f.gpu in gpu_ids and f.price and f.price.on_demand is not None]
    if not fs:
        return None
    want = gpus or max(f.gpu_count for f in fs)

    def cost(f) -> tuple:
        n = -(-want // f.gpu_count)
        return (n, f.price.on_demand * n, f.id)
    best = min(fs, key=cost)
    return best, -(-want // best.gpu_count)
