"""The release configuration: which mechanisms and grids to try, the threat model, the policy.

Validated with pydantic (unknown keys are errors); ``ppdm release --print-config`` prints the defaults
as YAML, which is also the file format of ``--config``.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ppdm.exceptions import ParameterError

__all__ = [
    "MethodGrid", "Policy", "ReleaseConfig", "DEFAULT_GRIDS", "load_config", "default_config", "default_methods",
    "skipped_defaults",
]

# default parameter grids per mechanism (values chosen to span weak to strong distortion)
DEFAULT_GRIDS: dict[str, dict[str, list[Any]]] = {
    "svd": {"rank": [1, 2, 3, 4, 6, 8]},
    "ssvd": {"rank": [4], "eps_u": [0.02, 0.05, 0.1], "eps_v": [0.02]},
    "noise": {"scale": [0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0], "distribution": ["normal"]},
    "mult-noise": {"sigma": [0.1, 0.3]},
    "projection": {"kind": ["arpo"]},
    "rotation": {},
    # groups of k records share one released row: a row points at a group of k, so k >= 20 is needed to keep
    # re-identification near 1/k <= 5 %; on a whole table a group releases only the categories that at least
    # min_support of its records hold, and no category that fewer than min_count records of the table hold
    # (either would point at its few holders: on adult's 2,000 records, k = 20 with every category let
    # anonymeter single out about a fifth of its multivariate predicates, with (4, 30) about 1 %, keeping
    # 94 % of the label signal; a table without categories ignores both). min_support 1 (min_count alone) is
    # tried too: on German credit (700 records, the signal in its categories) min_support 5 left a logistic
    # model 0.4 to 3 points less accurate on real records, and the test of singling out says where it holds
    "mdav": {"k": [20, 30, 50], "min_support": [1, 5], "min_count": [30, 60]},
    # synthetic records: no released row is derived from one person's row
    "copula": {},
    # synthetic records by sequential trees (synthpop's CART): each value from a leaf of >= min_leaf real
    # records of the class; on the adult extract it keeps ~95 % of the label signal at ~0.1 % linkage
    "cart": {"min_leaf": [20, 50]},
    # each column's values move to records within p % of the ranks: marginals exact, rows mixed
    "rankswap": {"p": [5.0, 15.0]},
    # noise shaped like the data, means and covariances kept (Kim's correction); on WDBC d = 1 still lets 17 %
    # of the records be re-identified, d = 4 about 5 %
    "corr-noise": {"scale": [4.0]},
    # the SVD release made private: noise on the subspace coordinates, or groups of k records there (small
    # grids: each candidate costs a full attack battery)
    "svd-noise": {"rank": [2], "scale": [0.5, 1.0]},
    "svd-mdav": {"rank": [4], "k": [20, 30]},
    # the formally private reference point ((epsilon, delta)-DP, needs ppdm[dp]): the columns reach it
    # standardised, so +-4 standard deviations are data-independent clipping bounds (the standardisation's own
    # means and deviations are outside the guarantee, and the record says so)
    "dp-copula": {"epsilon": [1.0, 4.0], "delta": [1e-6], "bounds": [4.0]},
    # formally private synthetic records of the whole record, label included ((epsilon, delta)-DP for one record
    # added or removed, needs ppdm[dp]): AIM on noisy marginals measured by OpenDP, Private-PGM's model. On the
    # adult extract it keeps most of the label signal down to epsilon 0.5 (docs/guide/formal-privacy.md)
    "dp-aim": {"epsilon": [0.5, 1.0, 2.0, 4.0], "delta": [1e-9]},
    # the MST recipe (the NIST 2018 winner): available through --config or --methods, not tried by default
    "dp-mst": {"epsilon": [1.0, 4.0], "delta": [1e-9]},
    # whole tables with categories: MDAV on the numbers, invariant PRAM on the categories (within classes).
    # On adult all eight categories of a record stay unchanged for ~1 % of the records at pd = 0.1 and ~3 % at
    # pd = 0.3 (alpha = 1); the linkage by exact categories then nearest numbers measured ~4.4 % and ~5.5 %
    "mdav+pram": {"k": [20], "pram.pd": [0.1, 0.3], "pram.alpha": [1.0]},
    # available through --config or --methods, not tried by default (on adult neither meets the 5 % policy
    # under the mixed linkage; see docs/guide/mixed-tables.md)
    "mdav+recode": {"k": [20], "recode.min_share": [0.02]},
    "mdav+suppress": {"k": [20], "suppress.k": [10]},
}
# ``projection`` (kind arpo: the QR of a Gaussian draw, signs fixed) is the Haar rotation ``rotation`` draws: the
# same release from the same key, so the default sweep measures it once, under the rotation's name
DEFAULT_METHODS = ("svd", "ssvd", "noise", "mult-noise", "rotation", "mdav", "copula", "cart", "rankswap",
                   "corr-noise", "svd-noise", "svd-mdav", "mdav+pram", "dp-copula", "dp-aim")


def default_methods() -> list[str]:
    """The default sweep's mechanisms whose optional dependencies are installed (the formally private ones need
    the dp extra)."""
    from ppdm.registry import MECHANISMS

    # combined candidates (numeric+categorical) are not registry entries; their parts need no extra
    return [m for m in DEFAULT_METHODS if m not in MECHANISMS or MECHANISMS[m].available()]


def skipped_defaults() -> dict[str, str]:
    """Default mechanisms left out of the sweep here, each with the reason and the pip command."""
    from ppdm.registry import MECHANISMS

    return {m: str(MECHANISMS[m].missing()) for m in DEFAULT_METHODS
            if m in MECHANISMS and not MECHANISMS[m].available()}


#: utilities a policy can maximise ("tstr" picks the train-on-release measure that suits the table)
OBJECTIVES = ("tstr", "tstr_knn_pct", "tstr_logreg_pct", "knn_pct", "svm_pct", "kmeans_pct")


class MethodGrid(BaseModel):
    """One mechanism and the grid of its parameters (every combination is a candidate)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str
    grid: dict[str, list[Any]] = Field(default_factory=dict)

    @field_validator("grid")
    @classmethod
    def _non_empty(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for k, vals in v.items():
            if not isinstance(vals, list) or len(vals) == 0:
                raise ValueError(f"grid of '{k}' is empty; give at least one value")
        return v

    def candidates(self) -> list[dict[str, Any]]:
        keys = sorted(self.grid)
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(self.grid[k] for k in keys))]


class Policy(BaseModel):
    """How the release is chosen: maximise ``objective`` subject to the risk constraints; of the candidates as
    useful as the most useful within ``equal_utility_se`` standard errors, the one furthest inside the limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    objective: str = Field(
        "tstr",
        description="utility to maximise: tstr (the default: tstr_knn_pct for numeric tables, tstr_logreg_pct for "
                    "whole tables with categories), tstr_knn_pct (k-NN trained on the release, tested on real "
                    "records it did not contain), tstr_logreg_pct (logistic regression on one-hot categories and "
                    "standardised numbers, likewise), knn_pct, svm_pct or kmeans_pct (cross-validated on the release "
                    "itself)")
    max_reidentification: float = Field(0.05, ge=0, le=1, description="largest re-identification rate allowed")
    max_within_5pct: float = Field(
        0.20, ge=0, le=1,
        description="largest share of values recovered within 5 % (guessing column medians already gets ~13 % on WDBC)",
    )

    max_attribute_inference: float = Field(
        0.10, ge=0, le=1,
        description="largest attribute inference of a sensitive column beyond its control: the share of people "
                    "in the release whose sensitive value a model learnt from the release infers, minus the "
                    "share for real people not in it (only with columns given the role 'sensitive')")

    max_singling_out: float = Field(
        0.05, ge=0, le=1,
        description="largest singling-out risk beyond the control: predicates built from the release alone that "
                    "isolate exactly one person in it, beyond those that isolate one real person outside it "
                    "(anonymeter's measure over a budget of 300 predicates: the worst of univariate and "
                    "multivariate predicates, and of ppdm's targeted ones at equal sizes)")
    singling_out_control: str = Field(
        "audited",
        description="how singling out's control is scaled: audited (as anonymeter scales it when the control is "
                    "smaller than the table, for the predicates anonymeter draws: conservative, it counts part of "
                    "a table's own rarity as risk) or equal-size (every family with members and control at the "
                    "same size: what the release discloses beyond the population's own rarity)")
    max_linkability: float = Field(
        0.05, ge=0, le=1,
        description="largest linkability risk beyond the control: two disjoint sets of a person's columns, held "
                    "from two other sources, linked through the same released row")
    max_membership_outliers: float = Field(
        0.10, ge=0, le=1,
        description="largest membership advantage on the most outlying records (true minus false positive rate "
                    "of telling, from the distance to the release, whether a record was in the table); measured "
                    "for synthetic and microaggregated candidates")
    equal_utility_se: float = Field(
        1.0, ge=0, le=3,
        description="candidates whose utility is within this many standard errors of the most useful one's "
                    "(compared record by record on the same held-out real records) are as useful as it, and of "
                    "them the one that leaves the policy the most room is chosen (the one-standard-error rule); "
                    "0: always the most useful")

    @field_validator("singling_out_control")
    @classmethod
    def _control(cls, v: str) -> str:
        if v not in ("audited", "equal-size"):
            raise ValueError("singling_out_control must be audited or equal-size")
        return v

    @field_validator("objective")
    @classmethod
    def _objective(cls, v: str) -> str:
        if v not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}")
        return v


class ReleaseConfig(BaseModel):
    """Everything ``ppdm release`` needs besides the data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    methods: list[MethodGrid] = Field(
        default_factory=lambda: [MethodGrid(method=m, grid=DEFAULT_GRIDS[m]) for m in default_methods()]
    )
    threat: str = Field("default", description="attacker knowledge: a preset (default, population, sample, ...) "
                        "or e.g. population+known-io:20")
    policy: Policy = Field(default_factory=Policy)
    preprocess: str = "zscore"
    seed: int | None = Field(None, ge=0, description="None: a secret key from OS entropy; an integer makes the "
                             "release repeatable and undoable by anyone who knows it")
    n_jobs: int = Field(-1, description="parallel workers (-1: all cores)")
    output_format: str = Field("csv", description="release file format: csv or parquet")

    @field_validator("methods")
    @classmethod
    def _methods(cls, v: list[MethodGrid]) -> list[MethodGrid]:
        from ppdm.registry import MECHANISMS
        from ppdm.release.candidates import parameters_of

        if not v:
            raise ValueError("methods is empty; name at least one mechanism")
        for mg in v:
            if mg.method in MECHANISMS and not MECHANISMS[mg.method].available():
                raise ValueError(str(MECHANISMS[mg.method].missing()))
            try:
                allowed = parameters_of(mg.method)
            except ParameterError as e:
                raise ValueError(str(e)) from None
            bad = sorted(set(mg.grid) - allowed)
            if bad:
                raise ValueError(f"mechanism '{mg.method}' has no parameter {', '.join(bad)}; "
                                 f"its parameters are {', '.join(sorted(allowed))}")
        return v

    @field_validator("n_jobs")
    @classmethod
    def _jobs(cls, v: int) -> int:
        if v == 0:  # joblib's negative counts are all cores but some: -1 all, -2 all but one
            raise ValueError("0 workers cannot run anything; give a number of workers, or -1 for all cores (-j 1)")
        return v

    @field_validator("output_format")
    @classmethod
    def _fmt(cls, v: str) -> str:
        if v not in ("csv", "parquet"):
            raise ValueError("output_format must be csv or parquet")
        return v


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "config"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown key; remove it or check its spelling (see `ppdm release --print-config`)"
    return f"{where}: {msg}"


def load_config(path: str | Path | None, overrides: dict[str, Any] | None = None) -> ReleaseConfig:
    """Read and validate a YAML config (or the defaults), then apply overrides; errors are one line."""
    data: dict[str, Any] = {}
    if path is not None:
        import yaml

        p = Path(path)
        if not p.is_file():
            raise ParameterError(f"config file '{p}' does not exist or is not a file; check the path")
        if p.stat().st_size > _MAX_CONFIG_BYTES:
            raise ParameterError(f"config '{p.name}' is larger than {_MAX_CONFIG_BYTES // 1024} KiB; a release config "
                                 "is a few lines of YAML")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise ParameterError(f"config '{p.name}' is not UTF-8 text; re-save it as UTF-8") from None
        try:
            _check_aliases(text, p.name)
            loaded = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            line = f" at line {mark.line + 1}" if mark is not None else ""
            raise ParameterError(f"config '{p.name}' is not valid YAML{line}; fix the syntax") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ParameterError(f"config '{p.name}' must be a mapping of keys to values")
        data = loaded
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return ReleaseConfig.model_validate(data)
    except ValidationError as e:
        raise ParameterError(f"invalid release config: {_first_error(e)}") from None


#: a release config is a few lines; anything larger is not one
_MAX_CONFIG_BYTES = 256 * 1024
#: YAML aliases repeat a node by reference: a few are convenient, many nest into an exponential document
_MAX_ALIASES = 64


def _check_aliases(text: str, name: str) -> None:
    """Refuse documents whose aliases could expand exponentially (a "billion laughs"), before building them."""
    import yaml

    count = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            count += 1
            if count > _MAX_ALIASES:
                raise ParameterError(f"config '{name}' uses more than {_MAX_ALIASES} YAML aliases (*name); write the "
                                     "values out instead")


def default_config() -> ReleaseConfig:
    return ReleaseConfig()


def config_yaml(cfg: ReleaseConfig) -> str:
    import yaml

    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
