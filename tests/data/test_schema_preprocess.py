from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.data import Scaler, resolve_schema
from ppdm.exceptions import InputError, ParameterError


def _df() -> pd.DataFrame:
    return pd.DataFrame({"id": [1, 2, 3], "x": [1.0, 2.0, 4.0], "y": [0.5, 0.1, 0.2], "t": ["a", "b", "c"],
                         "cls": ["p", "q", "p"]})


def test_default_roles() -> None:
    s = resolve_schema(_df(), id="id", label="cls")
    assert s.released == ("x", "y")
    assert s.passthrough == ("t",)
    s2 = resolve_schema(_df(), id="id", label="cls", drop_other=True)
    assert s2.dropped == ("t",)
    out = s.assemble(_df(), np.zeros((3, 2)))
    assert list(out.columns) == ["id", "x", "y", "t", "cls"]
    assert out["id"].tolist() == [1, 2, 3] and out["x"].tolist() == [0, 0, 0]


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"id": "nope"}, "--id names column 'nope'"),
        ({"columns": ["x", "x"]}, "twice"),
        ({"columns": ["t"]}, "holds text"),
        ({"id": "x", "label": "x"}, "both --id and --label"),
        ({"columns": ["id"], "id": "id"}, "cannot be perturbed"),
    ],
)
def test_schema_errors(kw: dict, match: str) -> None:
    with pytest.raises(InputError, match=match):
        resolve_schema(_df(), **kw)


def test_numeric_column_with_text_is_an_error() -> None:
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["1", "x", "3"]})
    with pytest.raises(InputError, match="column 'b' is numeric but 1 cell"):
        resolve_schema(df)


def test_matrix_rejects_nan_and_single_row() -> None:
    s = resolve_schema(pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, 2.0]}))
    with pytest.raises(InputError, match="missing"):
        s.matrix(pd.DataFrame({"a": [1.0, np.nan], "b": [1.0, 2.0]}))
    one = pd.DataFrame({"a": [1.0], "b": [2.0]})
    with pytest.raises(InputError, match="at least two rows"):
        resolve_schema(one).matrix(one)


def test_batch_check() -> None:
    s = resolve_schema(_df(), id="id", label="cls")
    with pytest.raises(InputError, match="lacks column"):
        s.check_batch(_df().drop(columns="x"))
    with pytest.raises(InputError, match="unexpected column"):
        s.check_batch(_df().assign(z=1))
    with pytest.raises(InputError, match="another order"):
        s.check_batch(_df()[["x", "id", "y", "t", "cls"]])


@pytest.mark.parametrize("method", ["none", "zscore", "range", "minshift", "nonneg"])
def test_scaler_exact_inverse(method: str, rng: np.random.Generator) -> None:
    X = rng.normal(size=(30, 4)) * [1, 10, 100, 0] - [0, 5, 0, 3]
    sc = Scaler(method).fit(X)
    Z = sc.transform(X)
    np.testing.assert_allclose(sc.inverse_transform(Z), X, rtol=0, atol=1e-12 * np.abs(X).max())
    assert np.isfinite(Z).all()


def test_scaler_hand_values() -> None:
    X = np.array([[1.0, 5.0], [3.0, 5.0], [5.0, 5.0]])
    np.testing.assert_allclose(Scaler("zscore").fit_transform(X), [[-1, 0], [0, 0], [1, 0]])
    np.testing.assert_allclose(Scaler("range").fit_transform(X), [[0, 0], [0.5, 0], [1, 0]])
    np.testing.assert_allclose(Scaler("minshift").fit_transform(X), [[0, 0], [2, 0], [4, 0]])
    neg = np.array([[-2.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(Scaler("nonneg").fit_transform(neg), [[0, 1], [4, 3]])
    with pytest.raises(ParameterError, match="preprocessing must be one of"):
        Scaler("log").fit(X)


@pytest.mark.parametrize("repeating", [True, False])
def test_cells_are_read_the_same_once_per_distinct_text_or_one_by_one(repeating: bool) -> None:
    # a column whose cells repeat is read once per distinct text, one that hardly repeats cell by cell: both
    # against a plain reading of every cell here
    import re

    from ppdm.data.columns import parse_dates
    from ppdm.data.formulas import formula_cells
    from ppdm.data.schema import cell_texts, parse_numbers

    rng = np.random.default_rng(12)
    n = 6000
    pool = np.array(["1", " 2.5", "-3e2", "nan", "x", "=A1", "+1", "-", "2020-01-05", "01/02/2020", " 2021-03-04 "],
                    dtype=object)
    cells = pool[rng.integers(0, len(pool), n)]
    if not repeating:  # every cell its own text, the same kinds of cells
        day0 = pd.Timestamp("1900-01-01")
        kinds = [lambda i: f"{i}", lambda i: f" {i}.5", lambda i: f"-{i}e2", lambda i: f"x{i}", lambda i: f"=A{i}",
                 lambda i: f"+{i}", lambda i: f"-{i}x", lambda i: (day0 + pd.Timedelta(days=i)).strftime("%Y-%m-%d"),
                 lambda i: (day0 + pd.Timedelta(days=i)).strftime("%m/%d/%Y")]
        cells = np.array([kinds[k](i) for i, k in enumerate(rng.integers(0, len(kinds), n))], dtype=object)
    cells[::50] = None
    s = pd.Series(cells, dtype=object)
    assert (cell_texts(s)[1] is not None) == repeating
    number = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*|\s*[+-]?(?:inf|infinity|nan)\s*", re.I)
    want = [float(c) if c is not None and number.fullmatch(c) else np.nan for c in cells]
    np.testing.assert_array_equal(parse_numbers(s).to_numpy(), np.asarray(want, dtype=float))
    formulas = sum(c is not None and c[0] in "=+-@" and not number.fullmatch(c) for c in cells)
    assert formula_cells(pd.DataFrame({"c": s})) == ({"c": formulas} if formulas else {})
    days = parse_dates(s.where(s.notna(), None))
    for c, d in list(zip(cells, days, strict=True))[::7]:  # each cell read alone: ISO 8601, then month-first
        text = str(c).strip()
        want = pd.to_datetime(text, errors="coerce", format="ISO8601")
        if pd.isna(want) and re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", text):
            want = pd.to_datetime(text, errors="coerce", format="%m/%d/%Y")
        assert (pd.isna(d) and pd.isna(want)) or d == want, c
    assert days.notna().sum() > n // 10
