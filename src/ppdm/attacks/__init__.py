"""Attacks on releases: what an attacker with stated background knowledge can recover.

>>> from ppdm.attacks import run_attacks, ThreatModel
>>> results = run_attacks(X, X_release, "known-io:20")        # doctest: +SKIP
>>> [r.to_dict() for r in results]                             # doctest: +SKIP

Every result is a frozen :class:`AttackResult` with its scores, two baselines (no release; the original
itself) and a confidence interval over seeds where the attack is random.

The three tests of anonymisation compare a release with the records it was made from and with real
records it did not contain (the control), on mixed tables encoded together (:func:`from_frames`):
:func:`singling_out`, :func:`linkability`, :func:`inference_by_column` and membership inference
(:func:`membership_advantage`, :func:`paired_outlier_advantage`). Each returns its success on the
release's members, on the control, and the excess with a 95 % interval.
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
from ppdm.attacks.inference import inference_by_column
from ppdm.attacks.linkability import linkability
from ppdm.attacks.membership import (
    distance_to_closest,
    membership_advantage,
    outlier_advantage,
    outlyingness,
    paired_outlier_advantage,
)
from ppdm.attacks.mixed import MixedTable, column_ranges, encode_tables, from_frames, gower_nearest
from ppdm.attacks.singling_out import singling_out

__all__ = [
    "ATTACKS",
    "FIRST_SPACES",
    "LINKAGE_SPACES",
    "PRESETS",
    "AttackResult",
    "MixedTable",
    "ThreatModel",
    "applicable_attacks",
    "attack_tables",
    "column_ranges",
    "distance_attack",
    "distance_to_closest",
    "eigen_matching_distances",
    "encode_tables",
    "from_frames",
    "gauss_newton_locate",
    "gower_nearest",
    "ica_attack",
    "inference_by_column",
    "interval_disclosure",
    "known_io_attack",
    "linkability",
    "linkage_rates",
    "low_rank_denoise",
    "membership_advantage",
    "outlier_advantage",
    "outlyingness",
    "paired_outlier_advantage",
    "pca_attack",
    "procrustes",
    "run_attacks",
    "run_attacks_named",
    "singling_out",
    "spectral_filter",
    "targeted_attacks",
]
