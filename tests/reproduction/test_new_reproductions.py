"""Parts of the reproductions added for the manifest's corrections (the whole runs are in `ppdm reproduce --all`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ppdm.exceptions import ParameterError
from tests.data.uci_files import write


def test_pav_trials_are_table_3_5s() -> None:
    from ppdm.experiments.alotaibi2015_nmds import pav_trials, table_3_5

    trials = pav_trials(np.array([4.0, 3, 2, 1, 5, 3]))
    assert [t.tolist() for t in trials] == [[3.5, 3.5, 2, 1, 5, 3], [3, 3, 3, 1, 5, 3], [2.5, 2.5, 2.5, 2.5, 5, 3],
                                            [2.5, 2.5, 2.5, 2.5, 4, 4]]
    rep = table_3_5()
    assert rep.passed and len(rep.checked) == 6 * 2 + 6 * 4 + 1


def test_ellipse_change() -> None:
    from ppdm.experiments.alotaibi2015_figures import SIGMA_4_20, ellipse_change

    X = np.random.default_rng(0).multivariate_normal([0, 0], SIGMA_4_20, 500)
    assert ellipse_change(X, X) == pytest.approx((0.0, 0.0, 0.0), abs=1e-6)
    # the first principal axis of X is near (0.36, 0.93): swapping the columns turns it by about 42 degrees
    angle, rel, shift = ellipse_change(X, X[:, ::-1])
    assert 35 < angle < 50 and rel > 0.5 and shift == pytest.approx(
        float(np.sqrt((X.mean(0)[::-1] - X.mean(0)) @ np.linalg.solve(np.cov(X.T), X.mean(0)[::-1] - X.mean(0)))))


def test_fig_4_20_table_has_every_method_and_share() -> None:
    from ppdm.experiments.alotaibi2015_figures import fig_4_20_table

    t = fig_4_20_table(trials=1)
    assert len(t) == 6 * 3 and set(t["share"]) == {0.1, 0.2, 0.3}
    assert (t["angle_deg"].between(0, 90)).all() and (t["cov_change"] >= 0).all()


def test_svmlight_default_c() -> None:
    from ppdm.experiments.svmlight import cv_accuracy, default_c

    far = np.full((10, 3), 10.0)  # exp(-gamma ||x||^2) ~ 0: every example at sqrt(2) from the origin
    assert default_c(far, 1.0) == pytest.approx(0.5)
    near = np.full((10, 3), 0.01)
    assert default_c(near, 1.0) > 1000  # examples near the origin: a large C
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.repeat([0, 1], 30)
    X[y == 1] += 2
    assert cv_accuracy(X, y, C=1.0, n_folds=5) > 80


def test_yeast_figures_need_the_data_and_run_on_the_published_layout(tmp_path: Path) -> None:
    from ppdm.experiments import run_reproduction
    from ppdm.experiments.runner import run_one

    with pytest.raises(ParameterError, match="yeast.data"):
        run_reproduction("wang2008-figs-2-4-2-5")
    assert run_one("wang2008-figs-2-4-2-5").skipped == "needs yeast.data in --data-dir"
    write("yeast", tmp_path)
    rep = run_reproduction("wang2008-figs-2-4-2-5", data_dir=tmp_path, trials=5)
    claims = [c for c in rep.cells if c.row.startswith("Fig. 2.")]
    assert len(claims) == 5 + 2 + 4 and any("unverified" in n for n in rep.notes)


def test_cli_names_the_missing_yeast_file(cli) -> None:
    from tests.conftest import one_line_error

    line = one_line_error(*cli("reproduce", "wang2008-figs-2-4-2-5"))
    assert "yeast.data" in line and "--data-dir" in line


def test_chains_keep_cache_groups_together() -> None:
    from ppdm.experiments.runner import chains

    ids = ["wang2008-table-2-1", "wang2008-tables-3-2-3-3-3-5", "alotaibi2015-table-2-2", "wang2008-table-3-7",
           "alotaibi2015-figs-4-12-4-18-4-19", "alotaibi2015-fig-5-12"]
    got = chains(ids)
    assert sorted(i for c in got for i in c) == sorted(ids)
    assert ["wang2008-table-2-1", "wang2008-tables-3-2-3-3-3-5", "wang2008-table-3-7"] in got
    assert ["alotaibi2015-figs-4-12-4-18-4-19", "alotaibi2015-fig-5-12"] in got
    assert got[-1] == ["alotaibi2015-table-2-2"]  # no slow member: last


def test_parallel_run_returns_the_summaries_in_order() -> None:
    from ppdm.experiments.runner import run_with_progress

    ids = ["alotaibi2015-table-2-2", "wang2008-table-2-1", "alotaibi2015-table-3-5"]
    seen: list[str] = []
    out = run_with_progress(ids, show=False, jobs=2, on_summary=lambda s: seen.append(s.id))
    assert [s.id for s in out] == ids and sorted(seen) == sorted(ids)
    assert all(s.passed and s.checked > 0 for s in out)


def test_jobs_needs_all(cli) -> None:
    from tests.conftest import one_line_error

    assert "--all" in one_line_error(*cli("reproduce", "wang2008-table-2-1", "--jobs", "2"))
