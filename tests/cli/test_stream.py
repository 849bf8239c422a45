"""``ppdm stream``: init, append/refresh updates, new columns, status, schema checks, locking and crashes."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.streaming import state_lock
from tests.conftest import one_line_error


def _tables(tmp_path: Path, n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, Path, Path, Path]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) @ rng.normal(size=(3, 8)) + rng.normal(scale=0.2, size=(n, 8)) + 10
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)])
    df.insert(0, "pid", np.arange(1000, 1000 + n))
    df["grp"] = np.where(np.arange(n) % 3, "a", "b")
    paths = []
    for name, part in (("hist.csv", df.iloc[:200]), ("b1.csv", df.iloc[200:300]), ("b2.csv", df.iloc[300:])):
        part.to_csv(tmp_path / name, index=False)
        paths.append(tmp_path / name)
    return df, *paths  # type: ignore[return-value]


def _num(df: pd.DataFrame) -> np.ndarray:
    return df[[f"x{j}" for j in range(8)]].to_numpy()


def _rank_k(A: np.ndarray, k: int) -> np.ndarray:
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return (U[:, :k] * s[:k]) @ Vt[:k]


def test_init_update_refresh_status(cli, tmp_path: Path) -> None:
    df, hist, b1, b2 = _tables(tmp_path)
    st, rel = tmp_path / "r.state", tmp_path / "r.csv"
    code, _, err = cli("stream", "init", "--keep-ids", hist, "--rank", 3, "--id", "pid", "--label", "grp",
                       "--state", st, "-o", rel)
    assert code == 0, err
    assert stat.S_IMODE(os.stat(st).st_mode) == 0o600
    R0 = pd.read_csv(rel)
    np.testing.assert_allclose(_num(R0), _rank_k(_num(df.iloc[:200]), 3), atol=1e-8)
    new, allr = tmp_path / "new1.csv", tmp_path / "all1.csv"
    code, _, err = cli("stream", "update", st, b1, "-o", new, "--refresh-all", allr)
    assert code == 0, err
    N, A = pd.read_csv(new), pd.read_csv(allr)
    assert N["pid"].tolist() == list(range(1200, 1300)) and N["grp"].tolist() == df["grp"][200:300].tolist()
    assert A["pid"].tolist() == list(range(1000, 1300)) and list(A.columns) == list(df.columns)
    np.testing.assert_allclose(_num(A)[200:], _num(N), atol=1e-8)  # refresh's new rows equal the append release
    exact = np.linalg.norm(_num(df.iloc[:300]) - _rank_k(_num(df.iloc[:300]), 3))
    assert np.linalg.norm(_num(df.iloc[:300]) - _num(A)) <= 1.01 * exact
    # earlier released rows are never rewritten by an append update
    before = rel.read_bytes()
    code, _, err = cli("stream", "update", st, b2, "-o", tmp_path / "new2.csv")
    assert code == 0, err
    assert rel.read_bytes() == before
    code, out, err = cli("stream", "status", st, "--check", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["n_rows"] == 400 and s["rank"] == 3 and s["n_updates"] == 2
    assert s["orthogonality"]["v"] < 1e-12 and s["check"]["relative_gap"] < 0.01
    assert abs(s["check"]["exact_re"] - np.linalg.norm(_num(df) - _rank_k(_num(df), 3)) / np.linalg.norm(_num(df))) \
        < 1e-9


def test_add_columns(cli, tmp_path: Path) -> None:
    df, hist, _, _ = _tables(tmp_path)
    st = tmp_path / "r.state"
    assert cli("stream", "init", "--keep-ids", hist, "--rank", 3, "--id", "pid", "--label", "grp",
               "--state", st)[0] == 0
    rng = np.random.default_rng(5)
    extra = pd.DataFrame({"pid": df["pid"][:200], "y1": rng.normal(size=200), "y2": _num(df)[:200, 0] * 2})
    extra.to_csv(tmp_path / "extra.csv", index=False)
    out = tmp_path / "all.csv"
    code, _, err = cli("stream", "add-columns", st, tmp_path / "extra.csv", "--refresh-all", out)
    assert code == 0, err
    A = pd.read_csv(out)
    assert list(A.columns) == list(df.columns) + ["y1", "y2"]
    full = np.column_stack([_num(df)[:200], extra[["y1", "y2"]].to_numpy()])
    got = A[[f"x{j}" for j in range(8)] + ["y1", "y2"]].to_numpy()
    assert np.linalg.norm(full - got) <= 1.05 * np.linalg.norm(full - _rank_k(full, 3))
    # the next batch must now carry the new columns
    nxt = df.iloc[200:260].assign(y1=0.0, y2=1.0)
    nxt.to_csv(tmp_path / "nxt.csv", index=False)
    assert cli("stream", "update", st, tmp_path / "nxt.csv", "-o", tmp_path / "n.csv")[0] == 0
    shuffled = extra.iloc[::-1]
    shuffled.rename(columns={"y1": "z1", "y2": "z2"}).to_csv(tmp_path / "bad.csv", index=False)
    msg = one_line_error(*cli("stream", "add-columns", st, tmp_path / "bad.csv"))
    assert "ids" in msg or "rows" in msg


@pytest.mark.parametrize("case", ["missing", "extra", "reordered", "nan", "other-table", "text"])
def test_bad_batches_change_nothing(cli, tmp_path: Path, case: str) -> None:
    df, hist, b1, _ = _tables(tmp_path)
    st = tmp_path / "r.state"
    assert cli("stream", "init", "--keep-ids", hist, "--rank", 2, "--id", "pid", "--label", "grp",
               "--state", st)[0] == 0
    bad = pd.read_csv(b1)
    if case == "missing":
        bad = bad.drop(columns="x3")
    elif case == "extra":
        bad["x9"] = 1.0
    elif case == "reordered":
        bad = bad[["pid", "x1", "x0"] + [f"x{j}" for j in range(2, 8)] + ["grp"]]
    elif case == "nan":
        bad.loc[5, "x2"] = np.nan
    elif case == "other-table":
        bad = pd.DataFrame(np.ones((5, 3)), columns=["u", "v", "w"])
    else:
        bad["x4"] = "oops"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    before = st.read_bytes()
    msg = one_line_error(*cli("stream", "update", st, tmp_path / "bad.csv", "-o", tmp_path / "o.csv"))
    assert "pid" not in msg or case in ("reordered", "other-table")
    assert st.read_bytes() == before
    assert not (tmp_path / "o.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_state_damage_and_wrong_kind(cli, tmp_path: Path) -> None:
    _, hist, b1, _ = _tables(tmp_path)
    st = tmp_path / "r.state"
    assert cli("stream", "init", "--keep-ids", hist, "--rank", 2, "--state", st)[0] == 0
    raw = st.read_bytes()
    (tmp_path / "trunc.state").write_bytes(raw[: len(raw) // 2])
    msg = one_line_error(*cli("stream", "update", tmp_path / "trunc.state", b1, "-o", tmp_path / "o.csv"))
    assert "state" in msg
    i = raw.find(b"\x93NUMPY")
    tampered = bytearray(raw)
    tampered[i + 200] ^= 0x01
    (tmp_path / "bad.state").write_bytes(bytes(tampered))
    msg = one_line_error(*cli("stream", "update", tmp_path / "bad.state", b1, "-o", tmp_path / "o.csv"))
    assert "checksum" in msg
    perturb_state = tmp_path / "p.state"
    assert cli("perturb", hist, "--rank", 2, "-o", tmp_path / "p.csv", "--state", perturb_state)[0] == 0
    msg = one_line_error(*cli("stream", "update", perturb_state, b1, "-o", tmp_path / "o.csv"))
    assert "stream" in msg


def test_append_only_state(cli, tmp_path: Path) -> None:
    _, hist, b1, _ = _tables(tmp_path)
    st = tmp_path / "r.state"
    assert cli("stream", "init", "--keep-ids", hist, "--rank", 2, "--state", st, "--append-only")[0] == 0
    size = st.stat().st_size
    msg = one_line_error(*cli("stream", "update", st, b1, "--refresh-all", tmp_path / "a.csv"))
    assert "append-only" in msg
    assert cli("stream", "update", st, b1, "-o", tmp_path / "n.csv")[0] == 0
    assert abs(st.stat().st_size - size) < 64  # the state does not grow with the rows absorbed


def test_concurrent_update_fails_cleanly(cli, tmp_path: Path) -> None:
    _, hist, b1, _ = _tables(tmp_path)
    st = tmp_path / "r.state"
    assert cli("stream", "init", "--keep-ids", hist, "--rank", 2, "--state", st)[0] == 0
    before = st.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from ppdm.streaming import state_lock\n"
        f"with state_lock({str(st)!r}):\n    print('locked', flush=True); time.sleep(30)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        msg = one_line_error(*cli("stream", "update", st, b1, "-o", tmp_path / "n.csv"))
        assert "another process" in msg
        assert st.read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the dead holder's lock
    with state_lock(st, wait=5):
        pass


def test_sigkill_mid_update_leaves_state_usable(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    m = 40
    cols = [f"c{j}" for j in range(m)]
    pd.DataFrame(rng.normal(size=(300, m)), columns=cols).to_csv(tmp_path / "h.csv", index=False)
    big = pd.DataFrame(rng.normal(size=(60_000, m)), columns=cols)
    big.to_csv(tmp_path / "big.csv", index=False)
    big.iloc[:50].to_csv(tmp_path / "small.csv", index=False)
    st, first = tmp_path / "r.state", tmp_path / "first.csv"
    ppdm = [sys.executable, "-m", "ppdm"]
    r = subprocess.run(ppdm + ["stream", "init", "--keep-ids", str(tmp_path / "h.csv"), "--rank", "4", "--state",
                               str(st),
                               "-o", str(first)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    state_before, first_before = st.read_bytes(), first.read_bytes()
    p = subprocess.Popen(ppdm + ["stream", "update", str(st), str(tmp_path / "big.csv"), "-o",
                                 str(tmp_path / "new.csv"), "--refresh-all", str(tmp_path / "all.csv")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # kill the moment the update starts writing its outputs (a staged temporary file appears)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        if any(f.name.endswith(".tmp") for f in tmp_path.iterdir()):
            break
        time.sleep(0.002)
    assert p.poll() is None, "the update finished before it could be killed"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert st.read_bytes() == state_before
    assert first.read_bytes() == first_before
    assert not (tmp_path / "new.csv").exists() and not (tmp_path / "all.csv").exists()
    r = subprocess.run(ppdm + ["stream", "update", str(st), str(tmp_path / "small.csv"), "-o",
                               str(tmp_path / "new.csv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert len(pd.read_csv(tmp_path / "new.csv")) == 50
    assert not [f for f in tmp_path.iterdir() if f.name.startswith(".r.state")]  # stale key copies removed


def test_add_columns_needs_the_id_column_of_a_stream_with_ids(cli, tmp_path: Path) -> None:
    df, hist, _, _ = _tables(tmp_path)
    st = tmp_path / "r.state"
    assert cli("stream", "init", "--keep-ids", hist, "--rank", 3, "--id", "pid", "--state", st)[0] == 0
    before = st.read_bytes()
    # without the ids the rows' order cannot be checked: a reversed file would be absorbed as it is
    pd.DataFrame({"y1": np.arange(200.0)[::-1]}).to_csv(tmp_path / "no_id.csv", index=False)
    msg = one_line_error(*cli("stream", "add-columns", st, tmp_path / "no_id.csv"))
    assert "no id column 'pid'" in msg and "add it" in msg
    assert st.read_bytes() == before
    pd.DataFrame({"pid": df["pid"][:200], "y1": np.arange(200.0)}).to_csv(tmp_path / "with_id.csv", index=False)
    assert cli("stream", "add-columns", st, tmp_path / "with_id.csv")[0] == 0


@pytest.mark.parametrize(("rank", "buffer", "ok"), [(3, 100, False), (3, 6, False), (3, 5, True), (3, 0, True)])
def test_a_buffer_rank_beyond_the_columns_is_refused(cli, tmp_path: Path, rank: int, buffer: int, ok: bool) -> None:
    _, hist, _, _ = _tables(tmp_path)  # 8 numeric columns
    st = tmp_path / "r.state"
    res = cli("stream", "init", hist, "--rank", rank, "--buffer-rank", buffer, "--id", "pid", "--label", "grp",
              "--state", st)
    if ok:
        assert res[0] == 0, res[2]
        return
    msg = one_line_error(*res)
    assert f"--buffer-rank {buffer} with --rank {rank}" in msg and "choose --buffer-rank 5 or less" in msg
    assert not st.exists()
