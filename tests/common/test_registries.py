"""Every registered attack and metric is enrolled here by its registry entry: add one to
``ppdm.attacks.ATTACKS`` or ``ppdm.metrics.METRICS`` and these tests run it.

Attacks: a release drawn independently of the records (the same population, none of their rows) discloses
nothing, so an attack must report no excess over its control there; a release that *is* the original must
show an excess. Metrics: every entry is reported by ``evaluate`` within its bounds, and an unchanged
release sits where the entry's direction says it should (no privacy, perfect pattern, equal utility).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks import ATTACKS
from ppdm.attacks._threat import ThreatModel
from ppdm.metrics import METRICS
from ppdm.pipeline import evaluate

# attacks that cannot show anything on an unchanged release, and why
_NOTHING_TO_UNDO = {"ica": "unmixes column mixtures; an unchanged release is no mixture to unmix"}
# attacks that replay a stated mechanism (tested with one in tests/test_keys.py)
_NEEDS_MECHANISM = {"seed_search"}


def _population(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mix = rng.standard_normal((6, 6))
    records = rng.standard_normal((300, 6)) @ mix * 3 + 50
    unrelated = rng.standard_normal((300, 6)) @ mix * 3 + 50  # same population, none of the records' rows
    return records, unrelated


@pytest.mark.parametrize("name", [a for a in ATTACKS if a not in _NEEDS_MECHANISM])
def test_attack_reports_no_disclosure_from_an_unrelated_release(name: str) -> None:
    from ppdm.attacks._run import run_attacks_named

    X, unrelated = _population(1)
    (res,) = run_attacks_named(X, unrelated, ThreatModel.parse("strongest"), attacks=[name], random_state=0)
    assert res.excess is not None and res.control_rate is not None
    assert res.excess <= 0.05, (name, res.success, res.control_rate)


@pytest.mark.parametrize("name", [a for a in ATTACKS if a not in _NEEDS_MECHANISM | set(_NOTHING_TO_UNDO)])
def test_attack_finds_the_records_in_an_unchanged_release(name: str) -> None:
    from ppdm.attacks._run import run_attacks_named

    X, _ = _population(2)
    (res,) = run_attacks_named(X, X.copy(), ThreatModel.parse("strongest"), attacks=[name], random_state=0)
    assert res.excess is not None and res.excess >= 0.2, (name, res.success, res.control_rate)


def _tables() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 4)) * [1.0, 2.0, 5.0, 0.5] + [0, 10, -3, 100]
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    df["y"] = (X[:, 0] + 0.3 * X[:, 1] > 3.0).astype(int)
    return df


def _reported(result: dict, name: str) -> object:
    for part in ("value", "pattern"):
        if name in result[part]:
            return result[part][name]
    return result["utility"][name]


@pytest.mark.parametrize("name", list(METRICS))
def test_metric_is_reported_within_its_bounds(name: str) -> None:
    df = _tables()
    rng = np.random.default_rng(4)
    noisy = df.copy()
    noisy[["a", "b", "c", "d"]] += rng.standard_normal((len(df), 4)) * df[["a", "b", "c", "d"]].std().to_numpy()
    value = _reported(evaluate(df, noisy, label="y"), name)
    low, high = METRICS[name].bounds
    pair = (value["original"], value["release"]) if isinstance(value, dict) else (value,)
    assert all(low <= float(v) <= high for v in pair), (name, value)


@pytest.mark.parametrize("name", list(METRICS))
def test_metric_on_an_unchanged_release_sits_where_its_direction_says(name: str) -> None:
    df = _tables()
    info = METRICS[name]
    value = _reported(evaluate(df, df.copy(), label="y"), name)
    low, high = info.bounds
    if info.kind == "utility":
        assert value["original"] == pytest.approx(value["release"]), name
    elif info.kind == "privacy":  # no protection at all: the worst end of the scale
        assert float(value) == pytest.approx(low if info.goal == "maximize" else high), name
    else:  # patterns kept perfectly: the best end
        assert float(value) == pytest.approx(high if info.goal == "maximize" else low), name
