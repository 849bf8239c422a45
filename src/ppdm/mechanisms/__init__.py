"""Perturbation mechanisms: scikit-learn transformers whose output is the released table."""

from __future__ import annotations

from ppdm.mechanisms.base import Mechanism
from ppdm.mechanisms.dp_synthetic import DPGaussianCopula  # imports without OpenDP; fitting needs ppdm[dp]
from ppdm.mechanisms.incremental import IncrementalSVD
from ppdm.mechanisms.microaggregation import MDAV
from ppdm.mechanisms.nmds import NonMetricMDS
from ppdm.mechanisms.nmf import NMF
from ppdm.mechanisms.noise import AdditiveNoise, CorrelatedNoise, MultiplicativeNoise
from ppdm.mechanisms.partition import StructuralPartition
from ppdm.mechanisms.projection import RandomProjection, RandomRotation
from ppdm.mechanisms.reduction import (
    ClassicalMDS,
    DCTReduction,
    LiuRandomProjection,
    PCAProjection,
    ThresholdSVD,
)
from ppdm.mechanisms.sparsified import SparsifiedSVD
from ppdm.mechanisms.subspace import SVDMicroaggregation, SVDNoise
from ppdm.mechanisms.svd import ThinSVD, svd_reconstruct
from ppdm.mechanisms.swapping import RankSwap
from ppdm.mechanisms.synthetic import GaussianCopula

# every mechanism of the registry (ppdm.registry.names()) is importable from here; a test keeps it so
__all__ = [
    "AdditiveNoise",
    "ClassicalMDS",
    "CorrelatedNoise",
    "DCTReduction",
    "DPGaussianCopula",
    "GaussianCopula",
    "IncrementalSVD",
    "LiuRandomProjection",
    "MDAV",
    "Mechanism",
    "MultiplicativeNoise",
    "NMF",
    "NonMetricMDS",
    "PCAProjection",
    "RandomProjection",
    "RandomRotation",
    "RankSwap",
    "SVDMicroaggregation",
    "SVDNoise",
    "SparsifiedSVD",
    "StructuralPartition",
    "ThinSVD",
    "ThresholdSVD",
    "svd_reconstruct",
]
