"""Load knowledge/*.yaml once into an immutable KnowledgeBase, checking everything a domain expert can get wrong.

Producers (people, scripts/import_catalog.py) write YAML; this module only reads it. Every problem is collected,
not raised at the first one, so `gpu-advisor kb validate` can list them all with file, key and fix.
"""
from __future__ import annotations

import bisect
import hashlib
import os
import pickle
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterable, Mapping

import yaml
from pydantic import BaseModel, ValidationError

from bot.records.errors import KnowledgeError, NotFound, Problem
from bot.knowledge import prices as price_rules
from bot.knowledge.problems import did_you_mean, validation_problems  # noqa: F401 (re-exported)
from bot.records.kb import GPU, Claim, Dataset, EstimateSpread, Flavor, Model, Provider, Rate, Source, Topic
from bot.records.text import norm_key

KINDS: dict[str, type[BaseModel]] = {
    "sources": Source, "gpus": GPU, "models": Model, "flavors": Flavor, "providers": Provider, "claims": Claim,
    "topics": Topic, "estimate_spread": EstimateSpread, "rates": Rate, "datasets": Dataset,
}

# A family name a user types ("a100") and the knowledge-base GPU ids it stands for.
GPU_FAMILIES = {"a100": ["a100-40gb", "a100-80gb", "a100-40gb-pcie", "a100-80gb-pcie"],
                "v100": ["v100-16gb", "v100-32gb", "v100-32gb-pcie"], "910b": ["ascend-910b", "ascend-910b4"],
                "h100": ["h100-sxm", "h100-pcie", "h100-nvl"]}


def _yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.yaml") if "local" not in p.relative_to(root).parts[:-1])


# libyaml's C parser when PyYAML was built with it: the same documents, about 10x faster than the pure-Python
# one (parsing knowledge/ was 0.9 s of a 1.3 s cold start of `gpu-advisor ask`; see docs/scaling.md).
_SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Even libyaml takes ~80 ms for knowledge/, so parsed documents are also cached per file content (a pickle named
# by the sha256 of the bytes, like __pycache__ for source): a cold start then reads them back in ~3 ms.
_CACHE_SALT = f"yaml{yaml.__version__}|{_SafeLoader.__name__}|py{sys.version_info[0]}.{sys.version_info[1]}|".encode()
_CACHE_MAX_AGE_S = 30 * 86400      # entries not rewritten for this long are removed when a new one is written


def yaml_cache_dir() -> Path | None:
    """ADVISOR_CACHE_DIR (empty or `off`: no cache), else $XDG_CACHE_HOME/gpu-advisor, else ~/.cache/gpu-advisor."""
    value = os.environ.get("ADVISOR_CACHE_DIR")
    if value is not None:
        return None if value.strip().lower() in ("", "off", "none", "0", "false") else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "gpu-advisor"
    try:
        return Path.home() / ".cache" / "gpu-advisor"
    except RuntimeError:                       # no home directory (some containers): no cache
        return None


def _cache_entry(kind: str, key: bytes) -> Path | None:
    cdir = yaml_cache_dir()
    if cdir is None:
        return None
    return cdir / kind / (hashlib.sha256(_CACHE_SALT + key).hexdigest() + ".pickle")


def _cache_load(entry: Path | None) -> Any:
    """The cached object, or None. Only our own entries: a pickle is code, so a file someone else could have
    written is not read; a truncated or foreign entry is ignored and rewritten."""
    if entry is None:
        return None
    try:
        with open(entry, "rb") as fh:
            if not hasattr(os, "getuid") or os.fstat(fh.fileno()).st_uid == os.getuid():
                return pickle.load(fh)
    except Exception:
        pass
    return None


def parse_yaml(text: str) -> Any:
    """yaml.safe_load(text), through the per-content cache when there is a usable one. Raises yaml.YAMLError."""
    entry = _cache_entry("yaml", text.encode("utf-8"))
    doc = _cache_load(entry)
    if doc is not None:
        return doc
    doc = yaml.load(text, Loader=_SafeLoader)  # noqa: S506 - a safe loader
    if entry is not None:
        _cache_store(entry, doc)
    return doc


def _cache_store(entry: Path, doc: Any) -> None:
    """Write atomically; a read-only or missing cache folder only costs speed, never correctness."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(doc, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
        cutoff = time.time() - _CACHE_MAX_AGE_S
        for old in entry.parent.glob("*.pickle"):
            if old.stat().st_mtime < cutoff:
                old.unlink(missing_ok=True)
    except (OSError, pickle.PicklingError):
        pass


def read_yaml(path: Path, problems: list[Problem], rel: str) -> Any:
    try:
        return parse_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        problems.append(Problem(rel, where, f"not valid YAML ({getattr(exc, 'problem', exc)})",
                                "fix the indentation or quoting at that line"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(rel, "-", f"cannot read the file ({exc})", "check the file is UTF-8 text"))
    return None


@dataclass(frozen=True)
class KnowledgeBase:
    sources: Mapping[str, Source]
    gpus: Mapping[str, GPU]
    models: Mapping[str, Model]
    flavors: Mapping[str, Flavor]
    providers: Mapping[str, Provider]
    claims: Mapping[str, Claim]
    topics: Mapping[str, Topic]
    version: str
    files: tuple[str, ...] = ()
    model_aliases: Mapping[str, str] = field(default_factory=dict)
    gpu_aliases: Mapping[str, str] = field(default_factory=dict)
    provider_aliases: Mapping[str, str] = field(default_factory=dict)
    estimate_spread: Mapping[str, EstimateSpread] = field(default_factory=dict)
    rates: Mapping[str, Rate] = field(default_factory=dict)
    datasets: Mapping[str, Dataset] = field(default_factory=dict)
    dataset_aliases: Mapping[str, str] = field(default_factory=dict)

    # ----- currencies ----------------------------------------------------------------------------------------
    def convert(self, amount: float, from_ccy: str, to_ccy: str) -> float:
        """`amount` in `from_ccy` in `to_ccy` at the dated rates of knowledge/rates.yaml (NotFound for a currency
        the table lacks). Say the rate's date with the result: `rates_used(from_ccy, to_ccy)`."""
        return price_rules.convert(self.rates, amount, from_ccy, to_ccy)

    def rates_used(self, from_ccy: str, to_ccy: str) -> list[Rate]:
        return price_rules.rates_used(self.rates, from_ccy, to_ccy)

    # ----- lookups -------------------------------------------------------------------------------------------
    def source(self, sid: str) -> Source:
        return self.sources[sid]

    def gpu(self, gid: str) -> GPU:
        try:
            return self.gpus[gid]
        except KeyError:
            raise NotFound(f"unknown GPU '{gid}'", fix="run `gpu-advisor kb list gpus` to see the known ones",
                           did_you_mean=did_you_mean(gid, self.gpus)) from None

    def get(self, rid: str) -> BaseModel:
        """Any record by id, for `kb show`."""
        for table in (self.flavors, self.gpus, self.models, self.sources, self.providers, self.claims,
                      self.topics):
            if rid in table:
                return table[rid]
        key = norm_key(rid)
        for aliases, table in ((self.model_aliases, self.models), (self.gpu_aliases, self.gpus),
                               (self.provider_aliases, self.providers)):
            if key in aliases:
                return table[aliases[key]]
        matches = [f.id for f in self.flavors.values() if f.flavor == rid]
        if len(matches) == 1:
            return self.flavors[matches[0]]
        everything = [*self.flavors, *self.gpus, *self.models, *self.sources, *self.providers, *self.claims]
        raise NotFound(f"no record '{rid}' in the knowledge base",
                       fix="use an id from `gpu-advisor kb list flavors|gpus|models|sources`",
                       did_you_mean=did_you_mean(rid, everything))

    @cached_property
    def _by_provider(self) -> Mapping[str, tuple[Flavor, ...]]:
        """Flavors per provider sorted by per-GPU memory, so candidate search is a bisect, not a scan."""
        groups: dict[str, list[Flavor]] = defaultdict(list)
        for f in self.flavors.values():
            groups[f.provider].append(f)
        return MappingProxyType({p: tuple(sorted(fs, key=lambda f: (f.gpu_memory_gib, f.id)))
                                 for p, fs in groups.items()})

    @cached_property
    def _memory_keys(self) -> Mapping[str, list[float]]:
        return {p: [f.gpu_memory_gib for f in fs] for p, fs in self._by_provider.items()}

    def flavors_of(self, provider: str | None = None, min_gpu_memory_gib: float = 0.0) -> tuple[Flavor, ...]:
        """Flavors of one provider (or all) whose GPUs have at least the given memory."""
        providers = [provider] if provider else sorted(self._by_provider)
        out: list[Flavor] = []
        for p in providers:
            fs = self._by_provider.get(p, ())
            start = bisect.bisect_left(self._memory_keys.get(p, []), min_gpu_memory_gib - 1e-9)
            out.extend(fs[start:])
        return tuple(out)

    # ----- indexes for the advisor: a turn should cost the same with 100 or 10 000 flavors ----------------------
    @cached_property
    def max_gpu_memory_gib(self) -> float:
        """The largest whole-GPU memory on offer (vGPU slices excluded); 0 for an empty catalog."""
        return max((f.gpu_memory_gib for f in self.flavors.values() if not f.vgpu), default=0.0)

    @cached_property
    def _by_gpu(self) -> Mapping[str, tuple[Flavor, ...]]:
        groups: dict[str, list[Flavor]] = defaultdict(list)
        for f in self.flavors.values():
            groups[f.gpu].append(f)
        return MappingProxyType({g: tuple(fs) for g, fs in groups.items()})

    def flavors_with_gpu(self, gid: str) -> tuple[Flavor, ...]:
        """Every flavor carrying GPU `gid`, in id order (for "cheapest A100 anywhere" without a scan)."""
        return self._by_gpu.get(gid, ())

    @staticmethod
    def shape(f: Flavor) -> tuple:
        """What ranking a flavor for a job depends on, apart from its price: the GPU and how many, memory,
        interconnect, RDMA, intended use, vGPU, evidence and the price's currency. Flavors of one shape fit the
        same jobs, pass the same rules and rank by price alone."""
        return (f.gpu, f.gpu_count, f.gpu_memory_gib, f.interconnect, f.rdma, tuple(f.use), f.vgpu, f.evidence,
                f.price.currency if f.price else None)

    @cached_property
    def _shapes(self) -> Mapping[str, tuple[tuple[Flavor, ...], ...]]:
        """Per provider: its flavors grouped by shape, each group cheapest first (unpriced last, then by id)."""
        out: dict[str, tuple[tuple[Flavor, ...], ...]] = {}
        for p, fs in self._by_provider.items():
            groups: dict[tuple, list[Flavor]] = defaultdict(list)
            for f in fs:
                groups[self.shape(f)].append(f)
            out[p] = tuple(tuple(sorted(g, key=_price_order)) for _k, g in sorted(groups.items(), key=_group_order))
        return MappingProxyType(out)

    @cached_property
    def _markets(self) -> Mapping[str, frozenset[str]]:
        """Per provider: the markets its flavors with a region on file are sold in (mainland China for cn-*)."""
        out: dict[str, set[str]] = defaultdict(set)
        for f in self.flavors.values():
            if f.region:
                out[f.provider].add(market(f.region))
        return MappingProxyType({p: frozenset(m) for p, m in out.items()})

    def sold_in(self, f: Flavor, region: str) -> bool:
        """Whether a flavor is sold in `region` as far as the knowledge base knows: its own region is in the same
        market (a cn-* region and "cn-mainland" are one market), or it has no region on file and its provider
        sells other flavors there (availability of that size unknown; answers say to check the region)."""
        want = market(region)
        if f.region:
            return f.region == region or market(f.region) == want
        return want in self._markets.get(f.provider, frozenset())

    def candidates(self, provider: str | None = None, *, exclude: str | None = None,
                   per_shape: int = 12, region: str | None = None) -> tuple[Flavor, ...]:
        """The flavors worth ranking: of each shape only the `per_shape` cheapest. A ranking that orders flavors
        of one shape by price (then id) and shows its best N <= per_shape rows gets the same N rows as when it
        ranks every flavor; the work then grows with the number of shapes, not of flavors (10 000 flavors that
        are regional or priced copies of 200 shapes cost like 200). `provider` None: all providers but
        `exclude`."""
        providers = [provider] if provider else [p for p in sorted(self._shapes) if p != exclude]
        if region:      # of each shape the per_shape cheapest of those sold in the region
            return tuple(f for p in providers for group in self._shapes.get(p, ())
                         for f in [g for g in group if self.sold_in(g, region)][:per_shape])
        return tuple(f for p in providers for group in self._shapes.get(p, ()) for f in group[:per_shape])

    def claims_naming(self, name: str) -> list[Claim]:
        key = norm_key(name)
        return [c for c in self.claims.values() if any(norm_key(n) == key for n in c.names)]


# A region id names one cloud region; regions of mainland China (cn-north-4, cn-southwest-2 ...) and the general
# "cn-mainland" of the rental platforms are one market: a question asked "in China" is answered from any of them.
MAINLAND_CHINA = "cn-mainland"


def market(region: str) -> str:
    return MAINLAND_CHINA if region == MAINLAND_CHINA or region.startswith("cn-") else region


def _price_order(f: Flavor) -> tuple:
    od = f.price.on_demand if f.price else None
    return (od is None, od or 0.0, f.id)


def _group_order(item: tuple[tuple, list[Flavor]]) -> tuple:
    return (item[1][0].gpu_memory_gib, item[1][0].id)


# ----- loading -------------------------------------------------------------------------------------------------
def with_pcie_links(flavors: dict[str, Flavor], gpus: Mapping[str, GPU]) -> dict[str, Flavor]:
    """Several cards of a model that has no NVLink at all (its GPU record says nvlink_capable: false, from sources
    that say "No NVLink") can only talk over PCIe: such a flavor with no link on file gets interconnect "pcie",
    evidence "derived", citing the card's sources, so answers stop asking to confirm an NVLink the card lacks."""
    out = dict(flavors)
    for fid, f in flavors.items():
        gpu = gpus.get(f.gpu)
        if f.gpu_count < 2 or f.interconnect is not None or f.vgpu or gpu is None or gpu.nvlink_capable is not False:
            continue
        note = (f"{gpu.name} has no NVLink (its sources), so these {f.gpu_count} cards talk over PCIe.")
        out[fid] = f.model_copy(update={
            "interconnect": "pcie", "interconnect_evidence": "derived",
            "sources": [*f.sources, *(s for s in gpu.sources if s not in f.sources)],
            "note": f"{f.note} {note}" if f.note else note})
    return out


def load_knowledge(root: Path | None = None, prices_file: Path | None = None) -> KnowledgeBase:
    """Load and validate; raise KnowledgeError listing every problem. A knowledge base that validated is cached
    by the content of every file it was built from, so an unchanged one loads without re-validating."""
    from bot.records import config
    root = Path(root) if root else config.knowledge_dir()
    digest = hashlib.sha256()
    for path in _yaml_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    if prices_file is not None and Path(prices_file).exists():
        digest.update(b"local\0" + Path(prices_file).read_bytes())
    entry = _cache_entry("kb", digest.digest() + str(root).encode() + _code_version())
    cached = _cache_load(entry)
    if isinstance(cached, dict) and cached.get("format") == 1:
        return _from_tables(cached)
    kb, problems = check_knowledge(root, prices_file)
    if problems:
        raise KnowledgeError(problems)
    assert kb is not None
    if entry is not None:
        _cache_store(entry, _to_tables(kb))
    return kb


def _code_version() -> bytes:
    """The validated records depend on the code that defines and derives them: a change there is a cache miss."""
    bot_dir = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"pydantic{__import__('pydantic').VERSION}".encode())
    for name in ("records/kb.py", "knowledge/loader.py", "knowledge/prices.py", "records/text.py"):
        h.update((bot_dir / name).read_bytes())
    return h.digest()


_TABLES = ("sources", "gpus", "models", "flavors", "providers", "claims", "topics", "model_aliases", "gpu_aliases",
           "provider_aliases", "estimate_spread", "rates", "datasets", "dataset_aliases")


def _to_tables(kb: "KnowledgeBase") -> dict[str, Any]:
    return {"format": 1, "version": kb.version, "files": kb.files, **{t: dict(getattr(kb, t)) for t in _TABLES}}


def _from_tables(d: dict[str, Any]) -> "KnowledgeBase":
    return KnowledgeBase(version=d["version"], files=tuple(d["files"]),
                         **{t: MappingProxyType(d[t]) for t in _TABLES})


_CACHE: dict[tuple[str, str], KnowledgeBase] = {}


def default_knowledge() -> KnowledgeBase:
    """The process-wide knowledge base (loaded once; surfaces share it)."""
    from bot.records import config
    root = config.knowledge_dir()
    prices = config.local_prices_file()
    key = (str(root), str(prices))
    if key not in _CACHE:
        _CACHE[key] = load_knowledge(root, prices)
    return _CACHE[key]


def check_knowledge(root: Path | None = None, prices_file: Path | None = None
                    ) -> tuple[KnowledgeBase | None, list[Problem]]:
    from bot.records import config
    root = Path(root) if root else config.knowledge_dir()
    problems: list[Problem] = []
    digest = hashlib.sha256()
    files = _yaml_files(root)
    if not files:
        problems.append(Problem(str(root), "-", "no YAML files found", "point ADVISOR_KNOWLEDGE_DIR at knowledge/"))
    tables, origin = _read_tables(root, files, digest, problems)
    missing = _missing_kinds(root, tables)
    if missing:                                         # every reference to them would fail: say what is missing
        return None, problems + missing

    def loc(kind: str, rid: str) -> str:
        return origin.get((kind, rid), "?")

    problems += _reference_problems(tables, loc)
    src = tables["sources"]
    aliases = {}
    for kind, label in (("models", "model"), ("gpus", "GPU"), ("providers", "provider"), ("datasets", "dataset")):
        aliases[kind] = _alias_table(tables[kind], kind, label, loc, problems)

    flavors = tables["flavors"]
    if prices_file is not None and Path(prices_file).exists():
        digest.update(b"local\0" + Path(prices_file).read_bytes())
        flavors = price_rules.apply_local_prices(flavors, Path(prices_file), problems, read_yaml, _guess_fix)
    flavors = price_rules.with_indicative_prices(flavors, tables["gpus"])
    flavors = with_pcie_links(flavors, tables["gpus"])
    problems += price_rules.price_problems(flavors, tables["providers"], tables["rates"], loc)
    problems += price_rules.alias_size_problems(tables["gpus"], loc)
    if problems:
        return None, problems
    freeze = MappingProxyType
    return KnowledgeBase(
        sources=freeze(src), gpus=freeze(tables["gpus"]), models=freeze(tables["models"]),
        flavors=freeze(dict(sorted(flavors.items()))), providers=freeze(tables["providers"]),
        claims=freeze(tables["claims"]), topics=freeze(tables["topics"]), version=digest.hexdigest()[:12], files=tuple(map(str, files)),
        model_aliases=freeze(aliases["models"]), gpu_aliases=freeze(aliases["gpus"]),
        provider_aliases=freeze(aliases["providers"]), estimate_spread=freeze(tables["estimate_spread"]),
        rates=freeze(tables["rates"]), datasets=freeze(tables["datasets"]),
        dataset_aliases=freeze(aliases["datasets"]),
    ), []


# the kinds no answer can do without (a model can be given by its size), and where the repository keeps them
REQUIRED_KINDS = {"sources": "sources/*.yaml", "gpus": "gpus.yaml", "flavors": "flavors/*.yaml",
                  "providers": "providers/*.yaml"}


def _missing_kinds(root: Path, tables: dict[str, dict[str, Any]]) -> list[Problem]:
    """A required kind with no record in any file: one problem naming the file that should hold it (an empty
    gpus.yaml used to surface as 209 'unknown GPU' lines, one per flavor, and none saying the file was empty)."""
    return [Problem(where, kind, f"no {kind} at all: {where} is missing or empty",
                    f"restore it (git checkout -- {root.name}/{where.split('*')[0].rstrip('/') or where})")
            for kind, where in REQUIRED_KINDS.items() if not tables.get(kind)]


def _read_tables(root: Path, files: list[Path], digest, problems: list[Problem]
                 ) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], str]]:
    """Every record of every file, typed, by kind and id, and the file each came from; what does not parse or
    validate becomes a Problem naming file, key and fix. The digest takes every file's bytes (the version)."""
    tables: dict[str, dict[str, Any]] = {k: {} for k in KINDS}
    origin: dict[tuple[str, str], str] = {}
    for path in files:
        rel = str(path.relative_to(root))
        digest.update(rel.encode() + b"\0" + path.read_bytes() + b"\0")
        before = len(problems)
        doc = read_yaml(path, problems, rel)
        if doc is None or doc == {}:
            if len(problems) == before:                 # it parsed: nothing in it but comments or blank lines
                problems.append(Problem(rel, "-", "the file is empty: it holds no records",
                                        f"restore it (git checkout -- {root.name}/{rel}), or delete it if it is "
                                        "not needed"))
            continue
        if not isinstance(doc, dict):
            problems.append(Problem(rel, "-", "the file must be a mapping of kinds to lists",
                                    f"start with one of: {', '.join(KINDS)}"))
            continue
        for kind, items in doc.items():
            if kind not in KINDS:
                guess = did_you_mean(str(kind), KINDS)
                problems.append(Problem(rel, str(kind), f"unknown top-level key '{kind}'",
                                        f"did you mean '{guess[0]}'?" if guess else f"use one of {', '.join(KINDS)}"))
                continue
            if not isinstance(items, list):
                problems.append(Problem(rel, kind, "must be a list of records", "put '- ' before each record"))
                continue
            for i, item in enumerate(items):
                rid = item.get("id", f"#{i}") if isinstance(item, dict) else f"#{i}"
                where = f"{kind}[{rid}]"
                if not isinstance(item, dict):
                    problems.append(Problem(rel, where, "a record must be a mapping", "write 'key: value' lines"))
                    continue
                try:
                    rec = KINDS[kind](**item)
                except ValidationError as exc:
                    problems.extend(validation_problems(rel, where, KINDS[kind], exc))
                    continue
                if rec.id in tables[kind]:
                    problems.append(Problem(rel, where, f"duplicate id (also in {origin[(kind, rec.id)]})",
                                            "give each record its own id"))
                    continue
                tables[kind][rec.id] = rec
                origin[(kind, rec.id)] = rel
    return tables, origin


def _reference_problems(tables: dict[str, dict[str, Any]], loc) -> list[Problem]:
    """Cross-references: every cited source exists, every flavor's GPU and provider exist, claims name flavors."""
    problems: list[Problem] = []
    src = tables["sources"]
    # every fact cites a source that exists
    for kind in ("gpus", "models", "flavors", "providers", "claims", "topics", "estimate_spread", "rates", "datasets"):
        for rid, rec in tables[kind].items():
            cited = list(rec.sources)
            if kind == "flavors" and rec.price is not None:
                cited += rec.price.sources
            if kind == "models" and rec.activation_basis is not None:
                cited.append(rec.activation_basis.source)
            if kind == "models" and rec.speed_basis is not None:
                cited.append(rec.speed_basis.source)
                if rec.speed_basis.gpu not in tables["gpus"]:
                    problems.append(Problem(loc(kind, rid), f"models[{rid}].speed_basis.gpu",
                                            f"unknown GPU '{rec.speed_basis.gpu}'", "use an id from gpus.yaml"))
            if kind == "providers":
                cited += [s for b in rec.billing for s in b.sources]
            for sid in cited:
                if sid not in src:
                    problems.append(Problem(loc(kind, rid), f"{kind}[{rid}].sources", f"unknown source '{sid}'",
                                            _guess_fix(sid, src, "add it to a sources: list")))
    for rid, f in tables["flavors"].items():
        if f.gpu not in tables["gpus"]:
            problems.append(Problem(loc("flavors", rid), f"flavors[{rid}].gpu", f"unknown GPU '{f.gpu}'",
                                    _guess_fix(f.gpu, tables["gpus"], "add the GPU to gpus.yaml")))
        if f.provider not in tables["providers"]:
            problems.append(Problem(loc("flavors", rid), f"flavors[{rid}].provider",
                                    f"unknown provider '{f.provider}'",
                                    _guess_fix(f.provider, tables["providers"], "add it to providers/")))
        if not rid.startswith(f.provider + "/"):
            problems.append(Problem(loc("flavors", rid), f"flavors[{rid}].id",
                                    "id must start with the provider", f"use '{f.provider}/{f.flavor}'"))
    for rid, c in tables["claims"].items():
        for fid in c.instead:
            if fid not in tables["flavors"]:
                problems.append(Problem(loc("claims", rid), f"claims[{rid}].instead", f"unknown flavor '{fid}'",
                                        _guess_fix(fid, tables["flavors"], "name a flavor id from flavors/")))
    return problems


def _guess_fix(word: str, choices: Iterable[str], otherwise: str) -> str:
    guess = did_you_mean(word, choices)
    return f"did you mean '{guess[0]}'?" if guess else otherwise


def _alias_table(records: Mapping[str, Any], kind: str, label: str, loc, problems: list[Problem]) -> dict[str, str]:
    table: dict[str, str] = {}
    for rid, rec in records.items():
        names = [rid, getattr(rec, "name", rid), *getattr(rec, "aliases", [])]
        name_zh = getattr(rec, "name_zh", None)
        if name_zh:
            names.append(name_zh)
        for name in names:
            key = norm_key(name)
            if not key:
                continue
            other = table.setdefault(key, rid)
            if other != rid:
                problems.append(Problem(loc(kind, rid), f"{kind}[{rid}].aliases",
                                        f"alias '{name}' also names {label} '{other}'",
                                        "make the alias specific to one record, or drop it"))
    return table
