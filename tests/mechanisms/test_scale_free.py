"""Releases made without a preprocessed copy of the table: scale-free mechanisms read the data in its units,
the copula draws a block of rows at a time, and a large release is shuffled where it is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.data.preprocess import Scaler
from ppdm.flow.arrays import perturb_array
from ppdm.mechanisms.base import Mechanism
from ppdm.mechanisms.cart import CARTSynthesis
from ppdm.mechanisms.swapping import RankSwap
from ppdm.mechanisms.synthetic import GaussianCopula


def _table(n: int = 600, m: int = 5, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m)) @ rng.standard_normal((m, m)) * [1.0, 50.0, 0.01, 3.0, 1e4][:m] + 7.0
    return X, rng.integers(0, 3, n)


@pytest.mark.parametrize("make", [lambda: GaussianCopula(random_state=4), lambda: RankSwap(p=5.0, random_state=4),
                                  lambda: CARTSynthesis(min_leaf=10, random_state=4)])
def test_a_scale_free_mechanism_in_units_equals_its_release_through_z_scores(make) -> None:
    X, y = _table()
    mech = make()
    assert mech._scale_free
    B, scaler = perturb_array(X, mech, preprocess="zscore", y=y)
    z = Scaler("zscore").fit(X)
    ref = make()
    Zr = ref.fit_transform(z.transform(X), y) if getattr(ref, "_uses_label", False) else ref.fit_transform(
        z.transform(X))
    np.testing.assert_allclose(B, z.inverse_transform(Zr), rtol=1e-9, atol=1e-9 * np.abs(X).max())
    np.testing.assert_allclose(scaler.offset_, z.offset_, rtol=1e-12)  # the state keeps the stated scaling
    assert X.flags.writeable  # given back writeable


def test_a_scale_free_release_in_preprocessed_units_is_scaled() -> None:
    X, y = _table()
    B, scaler = perturb_array(X, GaussianCopula(random_state=4), preprocess="zscore", y=y)
    P, _ = perturb_array(X, GaussianCopula(random_state=4), preprocess="zscore", release_units="preprocessed", y=y)
    np.testing.assert_allclose(P, scaler.transform(B), rtol=1e-12, atol=1e-12)


class _Echo(Mechanism):
    """Releases its input as it is (a release of the table itself)."""

    _scale_free = True

    def fit(self, X: object, y: object = None) -> _Echo:
        self.n_ = 1
        return self

    def transform(self, X: np.ndarray) -> np.ndarray:
        return X


class _Scribbler(_Echo):
    """Writes into the array it is given (a mechanism must not)."""

    def transform(self, X: np.ndarray) -> np.ndarray:
        X[0, 0] = -1.0
        return X


def test_the_table_given_without_a_copy_cannot_be_written_into() -> None:
    X, _ = _table()
    before = X.copy()
    with pytest.raises(ValueError, match="read-only"):
        perturb_array(X, _Scribbler(), preprocess="zscore")
    np.testing.assert_array_equal(X, before)
    assert X.flags.writeable
    # with "none", every mechanism reads the table itself
    with pytest.raises(ValueError, match="read-only"):
        perturb_array(X, _Scribbler(), preprocess="none")


@pytest.mark.parametrize("preprocess", ["none", "zscore"])
def test_a_release_that_is_its_input_is_still_a_copy(preprocess: str) -> None:
    X, _ = _table()
    B, _ = perturb_array(X, _Echo(), preprocess=preprocess)
    np.testing.assert_array_equal(B, X)
    assert not np.may_share_memory(B, X)  # shuffling the release in place leaves the design as it was


def test_copula_draws_in_blocks_of_rows_equal_one_draw(monkeypatch) -> None:
    import ppdm.mechanisms.synthetic as synthetic

    X, y = _table(n=900)
    whole = GaussianCopula(random_state=9).fit_transform(X, y)
    monkeypatch.setattr(synthetic, "_DRAW_BLOCK", 7)
    np.testing.assert_array_equal(GaussianCopula(random_state=9).fit_transform(X, y), whole)
    np.testing.assert_array_equal(GaussianCopula(random_state=9).fit_transform(X), GaussianCopula(
        random_state=9).fit_transform(X, np.zeros(len(X))))  # one stratum either way


def test_a_release_shuffled_where_it_is_equals_the_shuffled_copy() -> None:
    from ppdm.data.schema import resolve_schema
    from ppdm.keys import hide_identity, release_key, release_order, shuffle_rows

    X, y = _table(n=300, m=3)
    df = pd.DataFrame({"pid": np.arange(300) + 1000, "a": X[:, 0], "label": np.array(list("xyz"))[y],
                       "b": X[:, 1], "c": X[:, 2]})
    schema = resolve_schema(df, columns=None, id="pid", label="label", drop=())
    B = np.asarray(schema.matrix(df)) * 2.0
    key = release_key(11)
    expected, ident = hide_identity(schema.assemble(df, B), "pid", key)
    order = release_order(key, len(B))
    shuffle_rows(B, order)
    assembled = schema.assemble(df, B, order=order, copy=False)
    assert np.shares_memory(assembled["a"].to_numpy(), B)  # a view of the shuffled release, not a copy
    got, ident2 = hide_identity(assembled, "pid", key, in_order=True)
    pd.testing.assert_frame_equal(got, expected)
    np.testing.assert_array_equal(ident.order, ident2.order)
