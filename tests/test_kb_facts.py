"""Facts an audit found wrong, each pinned to the source sentence that corrects it: the value in knowledge/ and
the quote in the cited source's note must both hold, so neither can drift alone."""
from __future__ import annotations

import pytest

from bot.knowledge.loader import default_knowledge


@pytest.fixture(scope="module")
def kb():
    return default_knowledge()


def quoted(kb, record, quote: str) -> bool:
    """The quote appears in the note of one of the record's own sources."""
    cited = list(record.sources) + (list(record.price.sources) if getattr(record, "price", None) else [])
    return any(quote in (kb.sources[s].note or "") for s in cited)


# 8 SXM GPUs in one machine are an HGX board: NVSwitch, derived from the hardware with a source.
HGX_EIGHT = [
    ("lambda/gpu_8x_h100_sxm5", "fully connects all eight H100 Tensor Core GPU"),
    ("lambda/gpu_8x_a100_80gb_sxm4", "connects to all eight A100"),
    ("lambda/gpu_8x_b200_sxm6", "8 GPUs per node connected via NVSwitch"),
    ("nebius/gpu-h100-sxm_8gpu-128vcpu-1600gb", "fully connects all eight H100 Tensor Core GPU"),
    ("nebius/gpu-h200-sxm_8gpu-128vcpu-1600gb", "acht H200- oder H100-Grafikkarten-Servern"),
    ("gcp/a3-ultragpu-8g", "acht H200- oder H100-Grafikkarten-Servern"),
    ("gcp/a4-highgpu-8g", "8 GPUs per node connected via NVSwitch"),
    ("aws/p5en.48xlarge", "acht H200- oder H100-Grafikkarten-Servern"),
    ("verda/8B200.240V", "8 GPUs per node connected via NVSwitch"),
]


@pytest.mark.parametrize("fid, quote", HGX_EIGHT)
def test_eight_gpu_hgx_machines_have_nvswitch_derived_from_the_hardware(kb, fid, quote):
    f = kb.flavors[fid]
    assert (f.gpu_count, f.interconnect, f.interconnect_evidence, f.nvlink) == (8, "nvswitch", "derived", True)
    assert quoted(kb, f, quote), f"{fid}: no cited source says {quote!r}"


def test_unknown_interconnect_stays_unknown_not_no(kb):
    p3 = kb.flavors["huaweicloud/p3.16xlarge.8"]
    assert (p3.interconnect, p3.interconnect_evidence, p3.nvlink) == (None, "unknown", None)
    assert all(f.interconnect_evidence == ("unknown" if f.interconnect is None else f.interconnect_evidence)
               for f in kb.flavors.values())


@pytest.mark.parametrize("fid", ["gcp/a2-ultragpu-1g", "gcp/a2-ultragpu-8g", "gcp/a3-highgpu-1g",
                                 "gcp/a3-highgpu-8g", "gcp/a3-ultragpu-8g"])
def test_catalog_quirk_prices_are_flagged_not_list(kb, fid):
    p = kb.flavors[fid].price
    assert p.kind == "flagged" and p.flags and "verify before quoting" in p.flags[0]


def test_flagged_prices_do_not_reach_indicative_prices(kb):
    """Huawei's 8x A100 80GB PCIe gets its indicative price from clouds selling that card (Azure), not from the
    GCP A2 Ultra price the catalog flags as 45-50 % too low."""
    p = kb.flavors["huaweicloud/p3.16xlarge.8"].price
    assert p.kind == "indicative" and "gcp" not in p.basis and "not a huaweicloud price" in p.basis


def test_verda_b200_multi_gpu_price_is_verdas_own_rate_and_keeps_its_spot(kb):
    p = kb.flavors["verda/8B200.240V"].price
    assert p.on_demand == pytest.approx(8 * 4.89) and p.spot == pytest.approx(13.69)
    assert "verda's own" in p.basis


def test_alias_910b4_names_the_32_gb_card(kb):
    gid = kb.gpu_aliases["910b4"]
    g = kb.gpus[gid]
    assert (gid, g.memory_gib) == ("ascend-910b4", 32)
    assert quoted(kb, g, "The only difference is that HBM of 910b4 is 32G")
    assert kb.gpus[kb.gpu_aliases["910b"]].memory_gib == 64


@pytest.mark.parametrize("fid, gpu, quote", [
    ("huaweicloud/p3.2xlarge.8", "a100-80gb-pcie", "with a bandwidth of 1,935 Gbit/s"),
    ("azure/Standard_NC24ads_A100_v4", "a100-80gb-pcie", "powered by NVIDIA A100 PCIe GPU"),
    ("huaweicloud/p2s.2xlarge.8", "v100-32gb-pcie", "PCIe"),
])
def test_pcie_cards_are_their_own_gpu_records(kb, fid, gpu, quote):
    f = kb.flavors[fid]
    g = kb.gpus[f.gpu]
    assert f.gpu == gpu and "PCIe" in g.form_factor and g.nvlink_gbs is None
    assert quoted(kb, f, quote) or quoted(kb, g, quote)
    assert kb.gpus[gpu.replace("-pcie", "")].memory_bandwidth_gbs != g.memory_bandwidth_gbs or gpu.startswith("v100")


def test_azure_nd96amsr_a100_v4_host_memory(kb):
    f = kb.flavors["azure/Standard_ND96amsr_A100_v4"]
    assert f.memory_gib == 1900 and quoted(kb, f, "96 vCPUs, 1900 GiB")


def test_huawei_rdma_default_claim_is_contradicted(kb):
    c = kb.claims["hw-claim-rdma-default"]
    assert c.verdict == "contradicted" and c.finding_en.startswith("RDMA is not a Huawei Cloud default")


def test_h100_nvl_pairs_are_nvlink_derived_on_p5e(kb):
    f = kb.flavors["huaweicloud/p5e.40xlarge.12"]
    assert (f.interconnect, f.interconnect_evidence) == ("nvlink", "derived")
    assert quoted(kb, f, "allowing two cards to be connected")


@pytest.mark.parametrize("fid", ["huaweicloud/pi5e.8xlarge.4", "huaweicloud/pi2.16xlarge.4", "huaweicloud/cci-t4-x4"])
def test_l4_and_t4_multi_gpu_sizes_are_pcie_derived_from_the_card(kb, fid):
    f = kb.flavors[fid]
    assert (f.interconnect, f.interconnect_evidence, f.nvlink) == ("pcie", "derived", False)
    assert quoted(kb, f, 'L4 and T4 "N/A"')
