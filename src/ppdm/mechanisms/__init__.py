"""Perturbation mechanisms: scikit-learn transformers whose output is the released table."""

from __future__ import annotations

from ppdm.mechanisms.base import Mechanism
from ppdm.mechanisms.cart import CARTSynthesis
from ppdm.mechanisms.categorical import PRAM, LocalSuppression, RareCategoryRecoding
from ppdm.mechanisms.combined import Combined
from ppdm.mechanisms.dp_select import DPAIM, DPMST  # import without mbi or OpenDP; fitting needs ppdm[dp]
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

# every mechanism of the registry (ppdm.registry.names()) is importable from here; a test keeps it so (the
# categorical mechanisms and their combination with a numeric one are used by the release sweep)
__all__ = [
    "AdditiveNoise",
    "CARTSynthesis",
    "ClassicalMDS",
    "Combined",
    "CorrelatedNoise",
    "DCTReduction",
    "DPAIM",
    "DPGaussianCopula",
    "DPMST",
    "GaussianCopula",
    "IncrementalSVD",
    "LiuRandomProjection",
    "LocalSuppression",
    "MDAV",
    "Mechanism",
    "MultiplicativeNoise",
    "NMF",
    "NonMetricMDS",
    "PCAProjection",
    "PRAM",
    "RandomProjection",
    "RandomRotation",
    "RankSwap",
    "RareCategoryRecoding",
    "SVDMicroaggregation",
    "SVDNoise",
    "SparsifiedSVD",
    "StructuralPartition",
    "ThinSVD",
    "ThresholdSVD",
    "svd_reconstruct",
]
