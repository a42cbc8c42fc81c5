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
               "price": {"on_demand": 1.0, "currency": "USD", "kind": "list", "date": "2026-11-30",
                         "date_basis": "Dated 2026-11-30: s1 gives it.", "region": "r1",
                         "sources": ["s1"]}}


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
    # a price the catalog flags as a quirk, shown as a list price
    ({"flavors": [{**GOOD_FLAVOR, "price": {**GOOD_FLAVOR["price"], "flags": ["SKU-mapping quirk"]}}]},
     "flavors[acme/g1.small].price", "flags as a data quirk is shown as a list price"),
    # a list price without a region
    ({"flavors": [{**GOOD_FLAVOR, "price": {**GOOD_FLAVOR["price"], "region": None}}]},
     "flavors[acme/g1.small].price", "without a region"),
    # a list price in another currency than the provider bills in
    ({"flavors": [{**GOOD_FLAVOR, "price": {**GOOD_FLAVOR["price"], "currency": "CNY"}}]},
     "flavors[acme/g1.small].price.currency", "currency mismatch"),
    # an alias stating a memory size the GPU record does not have (910B4 is 32 GB, not 64)
    ({"gpus": [{**GOOD_GPU, "aliases": ["T4 32GB"]}]}, "gpus[t4].aliases", "states 32 GB"),
    # an interconnect value whose evidence says unknown
    ({"flavors": [{**GOOD_FLAVOR, "interconnect": "nvlink", "interconnect_evidence": "unknown"}]},
     "flavors[acme/g1.small]", "null goes with unknown"),
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
             "price": {**GOOD_FLAVOR["price"], "on_demand": 3.0}}
    unpriced = {**GOOD_FLAVOR, "id": "acme/g1.nop", "flavor": "g1.nop"}
    del unpriced["price"]
    kb = load_knowledge(write_kb(tmp_path, flavors=[GOOD_FLAVOR, other, unpriced]))
    price = kb.flavors["acme/g1.nop"].price
    # the cloud's own lowest per-GPU list price (1.0, not the 2-GPU size's 1.5), one GPU
    assert price.kind == "indicative" and price.on_demand == pytest.approx(1.0) and "own lowest" in price.basis


def test_indicative_price_of_a_cloud_without_that_gpu_is_the_median_of_other_clouds(tmp_path):
    provider2 = {**GOOD_PROVIDER, "id": "beta", "name": "Beta Cloud"}
    unpriced = {**GOOD_FLAVOR, "id": "beta/b1", "provider": "beta", "flavor": "b1", "gpu_count": 4}
    del unpriced["price"]
    kb = load_knowledge(write_kb(tmp_path, providers=[GOOD_PROVIDER, provider2], flavors=[GOOD_FLAVOR, unpriced]))
    price = kb.flavors["beta/b1"].price
    assert price.kind == "indicative" and price.on_demand == pytest.approx(4.0)
    assert "median over acme" in price.basis and "not a beta price" in price.basis


def test_a_size_with_only_a_spot_price_keeps_it_and_gets_its_own_clouds_rate(tmp_path):
    """Verda's 8x B200 had no on-demand price in the catalog: the indicative one is Verda's own per-GPU rate
    times eight (not the other clouds' median, 84 % higher), and its real spot price survives."""
    spot_only = {**GOOD_FLAVOR, "id": "acme/g1.x8", "flavor": "g1.x8", "gpu_count": 8,
                 "price": {**GOOD_FLAVOR["price"], "on_demand": None, "spot": 2.5}}
    kb = load_knowledge(write_kb(tmp_path, flavors=[GOOD_FLAVOR, spot_only]))
    price = kb.flavors["acme/g1.x8"].price
    assert (price.kind, price.on_demand, price.spot) == ("indicative", pytest.approx(8.0), 2.5)


def test_flagged_prices_never_feed_indicative_ones(tmp_path):
    flagged = {**GOOD_FLAVOR, "price": {**GOOD_FLAVOR["price"], "kind": "flagged", "flags": ["quirk"]}}
    unpriced = {**GOOD_FLAVOR, "id": "acme/g1.nop", "flavor": "g1.nop"}
    del unpriced["price"]
    kb = load_knowledge(write_kb(tmp_path, flavors=[flagged, unpriced]))
    assert kb.flavors["acme/g1.nop"].price is None


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


# An empty or missing knowledge file is named as such, in one or two lines, not as the hundreds of broken references
# it causes downstream (an empty gpus.yaml gave 209 "unknown GPU" lines and none saying the file was empty).
@pytest.mark.parametrize("change, expected", [
    # emptied: the file is empty, and the kind it held is missing
    (("gpus.yaml", ""), ["gpus.yaml: -: the file is empty", "gpus.yaml: gpus: no gpus at all"]),
    # only comments left in an optional kind's file (a model can be given by its size): the file is named
    (("models.yaml", "# nothing here\n"), ["models.yaml: -: the file is empty"]),
    # deleted: the kind is missing
    (("gpus.yaml", None), ["gpus.yaml: gpus: no gpus at all"]),
    # every flavor file deleted: one line for the kind
    (("flavors", None), ["flavors/*.yaml: flavors: no flavors at all"]),
])
def test_an_empty_or_missing_knowledge_file_is_named_in_one_line_each(tmp_path, change, expected):
    import shutil

    from bot.knowledge.loader import check_knowledge
    from bot.records import config
    root = tmp_path / "knowledge"
    shutil.copytree(config.knowledge_dir(), root)
    name, text = change
    if text is None:
        shutil.rmtree(root / name) if (root / name).is_dir() else (root / name).unlink()
    else:
        (root / name).write_text(text, encoding="utf-8")
    kb, problems = check_knowledge(root)
    assert kb is None and len(problems) == len(expected), [str(p) for p in problems]
    assert [str(p)[:len(e)] for p, e in zip(problems, expected)] == expected
