"""The estimators' shared input checks: feature names as scikit-learn checks them, values too large or too small
to compute with, and a microaggregation ``transform`` that does not keep ``k``."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import ppdm
import ppdm.mechanisms as M
from ppdm.exceptions import InputError, PrivacyWarning


def _frame(n: int = 80) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.normal(size=(n, 6)) * [1, 2, 3, 4, 5, 6] + 10, columns=list("abcdef"))


# ------------------------------------------------------------------------------------ feature names


@pytest.mark.filterwarnings("ignore::ppdm.exceptions.PrivacyWarning")  # NMDS of 6 columns in 5: near-linear
@pytest.mark.parametrize("name", ["IncrementalSVD", "NonMetricMDS"])
def test_a_frame_with_reordered_or_renamed_columns_is_refused(name: str) -> None:
    df = _frame()
    est = getattr(M, name)(random_state=0).fit(df)
    assert list(est.feature_names_in_) == list("abcdef")
    est.transform(df)  # the fitted columns are accepted
    for other in (df[list("fedcba")], df.rename(columns={"a": "zz"})):
        with pytest.raises(InputError, match="feature names"):
            est.transform(other)


def test_incremental_svd_checks_the_names_of_new_batches_and_keeps_them_in_its_state() -> None:
    df = _frame()
    est = M.IncrementalSVD(rank=2, random_state=0).fit(df.iloc[:60])
    with pytest.raises(InputError, match="feature names"):
        est.update(df.iloc[60:, ::-1])
    est.update(df.iloc[60:])
    back = M.IncrementalSVD.from_state(*est.to_state())
    assert list(back.feature_names_in_) == list("abcdef")
    with pytest.raises(InputError, match="feature names"):
        back.transform(df[list("fedcba")])
    # an array fit records no names, as in scikit-learn
    assert not hasattr(M.IncrementalSVD(rank=2).fit(df.to_numpy()), "feature_names_in_")


def test_incremental_svd_adds_the_names_of_added_columns() -> None:
    df = _frame()
    est = M.IncrementalSVD(rank=2, keep_u=True, random_state=0).fit(df)
    est.add_columns(pd.DataFrame({"g": np.arange(80.0) % 7}))
    assert list(est.feature_names_in_) == [*"abcdef", "g"]
    est.transform(df.assign(g=1.0))


# ------------------------------------------------------------------------------------ magnitudes


_HUGE_AND_TINY = ["CorrelatedNoise", "PCAProjection", "NonMetricMDS", "ThinSVD", "AdditiveNoise"]


@pytest.mark.parametrize("name", _HUGE_AND_TINY)
@pytest.mark.parametrize("magnitude", [1e300, 1e-200])
def test_values_too_large_or_too_small_are_refused_with_the_fix(name: str, magnitude: float) -> None:
    X = _frame(60).to_numpy() * magnitude
    with pytest.raises(InputError, match="rescale it"):
        getattr(M, name)(random_state=0).fit_transform(X)


@pytest.mark.parametrize("name", _HUGE_AND_TINY)
def test_small_but_ordinary_values_still_work(name: str) -> None:
    X = _frame(60).to_numpy() * 1e-10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = getattr(M, name)(random_state=0).fit_transform(X)
    assert np.isfinite(out).all()


def test_perturb_array_refuses_a_column_of_tiny_values_and_keeps_small_ones() -> None:
    X = _frame(60).to_numpy()
    tiny = X.copy()
    tiny[:, 2] *= 1e-200
    with pytest.raises(InputError, match="column 3 holds only values below 1e-150.*rescale it"):
        ppdm.perturb_array(tiny, M.AdditiveNoise(random_state=0))
    small = X * 1e-10
    small[:, 4] = 0.0  # a column of zeros is a constant, not a tiny one
    out, sc = ppdm.perturb_array(small, M.AdditiveNoise(random_state=0))
    assert sc.scale_[0] == pytest.approx(small[:, 0].std(ddof=1), rel=0.05)
    # the noise is of the data's own size, not of 1
    assert np.abs(out[:, :4] - small[:, :4]).max() < 1e-8


def test_the_magnitude_check_names_the_column_and_ignores_gaps() -> None:
    from ppdm.utils.validation import check_magnitude

    X = np.array([[1.0, 1e-200, np.nan], [2.0, -3e-190, np.nan], [3.0, 0.0, 4.0]])
    with pytest.raises(InputError, match="column 'tiny'"):
        check_magnitude(X, ["a", "tiny", "c"])
    check_magnitude(X[:, [0, 2]])
    check_magnitude(np.zeros((3, 2)))


# ------------------------------------------------------------------------------------ microaggregation


@pytest.fixture
def wdbc_numbers(wdbc: pd.DataFrame) -> np.ndarray:
    return wdbc.iloc[:300, :-1].to_numpy()


@pytest.mark.parametrize("cls", [M.MDAV, M.SVDMicroaggregation])
def test_transform_warns_when_it_releases_groups_smaller_than_k(cls: type, wdbc_numbers: np.ndarray) -> None:
    est = cls(k=10, random_state=0).fit(wdbc_numbers)
    with pytest.warns(PrivacyWarning, match="fewer than k=10 rows.*fit_transform"):
        out = est.transform(wdbc_numbers)
    _, counts = np.unique(np.round(out, 10), axis=0, return_counts=True)
    assert counts.min() < 10  # the semantics are unchanged: nearest centroid, said in the warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        released = cls(k=10, random_state=0).fit_transform(wdbc_numbers)
    assert np.unique(np.round(released, 10), axis=0, return_counts=True)[1].min() >= 10
    assert "does not keep" in cls.transform.__doc__ and "fit_transform" in cls.transform.__doc__


def test_univariate_mdav_transform_warns_too(wdbc_numbers: np.ndarray) -> None:
    est = M.MDAV(k=10, univariate=True).fit(wdbc_numbers)
    with pytest.warns(PrivacyWarning, match="released values"):
        est.transform(wdbc_numbers[:50])


# ------------------------------------------------------------------------------------ sparse, complex, not fitted


def _every_estimator() -> list:
    """Every registered mechanism whose dependency is installed, and the categorical ones, as pytest params."""
    from ppdm import registry
    from ppdm.mechanisms import categorical

    out = [(name, e.load(), e.test_params) for name, e in registry.MECHANISMS.items() if e.available()]
    out += [(c.__name__, c, {}) for c in (categorical.PRAM, categorical.RareCategoryRecoding,
                                          categorical.LocalSuppression)]
    return [pytest.param(cls, params, id=name) for name, cls, params in out]


@pytest.mark.parametrize(("cls", "params"), _every_estimator())
def test_a_sparse_matrix_is_refused_in_one_line_with_the_fix(cls: type, params: dict) -> None:
    import scipy.sparse as sp

    X = sp.csr_matrix(_frame(20).to_numpy())
    with pytest.raises(InputError, match=r"^X is a scipy sparse matrix.*dense array \(its \.toarray\(\)\)$"):
        cls(**params).fit(X)


@pytest.mark.parametrize("bad", ["array", "list", "object array"])
def test_incremental_svd_refuses_complex_values_everywhere_in_one_line(bad: str) -> None:
    X = _frame(20).to_numpy()

    def complex_(A: np.ndarray) -> object:
        Z = A + 1j
        return {"array": Z, "list": Z.tolist(), "object array": Z.astype(object)}[bad]

    one_line = r"^Complex data not supported: (X|new columns) holds complex numbers[^\n]*real values[^\n]*$"
    with pytest.raises(InputError, match=one_line):
        M.IncrementalSVD(rank=2).fit(complex_(X))
    est = M.IncrementalSVD(rank=2, keep_u=True).fit(X)
    with pytest.raises(InputError, match=one_line):
        est.update(complex_(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the imaginary part was dropped with a ComplexWarning
        with pytest.raises(InputError, match=one_line):
            est.add_columns(complex_(X[:, :2]))
    est = M.IncrementalSVD(rank=2, keep_u=True).fit(X)
    assert est.add_columns(X[:, :2]).n_features_in_ == 8


def test_a_sparse_new_columns_table_is_refused_by_name() -> None:
    import scipy.sparse as sp

    X = _frame(20).to_numpy()
    est = M.IncrementalSVD(rank=2, keep_u=True).fit(X)
    with pytest.raises(InputError, match="^new columns is a scipy sparse matrix"):
        est.add_columns(sp.csr_matrix(X[:, :2]))


# transform re-releases a new table on its own, as documented: the draws depend on the table's frequencies
_TRANSFORM_REFITS = ("PRAM", "LocalSuppression")


@pytest.mark.parametrize(("cls", "params"), _every_estimator())
def test_transform_before_fit_raises_not_fitted_error(cls: type, params: dict) -> None:
    from sklearn.exceptions import NotFittedError

    from ppdm.exceptions import ParameterError

    X = _frame(20).to_numpy()
    est = cls(**params)
    if cls.__name__ in _TRANSFORM_REFITS:
        assert "on its own" in cls.transform.__doc__
        return
    if getattr(cls, "_draws_from_model", False):  # synthetic records: only fit_transform releases
        with pytest.raises(ParameterError, match="fit_transform"):
            est.transform(X)
        return
    with pytest.raises(NotFittedError):
        est.transform(X.astype(str) if cls.__name__ == "RareCategoryRecoding" else X)


def test_rare_category_recoding_before_fit_is_not_fitted() -> None:
    from sklearn.exceptions import NotFittedError

    from ppdm.mechanisms.categorical import RareCategoryRecoding

    with pytest.raises(NotFittedError, match="RareCategoryRecoding"):
        RareCategoryRecoding().transform(np.array([["a"], ["b"]], dtype=object))


# ------------------------------------------------------------------------------------ boolean parameters


@pytest.mark.parametrize("value", ["False", "True", 0, 1, None])
def test_additive_noise_refuses_a_symmetric_that_is_not_a_boolean(value: object) -> None:
    from ppdm.exceptions import ParameterError

    with pytest.raises(ParameterError, match=r"^symmetric must be True or False; got"):
        M.AdditiveNoise(0.5, distribution="uniform", symmetric=value).fit(_frame(20).to_numpy())


def test_check_bool_accepts_booleans_only() -> None:
    from ppdm.exceptions import ParameterError
    from ppdm.utils.validation import check_bool

    assert check_bool(True, "flag") is True and check_bool(np.bool_(False), "flag") is False
    with pytest.raises(ParameterError, match="flag must be True or False; got 'no'"):
        check_bool("no", "flag")


def _bool_cases() -> list[tuple[str, str]]:
    from ppdm.mechanisms.base import Mechanism, _bool_parameters

    return [(name, p) for name in M.__all__ if isinstance(cls := getattr(M, name), type) and issubclass(cls, Mechanism)
            for p in _bool_parameters(cls)]


@pytest.mark.parametrize(("name", "param"), _bool_cases())
def test_every_parameter_declared_bool_refuses_text_at_fit(name: str, param: str) -> None:
    """ "False" (text) counts as true: a mechanism given it did the opposite of what was asked."""
    from ppdm.exceptions import ParameterError

    X = np.abs(np.random.default_rng(0).normal(size=(80, 4))) + 0.1
    est = getattr(M, name)().set_params(**{param: "False"})
    with pytest.raises(ParameterError, match=f"{param} must be True or False"):
        est.fit(X)
