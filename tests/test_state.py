from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ppdm.exceptions import StateError
from ppdm.state import load_state, read_header, save_state


def test_roundtrip_permissions_and_checksums(tmp_path: Path) -> None:
    p = tmp_path / "s.state"
    arr = {"v": np.arange(6.0).reshape(2, 3), "seed": np.array([7])}
    save_state(p, "release", {"rank": 2}, arr)
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    h, a = load_state(p, "release")
    assert h["rank"] == 2 and np.array_equal(a["v"], arr["v"])
    assert "v" in read_header(p)["arrays"]
    with pytest.raises(StateError, match="not 'stream'"):
        load_state(p, "stream")


def test_tampered_truncated_and_pickled(tmp_path: Path) -> None:
    p = tmp_path / "s.state"
    save_state(p, "release", {}, {"v": np.ones(50)})
    data = bytearray(p.read_bytes())
    i = data.find(np.ones(1).tobytes())
    data[i] ^= 0xFF
    bad = tmp_path / "bad.state"
    bad.write_bytes(bytes(data))
    with pytest.raises(StateError, match="checksum"):
        load_state(bad)
    cut = tmp_path / "cut.state"
    cut.write_bytes(p.read_bytes()[:200])
    with pytest.raises(StateError):
        load_state(cut)
    # a state whose array member is a pickle is refused, never unpickled
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    evil = tmp_path / "evil.state"
    with zipfile.ZipFile(p) as src, zipfile.ZipFile(evil, "w") as dst:
        dst.writestr("header.json", src.read("header.json"))
        dst.writestr("v.npy", buf.getvalue())
    with pytest.raises(StateError, match="pickle|damaged"):
        load_state(evil)
    other = tmp_path / "o.state"
    other.write_text("hello")
    with pytest.raises(StateError, match="not a ppdm state"):
        load_state(other)
