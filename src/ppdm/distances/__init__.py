"""Dissimilarities between records: numeric, binary, mixed, and similarity-to-dissimilarity transforms.

Pairwise results are *condensed* (the ``n (n - 1) / 2`` pairs ``i < j`` in scipy ``pdist`` order) and
``float32`` by default, computed in row blocks so no ``n x n`` float64 matrix is built.
"""

from __future__ import annotations

from ppdm.distances.binary import binary_counts, binary_similarity
from ppdm.distances.mixed import gower, huang
from ppdm.distances.numeric import chebyshev, euclidean, mahalanobis, manhattan, minkowski
from ppdm.distances.pairwise import DISSIMILARITIES, condensed_index, n_pairs, pairwise
from ppdm.distances.transforms import similarity_to_dissimilarity

__all__ = [
    "DISSIMILARITIES", "pairwise", "n_pairs", "condensed_index", "euclidean", "minkowski", "manhattan",
    "chebyshev", "mahalanobis", "binary_counts", "binary_similarity", "gower", "huang",
    "similarity_to_dissimilarity",
]
