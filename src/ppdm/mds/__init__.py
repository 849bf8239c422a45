"""Non-metric multidimensional scaling: PAV, Kruskal stress-1, the optimiser, choosing p, landmarks."""

from __future__ import annotations

from ppdm.mds.pav import MonotoneFit, pav
from ppdm.mds.stress import kruskal_stress, raw_stress_terms

__all__ = ["pav", "MonotoneFit", "kruskal_stress", "raw_stress_terms"]
