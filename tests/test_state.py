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


def test_states_copied_into_one_keep_their_arrays_and_refuse_a_damaged_one(tmp_path: Path) -> None:
    from ppdm.state import copy_states, verify_state

    a, b = tmp_path / "a.state", tmp_path / "b.state"
    save_state(a, "release", {"method": "noise"}, {"v": np.arange(5.0), "order": np.array([2, 0, 1])})
    save_state(b, "release", {"method": "noise"}, {"v": np.ones(4)})
    both = tmp_path / "both.state"
    copy_states(both, "release", {"method": "noise", "parts": {"count": 2}},
                [(a, "v", "v"), (a, "order", "order"), (b, "v", "part1.v")])
    header = verify_state(both, "release")
    assert header["parts"] == {"count": 2} and stat.S_IMODE(os.stat(both).st_mode) == 0o600
    _, arrays = load_state(both, "release")
    assert np.array_equal(arrays["v"], np.arange(5.0)) and np.array_equal(arrays["part1.v"], np.ones(4))
    assert np.array_equal(arrays["order"], [2, 0, 1])
    # a part whose array was damaged is not copied into a state that would pass for whole
    data = bytearray(b.read_bytes())
    data[data.find(np.ones(1).tobytes())] ^= 0xFF
    b.write_bytes(bytes(data))
    with pytest.raises(StateError, match="checksum"):
        copy_states(tmp_path / "bad.state", "release", {}, [(a, "v", "v"), (b, "v", "part1.v")])
    assert not (tmp_path / "bad.state").exists()
