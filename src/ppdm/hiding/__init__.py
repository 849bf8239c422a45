"""Data pattern hiding with NMF: cluster memberships and pairwise relations (Wang 2008 Ch. 5)."""

from __future__ import annotations

from ppdm.hiding.clustering import ClusterProtocol, nmf_labels, reference_protocol
from ppdm.hiding.schemes import scheme1, scheme2, scheme3
from ppdm.hiding.search import HidingResult, MemberRequest, PairRequest, hide_patterns

__all__ = [
    "ClusterProtocol",
    "HidingResult",
    "MemberRequest",
    "PairRequest",
    "hide_patterns",
    "nmf_labels",
    "reference_protocol",
    "scheme1",
    "scheme2",
    "scheme3",
]
