"""``ppdm inspect`` checks every array against its checksum: a tampered state is one error line, exit 2."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tests.robustness.test_bad_input_corpus import GOOD


@pytest.fixture
def state(cli, tmp_path: Path) -> Path:
    src = tmp_path / "good.csv"
    src.write_text(GOOD)
    st = tmp_path / "r.state"
    code, _, err = cli("perturb", src, "-m", "rotation", "-o", tmp_path / "out.csv", "--state", st)
    assert code == 0, err
    return st


def _rewrite(src: Path, dst: Path, edit) -> None:  # type: ignore[no-untyped-def]
    """Copy a state archive member by member, passing each (name, bytes) through ``edit``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as zout:
        for name in zin.namelist():
            zout.writestr(name, edit(name, zin.read(name)))


def _modified_array(name: str, data: bytes) -> bytes:
    if not name.startswith("mechanism.") or not name.endswith(".npy"):
        return data
    a = np.load(io.BytesIO(data), allow_pickle=False)
    a.flat[0] += 1e-9  # a change no header field records
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def _edited_header(name: str, data: bytes) -> bytes:
    if name != "header.json":
        return data
    h = json.loads(data)
    h["method"] = "svd"  # the checksum field is left as it was
    return json.dumps(h).encode()


def _one_line(code: int, out: str, err: str) -> str:
    assert code == 2, (code, out, err)
    assert out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def test_intact_state_is_shown_without_keys(cli, state: Path) -> None:
    code, out, err = cli("inspect", state)
    assert code == 0, err
    shown = json.loads(out)
    assert shown["method"] == "rotation" and shown["key"]["entropy"] == "<secret>"
    assert all(set(v) == {"shape", "dtype"} for v in shown["arrays"].values())


def test_modified_array_is_reported(cli, state: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.state"
    _rewrite(state, bad, _modified_array)
    before = bad.read_bytes()
    err = _one_line(*cli("inspect", bad))
    assert "fails its checksum (array 'mechanism." in err
    assert bad.read_bytes() == before
    # the header alone is intact: --no-verify shows it (the documented cheap mode)
    assert cli("inspect", bad, "--no-verify")[0] == 0


def test_edited_header_is_reported(cli, state: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.state"
    _rewrite(state, bad, _edited_header)
    for flag in ("--verify", "--no-verify"):
        err = _one_line(*cli("inspect", bad, flag))
        assert "fails its header checksum" in err


def test_extra_member_is_reported(cli, state: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.state"
    _rewrite(state, bad, lambda name, data: data)
    with zipfile.ZipFile(bad, "a") as z:
        z.writestr("payload.pkl", b"\x80\x04N.")
    err = _one_line(*cli("inspect", bad))
    assert "unlisted member 'payload.pkl'" in err


def test_truncated_state_is_reported(cli, state: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.state"
    bad.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    _one_line(*cli("inspect", bad))
