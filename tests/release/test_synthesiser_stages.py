"""A synthesiser of whole records fits a model per release: the full battery measures the first pass's release
of the first fold instead of fitting it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mbi")
pytest.importorskip("opendp")

PARAMS = {"epsilon": 4.0, "delta": 1e-9}


def _table(tmp_path: Path, *, with_category: bool = False) -> Any:
    """A small labelled table as the sweep holds it, under a policy no candidate breaks."""
    from ppdm import datasets
    from ppdm.release.config import default_config
    from ppdm.release.table import TableSpec, prepare_table
    from ppdm.release.trial import SweepTable

    df = datasets.load("wdbc").sample(240, random_state=1).reset_index(drop=True)
    df = df[[*df.columns[:6], "class"]]
    if with_category:  # a whole table: its held-out tests read decoded releases
        df.insert(0, "band", np.where(df.iloc[:, 0] > df.iloc[:, 0].median(), "high", "low"))
    src = tmp_path / "t.csv"
    df.to_csv(src, index=False)
    prep = prepare_table(TableSpec(src, label="class"), default_config(), seed=0, screen_above=20000)
    c = prep.cfg
    return SweepTable(X=prep.X, y=prep.y, codec=prep.codec, shown=prep.categories, folds=prep.folds,
                      columns=list(prep.schema.released), preprocess=c.preprocess, threat=c.threat, seed=0,
                      key_seed=123, objective=c.policy.objective, policy=c.policy.model_copy(
                          update={"max_singling_out": 1.0, "max_linkability": 1.0, "max_reidentification": 1.0,
                                  "max_within_5pct": 1.0}),
                      shown_names=tuple(prep.shown), label_name="class")


def _counted_fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The rows of every model fitted from here on (appended as they are made)."""
    import ppdm.flow.synthesis as synthesis

    fits: list[int] = []
    real = synthesis.release_design

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        fits.append(len(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(synthesis, "release_design", counted)
    return fits


@pytest.mark.parametrize("with_category", [False, True])
def test_the_full_battery_adopts_the_first_folds_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     with_category: bool) -> None:
    from ppdm.release.first_pass import first_pass
    from ppdm.release.full_battery import full_battery
    from ppdm.release.halving import _public

    table = _table(tmp_path, with_category=with_category)
    first = first_pass(table, "dp-mst", PARAMS)
    assert first["fold0"][0].shape == (len(table.folds[0][0]), table.X.shape[1])
    fits = _counted_fits(monkeypatch)
    full = full_battery(table, "dp-mst", PARAMS, first)
    assert fits == []  # no model fitted again: every measurement is of the first fold's release
    assert "fold0" not in full and "fold0" not in _public(first)  # never in a record or the cache
    assert full["risk"]["membership"]["paired"] is False  # measured on the first fold's release
    assert "first fold" in full["attacks_on"]
    # the attacks compared that release with its own four fifths of the records, and the first pass's linkage
    # spaces (of the same release) are merged into the full battery's
    linkage = next(a for a in full["attacks"] if a["attack"] == "linkage")
    first_linkage = next(a for a in first["attacks"] if a["attack"] == "linkage")
    assert set(first_linkage["details"]["rates"]) <= set(linkage["details"]["rates"])
    assert len(linkage["details"]["rates"]) > len(first_linkage["details"]["rates"])


def test_without_the_first_folds_fit_the_release_of_every_row_is_attacked(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A first pass from the cache carries no release: the full battery then fits the release of every row."""
    from ppdm.release.first_pass import first_pass
    from ppdm.release.full_battery import full_battery

    table = _table(tmp_path)
    # as the cache keeps a first pass (ppdm.release.halving.StagedRun.done): everything but the release
    cached = {k: v for k, v in first_pass(table, "dp-mst", PARAMS).items() if k != "fold0"}
    fits = _counted_fits(monkeypatch)
    full = full_battery(table, "dp-mst", PARAMS, cached)
    assert "attacks_on" not in full
    assert fits[0] == len(table.X)  # the release of every row, attacked; then the first fold's for membership
