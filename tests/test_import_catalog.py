"""The catalog importer: committed knowledge files match a fresh import, and the records say what they should.

The importer (scripts/import_catalog.py) is a standalone script, loaded here by path.
"""
from __future__ import annotations

import datetime as dt
import importlib.util
from pathlib import Path

import pytest
import yaml

from bot.records.kb import Flavor, Provider, Source

REPO = Path(__file__).resolve().parent.parent
CATALOG = REPO / "data" / "catalog"
KNOWLEDGE = REPO / "knowledge"
PROVIDERS = ("aws", "gcp", "azure", "lambda", "nebius", "verda")


def _load_importer():
    spec = importlib.util.spec_from_file_location("import_catalog", REPO / "scripts" / "import_catalog.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


importer = _load_importer()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> Path:
    """Run the importer, as a user would, into an empty directory."""
    out = tmp_path_factory.mktemp("knowledge")
    assert importer.main(["--catalog-dir", str(CATALOG), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def flavors(fresh) -> dict[str, Flavor]:
    records = {}
    for provider in PROVIDERS:
        for raw in yaml.safe_load((fresh / "flavors" / f"{provider}.yaml").read_text())["flavors"]:
            flavor = Flavor(**raw)
            records[flavor.id] = flavor
    return records


@pytest.mark.parametrize("rel", [f"flavors/{p}.yaml" for p in PROVIDERS] + ["sources/catalog.yaml"])
def test_committed_file_matches_fresh_import(fresh, rel):
    # If this fails, rerun `python scripts/import_catalog.py` and commit the result.
    assert (KNOWLEDGE / rel).read_text(encoding="utf-8") == (fresh / rel).read_text(encoding="utf-8")


def test_import_is_deterministic(fresh, tmp_path):
    assert importer.main(["--catalog-dir", str(CATALOG), "--out", str(tmp_path)]) == 0
    for provider in PROVIDERS:
        rel = f"flavors/{provider}.yaml"
        assert (tmp_path / rel).read_text() == (fresh / rel).read_text()


def test_counts_per_provider(flavors):
    # Rows in the CSVs; every row has a price or is a GCP GPU-only row with a nameable host VM.
    counts = {p: sum(1 for f in flavors.values() if f.provider == p) for p in PROVIDERS}
    assert counts == {"aws": 43, "gcp": 33, "azure": 20, "lambda": 22, "nebius": 16, "verda": 17}


def test_every_price_has_currency_kind_and_date(flavors):
    for flavor in flavors.values():
        if flavor.price is None:
            # only GCP GPU-only rows lack an instance price, and they say why
            assert flavor.provider == "gcp" and "+" in flavor.flavor, flavor.id
            assert "host VM price not in catalog" in flavor.note
            continue
        price = flavor.price
        assert price.currency == "USD", flavor.id
        assert price.kind in ("list", "flagged"), flavor.id
        assert (price.kind == "flagged") == bool(price.flags), flavor.id
        assert price.region == flavor.region and price.region, flavor.id
        assert price.unit == "hour", flavor.id
        assert price.on_demand is not None or price.spot is not None, flavor.id
        assert price.sources[0] == f"cat-skypilot-{flavor.provider}", flavor.id
        # dated by a dated reading it cites, or said to be undated; never a stand-in date
        assert (price.date is None) == price.date_basis.startswith("Undated"), flavor.id
        assert price.date is None or len(price.sources) == 2, flavor.id


def test_a_dated_price_carries_the_date_of_the_source_that_gives_it(flavors):
    """The date of a catalog price is the publication date of the dated reading it cites, never the import day."""
    sources = {s["id"]: s for s in yaml.safe_load((KNOWLEDGE / "sources" / "catalog.yaml").read_text())["sources"]}
    dated = [f for f in flavors.values() if f.price and f.price.date]
    assert len(dated) == 4 + 7 + 22 + 5      # aws (p4d, p4de, p5, p5en), azure, every lambda row, nebius (versions.yaml)
    for f in dated:
        reading = sources[f.price.sources[1]]
        assert reading["published"] == f.price.date, f.id
        assert f.price.sources[1] in f.price.date_basis, f.id


# (flavor, on-demand USD/h, date, spot, spot date): from the dated readings (sources named in versions.yaml)
DATED_ROWS = [
    # Lambda: its page on 2026-09-25 (silybench) and 2026-09-20 (API Evangelist) gives the 0f407038 file's prices
    ("lambda/gpu_1x_h100_sxm5", 4.29, dt.date(2026, 9, 25), None, None),
    ("lambda/gpu_8x_h100_sxm5", 31.92, dt.date(2026, 9, 25), None, None),        # 3.99 x 8
    ("lambda/gpu_1x_rtx6000", 0.69, dt.date(2026, 9, 20), None, None),
    ("lambda/gpu_8x_b200_sxm6", 53.52, dt.date(2026, 9, 20), None, None),        # 6.69 x 8
    # AWS: p5 from the 2026-11-09 price-list reading; p5en's spot observed in us-east-1 on 2026-08-06
    ("aws/p5.48xlarge", 55.04, dt.date(2026, 11, 9), 17.6289, None),
    ("aws/p5en.48xlarge", 63.296, dt.date(2026, 8, 6), 27.1988, dt.date(2026, 8, 6)),
    # Azure refreshed: the 2026-11-09 eastus prices replace the v6 file's (7.346, 14.692, 13.96); spot dropped
    ("azure/Standard_NC48ads_A100_v4", 9.554, dt.date(2026, 11, 9), None, None),
    ("azure/Standard_NC96ads_A100_v4", 19.108, dt.date(2026, 11, 9), None, None),
    ("azure/Standard_NC80adis_H100_v5", 17.64, dt.date(2026, 11, 9), None, None),
    ("azure/Standard_NC24ads_A100_v4", 3.673, dt.date(2026, 11, 9), 0.444433, None),
    # Nebius: nebius.com/prices on 2026-09-25, H100 3.85 and H200 4.50 per GPU-hour (the file had 2.95 and 3.50)
    ("nebius/gpu-h100-sxm_8gpu-128vcpu-1600gb", 30.8, dt.date(2026, 9, 25), None, None),
    ("nebius/gpu-h200-sxm_1gpu-16vcpu-200gb", 4.5, dt.date(2026, 9, 25), None, None),
]


@pytest.mark.parametrize("fid,on_demand,date,spot,spot_date", DATED_ROWS)
def test_rows_dated_or_replaced_by_dated_readings(flavors, fid, on_demand, date, spot, spot_date):
    p = flavors[fid].price
    assert (p.on_demand, p.date, p.spot, p.spot_date) == (pytest.approx(on_demand), date, spot, spot_date)


def test_a_row_no_dated_source_gives_is_undated(flavors):
    for fid in ("gcp/a3-highgpu-8g", "verda/1B200.30V", "aws/g6.xlarge"):
        p = flavors[fid].price
        assert p.date is None and p.date_basis.startswith("Undated") and p.spot_date is None, fid


def test_a_dated_reading_that_disagrees_without_replace_stops_the_import(tmp_path):
    versions = yaml.safe_load((CATALOG / "versions.yaml").read_text())
    versions["providers"]["lambda"]["checks"][0]["prices"]["gpu_1x_h100_sxm5"] = 2.99
    dating = importer.PriceDating.from_versions("lambda", versions)
    with pytest.raises(importer.ImportError_, match="replace: true"):
        dating.for_row("gpu_1x_h100_sxm5", 1, 4.29, None)


def test_a100_80gb_rows_map_to_80_gib(flavors):
    rows = [f for f in flavors.values() if f.gpu in ("a100-80gb", "a100-80gb-pcie")]
    # aws p4de, gcp a2-ultragpu x4, azure NC A100 v4 x3 (PCIe cards) + NDm, lambda 8x, verda x2
    assert len(rows) == 12
    assert {f.gpu_memory_gib for f in rows} == {80}
    assert sorted(f.id for f in rows if f.gpu == "a100-80gb-pcie") == [
        "azure/Standard_NC24ads_A100_v4", "azure/Standard_NC48ads_A100_v4", "azure/Standard_NC96ads_A100_v4"]
    assert flavors["aws/p4de.24xlarge"].gpu_memory_gib == 80
    assert flavors["aws/p4d.24xlarge"].gpu == "a100-40gb"
    assert flavors["aws/p4d.24xlarge"].gpu_memory_gib == 40


def test_azure_nd_h100_v5_has_eight_gpus(flavors):
    nd = flavors["azure/Standard_ND96isr_H100_v5"]
    assert nd.gpu_count == 8  # Microsoft documents 8; the catalog says 12
    assert nd.gpu == "h100-sxm" and nd.gpu_memory_gib == 80
    assert "12" in nd.note
    assert nd.price.spot is None  # catalog spot == on-demand: unknown
    assert nd.rdma is True and "InfiniBand" in nd.network
    assert "cat-azure-ndh100v5" in nd.sources


def test_gpu_mapping_special_cases(flavors):
    assert flavors["azure/Standard_NC40ads_H100_v5"].gpu == "h100-nvl"
    assert flavors["azure/Standard_NC40ads_H100_v5"].gpu_memory_gib == 94
    assert flavors["lambda/gpu_1x_h100_pcie"].gpu == "h100-pcie"
    assert flavors["lambda/gpu_1x_h100_sxm5"].gpu == "h100-sxm"
    assert flavors["gcp/a3-megagpu-8g"].gpu == "h100-sxm"
    assert flavors["aws/g5g.16xlarge"].gpu == "t4"
    # marketing size, usable size in the note
    g5 = flavors["aws/g5.xlarge"]
    assert g5.gpu_memory_gib == 24 and "22888 MiB" in g5.note


def test_single_gpu_instances_have_no_interconnect(flavors):
    for flavor in flavors.values():
        if flavor.gpu_count == 1:
            assert flavor.interconnect is None, flavor.id


def test_interconnect_and_network_facts(flavors):
    p4d = flavors["aws/p4d.24xlarge"]
    assert (p4d.interconnect, p4d.rdma) == ("nvswitch", True) and "400 Gbps" in p4d.network
    p5 = flavors["aws/p5.48xlarge"]
    assert p5.rdma is True and "3200 Gbps" in p5.network
    tcpx = flavors["gcp/a3-highgpu-8g"]
    assert tcpx.rdma is False and "not RDMA" in tcpx.network  # GPUDirect-TCPX is TCP, not RDMA
    assert flavors["gcp/a3-megagpu-8g"].rdma is False
    assert flavors["gcp/a3-ultragpu-8g"].rdma is True and "RoCE" in flavors["gcp/a3-ultragpu-8g"].network
    assert flavors["azure/Standard_ND96asr_v4"].rdma is True


def test_spot_rules(flavors):
    assert flavors["aws/p5.4xlarge"].price.spot is None  # empty in catalog
    assert flavors["lambda/gpu_8x_h100_sxm5"].price.spot is None  # no spot market
    verda = flavors["verda/2B200.60V"]  # spot only
    assert verda.price.on_demand is None and verda.price.spot == 3.423


def test_gcp_gpu_only_rows(flavors):
    row = flavors["gcp/g2-standard-4+1xl4"]
    assert row.price is None and row.vcpus == 4 and row.memory_gib is None
    assert "0.56004" in row.note and "host VM price not in catalog" in row.note
    assert flavors["gcp/n1-standard-64+4xt4"].gpu_count == 4
    assert flavors["gcp/n1-highmem-64+8xv100"].interconnect == "nvlink"


# the host VM's vCPUs of every GCP GPU-only row, as Google's documentation gives them: the G2 table of 'GPU machine
# types' (g2-standard-4: 4, -24: 24, -48: 48, -96: 96) and the N1 tables of 'Machine types', whose names carry the
# vCPU count (n1-highmem-8: 8 ... n1-standard-64: 64); each row cites the page it comes from
GCP_HOST_VCPUS = [
    ("g2-standard-4+1xl4", 4, "cat-gcp-docs-gpu-machine-types"),
    ("g2-standard-24+2xl4", 24, "cat-gcp-docs-gpu-machine-types"),
    ("g2-standard-48+4xl4", 48, "cat-gcp-docs-gpu-machine-types"),
    ("g2-standard-96+8xl4", 96, "cat-gcp-docs-gpu-machine-types"),
    ("n1-highmem-4+1xt4", 4, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-8+2xt4", 8, "cat-gcp-docs-n1-machine-types"),
    ("n1-standard-64+4xt4", 64, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-8+1xv100", 8, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-16+2xv100", 16, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-32+4xv100", 32, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-64+8xv100", 64, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-8+1xp100", 8, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-16+2xp100", 16, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-32+4xp100", 32, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-8+1xp4", 8, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-16+2xp4", 16, "cat-gcp-docs-n1-machine-types"),
    ("n1-highmem-32+4xp4", 32, "cat-gcp-docs-n1-machine-types"),
]


@pytest.mark.parametrize("name, vcpus, source", GCP_HOST_VCPUS)
def test_gcp_gpu_only_host_vcpus(flavors, name, vcpus, source):
    row = flavors[f"gcp/{name}"]
    assert row.vcpus == vcpus and source in row.sources
    assert f"its {vcpus} vCPUs are from Google Cloud's machine-type documentation" in row.note


def test_every_gcp_flavor_has_vcpus(flavors):
    """Every GCP flavor on file says its vCPUs (the data-loading check needs them)."""
    assert [f.id for f in flavors.values() if f.provider == "gcp" and f.vcpus is None] == []


def test_every_source_resolves(fresh):
    ids = {Source(**s).id for s in yaml.safe_load((fresh / "sources" / "catalog.yaml").read_text())["sources"]}
    ids |= {Source(**s).id for s in yaml.safe_load((KNOWLEDGE / "sources" / "clouds.yaml").read_text())["sources"]}
    assert all(i.startswith(("cat-", "cloud-")) for i in ids)
    for provider in PROVIDERS:
        for raw in yaml.safe_load((fresh / "flavors" / f"{provider}.yaml").read_text())["flavors"]:
            assert set(raw["sources"]) <= ids, raw["id"]
    for raw in yaml.safe_load((KNOWLEDGE / "providers" / "others.yaml").read_text())["providers"]:
        provider = Provider(**raw)
        refs = set(provider.sources) | {s for mode in provider.billing for s in mode.sources}
        assert refs <= ids, provider.id


def test_unmatched_row_is_an_error(tmp_path):
    (tmp_path / "aws.csv").write_text(
        "provider,instance_type,accelerator,accelerator_count,vcpus,memory_gib,gpu_info,"
        "price_usd_per_hour,spot_price_usd_per_hour,region,notes\n"
        "aws,zz9.xlarge,L4,1,4,16,,1.0,,us-east-1,\n")
    networks = yaml.safe_load((CATALOG / "networks.yaml").read_text())
    with pytest.raises(importer.ImportError_, match="no entry in networks.yaml"):
        importer.import_provider("aws", tmp_path, networks)
