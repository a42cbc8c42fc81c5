"""Knowledge base loading and `kb validate`: the real one validates; malformed ones name file, key and fix."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bot.knowledge.loader import check_knowledge, load_knowledge
from bot.records.errors import KnowledgeError

ROOT = Path(__file__).resolve().parent.parent
GOOD_SOURCE = {"id": "s1", "title": "A source", "publisher": "Someone", "kind": "vendor-doc", "read": "2026-12-02"}
GOOD_GPU = {"id": "t4", "name": "NVIDIA T4", "vendor": "nvidia", "architecture": "Turing", "memory_gib": 16,
            "positioning": ["inference"], "sources": ["s1"]}
GOOD_PROVIDER = {"id": "acme", "name": "Acme Cloud", "sources": ["s1"]}
GOOD_FLAVOR = {"id": "acme/g1.small", "provider": "acme", "flavor": "g1.small", "family": "g1", "gpu": "t4",
               "gpu_count": 1, "gpu_memory_gib": 16, "evidence": "vendor", "sources": ["s1"],
               "price": {"on_demand": 1.0, "currency": "USD", "kind": "list", "date": "2026-11-30", "sources": ["s1"]}}


def write_kb(tmp: Path, **changes) -> Path:
    doc = {"sources": [GOOD_SOURCE], "gpus": [GOOD_GPU], "providers": [GOOD_PROVIDER], "flavors": [GOOD_FLAVOR]}
    for kind, records in changes.items():
        doc[kind] = records
    (tmp / "kb.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return tmp


def test_the_real_knowledge_base_validates():
    kb, problems = check_knowledge(ROOT / "knowledge")
    assert problems == [], "\n".join(map(str, problems))
    assert len(kb.models) >= 50 and len(kb.gpus) >= 30
    assert {"huaweicloud", "aws", "gcp", "azure", "lambda", "nebius", "verda"} <= set(kb.providers)


def test_a_tiny_kb_loads_and_gets_no_invented_price(tmp_path):
    kb = load_knowledge(write_kb(tmp_path))
    assert kb.flavors["acme/g1.small"].price.kind == "list"
    assert kb.version and len(kb.version) == 12


@pytest.mark.parametrize("changes, key, words", [
    # a misspelt key gets "did you mean"
    ({"gpus": [{**GOOD_GPU, "memroy_gib": 16}]}, "gpus[t4]", "did you mean 'memory_gib'"),
    # a flavor naming a GPU that does not exist
    ({"flavors": [{**GOOD_FLAVOR, "gpu": "t44"}]}, "flavors[acme/g1.small].gpu", "did you mean 't4'"),
    # a fact citing a source that does not exist
    ({"gpus": [{**GOOD_GPU, "sources": ["s2"]}]}, "gpus[t4].sources", "unknown source 's2'"),
    # a record without any source
    ({"gpus": [{**GOOD_GPU, "sources": []}]}, "gpus[t4].sources", "at least 1"),
    # one alias naming two records
    ({"gpus": [{**GOOD_GPU, "aliases": ["tee four"]}, {**GOOD_GPU, "id": "l4", "name": "NVIDIA L4",
                                                         "aliases": ["Tee Four"]}]}, "aliases", "also names"),
    # a price without a currency kind
    ({"flavors": [{**GOOD_FLAVOR, "price": {"on_demand": 1.0, "currency": "USD", "date": "2026-11-30"}}]},
     "flavors[acme/g1.small].price.kind", "required"),
    # a wrong top-level kind
    ({"flavours": []}, "flavours", "did you mean 'flavors'"),
])
def test_malformed_records_are_refused_with_file_key_and_fix(tmp_path, changes, key, words):
    _kb, problems = check_knowledge(write_kb(tmp_path, **changes))
    text = "\n".join(map(str, problems))
    assert problems, "expected a problem"
    assert "kb.yaml" in text and key in text and words in text, text


def test_broken_yaml_names_the_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("gpus:\n  - id: t4\n   name: x\n", encoding="utf-8")
    with pytest.raises(KnowledgeError) as exc:
        load_knowledge(tmp_path)
    assert "bad.yaml" in str(exc.value) and "line" in str(exc.value)


def test_indicative_price_is_derived_and_labelled(tmp_path):
    other = {**GOOD_FLAVOR, "id": "acme/g1.big", "flavor": "g1.big", "gpu_count": 2,
             "price": {"on_demand": 3.0, "currency": "USD", "kind": "list", "date": "2026-11-30", "sources": ["s1"]}}
    unpriced = {**GOOD_FLAVOR, "id": "acme/g1.nop", "flavor": "g1.nop"}
    del unpriced["price"]
    kb = load_knowledge(write_kb(tmp_path, flavors=[GOOD_FLAVOR, other, unpriced]))
    price = kb.flavors["acme/g1.nop"].price
    # the cloud's lowest per-GPU list price (1.0, not the 2-GPU size's 1.5), median across clouds, one GPU
    assert price.kind == "indicative" and price.on_demand == pytest.approx(1.0) and "median" in price.basis


def test_local_prices_override_and_are_labelled(tmp_path):
    (tmp_path / "local").mkdir()
    prices = tmp_path / "local" / "prices.yaml"          # knowledge/local/ is git-ignored and not a KB file
    prices.write_text("prices:\n  - {flavor: acme/g1.small, on_demand: 7.5, currency: CNY, date: 2026-12-01}\n")
    kb = load_knowledge(write_kb(tmp_path), prices)
    p = kb.flavors["acme/g1.small"].price
    assert (p.kind, p.on_demand, p.currency) == ("local", 7.5, "CNY")


def test_flavor_index_returns_only_big_enough_gpus(kb):
    big = kb.flavors_of("aws", min_gpu_memory_gib=70)
    assert big and all(f.gpu_memory_gib >= 70 for f in big)
    assert len(kb.flavors_of("aws")) > len(big)


def test_claims_say_what_the_vendor_documents_instead(kb):
    claims = kb.claims_naming("p3s.large")
    assert claims and claims[0].verdict in ("contradicted", "partly-supported")
    assert all(fid in kb.flavors for c in claims for fid in c.instead)
