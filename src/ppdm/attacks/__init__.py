"""Attacks on releases: what an attacker with stated background knowledge can recover.

>>> from ppdm.attacks import run_attacks, ThreatModel
>>> results = run_attacks(X, X_release, "known-io:20")        # doctest: +SKIP
>>> [r.to_dict() for r in results]                             # doctest: +SKIP

Every result is a frozen :class:`AttackResult` with its scores, two baselines (no release; the original
itself) and a confidence interval over seeds where the attack is random.
"""

from __future__ import annotations

from ppdm.attacks._distance import distance_attack, gauss_newton_locate
from ppdm.attacks._filtering import ica_attack, low_rank_denoise, spectral_filter
from ppdm.attacks._known_io import known_io_attack, procrustes
from ppdm.attacks._linkage import interval_disclosure, linkage_rates
from ppdm.attacks._pca import eigen_matching_distances, pca_attack
from ppdm.attacks._population import FIRST_SPACES, LINKAGE_SPACES
from ppdm.attacks._result import AttackResult
from ppdm.attacks._run import (
    ATTACKS,
    applicable_attacks,
    attack_tables,
    run_attacks,
    run_attacks_named,
    targeted_attacks,
)
from ppdm.attacks._threat import PRESETS, ThreatModel

__all__ = [
    "ATTACKS",
    "FIRST_SPACES",
    "LINKAGE_SPACES",
    "PRESETS",
    "AttackResult",
    "ThreatModel",
    "applicable_attacks",
    "attack_tables",
    "distance_attack",
    "eigen_matching_distances",
    "gauss_newton_locate",
    "ica_attack",
    "interval_disclosure",
    "known_io_attack",
    "linkage_rates",
    "low_rank_denoise",
    "pca_attack",
    "procrustes",
    "run_attacks",
    "run_attacks_named",
    "spectral_filter",
    "targeted_attacks",
]
