"""The bad-input corpus through the newer commands: hide, stream (also NMDS streams), attack, mds-dims,
perturb nmf/nmds and evaluate on the dask backend.

Every case: exit code 2, one stderr line, no traceback, nothing written, inputs byte-identical.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ppdm.state import _header_digest, save_state
from tests.robustness.test_bad_input_corpus import BAD_FILES, GOOD, RELEASED_WHOLE
from tests.robustness.test_bad_input_corpus import _check as _check_one


def _check(cli, args: list[object], inputs: list[Path], outputs: list[Path]) -> str:  # type: ignore[no-untyped-def]
    """The corpus check, plus: no file at all (temporary, lock or partial) appears beside the inputs."""
    root = Path(inputs[0]).parent
    before = {p for p in root.rglob("*") if p.name != ".lock" and not p.name.endswith(".lock")}
    err = _check_one(cli, args, inputs, outputs)
    after = {p for p in root.rglob("*") if p.name != ".lock" and not p.name.endswith(".lock")}
    assert after <= before, sorted(map(str, after - before))
    return err

# rows of GOOD with an id column, and a matching batch for stream update
GOOD_ID = "id,a,b,c\n1,1,2,3\n2,4,5,7\n3,7,8,8\n4,2,9,1\n5,5,1,6\n6,3,3,2\n"
BATCH = "id,a,b,c\n7,1,5,3\n8,6,2,4\n"
NEG = "a,b,c\n1,-2,3\n4,5,7\n7,8,-8\n2,9,1\n5,1,6\n"


def _bad_args(command: str, bad: Path, good: Path, state: Path, out: Path) -> list[object]:
    return {
        "hide": ["hide", bad, "-o", out, "--clusters", 2, "--hide-member", "1"],
        "stream-init": ["stream", "init", bad, "--state", out, "--rank", 1],
        "stream-update": ["stream", "update", state, bad, "-o", out],
        "stream-add-columns": ["stream", "add-columns", state, bad, "--refresh-all", out],
        "attack-original": ["attack", bad, good, "--json", out],
        "attack-release": ["attack", good, bad, "--json", out],
        "mds-dims": ["mds-dims", bad, "--plot", out],
        "perturb-nmf": ["perturb", bad, "--method", "nmf", "--components", 1, "-o", out],
        "perturb-nmds": ["perturb", bad, "--method", "nmds", "--dims", 1, "-o", out],
        "stream-init-nmds": ["stream", "init", bad, "--state", out, "--method", "nmds", "--dims", 1,
                             "--landmarks", 3],
        # dask's synchronous scheduler: the same reading and checks, without starting a cluster per case
        "evaluate-dask": ["evaluate", bad, good, "--backend", "dask", "--scheduler", "synchronous"],
    }[command]


COMMANDS = ["hide", "stream-init", "stream-update", "stream-add-columns", "attack-original", "attack-release",
            "mds-dims", "perturb-nmf", "perturb-nmds", "stream-init-nmds", "evaluate-dask"]


@pytest.fixture
def stream_state(cli, tmp_path: Path) -> Path:
    """A valid stream state over GOOD_ID (rank 1, id column)."""
    first = tmp_path / "first.csv"
    first.write_text(GOOD_ID)
    state = tmp_path / "s.state"
    code, out, err = cli("stream", "init", first, "--state", state, "--rank", 1, "--id", "id")
    assert code == 0, out + err
    return state


@pytest.mark.parametrize(("name", "content"), BAD_FILES, ids=[n for n, _ in BAD_FILES])
@pytest.mark.parametrize("command", COMMANDS)
def test_bad_files_newer_commands(cli, tmp_path: Path, stream_state: Path, name: str, content: bytes,
                                  command: str) -> None:
    bad = tmp_path / f"{name}.csv"
    bad.write_bytes(content)
    good = tmp_path / "good.csv"
    good.write_text(GOOD)
    if command.startswith("perturb") and name in RELEASED_WHOLE:
        pytest.skip("perturb releases this table whole (see test_bad_input_corpus)")
    out = tmp_path / ("out.state" if command.startswith("stream-init") else "out.csv")
    state_bytes = stream_state.read_bytes()
    _check(cli, _bad_args(command, bad, good, stream_state, out), [bad, good, stream_state], [out])
    assert stream_state.read_bytes() == state_bytes


def _tampered(src: Path, dst: Path) -> None:
    """One byte flipped inside the header's data (a zip's local-header fields are not content: a flip there is
    no damage to the state, so the byte is chosen inside a member)."""
    import zipfile

    data = bytearray(src.read_bytes())
    with zipfile.ZipFile(src) as z:
        info = z.getinfo("header.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0x01
    dst.write_bytes(bytes(data))


def _pickled(src: Path, dst: Path) -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as d:
        header = json.loads(z.read("header.json"))
        for name in z.namelist():
            d.writestr(name, z.read(name) if name == "header.json" else buf.getvalue())
    assert header["arrays"]


def _future_version(src: Path, dst: Path) -> None:
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as d:
        header = json.loads(z.read("header.json"))
        header["format_version"] = 99
        header["header_sha256"] = _header_digest(header)
        for name in z.namelist():
            d.writestr(name, json.dumps(header) if name == "header.json" else z.read(name))


def _wrong_kind(src: Path, dst: Path) -> None:
    save_state(dst, "release", {}, {"v": np.ones(3)})


STATE_DAMAGE = {
    "truncated": lambda s, d: d.write_bytes(s.read_bytes()[: len(s.read_bytes()) // 2]),
    "truncated_header": lambda s, d: d.write_bytes(s.read_bytes()[:100]),
    "tampered": _tampered,
    "pickle": _pickled,
    "future_version": _future_version,
    "wrong_kind": _wrong_kind,
    "not_a_state": lambda s, d: d.write_text(GOOD),
    "empty": lambda s, d: d.write_bytes(b""),
}


@pytest.mark.parametrize("damage", list(STATE_DAMAGE))
@pytest.mark.parametrize("command", ["update", "add-columns", "status", "inspect"])
def test_bad_state_files(cli, tmp_path: Path, stream_state: Path, damage: str, command: str) -> None:
    bad = tmp_path / "bad.state"
    STATE_DAMAGE[damage](stream_state, bad)
    batch = tmp_path / "batch.csv"
    batch.write_text(BATCH)
    cols = tmp_path / "cols.csv"
    cols.write_text("id,d\n" + "".join(f"{i},{i * 2}\n" for i in range(1, 7)))
    out = tmp_path / "o.csv"
    args: list[object] = {
        "update": ["stream", "update", bad, batch, "-o", out],
        "add-columns": ["stream", "add-columns", bad, cols, "--refresh-all", out],
        "status": ["stream", "status", bad],
        "inspect": ["inspect", bad],
    }[command]
    if command == "inspect" and damage == "wrong_kind":
        pytest.skip("inspect shows a state of any kind; a valid state of another kind is no damage to it")
    err = _check(cli, args, [bad, batch, cols], [out])
    if damage == "pickle":
        assert "pickle" in err, err
    if damage == "future_version":
        assert "format version" in err, err


def _unwritable(tmp_path: Path) -> Path:
    """A directory nobody can write to; as root, a path under a regular file (root ignores modes)."""
    if os.geteuid() == 0:
        f = tmp_path / "plainfile"
        f.write_text("x")
        return f
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    return d


NEWER_ARGS = [
    # negative values with the NMF shift disabled
    (["perturb", "{neg}", "--method", "nmf", "--preprocess", "none", "-p", "shift=false", "-o", "{out}"],
     "negative"),
    (["hide", "{neg}", "-o", "{out}", "--clusters", "2", "--hide-member", "1", "--no-shift"], "negative"),
    # parameters out of range
    (["perturb", "{good}", "--method", "nmf", "--components", "0", "-o", "{out}"], "components=0"),
    (["perturb", "{good}", "--method", "nmf", "--components", "2", "--keep", "5", "-o", "{out}"], "keep"),
    (["perturb", "{good}", "--method", "nmf", "--nmf-solver", "bogus", "-o", "{out}"], "solver"),
    (["perturb", "{goodid}", "--id", "id", "--method", "nmds", "--dims", "0", "-o", "{out}"], "0"),
    (["perturb", "{good}", "--method", "nmds", "-o", "{out}"], "categorical"),
    (["perturb", "{good}", "--method", "nmds", "--dissimilarity", "bogus", "-o", "{out}"], "dissimilarity"),
    (["mds-dims", "{good}", "--max-dims", "0", "--plot", "{out}"], "max_dims=0"),
    (["mds-dims", "{good}", "--dissimilarity", "bogus", "--plot", "{out}"], "dissimilarity"),
    (["hide", "{good}", "-o", "{out}", "--clusters", "0", "--hide-member", "1"], "clusters"),
    (["hide", "{good}", "-o", "{out}", "--clusters", "2"], "hide"),
    (["hide", "{good}", "-o", "{out}", "--clusters", "2", "--hide-member", "1", "--tolerance", "2"], "tolerance"),
    (["attack", "{good}", "{good}", "--threat", "bogus", "--json", "{out}"], "threat"),
    (["attack", "{good}", "{good}", "--attacks", "bogus", "--json", "{out}"], "bogus"),
    (["stream", "init", "{good}", "--state", "{outstate}", "--rank", "9"], "rank"),
    (["stream", "init", "{good}", "--state", "{outstate}", "--method", "bogus"], "method"),
    # unknown record ids
    (["hide", "{goodid}", "--id", "id", "-o", "{out}", "--clusters", "2", "--hide-member", "999"], "999"),
    (["hide", "{goodid}", "--id", "id", "-o", "{out}", "--clusters", "2", "--negate-pair", "1,999"], "999"),
    (["hide", "{good}", "-o", "{out}", "--clusters", "2", "--hide-member", "77"], "77"),
    (["hide", "{goodid}", "--id", "nope", "-o", "{out}", "--clusters", "2", "--hide-member", "1"], "nope"),
    (["attack", "{goodid}", "{goodid}", "--id", "nope", "--json", "{out}"], "nope"),
    # mismatched stream batches
    (["stream", "update", "{state}", "{batch_cols}", "-o", "{out}"], "column"),
    (["stream", "update", "{state}", "{batch_text}", "-o", "{out}"], ""),
    (["stream", "update", "{state}", "{batch_dupid}", "-o", "{out}"], "already absorbed"),
    (["stream", "update", "{state}", "{batch_twice}", "-o", "{out}"], "repeats ids"),
    (["stream", "update", "{state}", "{batch}"], "-o"),
    (["stream", "add-columns", "{state}", "{cols_short}", "--refresh-all", "{out}"], ""),
    (["stream", "add-columns", "{state}", "{cols_wrongid}", "--refresh-all", "{out}"], ""),
    # output equal to input
    (["perturb", "{good}", "--method", "nmf", "-o", "{good}", "--force"], "is the input"),
    (["perturb", "{good}", "--method", "nmds", "-o", "{good}", "--force"], "is the input"),
    (["hide", "{good}", "-o", "{good}", "--force", "--clusters", "2", "--hide-member", "1"], "is the input"),
    (["attack", "{good}", "{good}", "--json", "{good}", "--force"], "is the original table"),
    (["stream", "init", "{good}", "--state", "{good}", "--force"], "input"),
    (["stream", "init", "{good}", "--state", "{outstate}", "-o", "{good}", "--force"], "input"),
    (["stream", "update", "{state}", "{batch}", "-o", "{batch}", "--force"], "input"),
    (["stream", "update", "{state}", "{batch}", "-o", "{state}", "--force"], ""),
    (["mds-dims", "{good}", "--plot", "{good}", "--force"], "input"),
    # unwritable output directory
    (["perturb", "{good}", "--method", "nmf", "-o", "{ro}/o.csv"], ""),
    (["perturb", "{good}", "--method", "nmds", "-o", "{ro}/o.csv"], ""),
    (["hide", "{good}", "-o", "{ro}/o.csv", "--clusters", "2", "--hide-member", "1"], ""),
    (["attack", "{good}", "{good}", "--json", "{ro}/o.json"], ""),
    (["stream", "init", "{good}", "--state", "{ro}/s.state"], ""),
    (["stream", "update", "{state}", "{batch}", "-o", "{ro}/o.csv"], ""),
    (["mds-dims", "{good}", "--plot", "{ro}/o.png"], ""),
    (["hide", "{good}", "-o", "{out}", "--state", "{ro}/h.state", "--clusters", "2", "--hide-member", "1"], ""),
]


@pytest.mark.parametrize(("args", "match"), NEWER_ARGS, ids=[f"{i:02d}-{a[0]}" for i, (a, _) in enumerate(NEWER_ARGS)])
def test_bad_arguments_newer(cli, tmp_path: Path, stream_state: Path, args: list[str], match: str) -> None:
    files = {
        "good": GOOD, "goodid": GOOD_ID, "neg": NEG, "batch": BATCH,
        "batch_cols": "id,a,b\n7,1,5\n8,6,2\n",
        "batch_text": "id,a,b,c\n7,1,x,3\n8,6,2,4\n",
        "batch_dupid": "id,a,b,c\n3,1,5,3\n8,6,2,4\n",
        "batch_twice": "id,a,b,c\n7,1,5,3\n7,6,2,4\n",
        "cols_short": "id,d\n1,2\n2,4\n",
        "cols_wrongid": "id,d\n" + "".join(f"{i},{i * 2}\n" for i in range(11, 17)),
    }
    paths: dict[str, Path] = {}
    for k, text in files.items():
        paths[k] = tmp_path / f"{k}.csv"
        paths[k].write_text(text)
    paths |= {"out": tmp_path / "o.csv", "outstate": tmp_path / "new.state", "state": stream_state,
              "ro": _unwritable(tmp_path)}
    argv = [a.format(**paths) for a in args]
    outputs = [paths["out"], paths["outstate"]]
    if "{ro}" in " ".join(args):
        outputs.append(Path(argv[[i for i, a in enumerate(args) if "{ro}" in a][0]]))
    try:
        err = _check(cli, argv, [p for k, p in paths.items() if k not in ("out", "outstate", "ro")], outputs)
    finally:
        if paths["ro"].is_dir():
            paths["ro"].chmod(0o700)
    assert match in err, err
