"""A numeric and a categorical mechanism released together on a whole table's design."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.data.codec import TableCodec
from ppdm.data.columns import infer_columns
from ppdm.mechanisms.categorical import PRAM, LocalSuppression
from ppdm.mechanisms.combined import Combined
from ppdm.mechanisms.microaggregation import MDAV


def _table(n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "income": rng.normal(5e4, 1e4, n).round(2),
                         "sex": rng.choice(["F", "M"], n), "region": rng.choice(["n", "s", "e", "w", "c"], n),
                         "class": rng.choice(["yes", "no"], n)})


def _codec(df: pd.DataFrame) -> TableCodec:
    return TableCodec(infer_columns(df, label="class")).fit(df)


def test_numbers_by_the_numeric_mechanism_categories_by_pram() -> None:
    df = _table()
    codec = _codec(df)
    X = codec.encode(df)
    y = df["class"].to_numpy()
    num = codec.numeric_index_
    mech = Combined(MDAV(k=10), PRAM(pd=0.2, alpha=1.0, random_state=3), numeric_columns=num.tolist(),
                    blocks=[b.tolist() for b in codec.blocks_])
    B = mech.fit_transform(X, y)
    # the numbers are exactly MDAV's release of the numbers alone (within classes)
    np.testing.assert_allclose(B[:, num], MDAV(k=10).fit_transform(X[:, num], y))
    # every block is still one indicator with the codec's weight
    for b in codec.blocks_:
        assert ((B[:, b] > 0).sum(axis=1) == 1).all()
        np.testing.assert_allclose(B[:, b].max(axis=1), X[:, b].max())
    published = codec.decode(B)
    for c in ("sex", "region"):
        assert set(published[c]) <= set(df[c])
    assert (published["region"].to_numpy() != df["region"].to_numpy()).mean() > 0.2


def test_suppressed_cells_are_published_missing() -> None:
    df = _table()
    codec = _codec(df)
    X = codec.encode(df)
    mech = Combined(MDAV(k=10), LocalSuppression(k=5), numeric_columns=codec.numeric_index_.tolist(),
                    blocks=[b.tolist() for b in codec.blocks_])
    B = mech.fit_transform(X, df["class"].to_numpy())
    assert mech.n_suppressed_ > 0
    published = codec.decode(B, rng=np.random.default_rng(0))
    assert int(published[["sex", "region"]].isna().sum().sum()) == mech.n_suppressed_
    # with the released numbers (one row per MDAV group) every released row is shared by >= 5 records
    key = published[["age", "income"]].astype(str).agg("|".join, axis=1).to_numpy()
    sex, region = published["sex"].to_numpy(dtype=object), published["region"].to_numpy(dtype=object)
    for i in range(len(df)):
        same = key == key[i]
        for col in (sex, region):
            same &= pd.isna(col) | pd.isna(col[i]) | (col == col[i])
        assert same.sum() >= 5
