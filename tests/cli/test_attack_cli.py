from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd


def _tables(tmp_path: Path, rng: np.random.Generator) -> tuple[Path, Path, np.ndarray]:
    n, m = 120, 5
    A = rng.normal(size=(n, m)) @ rng.normal(size=(m, m)) + 20
    Q = np.linalg.qr(rng.normal(size=(m, m)))[0]
    mu, sd = A.mean(axis=0), A.std(axis=0, ddof=1)
    cols = [f"v{j}" for j in range(m)]
    o = pd.DataFrame(A, columns=cols)
    o.insert(0, "pid", [f"p{i}" for i in range(n)])
    o["label"] = rng.integers(0, 2, n)
    r = pd.DataFrame(((A - mu) / sd) @ Q * sd + mu, columns=cols)  # a rotation in z-score units
    r.insert(0, "pid", o["pid"])
    r["label"] = o["label"]
    r = r.iloc[::-1]  # another tool may reorder rows: matched by id
    po, pr = tmp_path / "o.csv", tmp_path / "r.csv"
    o.to_csv(po, index=False)
    r.to_csv(pr, index=False)
    return po, pr, A


def test_attack_known_io_json(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    po, pr, A = _tables(tmp_path, rng)
    js = tmp_path / "a.json"
    code, out, err = cli("attack", po, pr, "--threat", "known-io:6", "--id", "pid", "--label", "label", "--json", js)
    assert code == 0, err
    res = json.loads(js.read_text())
    assert res["schema"] == "ppdm.attack/1" and res["threat"] == "known-io:6"
    first = res["results"][0]
    assert first["attack"] == "known_io" and first["rmse"] < 1e-8 * np.abs(A).max()
    assert "known_io" in out
    # no cell value leaks into the output
    assert f"{A[0, 0]:.4f}" not in out + js.read_text()


def test_attack_all_and_no_overwrite(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    po, pr, _ = _tables(tmp_path, rng)
    js = tmp_path / "b.json"
    code, _, err = cli("attack", po, pr, "--all", "--id", "pid", "--label", "label", "--json", js)
    assert code == 0, err
    names = [r["attack"] for r in json.loads(js.read_text())["results"]]
    assert {"linkage", "known_io", "pca", "face_value"} <= set(names)
    code, _, err = cli("attack", po, pr, "--all", "--id", "pid", "--json", js)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_attack_bad_threat_one_line(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    po, pr, _ = _tables(tmp_path, rng)
    code, _, err = cli("attack", po, pr, "--threat", "mind-reading")
    assert code == 2 and "unknown threat item" in err and len(err.strip().splitlines()) == 1


def test_attack_release_with_other_columns(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    po, _, A = _tables(tmp_path, rng)
    P = np.linalg.qr(rng.normal(size=(5, 5)))[0][:, :3]
    rel = pd.DataFrame(A @ P, columns=["z1", "z2", "z3"])
    pr = tmp_path / "proj.csv"
    rel.to_csv(pr, index=False)
    js = tmp_path / "c.json"
    code, _, err = cli("attack", po, pr, "--threat", "known-io:6", "--json", js, "--columns", "v0,v1,v2,v3,v4")
    assert code == 0, err
    res = json.loads(js.read_text())
    assert res["release_columns"] == ["z1", "z2", "z3"]
    assert res["results"][0]["details"]["key_recovery_rmse"] < 1e-8


def test_evaluate_suite_and_tests(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    po, pr, _ = _tables(tmp_path, rng)
    code, out, err = cli("evaluate", po, pr, "--id", "pid", "--label", "label", "--utility", "all", "--tests",
                         "--json")
    assert code == 0, err
    res = json.loads(out)
    assert {"kmeans_pct", "svm_pct", "knn4_pct", "svm_rbf_pct", "dbscan_vi"} <= set(res["utility"])
    # a rotation keeps every distance: k-NN accuracy is unchanged, and the t-test says so
    assert res["utility"]["knn4_pct"]["original"] == res["utility"]["knn4_pct"]["release"]
    assert res["tests"]["knn4_pct"]["significant"] is False


def test_attack_with_the_state_of_a_whole_table_release(cli, tmp_path: Path, rng: np.random.Generator) -> None:
    # a release of numbers and categories together: its mechanism acted on the design (numbers and one-hot
    # categories), which the seed search cannot replay on the numbers alone. The battery runs without it; asked
    # for by name, it is refused in one line
    n = 150
    o = pd.DataFrame({"pid": [f"p{i}" for i in range(n)], "age": rng.integers(18, 90, n),
                      "income": rng.gamma(2.0, 20_000.0, n).round(0),
                      "city": rng.choice(["north", "south", "east", "west"], n),
                      "label": rng.integers(0, 2, n)})
    po, pr, st = tmp_path / "o.csv", tmp_path / "r.csv", tmp_path / "r.state"
    o.to_csv(po, index=False)
    code, _, err = cli("perturb", po, "--method", "mdav", "--id", "pid", "--label", "label", "-o", pr, "--state", st)
    assert code == 0, err
    js = tmp_path / "a.json"
    code, _, err = cli("attack", po, pr, "--id", "pid", "--label", "label", "--state", st, "--json", js)
    assert code == 0, err
    names = [r["attack"] for r in json.loads(js.read_text())["results"]]
    assert "linkage" in names and "seed_search" not in names
    code, _, err = cli("attack", po, pr, "--id", "pid", "--state", st, "--attacks", "seed_search")
    assert code == 2 and "Traceback" not in err
    assert "acted on" in err and "leave seed_search out" in err and len(err.strip().splitlines()) == 1
