"""``ppdm stream --method nmds``: landmark configuration at init, new rows placed against it, refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.mds.landmark import triangulate
from ppdm.state import load_state
from ppdm.streaming.nmds import NmdsStream
from tests.conftest import one_line_error


def _write(tmp_path: Path, n: int = 100, seed: int = 0) -> tuple[pd.DataFrame, Path, Path]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) @ rng.normal(size=(2, 5)) + 0.3 * rng.normal(size=(n, 5))
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df.insert(0, "pid", np.arange(n))
    first, batch = tmp_path / "first.csv", tmp_path / "batch.csv"
    df.iloc[: n - 20].to_csv(first, index=False)
    df.iloc[n - 20:].to_csv(batch, index=False)
    return df, first, batch


def _init(cli, first: Path, st: Path, rel: Path, landmarks: int, seed: int = 0) -> None:
    code, _, err = cli("stream", "init", "--keep-ids", first, "--method", "nmds", "--dims", 2, "--landmarks", landmarks,
                       "--id", "pid", "--state", st, "-o", rel, "--seed", seed)
    assert code == 0, err


def _row_stress(YL: np.ndarray, T: np.ndarray, Y: np.ndarray) -> np.ndarray:
    D = np.linalg.norm(Y[:, None, :] - YL[None, :, :], axis=2)
    return ((D - T) ** 2).sum(axis=1)


def test_update_places_rows_by_their_stress(cli, tmp_path: Path) -> None:
    df, first, batch = _write(tmp_path)
    st, rel, new = tmp_path / "s.state", tmp_path / "r.csv", tmp_path / "new.csv"
    _init(cli, first, st, rel, landmarks=40)
    R0 = pd.read_csv(rel)
    assert list(R0.columns) == ["pid", "d1", "d2"] and len(R0) == 80
    code, _, err = cli("stream", "update", st, batch, "-o", new)
    assert code == 0, err
    R1 = pd.read_csv(new)
    assert list(R1["pid"]) == list(range(80, 100))
    # against the state's landmark configuration: no placed row is worse than the closed-form start
    header, arrays = load_state(st)
    est = NmdsStream.from_state(header["estimator"], arrays).est_
    Zb = (df.iloc[80:, 1:].to_numpy() - arrays["stream_mean"]) / arrays["stream_scale"]
    delta = np.linalg.norm(Zb[:, None, :] - est.landmark_data_[None, :, :], axis=2)
    T = np.interp(delta, est.transfer_delta_, est.transfer_dhat_)
    YL = est.landmark_embedding_
    placed = _row_stress(YL, T, R1[["d1", "d2"]].to_numpy())
    start = _row_stress(YL, T, triangulate(YL, T))
    assert np.all(placed <= start * (1 + 1e-9) + 1e-12)
    assert placed.sum() < start.sum()
    assert header["stream"]["n_rows"] == 100


def test_old_rows_keep_their_coordinates(cli, tmp_path: Path) -> None:
    # a later copy of a row released at init (landmark or placed) gets that row's coordinates again
    df, first, _ = _write(tmp_path)
    st, rel, new = tmp_path / "s.state", tmp_path / "r.csv", tmp_path / "new.csv"
    _init(cli, first, st, rel, landmarks=80)  # all 80 rows are landmarks
    again = df.iloc[[3, 17, 42]].copy()
    again["pid"] += 1000
    again.to_csv(tmp_path / "again.csv", index=False)
    code, _, err = cli("stream", "update", st, tmp_path / "again.csv", "-o", new)
    assert code == 0, err
    R0, R1 = pd.read_csv(rel), pd.read_csv(new)
    Y0, Y1 = R0[["d1", "d2"]].to_numpy()[[3, 17, 42]], R1[["d1", "d2"]].to_numpy()
    spread = np.sqrt((R0[["d1", "d2"]].to_numpy() ** 2).sum(1).mean())
    assert np.abs(Y1 - Y0).max() < 0.1 * spread

    st2, rel2, new2 = tmp_path / "s2.state", tmp_path / "r2.csv", tmp_path / "new2.csv"
    _init(cli, first, st2, rel2, landmarks=30)  # most rows placed at init
    code, _, err = cli("stream", "update", st2, tmp_path / "again.csv", "-o", new2)
    assert code == 0, err
    header, arrays = load_state(st2)
    lm = NmdsStream.from_state(header["estimator"], arrays).est_.landmark_data_
    Z = (df.iloc[[3, 17, 42], 1:].to_numpy() - arrays["stream_mean"]) / arrays["stream_scale"]
    placed_at_init = [k for k, z in enumerate(Z) if not np.isclose(lm, z).all(axis=1).any()]
    assert placed_at_init  # the same placement function, so exactly the same coordinates
    np.testing.assert_allclose(pd.read_csv(new2)[["d1", "d2"]].to_numpy()[placed_at_init],
                               pd.read_csv(rel2)[["d1", "d2"]].to_numpy()[[3, 17, 42]][placed_at_init], atol=1e-9)


def test_same_seed_same_release(cli, tmp_path: Path) -> None:
    _, first, batch = _write(tmp_path)
    out = []
    for k in range(2):
        st, rel, new = tmp_path / f"s{k}.state", tmp_path / f"r{k}.csv", tmp_path / f"n{k}.csv"
        _init(cli, first, st, rel, landmarks=40, seed=5)
        assert cli("stream", "update", st, batch, "-o", new)[0] == 0
        out.append((rel.read_bytes(), new.read_bytes()))
    assert out[0] == out[1]
    st, rel = tmp_path / "other.state", tmp_path / "other.csv"
    _init(cli, first, st, rel, landmarks=40, seed=6)
    assert rel.read_bytes() != out[0][0]


def test_refusals_and_bad_input(cli, tmp_path: Path) -> None:
    df, first, batch = _write(tmp_path)
    st, rel = tmp_path / "s.state", tmp_path / "r.csv"
    _init(cli, first, st, rel, landmarks=40)
    before = st.read_bytes()
    msg = one_line_error(*cli("stream", "update", st, batch, "--refresh-all", tmp_path / "all.csv"))
    assert "NMDS" in msg and "--refresh-all" in msg
    df.iloc[:80, [0]].assign(extra=1.0).to_csv(tmp_path / "cols.csv", index=False)
    msg = one_line_error(*cli("stream", "add-columns", st, tmp_path / "cols.csv"))
    assert "NMDS" in msg and "adding columns" in msg
    df.iloc[80:].drop(columns="x2").to_csv(tmp_path / "bad.csv", index=False)
    one_line_error(*cli("stream", "update", st, tmp_path / "bad.csv", "-o", tmp_path / "o.csv"))
    assert st.read_bytes() == before
    assert not (tmp_path / "all.csv").exists() and not (tmp_path / "o.csv").exists()
    msg = one_line_error(*cli("stream", "init", first, "--method", "nmds", "--state", tmp_path / "a.state"))
    assert "--dims" in msg
    msg = one_line_error(*cli("stream", "init", first, "--dims", 2, "--state", tmp_path / "b.state"))
    assert "nmds" in msg
    msg = one_line_error(*cli("stream", "init", first, "--method", "nmds", "--dims", 2, "--landmarks", 3,
                               "--state", tmp_path / "c.state"))
    assert "landmarks" in msg
    assert not any((tmp_path / f"{c}.state").exists() for c in "abc")


@pytest.mark.parametrize("as_json", [False, True])
def test_status(cli, tmp_path: Path, as_json: bool) -> None:
    _, first, _ = _write(tmp_path)
    st, rel = tmp_path / "s.state", tmp_path / "r.csv"
    _init(cli, first, st, rel, landmarks=40)
    code, out, err = cli("stream", "status", st, *(["--json"] if as_json else []))
    assert code == 0, err
    assert "40" in out and "landmark" in out
