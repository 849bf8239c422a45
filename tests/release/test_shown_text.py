"""The columns shown beside a release are attacked as the text pandas writes for them: the compact form
(each distinct value one shared string) has exactly the values of ``astype(str)``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.release.table import shown_text as _shown_text


def test_shown_text_is_the_text_pandas_gives_for_every_column_type() -> None:
    df = pd.DataFrame({
        "int_na": [1, 2, None, 2], "text": ["x", None, "y", np.nan], "cat": pd.Categorical(["p", "q", None, "p"]),
        "float": [1.5, np.nan, 2.0, 1.5], "bool": [True, False, True, True],
        "nullable": pd.array([1, None, 3, 1], dtype="Int64"),
        "date": pd.to_datetime(["2020-01-01", None, "2020-01-02", "2020-01-01"]),
        "string": pd.array(["u", None, "v", "u"], dtype="string"), "int": [1, 2, 3, 1], "empty": [np.nan] * 4,
        "mixed": [1, "1", 1.0, None]})
    got = _shown_text(df, list(df.columns))
    assert got.dtype == object
    np.testing.assert_array_equal(got, df.astype(str).to_numpy())
    assert _shown_text(df, []).shape == (4, 0)


def test_a_value_repeated_down_a_column_is_one_string() -> None:
    df = pd.DataFrame({"label": np.repeat(["yes", "no"], 5000)})
    got = _shown_text(df, ["label"])
    assert len({id(v) for v in got[:, 0]}) == 2
