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


# ----- issue 19, part 8: Ascend nodes, GeForce rentals, ModelArts pool codes (each fact with its source's words) ------
def test_snt9b_node_is_eight_64_gb_910b_cards_from_huaweis_own_pages_and_has_no_price(kb):
    f = kb.flavors["huaweicloud/modelarts-snt9b-8x64g"]
    assert (f.gpu, f.gpu_count, f.gpu_memory_gib, f.evidence, f.service) == ("ascend-910b", 8, 64, "vendor", "modelarts")
    assert f.price is None, "Huawei publishes no NPU price: the node must stay unpriced"
    assert quoted(kb, f, "一般snt9B规格为单节点8卡")                     # 8 cards per node (Huawei)
    assert quoted(kb, f, "64GB显存")                                    # Huawei sizes models for 64 GB NPUs
    assert quoted(kb, f, "8× Ascend 910B3 (64G HBM each)")              # Huawei's own repository
    assert quoted(kb, f, "推荐使用“西南-贵阳一”Region上的Lite Server和昇腾Snt9b资源") and f.region == "cn-southwest-2"
    # HCCS is derived from the 910B server (not stated for the node); RoCE between bare-metal nodes is stated
    assert (f.interconnect, f.interconnect_evidence) == ("hccs", "derived")
    assert quoted(kb, f, "8 cards fully interconnected per server")
    assert (f.rdma, f.rdma_evidence) == (True, "stated") and quoted(kb, f, "ascend-snt9, ascend-snt9b: RoCE")


def test_the_32_gb_snt9b_variant_rests_on_huaweis_32_gb_column_and_the_910b4(kb):
    f = kb.flavors["huaweicloud/modelarts-snt9b-8x32g"]
    assert (f.gpu, f.gpu_count, f.gpu_memory_gib, f.price) == ("ascend-910b4", 8, 32, None)
    assert quoted(kb, f, "NPU卡显存为32GB时,至少需要4张卡")
    assert quoted(kb, f, "The only difference is that HBM of 910b4 is 32G")
    assert (f.interconnect, f.interconnect_evidence) == (None, "unknown")


def test_910b_card_memory_is_64_gb_in_vllm_ascends_and_huaweis_words(kb):
    g = kb.gpus["ascend-910b"]
    assert g.memory_gib == 64
    assert quoted(kb, g, "2 Atlas 800 A2 (64G × 8)")
    assert quoted(kb, g, "8× Ascend 910B3 (64G HBM each)")
    assert quoted(kb, g, "8 * Ascend 910B (64G VRAM)")
    assert "Snt9b bins" in g.note and "inference" in g.note        # Snt9B = 910B is said to be inferred


@pytest.mark.parametrize("fid, gpu, count, price, row", [
    ("runpod/1x_RTX4090_SECURE", "rtx-4090", 1, 0.74, "1x_RTX4090_SECURE,RTX4090,1.0,5.0,29.0,US,0.74,0.74,US-TX-3"),
    ("runpod/4x_RTX4090_SECURE", "rtx-4090", 4, 2.96, "4x_RTX4090_SECURE,RTX4090,4.0,20.0,116.0,US,2.96,2.96,US-TX-5"),
    ("runpod/1x_RTX5090_SECURE", "rtx-5090", 1, 0.99, "1x_RTX5090_SECURE,RTX5090,1.0,6.0,46.0,US,0.99,0.99,US-TX-1"),
    ("runpod/2x_RTX5090_SECURE", "rtx-5090", 2, 1.98, "2x_RTX5090_SECURE,RTX5090,2.0,12.0,92.0,US,1.98,1.98,US-TX-1"),
])
def test_geforce_rentals_carry_the_catalog_row_they_come_from(kb, fid, gpu, count, price, row):
    f = kb.flavors[fid]
    assert (f.gpu, f.gpu_count, f.price.on_demand, f.price.currency, f.price.kind) == (gpu, count, price, "USD", "list")
    assert f.price.region == f.region and f.price.spot is None      # the catalog's spot column equals the price
    assert quoted(kb, f, row) and row in f.note


def test_four_rtx_4090s_talk_over_pcie_because_ada_has_no_nvlink_connector(kb):
    f = kb.flavors["runpod/4x_RTX4090_SECURE"]
    assert (f.interconnect, f.interconnect_evidence, f.nvlink) == ("pcie", "derived", False)
    assert quoted(kb, f, "have no NVLink physical connector")
    # issue 35: the RTX 5090 record says nvlink_capable false (its sources: "No NVLink"), so two of them can only use
    # PCIe; the loader derives it (was: left unknown, and answers asked to confirm an NVLink the card lacks)
    two_5090 = kb.flavors["runpod/2x_RTX5090_SECURE"]
    assert (two_5090.interconnect, two_5090.interconnect_evidence) == ("pcie", "derived")
    assert "no NVLink" in two_5090.note and set(kb.gpus["rtx-5090"].sources) <= set(two_5090.sources)


def test_gp_vnt1_is_called_probably_v100_32gb_from_huaweis_images_and_2021_notebook_spec(kb):
    t = kb.topics["modelarts_pool_codes"]
    assert "most likely the V100 32GB, an inference, not a statement" in t.text_en and "推断" in t.text_zh
    cited = " ".join(kb.sources[s].note or "" for s in t.sources)
    assert "BareMetal-Vnt1-p3-with-NVIDIA-535-CUDA-12.2" in cited
    assert "GPU: 1*V100(32GB), CPU: 8 核 64GB" in cited
    assert "When GPUs of series A are used" in cited and "华为云Ant8裸金属" in cited


def test_otc_only_families_search_is_recorded_and_said_not_to_prove_absence(kb):
    t = kb.topics["otc_only_families"]
    assert "hw-otc-only-search-2026-12-03" in t.sources
    assert "Not found is not proof they are not sold" in t.text_en
