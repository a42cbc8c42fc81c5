"""Interconnect as evidence: what a flavor tells us about how its GPUs talk, and how sure we are.

Three cases inside an instance: NVLink/NVSwitch known (stated by a source, or derived from the hardware: an SXM board
is NVLink-connected, recorded by the knowledge base as `interconnect_evidence: derived`), PCIe known, or unknown. An
unknown interconnect excludes nothing: the plan is timed as PCIe and the answer asks to confirm with the vendor.
Between instances: RDMA (InfiniBand/RoCE/EFA) known, no RDMA known (TCP), or unknown (TCP assumed).

NVLink by bridges is not an NVSwitch fabric: H100 NVL cards are "2 H100 PCIe boards that come already bridged
together" (gpu-anandtech-h100nvl), so an instance of 8 has four NVLink pairs and every pair reaches the others over
PCIe. A ring collective moves at the pace of its slowest hop (NCCL's ring: every GPU sends and receives each chunk
in turn), so a collective over more cards than one bridge joins (GPU.nvlink_peers) is timed at PCIe speed; within a
bridged group it is timed at the bridge's speed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from bot.knowledge.loader import KnowledgeBase
from bot.records.kb import Flavor

# PCIe 4.0 x16: 16 GT/s x 16 lanes with 128b/130b encoding = 31.5 GB/s each way (PCI-SIG, PCIe 4.0 base spec);
# PCIe 5.0 doubles it. A card's form factor names its generation in knowledge/gpus.yaml.
PCIE_GBS = {"3": 15.75, "4": 31.5, "5": 63.0}
_GBIT = re.compile(r"(\d+(?:\.\d+)?)\s*(T|G)b(?:it)?/?p?s", re.I)


@dataclass(frozen=True)
class LinkEvidence:
    intra: Literal["nvlink", "pcie", "unknown"]
    intra_how: Literal["stated", "derived", "unknown"]
    intra_gbs: float | None              # per GPU, one direction
    inter: Literal["rdma", "tcp", "unknown"]
    inter_gbs: float | None              # per instance, as documented (None: not documented)
    nvlink_peers: int | None = None      # cards one NVLink bridge joins (None: every card of the instance)
    pcie_gbs: float | None = None        # the card's PCIe slot, one direction: the path between bridged groups

    def bridged_beyond(self, gpus_in_instance: int) -> bool:
        """Does a collective over this many of the instance's cards cross from one NVLink bridge group to another
        (over PCIe)?"""
        return self.intra == "nvlink" and self.nvlink_peers is not None and gpus_in_instance > self.nvlink_peers

    @property
    def intra_known(self) -> bool:
        return self.intra != "unknown"


def link_of(kb: KnowledgeBase, f: Flavor) -> LinkEvidence:
    """The flavor's interconnect evidence (knowledge records it; this reads it, never guesses a link that helps)."""
    gpu = kb.gpus[f.gpu]
    how = getattr(f, "interconnect_evidence", None) or ("stated" if f.interconnect else "unknown")
    if f.gpu_count == 1:
        intra, gbs = "pcie", None
    elif f.nvlink:
        intra, gbs = "nvlink", (gpu.nvlink_gbs / 2 if gpu.nvlink_gbs else None)
    elif f.interconnect == "pcie":
        intra, gbs = "pcie", pcie_gbs(gpu.form_factor)
    elif gpu.nvlink_capable is False:
        intra, gbs, how = "pcie", pcie_gbs(gpu.form_factor), "derived"     # the card has no NVLink to use
    else:
        intra, gbs, how = "unknown", pcie_gbs(gpu.form_factor), "unknown"
    inter = "rdma" if f.rdma else ("tcp" if f.rdma is False else "unknown")
    return LinkEvidence(intra, how if f.gpu_count > 1 else "stated", gbs, inter, network_gbs(f.network),
                        gpu.nvlink_peers if intra == "nvlink" else None, pcie_gbs(gpu.form_factor))


def pcie_gbs(form_factor: str | None) -> float:
    """One direction of a x16 slot of the card's PCIe generation (4.0 when the form factor does not say)."""
    m = re.search(r"PCIe\s*(\d)", form_factor or "")
    return PCIE_GBS.get(m.group(1) if m else "4", PCIE_GBS["4"])


def network_gbs(network: str | None) -> float | None:
    """GB/s per instance from a documented network line ("400 Gbps aggregate", "400 Gb/s per GPU (3.2 Tb/s per
    VM)", "max/assured 25/15 Gbit/s": the assured figure); None when no figure is documented."""
    if not network:
        return None
    m = re.search(r"max/assured\s*[\d.]+/([\d.]+)\s*Gbit", network)
    if m:
        return float(m.group(1)) / 8
    figures = [float(v) * (1000 if unit.upper() == "T" else 1) for v, unit in _GBIT.findall(network)]
    return max(figures) / 8 if figures else None
