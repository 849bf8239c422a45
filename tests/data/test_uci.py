"""The UCI readers of ppdm.datasets.uci on files written in the published layouts (tests/data/uci_files.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ppdm.datasets import uci
from ppdm.exceptions import InputError
from tests.data.uci_files import YEAST_CLASSES, write


@pytest.mark.parametrize("key", sorted(uci.UCI_SETS))
def test_each_set_reads_its_published_layout(tmp_path: Path, key: str) -> None:
    path = write(key, tmp_path)
    df, check = uci.load_uci(key, tmp_path)
    spec = uci.UCI_SETS[key]
    n_attr = 15 if path.name == "crx.data" else spec.attributes
    assert df.shape == (spec.records, n_attr + 1) and df.columns[-1] == "class"
    assert df["class"].nunique() == spec.classes
    assert check.path == path and not check.verified
    assert check.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert "unverified" in check.describe() and check.sha256 in check.describe()


def test_yeast_keeps_the_published_classes_and_drops_the_sequence_name(tmp_path: Path) -> None:
    write("yeast", tmp_path)
    df, _ = uci.load_uci("yeast", tmp_path)
    assert list(df.columns) == ["mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc", "class"]
    assert df["class"].value_counts().to_dict() == YEAST_CLASSES


def test_hepatitis_moves_the_class_last_and_reads_question_marks_as_missing(tmp_path: Path) -> None:
    write("hepatitis", tmp_path)
    df, _ = uci.load_uci("hepatitis", tmp_path)
    assert df.columns[-1] == "class" and set(df["class"]) == {1, 2}
    assert df.drop(columns="class").isna().any().any()


def test_block_ordered_sets_get_their_classes_from_the_row(tmp_path: Path) -> None:
    write("scc", tmp_path)
    df, _ = uci.load_uci("scc", tmp_path)
    assert df["class"].iloc[0] == "normal" and df["class"].iloc[-1] == "downward shift"
    assert (df["class"].value_counts() == 100).all()


def test_crx_symbols_are_coded_and_missing_kept(tmp_path: Path) -> None:
    write("credit", tmp_path)
    df, _ = uci.load_uci("credit", tmp_path)
    assert df.drop(columns="class").dtypes.map(lambda d: d.kind in "fi").all()
    assert df["a1"].isna().sum() == 18 and set(df["a1"].dropna()) == {0.0, 1.0}


def test_a_file_of_another_layout_or_size_is_refused(tmp_path: Path) -> None:
    path = write("yeast", tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")  # one record short
    with pytest.raises(InputError, match="1483 records"):
        uci.load_uci("yeast", tmp_path)
    path.write_text("\n".join(ln.rsplit(" ", 1)[0] for ln in lines) + "\n")  # the class column dropped
    with pytest.raises(InputError, match="fields a line"):
        uci.load_uci("yeast", tmp_path)


def test_a_known_published_digest_is_enforced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write("ecoli", tmp_path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    monkeypatch.setitem(uci.PUBLISHED_SHA256, "ecoli.data", digest)
    assert uci.load_uci("ecoli", tmp_path)[1].verified
    monkeypatch.setitem(uci.PUBLISHED_SHA256, "ecoli.data", "0" * 64)
    with pytest.raises(InputError, match="is not the published ecoli.data"):
        uci.load_uci("ecoli", tmp_path)


def test_no_digest_is_claimed_without_a_verified_copy() -> None:
    # every digest ppdm enforces must come from a copy of the published file; none could be verified yet
    assert uci.PUBLISHED_SHA256 == {}


def test_missing_or_compressed_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="page-blocks.data in"):
        uci.load_uci("page_blocks", tmp_path)
    (tmp_path / "page-blocks.data.Z").write_bytes(b"\x1f\x9d")
    with pytest.raises(InputError, match="uncompress it first"):
        uci.load_uci("page_blocks", tmp_path)


def test_thesis_reproductions_read_the_uci_files(tmp_path: Path) -> None:
    from ppdm.experiments.alotaibi2015_structure import load_labelled
    from ppdm.experiments.alotaibi2015_sweeps import available, data_notes

    assert not available("ecoli", tmp_path)
    write("ecoli", tmp_path)
    assert available("ecoli", tmp_path)
    Z, y = load_labelled("ecoli", tmp_path, max_rows=None)
    assert Z.shape == (336, 7) and len(set(y)) == 8
    (note,) = data_notes(["ecoli", "iris"], tmp_path)
    assert note.startswith("ecoli.data: SHA-256 ") and "unverified" in note
