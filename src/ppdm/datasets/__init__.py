"""Bundled benchmark datasets (offline) and the synthetic generators of the source papers.

>>> from ppdm import datasets
>>> datasets.load("wdbc").shape
(569, 31)
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from ppdm.exceptions import ParameterError
from ppdm.utils.validation import check_int, check_real

__all__ = ["DATASETS", "GENERATORS", "DatasetInfo", "load", "org", "low_rank", "gaussians_2d", "generate", "names"]


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    file: str | None
    label: str | None
    description: str
    source: str
    licence: str


DATASETS: dict[str, DatasetInfo] = {
    d.name: d
    for d in (
        DatasetInfo("iris", "iris_uci.csv", "class", "Iris, 150 x 4, 3 classes (scikit-learn's corrected copy)",
                    "UCI Iris", "CC BY 4.0"),
        DatasetInfo("iris_uci", "iris_uci.csv", "class", "Iris, 150 x 4, UCI file with its two errata "
                    "(rows 35, 38)", "UCI Iris", "CC BY 4.0"),
        DatasetInfo("wdbc", "wdbc.csv", "class", "Breast Cancer Wisconsin (Diagnostic), 569 x 30, B/M",
                    "UCI WDBC", "CC BY 4.0"),
        DatasetInfo("wine", "wine.csv", "class", "Wine, 178 x 13, 3 cultivars", "UCI Wine", "CC BY 4.0"),
        DatasetInfo("wbc", "wbc.csv", "class", "Breast Cancer Wisconsin (Original), 699 x 9, 2 = benign, "
                    "4 = malignant; 16 missing bare_nuclei filled 1 (benign) / 8 (malignant)",
                    "UCI WBC (MASS::biopsy)", "CC BY 4.0"),
        DatasetInfo("adult", "adult.csv", "class", "Adult (census income), a seeded sample of 5,000 of 32,561 "
                    "records, 6 numeric and 8 categorical attributes, <=50K/>50K; 655 missing cells",
                    "UCI Adult", "CC BY 4.0"),
        DatasetInfo("german", "german.csv", "class", "Statlog German Credit, 1000 x 20 (7 numeric, 13 "
                    "categorical), 1 = good, 2 = bad", "UCI Statlog (German Credit Data)", "CC BY 4.0"),
    )
}

GENERATORS = {
    "org": "ORG: n x m (2000 x 100) i.i.d. U[1, 10], label +1 if |sin(x1) - x88| |cos(x45)| x78 > 15 else -1",
    "low_rank": "n x m matrix U diag(s) V^T of a given rank and spectrum, plus optional Gaussian noise",
    "gaussians_2d": "three bivariate Gaussians shifted to be nonnegative (n x 2, 3 classes)",
}

# scikit-learn's corrections of the two UCI iris errata (0-based rows)
_IRIS_FIX = {34: (4.9, 3.1, 1.5, 0.2), 37: (4.9, 3.6, 1.4, 0.1)}


def names() -> list[str]:
    return list(DATASETS)


def _read(file: str) -> pd.DataFrame:
    with resources.files("ppdm.datasets").joinpath("data", file).open("rb") as f:
        return pd.read_csv(f, float_precision="round_trip")


def load(name: str, *, fill: str = "protocol") -> pd.DataFrame:
    """Load a bundled dataset as a DataFrame (attributes, then the ``class`` column).

    Parameters
    ----------
    name : {'iris', 'iris_uci', 'wdbc', 'wine', 'wbc', 'adult', 'german'}
    fill : {'protocol', 'none'}, default='protocol'
        WBC only: fill the missing ``bare_nuclei`` cells with 1 (benign) / 8 (malignant), or keep NaN.
    """
    if name not in DATASETS:
        raise ParameterError(f"unknown dataset '{name}'; choose one of {', '.join(DATASETS)}")
    df = _read(DATASETS[name].file)  # type: ignore[arg-type]
    if name == "iris":
        cols = df.columns[:4]
        for row, vals in _IRIS_FIX.items():
            df.loc[row, cols] = vals
    if name == "wbc" and fill == "protocol":
        miss = df["bare_nuclei"].isna()
        df.loc[miss, "bare_nuclei"] = np.where(df.loc[miss, "class"] == 2, 1.0, 8.0)
    return df


def org(n: int = 2000, m: int = 100, *, random_state: object = None) -> pd.DataFrame:
    """The ORG synthetic set of Xu et al. / Wang 2008: U[1, 10] entries and a sin/cos label rule."""
    check_int(n, "n (rows)", low=1)
    if check_int(m, "m (columns)", low=1) < 88:
        raise ParameterError(f"ORG needs at least 88 columns (its label uses column 88); got m={m}")
    X = np.random.default_rng(random_state).uniform(1.0, 10.0, size=(n, m))
    score = np.abs(np.sin(X[:, 0]) - X[:, 87]) * np.abs(np.cos(X[:, 44])) * X[:, 77]
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(m)])
    df["class"] = np.where(score > 15, 1, -1)
    return df


def low_rank(
    n: int = 1000,
    m: int = 100,
    rank: int | None = None,
    *,
    spectrum: str = "geometric",
    decay: float = 0.95,
    noise: float = 0.0,
    random_state: object = None,
) -> np.ndarray:
    """``U diag(s) V^T`` with orthonormal random U (n x rank), V (m x rank) and ``s`` by spectrum.

    ``spectrum``: ``'geometric'`` (``s_i = decay^i``), ``'linear'`` (from 1 down to 1/rank) or
    ``'flat'`` (all 1); singular values are scaled so the largest is ``sqrt(n m)``. ``noise`` adds
    N(0, noise^2) to every entry. ``rank`` None: 10, or ``min(n, m)`` when the matrix is smaller.
    """
    # the shape first: a matrix with no rows is not a rank problem
    n = check_int(n, "n (rows)", low=1)
    m = check_int(m, "m (columns)", low=1)
    if rank is None:
        rank = min(10, n, m)  # the default fits the shape asked for: never a rank the user did not give
    elif not 1 <= check_int(rank, "rank") <= min(n, m):
        raise ParameterError(f"rank must be in [1, min(n, m) = {min(n, m)}]; got {rank}")
    noise = check_real(noise, "noise (the sigma of the added Gaussian noise)", low=0.0)
    rng = np.random.default_rng(random_state)
    U, _ = np.linalg.qr(rng.normal(size=(n, rank)))
    V, _ = np.linalg.qr(rng.normal(size=(m, rank)))
    i = np.arange(rank)
    if spectrum == "geometric":
        s = decay**i
    elif spectrum == "linear":
        s = 1.0 - i / rank
    elif spectrum == "flat":
        s = np.ones(rank)
    else:
        raise ParameterError(f"spectrum must be geometric, linear or flat; got '{spectrum}'")
    X = (U * (s * np.sqrt(n * m))) @ V.T
    if noise > 0:
        X += rng.normal(0.0, noise, size=X.shape)
    return X


def gaussians_2d(n: int = 100, *, random_state: object = None) -> pd.DataFrame:
    """Three bivariate Gaussian classes (Wang 2008 Fig. 4.1), shifted so every value is nonnegative."""
    check_int(n, "n (rows)", low=3)  # one record per class at least
    rng = np.random.default_rng(random_state)
    means = np.array([[0.0, 0.0], [4.0, 4.0], [-4.0, 4.0]])
    sizes = [n - 2 * (n // 3), n // 3, n // 3]
    X = np.vstack([rng.normal(mu, 1.0, size=(k, 2)) for mu, k in zip(means, sizes, strict=True)])
    X -= X.min(axis=0)
    df = pd.DataFrame(X, columns=["x1", "x2"])
    df["class"] = np.repeat([1, 2, 3], sizes)
    return df


def generate(name: str, **kwargs: object) -> pd.DataFrame:
    """A generated dataset as a DataFrame (``low_rank`` gets columns ``x1..xm``).

    An option the generator does not take (``rank`` for ``org``) is refused, not a TypeError.
    """
    import inspect

    funcs = {"org": org, "gaussians_2d": gaussians_2d, "low_rank": low_rank}
    if name in funcs:
        takes = [p for p in inspect.signature(funcs[name]).parameters if p != "random_state"]
        other = [k for k in kwargs if k != "random_state" and k not in takes]
        if other:
            raise ParameterError(f"generator '{name}' takes no {', '.join(other)}; its options are "
                                 f"{', '.join(t for t in takes)}")
    if name == "org":
        return org(**kwargs)  # type: ignore[arg-type]
    if name == "gaussians_2d":
        return gaussians_2d(**kwargs)  # type: ignore[arg-type]
    if name == "low_rank":
        X = low_rank(**kwargs)  # type: ignore[arg-type]
        return pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(X.shape[1])])
    raise ParameterError(f"unknown generator '{name}'; choose one of {', '.join(GENERATORS)}")
