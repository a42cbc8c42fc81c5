"""Prices as the knowledge base derives and checks them: the operator's own price file, indicative prices for
flavors without a list price, currency conversion through the dated rate table (knowledge/rates.yaml) and the
price checks `kb validate` runs.

Every price keeps its currency; nothing here silently treats CNY as USD. A price the catalog flags as a data
quirk (kind "flagged") is never used to derive another price and never called a list price.
"""
from __future__ import annotations

import datetime as dt
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from pydantic import ValidationError

from bot.knowledge.problems import validation_problems
from bot.records.errors import NotFound, Problem
from bot.records.kb import GPU, Flavor, Price, Provider, Rate

# Kinds whose price a provider (or a catalog of its prices) published, so they need a region to mean anything.
PUBLISHED_KINDS = ("list", "flagged")


# ----- currency --------------------------------------------------------------------------------------------------
def rate_table(rates: Mapping[str, Rate]) -> dict[str, Rate]:
    """Currency -> its rate against the table's common base (EUR for the ECB table); the base maps to None."""
    return {r.currency: r for r in rates.values()}


def currencies(rates: Mapping[str, Rate]) -> set[str]:
    """Every currency the table can convert between (the base included)."""
    return {r.currency for r in rates.values()} | {r.base for r in rates.values()}


def convert(rates: Mapping[str, Rate], amount: float, from_ccy: str, to_ccy: str) -> float:
    """`amount` in `from_ccy` expressed in `to_ccy`, through the common base (cross rate). Raises NotFound,
    naming the known currencies, for a currency the table does not have."""
    src, dst = from_ccy.upper(), to_ccy.upper()
    if src == dst:
        return amount
    return amount * _per_base(rates, dst) / _per_base(rates, src)


def _per_base(rates: Mapping[str, Rate], ccy: str) -> float:
    for r in rates.values():
        if r.currency == ccy:
            return r.rate
        if r.base == ccy:
            return 1.0
    known = sorted(currencies(rates))
    raise NotFound(f"no exchange rate for '{ccy}' in knowledge/rates.yaml",
                   fix=f"use one of {', '.join(known)}, or add a dated rate with its source to knowledge/rates.yaml")


def rates_used(rates: Mapping[str, Rate], from_ccy: str, to_ccy: str) -> list[Rate]:
    """The rate records a conversion relies on (for its date and sources in an answer)."""
    wanted = {from_ccy.upper(), to_ccy.upper()}
    return [r for r in rates.values() if r.currency in wanted]


# ----- age ---------------------------------------------------------------------------------------------------------
def price_age_days(price: Price, today: dt.date | None = None) -> int | None:
    """Days since the price's dated source; None for an undated price (its age is unknown, not zero)."""
    return ((today or dt.date.today()) - price.date).days if price.date else None


def is_stale(price: Price, max_age_days: int, today: dt.date | None = None) -> bool:
    """A price older than the warning age: answers say so, `kb audit` lists it. An undated price is not "stale" (its
    own note says it is undated)."""
    age = price_age_days(price, today)
    return age is not None and age > max_age_days


# ----- the operator's own prices -------------------------------------------------------------------------------
def apply_local_prices(flavors: dict[str, Flavor], path: Path, problems: list[Problem],
                       read_yaml: Callable[[Path, list[Problem], str], Any],
                       guess_fix: Callable[[str, Iterable[str], str], str]) -> dict[str, Flavor]:
    """An operator's own prices: `prices: [{flavor, on_demand, spot?, currency, date, region?}]`, labelled as
    theirs. The currency is required (a CNY price file must say CNY; it is never read as USD)."""
    rel = str(path)
    doc = read_yaml(path, problems, rel) or {}
    out = dict(flavors)
    for i, row in enumerate(doc.get("prices", []) if isinstance(doc, dict) else []):
        fid = row.get("flavor") if isinstance(row, dict) else None
        if fid not in out:
            problems.append(Problem(rel, f"prices[{i}].flavor", f"unknown flavor '{fid}'",
                                    guess_fix(str(fid), out, "use an id from `gpu-advisor kb list flavors`")))
            continue
        if not row.get("currency"):
            problems.append(Problem(rel, f"prices[{i}].currency", "currency missing", "add e.g. currency: CNY"))
            continue
        try:
            price = Price(on_demand=row.get("on_demand"), spot=row.get("spot"),
                          currency=str(row["currency"]).strip().upper(), kind="local", date=row.get("date"),
                          region=row.get("region"), basis="your own price list", sources=[])
        except ValidationError as exc:
            problems.extend(validation_problems(rel, f"prices[{i}]", Price, exc))
            continue
        out[fid] = out[fid].model_copy(update={"price": price})
    return out


# ----- indicative prices ---------------------------------------------------------------------------------------
# per-GPU on-demand, spot, date (None: undated), sources, region
_Row = tuple[float, float | None, dt.date | None, list[str], str | None]


def _lowest_list_per_gpu(flavors: Mapping[str, Flavor]) -> dict[tuple[str, str], _Row]:
    """Per (GPU, provider): the lowest list price per GPU-hour, with its spot, date, sources and region. Only
    "list" prices: a flagged, indicative or local price never feeds another price."""
    best: dict[tuple[str, str], _Row] = {}
    for f in flavors.values():
        if f.price and f.price.kind == "list" and f.price.on_demand and f.price.currency == "USD":
            per = f.price.on_demand / f.gpu_count
            spot = f.price.spot / f.gpu_count if f.price.spot else None
            key = (f.gpu, f.provider)
            if key not in best or per < best[key][0]:
                best[key] = (per, spot, f.price.date, list(f.price.sources), f.price.region)
    return best


def with_indicative_prices(flavors: dict[str, Flavor], gpus: Mapping[str, GPU]) -> dict[str, Flavor]:
    """A flavor with no on-demand price gets an indicative one. First choice: its own provider's lowest list
    price per GPU of the same GPU, times its GPU count (Verda's 8x B200 at Verda's own per-GPU rate). Otherwise:
    for each other cloud the lowest list price per GPU-hour of that GPU, then the median across clouds. A spot
    price the flavor already has is kept, never overwritten."""
    best = _lowest_list_per_gpu(flavors)
    per_gpu: dict[str, list[tuple[str, _Row]]] = defaultdict(list)
    for (gpu, provider), row in sorted(best.items()):
        per_gpu[gpu].append((provider, row))
    out = dict(flavors)
    for fid, f in flavors.items():
        if (f.price and f.price.on_demand is not None) or f.gpu not in per_gpu:
            continue
        own = best.get((f.gpu, f.provider))
        price = _own_rate(f, own) if own else _median_rate(f, per_gpu[f.gpu], gpus)
        if f.price and f.price.spot is not None:
            price = price.model_copy(update={"spot": f.price.spot,
                                             "basis": f"{price.basis}; spot {f.price.spot:g} is the catalog's own"})
        out[fid] = f.model_copy(update={"price": price})
    return out


def _own_rate(f: Flavor, row: _Row) -> Price:
    per, spot, date, sources, region = row
    basis = (f"{f.provider}'s own lowest list price per GPU-hour of this GPU ({per:g} USD), times {f.gpu_count}: "
             f"the catalog has no on-demand price for this size")
    return Price(on_demand=round(per * f.gpu_count, 4), spot=None, currency="USD", kind="indicative",
                 date=date, date_basis=_derived_date_basis([date]), region=region, basis=basis,
                 sources=sorted(set(sources)))


def _derived_date_basis(dates: list[dt.date | None]) -> str:
    """How a derived price is dated: by the oldest price it rests on, or undated when any of them is."""
    known = sorted(d for d in dates if d is not None)
    undated = len(dates) - len(known)
    if undated:
        return (f"Undated: rests on {undated} undated price(s)"
                + (f" and {len(known)} dated {known[0]} to {known[-1]}" if known else "") + ".")
    return f"Dated by the oldest price it rests on ({known[0]})" if len(known) > 1 else f"Dated {known[0]}."


def _derived_date(dates: list[dt.date | None]) -> dt.date | None:
    return None if any(d is None for d in dates) or not dates else min(dates)


BORROWED_MARK = "not a {provider} price"       # the end of a borrowed price's basis (_median_rate)


def borrowed(f: Flavor) -> bool:
    """Is the flavor's price borrowed from other vendors' pages (the median of other clouds' list prices for its
    GPU, _median_rate), not its vendor's own? Such a figure says what the card costs elsewhere, not what this
    vendor charges: it never wins a ranking over a plan with its vendor's own published price (set4 'named cloud
    swapped' and the default pick: a Huawei H100 PCIe size priced from Lambda's H100 page)."""
    p = f.price
    return bool(p and p.kind == "indicative" and BORROWED_MARK.format(provider=f.provider) in (p.basis or ""))


def _median_rate(f: Flavor, rows: list[tuple[str, _Row]], gpus: Mapping[str, GPU]) -> Price:
    od = statistics.median(r[0] for _p, r in rows) * f.gpu_count
    spots = [r[1] for _p, r in rows if r[1] is not None]
    spot = statistics.median(spots) * f.gpu_count if spots else None
    providers = [p for p, _r in rows]
    name = gpus[f.gpu].name if f.gpu in gpus else f.gpu
    basis = (f"median over {', '.join(providers)} of each cloud's lowest list price per {name} GPU-hour, "
             f"times {f.gpu_count} GPU(s); " + BORROWED_MARK.format(provider=f.provider))
    return Price(on_demand=round(od, 4), spot=round(spot, 4) if spot is not None else None, currency="USD",
                 kind="indicative", date=_derived_date([r[2] for _p, r in rows]),
                 date_basis=_derived_date_basis([r[2] for _p, r in rows]), region=None, basis=basis,
                 sources=sorted({s for _p, r in rows for s in r[3]}))


# ----- checks for `kb validate` ----------------------------------------------------------------------------------
def price_problems(flavors: Mapping[str, Flavor], providers: Mapping[str, Provider], rates: Mapping[str, Rate],
                   loc: Callable[[str, str], str]) -> list[Problem]:
    """A quirk-flagged price shown as list, a published price without a region, a price in a currency the rate
    table cannot convert, and a list price in another currency than its provider bills in."""
    out: list[Problem] = []
    known = currencies(rates)
    for fid, f in flavors.items():
        p = f.price
        if p is None:
            continue
        where = f"flavors[{fid}].price"
        if p.kind == "list" and p.flags:
            out.append(Problem(loc("flavors", fid), where, "a price the catalog flags as a data quirk is shown as "
                               "a list price", "set kind: flagged (scripts/import_catalog.py does this)"))
        if p.kind in PUBLISHED_KINDS and not p.date_basis:
            out.append(Problem(loc("flavors", fid), f"{where}.date_basis", f"a {p.kind} price that does not say how "
                               "its date is known", "add date_basis: the dated source that gives this price, or "
                               "'Undated: ...' with date: null (never a stand-in date)"))
        if p.kind in PUBLISHED_KINDS and not p.region:
            out.append(Problem(loc("flavors", fid), where, f"a {p.kind} price without a region",
                               "add region: (the catalog row's region)"))
        if known and p.currency not in known:
            out.append(Problem(loc("flavors", fid), f"{where}.currency", f"currency mismatch: no rate for "
                               f"'{p.currency}' in knowledge/rates.yaml, so it cannot be compared",
                               f"use one of {', '.join(sorted(known))} or add a dated rate"))
        prov = providers.get(f.provider)
        if prov and p.kind in PUBLISHED_KINDS and p.currency != prov.currency:
            out.append(Problem(loc("flavors", fid), f"{where}.currency", f"currency mismatch: a {p.kind} price in "
                               f"{p.currency} but {prov.name} bills in {prov.currency}",
                               f"give the price in {prov.currency} or correct the provider's currency"))
    return out


# A size is a number standing on its own before G/GB/GiB ("910B4 32GB", "A100-80G"), not the end of a name ("A10G").
_SIZE_RE = re.compile(r"(?:^|[\s\-_(])(\d{1,3}(?:\.\d)?)\s*(?:GB|GiB|G)\b", re.IGNORECASE)
# Marketing and usable sizes differ (B200 "192GB" is 180 GB usable, H200 141 vs 144): a stated size within this
# share of the record's memory is the same card; 910B4 "32GB" against a 64 GB record is not.
ALIAS_SIZE_TOLERANCE = 0.10


def alias_size_problems(gpus: Mapping[str, GPU], loc: Callable[[str, str], str]) -> list[Problem]:
    """An alias that states a memory size ("910B4 32GB") naming a GPU record of another size."""
    out: list[Problem] = []
    for gid, g in gpus.items():
        for alias in [g.name, *g.aliases]:
            for m in _SIZE_RE.finditer(alias):
                size = float(m.group(1))
                if abs(size - g.memory_gib) > ALIAS_SIZE_TOLERANCE * g.memory_gib:
                    out.append(Problem(loc("gpus", gid), f"gpus[{gid}].aliases",
                                       f"alias '{alias}' states {size:g} GB but the record has {g.memory_gib:g} GiB",
                                       "move the alias to a record of that size (add one if needed)"))
    return out
