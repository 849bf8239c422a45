"""Formally private candidates in the release sweep: their label, their guarantee in the record, and one line
when they are left out. Runs without the ``dp`` extra (a stand-in mechanism plays the synthesiser)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.data.codec import TableCodec
from ppdm.data.columns import infer_columns
from ppdm.flow.synthesis import layout, raw_table, release_design, release_frame, released_label, with_label
from ppdm.mechanisms.base import Mechanism
from ppdm.release.outputs import with_stated_guarantees
from ppdm.release.summary import skipped_line


class _Resampler(Mechanism):
    """A stand-in table-releasing mechanism: rows drawn from the table, with gaps and its own label."""

    _table_level = True
    _uses_label = True
    _releases_table = True
    _releases_label = True

    def __init__(self, *, kinds: list[str] | None = None, levels: list[int] | None = None,
                 random_state: object = None) -> None:
        self.kinds = kinds
        self.levels = levels
        self.random_state = random_state

    def fit_transform(self, X, y=None, **fit_params):  # type: ignore[no-untyped-def]
        rng = np.random.default_rng(0)
        rows = rng.integers(0, len(X), len(X))
        out = np.asarray(X, dtype=float)[rows].copy()
        out[:5, 0] = np.nan  # gaps of its own, where the original has none
        self.released_label_ = np.asarray(y)[rng.permutation(len(X))] if y is not None else None
        return out


def _frame(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"age": rng.integers(20, 60, n), "site": rng.choice(["a", "b", "c"], n),
                         "score": rng.normal(size=n), "y": rng.choice(["no", "yes"], n)})


def test_the_design_path_keeps_the_layout_and_swaps_the_label() -> None:
    df = _frame()
    codec = TableCodec(infer_columns(df, label="y")).fit(df)
    y = df["y"].to_numpy()
    X = codec.encode(df)
    B, y_rel = release_design(X, _Resampler(), preprocess="none", y=y, codec=codec)
    assert B.shape == X.shape and np.isfinite(B).all()
    assert y_rel is not y and sorted(y_rel) == sorted(y)
    shown = y.astype(object)[:, None]
    assert (with_label(shown, y_rel, y)[:, 0] == y_rel).all() and (shown[:, 0] == y).all()
    assert with_label(shown, y, y) is shown  # a mechanism that keeps the label: the shown columns as they are
    assert layout(codec, design=True) == {"kinds": ["integer", "continuous", "categorical"], "levels": [0, 0, 3]}


def test_the_published_path_takes_the_table_itself_and_keeps_the_release_gaps() -> None:
    df = _frame()
    df.loc[3, "score"] = np.nan
    codec = TableCodec(infer_columns(df, label="y")).fit(df)
    raw = raw_table(codec, df)
    assert np.isnan(raw[3, 1]) and raw[0, 0] == df["age"][0]
    table, y_rel, decoded = release_frame(df, _Resampler(), codec, df["y"].to_numpy())
    # the release's gaps, not the original's: 'age' had none
    assert table["age"].isna().sum() == 5 and decoded.gaps[0].sum() == 5
    assert set(table["site"]) <= {"a", "b", "c"}
    assert released_label(_Resampler(), None) is None


def test_formal_candidates_state_their_guarantee_and_the_others_do_not() -> None:
    cands = with_stated_guarantees([{"method": "dp-aim", "params": {"epsilon": 1.0, "delta": 1e-9}},
                                    {"method": "mdav", "params": {"k": 20}},
                                    {"method": "mdav+pram", "params": {"k": 20}}])
    g = cands[0]["guarantee"]
    assert g.startswith("(1, 1e-09)-differential privacy for one record added or removed")
    assert "label" in g and "Public:" in g and "number of records" in g
    assert "guarantee" not in cands[1] and "guarantee" not in cands[2]


def test_the_sweep_says_once_which_formal_candidates_it_left_out() -> None:
    why = "method '{}' needs {}; install it with: pip install 'ppdm[dp]'"
    line = skipped_line({"dp-aim": why.format("dp-aim", "mbi"), "dp-copula": why.format("dp-copula", "opendp")})
    assert line.count("pip install 'ppdm[dp]'") == 1 and "dp-aim" in line and "dp-copula" in line
