"""Info answers from the knowledge base: compare GPUs, explain a topic, billing modes, "is this flavor real?"."""
from __future__ import annotations

from typing import Any

from bot.knowledge.loader import KnowledgeBase
from bot.knowledge.loader import GPU_FAMILIES

BILLING_TOPICS = {"spot": ["spot", "spot-guaranteed"], "reserved": ["reserved", "reservation", "savings-plan"],
                  "yearly": ["yearly-monthly", "reserved"], "pay_per_use": ["pay-per-use", "on-demand", "pay-as-you-go"],
                  "autoscaling": ["pay-per-use", "on-demand", "pay-as-you-go"]}


def gpu_facts(kb: KnowledgeBase, gid: str) -> dict[str, Any]:
    g = kb.gpus[gid]
    return {"id": g.id, "name": g.name, "memory_gib": g.memory_gib, "memory_bandwidth_gbs": g.memory_bandwidth_gbs,
            "bf16_tflops": g.bf16_tflops, "fp16_tflops": g.fp16_tflops, "fp8_tflops": g.fp8_tflops,
            "nvlink_gbs": g.nvlink_gbs, "architecture": g.architecture, "positioning": list(g.positioning),
            "tdp_w": g.tdp_w, "sources": list(g.sources)}


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
