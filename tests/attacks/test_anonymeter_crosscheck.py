"""anonymeter as the independent cross-check: ppdm's singling out and linkability are never below it.

Fixed releases of every mechanism family, made through the library from the bundled adult sample (1,000
members; 300 real records kept apart as the control), are scored by anonymeter's evaluators and by ppdm's
own tests, on two tables: the mixed table (the categories pass through, the numbers are released by the
mechanism) and its numeric columns with the label. ppdm must be at least as high as anonymeter, within
anonymeter's interval: ppdm's figure at or above the lower end of anonymeter's 95 % interval. ppdm's
multivariate figure is its stronger conjunction family (multivariate or targeted); its linkability is the
worst of its splits. Skipped when anonymeter (the ``audit`` extra) is not installed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("anonymeter", reason="anonymeter is not installed (pip install 'ppdm[audit]')")

from ppdm import datasets  # noqa: E402
from ppdm.attacks import from_frames, linkability, singling_out  # noqa: E402
from ppdm.attacks.audit import anonymeter_tests  # noqa: E402
from ppdm.pipeline import perturb  # noqa: E402

#: one mechanism of every family, with the parameters the release sweep tries
FAMILIES = {
    "svd": {"rank": 3},
    "noise": {"scale": 0.5},
    "mdav": {"k": 5},
    "rankswap": {"p": 5.0},
    "copula": {},
    "cart": {"min_leaf": 5},
}
LABEL = "class"


TABLES = ("mixed", "numeric")


@pytest.fixture(scope="module")
def tables() -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    df = datasets.load("adult")
    idx = np.random.default_rng(2024).permutation(len(df))
    members = df.iloc[idx[:1000]].reset_index(drop=True)
    control = df.iloc[idx[1000:1300]].reset_index(drop=True)
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])] + [LABEL]
    return {"mixed": (members, control), "numeric": (members[numeric], control[numeric])}


def _measure(members: pd.DataFrame, control: pd.DataFrame) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Per mechanism and test: (ppdm's figure, anonymeter's risk, the lower end of anonymeter's interval)."""
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for k, (method, params) in enumerate(FAMILIES.items()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the fixed seed's warning
            release = perturb(members, method=method, params=params, label=LABEL, seed=100 + k).release
        release = release[list(members.columns)]
        peer = anonymeter_tests(release, members, control, seed=k, label=LABEL, n_attacks=300, max_attempts=20_000)
        r, m, c = from_frames([release, members, control])
        so = singling_out(r, m, c, rng=np.random.default_rng(k))
        li = linkability(r, m, c, rng=np.random.default_rng(k), label=LABEL)
        out[method] = {
            "singling out, univariate": (so["univariate"]["risk"], *_peer(peer["singling_out_univariate"])),
            "singling out, multivariate": (max(so["multivariate"]["risk"], so["targeted"]["risk"]),
                                           *_peer(peer["singling_out_multivariate"])),
            "linkability": (li["risk"], *_peer(peer["linkability"])),
        }
    return out


def _peer(r: dict) -> tuple[float, float]:
    return r["risk"], r["interval"][0]


@pytest.fixture(scope="module")
def measured(tables: dict[str, tuple[pd.DataFrame, pd.DataFrame]]) -> dict[str, dict]:
    return {name: _measure(*tables[name]) for name in TABLES}


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("method", list(FAMILIES))
def test_ppdm_is_at_least_as_strict_as_anonymeter(measured: dict, table: str, method: str) -> None:
    for test, (ours, theirs, their_low) in measured[table][method].items():
        assert ours >= their_low, (f"{table} table, {method}, {test}: ppdm {ours:.3f} < anonymeter {theirs:.3f} "
                                   f"(interval from {their_low:.3f})")


def test_anonymeters_size_correction_is_the_ratio_ppdm_applies() -> None:
    """anonymeter 1.1's fitted correction of the control, as ppdm's control_scale reproduces it."""
    from anonymeter.evaluators import singling_out_evaluator as so_eval

    from ppdm.attacks.singling_out import control_scale

    for n_control, n_members, n_queries in ((600, 2000, 500), (300, 1000, 300), (1200, 4000, 500), (600, 700, 50)):
        # anonymeter evaluates its queries on control subsets of these sizes; version 1.1 then fits the number
        # of queries (len of the tuple of counts) at every size
        sizes = np.repeat(np.linspace(min(1000, n_control), n_control, 10).astype(int), 5)
        fitted = so_eval._fit_model(sizes=sizes, successes=np.full(len(sizes), n_queries))
        assert fitted(n_members) / fitted(n_control) == pytest.approx(
            control_scale(n_members, n_control, "anonymeter"), rel=1e-3)
