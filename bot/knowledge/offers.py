"""One GPU across clouds, platforms and regions (`gpu-advisor kb gpus GPU`, like `sky show-gpus`): every flavor that
carries it with its price per GPU-hour, spot price, the price's date (or "undated") and region, cheapest first in USD
at the dated rates so CNY and USD offers sort together."""
from __future__ import annotations

from typing import Any

from bot.knowledge.loader import KnowledgeBase, market
from bot.records.text import norm_key


def gpu_offers(kb: KnowledgeBase, gpu_name: str, region: str | None = None) -> dict[str, Any]:
    """{query, region, gpus: [{gpu, name, memory_gib, offers: [...]}]} for a GPU named by id or alias, or a family
    name that several records share ("H100": SXM, PCIe and NVL); NotFound, with "did you mean", for an unknown
    one. `region` keeps the offers sold in that region's market."""
    gpus = [kb.gpu(gid) for gid in _matching(kb, gpu_name)] or [kb.gpu(gpu_name)]     # kb.gpu raises NotFound
    out = []
    for gpu in gpus:
        offers = [_offer(kb, f) for f in kb.flavors_with_gpu(gpu.id)
                  if region is None or (f.region is not None and market(f.region) == market(region))]
        offers.sort(key=lambda o: (o["per_gpu_usd"] is None, o["per_gpu_usd"] or 0.0, o["id"]))
        out.append({"gpu": gpu.id, "name": gpu.name, "memory_gib": gpu.memory_gib, "offers": offers})
    return {"query": gpu_name, "region": region, "gpus": out}


def _matching(kb: KnowledgeBase, name: str) -> list[str]:
    """The GPU ids a name means: its id or alias, else every record whose id starts with it (h100 -> the three)."""
    key = norm_key(name)
    if key in kb.gpu_aliases:
        return [kb.gpu_aliases[key]]
    if name in kb.gpus:
        return [name]
    return sorted(gid for gid in kb.gpus if norm_key(gid).startswith(key) and len(key) >= 3)


def _offer(kb: KnowledgeBase, f) -> dict[str, Any]:
    p = f.price
    per = p.on_demand / f.gpu_count if p and p.on_demand is not None else None
    spot = p.spot / f.gpu_count if p and p.spot is not None else None
    usd = kb.convert(per, p.currency, "USD") if per is not None else None
    return {"id": f.id, "provider": f.provider, "flavor": f.flavor, "gpu_count": f.gpu_count,
            "gpu_memory_gib": f.gpu_memory_gib, "region": f.region, "interconnect": f.interconnect, "rdma": f.rdma,
            "price_per_hour": p.on_demand if p else None, "spot_price_per_hour": p.spot if p else None,
            "per_gpu_hour": round(per, 4) if per is not None else None,
            "spot_per_gpu_hour": round(spot, 4) if spot is not None else None,
            "per_gpu_usd": round(usd, 4) if usd is not None else None,
            "currency": p.currency if p else None, "price_kind": p.kind if p else None,
            "price_date": p.date.isoformat() if p and p.date else None,
            "spot_price_date": p.spot_date.isoformat() if p and p.spot_date else None,
            "price_date_basis": p.date_basis if p else None, "price_sources": list(p.sources) if p else []}
