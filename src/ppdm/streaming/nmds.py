"""NMDS streams: a landmark configuration fitted once, new rows placed against it (``ppdm stream --method nmds``).

The first table is z-scored (statistics fixed from then on), a landmark sample is fitted by full NMDS
and every other row is placed against it by minimising its own stress. Later rows are placed the same
way, so rows released earlier keep their coordinates and the new ones sit in the same configuration.
Nothing is refitted, hence no refresh and no new columns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.exceptions import ParameterError, StateError

__all__ = ["NmdsStream"]


class NmdsStream:
    """The parts of :class:`~ppdm.mechanisms.incremental.IncrementalSVD` that :mod:`ppdm.streaming` uses.

    Parameters
    ----------
    dims : int
        Released dimension p.
    landmarks : int
        Landmark records fitted by full NMDS (all rows when the first table has fewer); new rows are
        placed against all of them.
    dissimilarity : str
        Numeric dissimilarity of the z-scored rows (see :data:`ppdm.distances.DISSIMILARITIES`).
    random_state : int
        Seed of the landmark sample and of the NMDS fit.
    """

    preprocess = "zscore"
    update_stats = False

    def __init__(self, dims: int, landmarks: int = 1000, dissimilarity: str = "euclidean",
                 random_state: int = 0) -> None:
        from ppdm.utils.validation import check_int

        self.dims = check_int(dims, "dims", low=1)
        self.landmarks = check_int(landmarks, "landmarks", low=2)
        self.dissimilarity = dissimilarity
        self.random_state = random_state
        self.n_samples_seen_ = 0
        self.n_updates_ = 0

    @property
    def rank(self) -> int:
        return self.dims

    @property
    def n_features_in_(self) -> int:
        return int(self.mean_.size)

    def _z(self, X: np.ndarray) -> np.ndarray:
        return (np.asarray(X, dtype=np.float64) - self.mean_) / self.scale_

    def fit(self, X: np.ndarray) -> NmdsStream:
        from ppdm.distances.pairwise import MIXED
        from ppdm.mechanisms.nmds import NonMetricMDS

        if self.dissimilarity in MIXED:
            raise ParameterError(f"dissimilarity '{self.dissimilarity}' needs categorical columns, which streams "
                                 "do not take; use a numeric dissimilarity (e.g. euclidean)")
        n, m = X.shape
        self.mean_ = X.mean(axis=0)
        sd = X.std(axis=0, ddof=1) if n > 1 else np.ones(m)
        self.scale_ = np.where(sd > 0, sd, 1.0)
        L = min(self.landmarks, n)
        if L <= self.dims + 1:
            raise ParameterError(f"--landmarks {self.landmarks} must exceed --dims + 1 = {self.dims + 1}")
        self.est_ = NonMetricMDS(self.dims, dissimilarity=self.dissimilarity, landmarks=L if L < n else None,
                                 max_stored_landmarks=L, random_state=self.random_state)
        self.release_ = self.est_.fit_transform(self._z(X))
        self.n_samples_seen_ = n
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Place rows against the landmark configuration (nothing is updated)."""
        return self.est_.transform(self._z(X))

    def update(self, X: np.ndarray) -> np.ndarray:
        """Place a new batch; the landmark configuration and the earlier releases stay as they were."""
        Y = self.transform(X)
        self.n_samples_seen_ += X.shape[0]
        self.n_updates_ += 1
        return Y

    # -- state ---------------------------------------------------------------------------------------

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        header, arrays = self.est_.to_state()
        arrays = {k: v for k, v in arrays.items() if k != "embedding_"}  # the release itself is not needed
        arrays |= {"stream_mean": self.mean_, "stream_scale": self.scale_}
        return {"nmds": header, "dims": self.dims, "landmarks": self.landmarks,
                "dissimilarity": self.dissimilarity, "n_samples_seen": self.n_samples_seen_,
                "n_updates": self.n_updates_}, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> NmdsStream:
        from ppdm.mechanisms.nmds import NonMetricMDS

        try:
            obj = cls(header["dims"], header["landmarks"], header["dissimilarity"])
            obj.n_samples_seen_ = int(header["n_samples_seen"])
            obj.n_updates_ = int(header["n_updates"])
            obj.mean_, obj.scale_ = arrays["stream_mean"], arrays["stream_scale"]
            rest = {k: v for k, v in arrays.items() if k not in ("stream_mean", "stream_scale")}
            obj.est_ = NonMetricMDS.from_state(header["nmds"], rest)  # type: ignore[assignment]
            obj.est_.landmark_embedding_  # noqa: B018  (the configuration new rows are placed against)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise StateError("the NMDS stream state is incomplete; it was made by another version") from None
        return obj
