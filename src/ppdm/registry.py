"""One explicit table of the mechanisms: stable names -> classes (imported lazily).

The CLI, ``ppdm list``, the release sweep and the common test suite all read this table, so adding a
mechanism is one class plus one entry here.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any

from ppdm.exceptions import ParameterError

__all__ = ["MechanismEntry", "MECHANISMS", "get", "build", "class_by_name", "names"]


@dataclass(frozen=True)
class MechanismEntry:
    name: str
    target: str  # "module:Class"
    summary: str
    #: cheap parameters for tests (and defaults of the release sweep's grid)
    test_params: dict[str, Any] = field(default_factory=dict)
    #: True when the mechanism accepts categorical columns
    categorical: bool = False
    #: an optional dependency the mechanism needs to fit (a module name) and the ppdm extra that installs it
    requires: str | None = None
    extra: str | None = None

    def load(self) -> type:
        module, cls = self.target.split(":")
        return getattr(importlib.import_module(module), cls)

    def available(self) -> bool:
        """True when the optional dependency (if any) is installed; the class itself always imports."""
        return self.requires is None or importlib.util.find_spec(self.requires) is not None

    def missing(self) -> str | None:
        """Why the mechanism cannot fit here (its dependency and the pip command), or None."""
        if self.available():
            return None
        return f"method '{self.name}' needs {self.requires}; install it with: pip install 'ppdm[{self.extra}]'"


MECHANISMS: dict[str, MechanismEntry] = {
    e.name: e
    for e in (
        MechanismEntry("svd", "ppdm.mechanisms.svd:ThinSVD", "thin (truncated) SVD, rank k", {"rank": 1}),
        MechanismEntry(
            "ssvd", "ppdm.mechanisms.sparsified:SparsifiedSVD",
            "sparsified SVD (STS/CTS/ETS thresholds on U_k and V_k)", {"rank": 1, "eps_u": 0.02, "eps_v": 0.02},
        ),
        MechanismEntry(
            "partition", "ppdm.mechanisms.partition:StructuralPartition",
            "structural partition: distort only a block of rows and/or columns", {"columns": 4},
        ),
        MechanismEntry("noise", "ppdm.mechanisms.noise:AdditiveNoise",
                       "additive noise, uniform U[0,a] (or symmetric) or Gaussian N(0, sigma^2)", {"scale": 0.5}),
        MechanismEntry("corr-noise", "ppdm.mechanisms.noise:CorrelatedNoise",
                       "correlated noise N(0, d Cov) with Kim's correction: means and covariances kept",
                       {"scale": 0.5}),
        MechanismEntry("mult-noise", "ppdm.mechanisms.noise:MultiplicativeNoise",
                       "multiplicative noise x * N(1, sigma^2)", {"sigma": 0.1}),
        MechanismEntry("projection", "ppdm.mechanisms.projection:RandomProjection",
                       "random projection Arp / Arpo / rpA / rpoA", {"kind": "arpo"}),
        MechanismEntry("rotation", "ppdm.mechanisms.projection:RandomRotation",
                       "random rotation (Haar orthogonal)", {}),
        MechanismEntry("nmf", "ppdm.mechanisms.nmf:NMF",
                       "nonnegative matrix factorisation H[:, :keep] W[:keep] (HALS, Lin PG, MU, ALS)",
                       {"components": 2}),

        MechanismEntry("nmds", "ppdm.mechanisms.nmds:NonMetricMDS",
                       "non-metric MDS to p dimensions (keeps the order of pairwise distances)",
                       {"n_components": 2, "max_iter": 30}, categorical=True),
        MechanismEntry("mdav", "ppdm.mechanisms.microaggregation:MDAV",
                       "microaggregation (MDAV): each record released as the centroid of its group of >= k "
                       "similar records, within the label's classes", {"k": 3}),
        MechanismEntry("svd-noise", "ppdm.mechanisms.subspace:SVDNoise",
                       "rank-k SVD release with Gaussian noise on the subspace coordinates (scaled per component)",
                       {"rank": 1, "scale": 0.5}),
        MechanismEntry("svd-mdav", "ppdm.mechanisms.subspace:SVDMicroaggregation",
                       "MDAV groups of >= k records on the rank-k SVD coordinates, released as centroid "
                       "reconstructions", {"rank": 2, "k": 3}),
        MechanismEntry("rankswap", "ppdm.mechanisms.swapping:RankSwap",
                       "rank swapping: each column's values exchanged between records within p % of the ranks",
                       {"p": 5.0}),
        MechanismEntry("copula", "ppdm.mechanisms.synthetic:GaussianCopula",
                       "synthetic records from a Gaussian copula fitted per class (empirical marginals)", {}),
        MechanismEntry("cart", "ppdm.mechanisms.cart:CARTSynthesis",
                       "synthetic records by sequential CART per class (synthpop's method: each value drawn "
                       "from a leaf of >= min_leaf real records)", {"min_leaf": 5}),
        MechanismEntry("dp-copula", "ppdm.mechanisms.dp_synthetic:DPGaussianCopula",
                       "(epsilon, delta)-DP synthetic records: a Gaussian copula of noisy marginals and "
                       "correlations measured with OpenDP (extra: ppdm[dp])",
                       {"epsilon": 4.0, "bounds": 4.0, "n_bins": 8}, requires="opendp", extra="dp"),
        MechanismEntry("dp-mst", "ppdm.mechanisms.dp_select:DPMST",
                       "(epsilon, delta)-DP synthetic records of the whole record, label included: MST (one-way "
                       "marginals, a private maximum spanning tree of two-way marginals, Private-PGM; extra: "
                       "ppdm[dp])", {"epsilon": 4.0, "n_bins": 4}, categorical=True, requires="mbi", extra="dp"),
        MechanismEntry("dp-aim", "ppdm.mechanisms.dp_select:DPAIM",
                       "(epsilon, delta)-DP synthetic records of the whole record, label included: AIM (workload "
                       "marginals chosen adaptively, the label's pairs first; Private-PGM; extra: ppdm[dp])",
                       {"epsilon": 4.0, "n_bins": 4, "rounds": 1, "per_round": 2}, categorical=True,
                       requires="mbi", extra="dp"),
        MechanismEntry("rp-liu", "ppdm.mechanisms.reduction:LiuRandomProjection",
                       "random projection to p columns, 1/(sqrt(p) sigma) scaling or orthonormal",
                       {"n_components": 2}),
        MechanismEntry("pca", "ppdm.mechanisms.reduction:PCAProjection",
                       "top-p principal axes (from a row sample)", {"n_components": 2}),
        MechanismEntry("svd-tau", "ppdm.mechanisms.reduction:ThresholdSVD",
                       "top-p SVD with |U|,|V| < tau zeroed (p columns or rank-p reconstruction)",
                       {"n_components": 2}),
        MechanismEntry("dct", "ppdm.mechanisms.reduction:DCTReduction",
                       "DCT-II, the p highest-energy coefficients (optionally permuted)", {"n_components": 2}),
        MechanismEntry("cmds", "ppdm.mechanisms.reduction:ClassicalMDS",
                       "classical (Torgerson) MDS to p columns", {"n_components": 2}),
    )
}


def names() -> list[str]:
    return list(MECHANISMS)


def get(name: str) -> MechanismEntry:
    if name not in MECHANISMS:
        raise ParameterError(f"unknown method '{name}'; choose one of {', '.join(MECHANISMS)} (see `ppdm list`)")
    return MECHANISMS[name]


def build(name: str, params: dict[str, Any] | None = None, *, random_state: object = None) -> Any:
    """Instantiate a registered mechanism; unknown parameter names give a clear error."""
    cls = get(name).load()
    params = dict(params or {})
    import inspect

    allowed = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ParameterError(
            f"method '{name}' has no parameter {', '.join(repr(u) for u in unknown)}; "
            f"its parameters are {', '.join(sorted(allowed))}"
        )
    if "random_state" in allowed and "random_state" not in params:
        params["random_state"] = random_state
    return cls(**params)


def class_by_name(class_name: str) -> type:
    """The mechanism class with this ``__name__`` (for loading state files)."""
    for e in MECHANISMS.values():
        if e.target.split(":")[1] == class_name:
            return e.load()
    if class_name == "Combined":  # a whole-table candidate: a numeric and a categorical mechanism together
        return getattr(importlib.import_module("ppdm.mechanisms.combined"), class_name)
    raise ParameterError(f"state refers to unknown mechanism class '{class_name}'")
