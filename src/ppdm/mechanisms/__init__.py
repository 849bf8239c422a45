"""Perturbation mechanisms: scikit-learn transformers whose output is the released table."""

from __future__ import annotations

from ppdm.mechanisms.base import Mechanism
from ppdm.mechanisms.noise import AdditiveNoise, MultiplicativeNoise
from ppdm.mechanisms.partition import StructuralPartition
from ppdm.mechanisms.projection import RandomProjection, RandomRotation
from ppdm.mechanisms.sparsified import SparsifiedSVD
from ppdm.mechanisms.svd import ThinSVD, svd_reconstruct

__all__ = [
    "AdditiveNoise",
    "Mechanism",
    "MultiplicativeNoise",
    "RandomProjection",
    "RandomRotation",
    "SparsifiedSVD",
    "StructuralPartition",
    "ThinSVD",
    "svd_reconstruct",
]
