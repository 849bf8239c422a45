"""No key material outside state files: every array of every state, and the seed, are absent from releases,
JSON records, reports and what the commands print."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ppdm.state import load_state, read_header

SEED = 918273645
_NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?")


def _tokens(text: str) -> list[tuple[float, int]]:
    """Decimal numbers in a text with at least six significant digits, as (value, decimals)."""
    out = []
    for t in _NUMBER.findall(text):
        mantissa = t.split("e")[0].split("E")[0]
        digits = mantissa.replace("-", "").replace(".", "").lstrip("0")
        if len(digits) >= 6:
            out.append((float(t), len(mantissa.split(".")[1])))
    return out


def _leaks(values: np.ndarray, tokens: list[tuple[float, int]], texts: str) -> list[float]:
    """Key values that appear in the texts: as their repr, or rounded to any printed precision."""
    found = []
    for v in map(float, np.ravel(values)):
        if abs(v) < 1e-6 or float(v).is_integer():
            continue
        if repr(v) in texts or any(tok == round(v, d) for tok, d in tokens):
            found.append(v)
    return found


def _seeds(header: object, key: str = "") -> list[int]:
    """Every seed-like integer in a state header (keys named *seed* or random_state)."""
    if isinstance(header, dict):
        return [s for k, v in header.items() for s in _seeds(v, str(k))]
    if isinstance(header, list):
        return [s for v in header for s in _seeds(v, key)]
    if ("seed" in key or key == "random_state") and isinstance(header, int) and abs(header) >= 1000:
        return [header]
    return []


@pytest.fixture
def runs(cli, table: Path, tmp_path: Path) -> tuple[list[Path], list[Path], str]:
    """Every command that writes keys, with --state and a distinctive seed; (states, outputs, printed text)."""
    printed: list[str] = []
    states: list[Path] = []
    outputs: list[Path] = []

    def run(*args: object) -> None:
        code, out, err = cli(*args)
        assert code == 0, (args, out, err)
        printed.append(out + err)

    common = ["--id", "pid", "--label", "diagnosis", "--drop", "site", "--seed", SEED]
    for method in ("rotation", "noise", "svd"):
        out, st = tmp_path / f"{method}.csv", tmp_path / f"{method}.state"
        run("perturb", table, "--method", method, "-o", out, "--state", st, *common)
        run("perturb", table, "--method", method, "-o", tmp_path / f"{method}2.csv", *common, "--json")
        states.append(st)
        outputs.append(out)
    rel = tmp_path / "rel"
    run("release", table, "-o", rel, "--methods", "svd,noise", "--max-reid", 1, "--max-within-5pct", 1,
        "--max-singling-out", 1, "--max-linkability", 1, "--max-membership-outliers", 1,
        "--no-cache", "--id", "pid", "--label", "diagnosis", "--seed", SEED)
    states.append(rel / "release.state")
    outputs += [rel / "release.csv", rel / "release.json", rel / "report.html"]
    hid, hst = tmp_path / "hidden.csv", tmp_path / "hide.state"
    run("hide", table, "-o", hid, "--state", hst, "--clusters", 2, "--hide-member", 101, *common)
    states.append(hst)
    outputs.append(hid)
    sst, sout = tmp_path / "stream.state", tmp_path / "stream.csv"
    run("stream", "init", table, "--state", sst, "-o", sout, "--rank", 2, *common)
    run("stream", "status", sst, "--check", "--json")
    states.append(sst)
    outputs.append(sout)
    for st in states:
        run("inspect", st)
    return states, outputs, "\n".join(printed)


def test_no_key_material_outside_state_files(runs: tuple[list[Path], list[Path], str]) -> None:
    states, outputs, printed = runs
    texts = printed + "\n".join(p.read_text(encoding="utf-8") for p in outputs)
    tokens = _tokens(texts)
    assert str(SEED) not in texts, "the seed (it regenerates the noise and rotation) leaked"
    probed = 0
    for st in states:
        header, arrays = load_state(st)
        for seed in _seeds(header):
            assert str(seed) not in texts, (st.name, "a seed in the state header leaked")
        for name, arr in arrays.items():
            # scaling statistics are not keys (a release in original units shows them); pass-through
            # columns are copied to the release by design
            if arr.dtype.kind != "f" or any(s in name for s in ("preprocess.", "offset", "scale", "stat_", "pass_")):
                continue
            probed += arr.size
            assert _leaks(arr, tokens, texts) == [], (st.name, name)
    assert probed > 100


def test_state_files_hold_the_keys_and_inspect_hides_them(runs: tuple[list[Path], list[Path], str]) -> None:
    states, _, printed = runs
    names = {st.name: set(read_header(st)["arrays"]) for st in states}
    assert "mechanism.rotation_" in names["rotation.state"]
    assert "mechanism.components_" in names["svd.state"]
    assert {"components", "factors"} <= names["hide.state"]
    assert "components" in names["stream.state"]
    keys = [read_header(st).get("key") or {} for st in states]
    assert any(str(SEED) in (str(k.get("entropy")), str(k)) for k in keys) or any(
        str(SEED) == str(read_header(st).get("seed")) for st in states)


def test_the_scan_finds_a_planted_key() -> None:
    key = np.array([0.123456789012, -3.5, 2.718281828459045])
    for text in ("x,0.123457,y", "B = 2.718281828459045", "value -0.123456789012 and 0.1234568"):
        assert _leaks(key, _tokens(text), text), text
    assert _leaks(key, _tokens("0.1235, 2.72, 3.5, 0.12345"), "0.1235, 2.72, 3.5, 0.12345") == []
