"""Readers for the public UCI data sets the source documents use but ppdm does not bundle.

A user who downloads a set from the UCI Machine Learning Repository puts its data file, as published (name
and format unchanged), in a directory and passes that directory to ``ppdm reproduce --data-dir``. Each reader
knows the file's published layout (separator, missing-value mark, where the class is) and checks what the
set's documentation states (records, attributes, classes) before anything is computed.

Checksums: each file's SHA-256 is computed when it is read and reported. ppdm checks it against the
digest of the published file only where it knows that digest from a copy it could verify; for none of these
files could one be verified yet (they were not available when the readers were written), so
:data:`PUBLISHED_SHA256` is empty and every read is reported as *unverified* with the digest of the file
actually read. A file that departs from the published layout is refused with the reason.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ppdm.exceptions import InputError, ParameterError

__all__ = ["UciSet", "UCI_SETS", "PUBLISHED_SHA256", "FileCheck", "find_file", "load_uci"]


@dataclass(frozen=True)
class FileCheck:
    """What was read: the file, its SHA-256 and whether that digest is the published file's."""

    path: Path
    sha256: str
    verified: bool

    def describe(self) -> str:
        state = "verified against the published digest" if self.verified else (
            "unverified: no digest of the published file is known to ppdm")
        return f"{self.path.name}: SHA-256 {self.sha256} ({state})"


@dataclass(frozen=True)
class UciSet:
    """A UCI data set as published: its files (any one is read), layout and documented size."""

    key: str
    title: str
    files: tuple[str, ...]
    parse: Callable[[Path], pd.DataFrame]
    records: int
    attributes: int
    classes: int
    page: str


#: published file name -> SHA-256 of the file as UCI publishes it, for the copies ppdm could verify (none yet)
PUBLISHED_SHA256: dict[str, str] = {}


def _whitespace(path: Path, names: list[str], *, drop_first: bool) -> pd.DataFrame:
    df = pd.read_csv(path, sep=r"\s+", header=None, engine="python")
    if df.shape[1] != len(names) + drop_first:
        raise InputError(f"'{path.name}': {df.shape[1]} fields a line, the published file has "
                         f"{len(names) + drop_first}; is it the UCI file, unchanged?")
    if drop_first:
        df = df.iloc[:, 1:]
    df.columns = names
    return df


def _yeast(path: Path) -> pd.DataFrame:
    # sequence name, 8 attributes, localisation site
    return _whitespace(path, ["mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc", "class"], drop_first=True)


def _ecoli(path: Path) -> pd.DataFrame:
    # sequence name, 7 attributes, localisation site
    return _whitespace(path, ["mcg", "gvh", "lip", "chg", "aac", "alm1", "alm2", "class"], drop_first=True)


def _page_blocks(path: Path) -> pd.DataFrame:
    names = ["height", "lenght", "area", "eccen", "p_black", "p_and", "mean_tr", "blackpix", "blackand", "wb_trans",
             "class"]
    return _whitespace(path, names, drop_first=False)


def _blocks_of(path: Path, n_attr: int, block: int, labels: list[str]) -> pd.DataFrame:
    """A file of attributes only whose records come in class order, ``block`` records a class."""
    df = _whitespace(path, [f"a{j + 1}" for j in range(n_attr)], drop_first=False)
    if len(df) != block * len(labels):
        raise InputError(f"'{path.name}': {len(df)} records, the published file has {block * len(labels)}")
    df["class"] = np.repeat(labels, block)
    return df


def _mfeat_fac(path: Path) -> pd.DataFrame:
    # 216 profile correlations; 200 records of each digit 0-9 in order (mfeat.info)
    return _blocks_of(path, 216, 200, [str(d) for d in range(10)])


def _synthetic_control(path: Path) -> pd.DataFrame:
    # 60 time points; 100 records of each pattern in order (synthetic_control.data.html)
    return _blocks_of(path, 60, 100, ["normal", "cyclic", "increasing trend", "decreasing trend", "upward shift",
                                      "downward shift"])


def _comma(path: Path, n_fields: int) -> pd.DataFrame:
    df = pd.read_csv(path, header=None, na_values=["?"], skipinitialspace=True)
    if df.shape[1] != n_fields:
        raise InputError(f"'{path.name}': {df.shape[1]} fields a line, the published file has {n_fields}")
    return df


def _hepatitis(path: Path) -> pd.DataFrame:
    # the class (1 = die, 2 = live) first, then 19 attributes; '?' marks a missing value
    names = ["age", "sex", "steroid", "antivirals", "fatigue", "malaise", "anorexia", "liver_big", "liver_firm",
             "spleen_palpable", "spiders", "ascites", "varices", "bilirubin", "alk_phosphate", "sgot", "albumin",
             "protime", "histology"]
    df = _comma(path, 20)
    df.columns = ["class", *names]
    return df[[*names, "class"]]


def _credit(path: Path) -> pd.DataFrame:
    if path.name == "australian.dat":  # Statlog: 14 attributes, already numeric, class 0/1 last
        return _whitespace(path, [f"a{j + 1}" for j in range(14)] + ["class"], drop_first=False)
    # crx.data: 15 attributes (9 symbolic), class +/- last, '?' missing; symbols coded by their sorted order
    df = _comma(path, 16)
    df.columns = [f"a{j + 1}" for j in range(15)] + ["class"]
    for c in df.columns[:-1]:
        if df[c].dtype == object:
            codes = {v: float(i) for i, v in enumerate(sorted(df[c].dropna().unique()))}
            df[c] = df[c].map(codes)
    return df


UCI_SETS: dict[str, UciSet] = {
    s.key: s
    for s in (
        UciSet("yeast", "Yeast", ("yeast.data",), _yeast, 1484, 8, 10, "https://archive.ics.uci.edu/dataset/110"),
        UciSet("ecoli", "Ecoli", ("ecoli.data",), _ecoli, 336, 7, 8, "https://archive.ics.uci.edu/dataset/39"),
        UciSet("page_blocks", "Page Blocks Classification", ("page-blocks.data",), _page_blocks, 5473, 10, 5,
               "https://archive.ics.uci.edu/dataset/78"),
        UciSet("mfeat", "Multiple Features (profile correlations, mfeat-fac)", ("mfeat-fac",), _mfeat_fac,
               2000, 216, 10, "https://archive.ics.uci.edu/dataset/72"),
        UciSet("scc", "Synthetic Control Chart Time Series", ("synthetic_control.data",), _synthetic_control, 600,
               60, 6, "https://archive.ics.uci.edu/dataset/139"),
        UciSet("hepatitis", "Hepatitis", ("hepatitis.data",), _hepatitis, 155, 19, 2,
               "https://archive.ics.uci.edu/dataset/46"),
        UciSet("credit", "Credit Approval (Statlog australian.dat, 14 attributes, or crx.data, 15)",
               ("australian.dat", "crx.data"), _credit, 690, 14, 2, "https://archive.ics.uci.edu/dataset/143"),
    )
}


def find_file(key: str, data_dir: str | Path) -> Path | None:
    """The first of the set's published files present in ``data_dir``, or None."""
    spec = _spec(key)
    for name in spec.files:
        path = Path(data_dir) / name
        if path.is_file():
            return path
    return None


def _spec(key: str) -> UciSet:
    if key not in UCI_SETS:
        raise ParameterError(f"unknown UCI data set '{key}'; choose one of {', '.join(UCI_SETS)}")
    return UCI_SETS[key]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_uci(key: str, data_dir: str | Path) -> tuple[pd.DataFrame, FileCheck]:
    """Read a UCI set from ``data_dir``: its attributes, then ``class``; and what was read.

    Parameters
    ----------
    key : str
        A key of :data:`UCI_SETS`.
    data_dir : str or Path
        The directory holding one of the set's published files, named as published.

    Returns
    -------
    (DataFrame, FileCheck)
        The records (attributes as published, symbols coded as numbers where the file has them, missing
        values NaN; the class last) and the file's SHA-256 with whether it is the published file's.

    Raises
    ------
    InputError
        No file of the set in ``data_dir``, a layout or size other than the published one, or a digest
        that differs from the published file's.
    """
    spec = _spec(key)
    path = find_file(key, data_dir)
    if path is None:
        alt = [n for n in spec.files if (Path(data_dir) / f"{n}.Z").is_file()]
        hint = f" ('{alt[0]}.Z' is there: uncompress it first, e.g. gzip -d)" if alt else ""
        raise InputError(f"{spec.title}: none of {', '.join(spec.files)} in '{data_dir}'{hint}; download it from "
                         f"{spec.page}")
    digest = _sha256(path)
    published = PUBLISHED_SHA256.get(path.name)
    if published is not None and digest != published:
        raise InputError(f"'{path}' is not the published {path.name} (SHA-256 {digest}, published {published})")
    try:
        df = spec.parse(path)
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"'{path}' does not have the published layout of {path.name}: {exc}") from None
    n_attr = df.shape[1] - 1
    expect_attr = 15 if path.name == "crx.data" else spec.attributes
    n_classes = int(df["class"].nunique())
    if len(df) != spec.records or n_attr != expect_attr or n_classes != spec.classes:
        raise InputError(f"'{path}': {len(df)} records, {n_attr} attributes, {n_classes} classes; the published "
                         f"{path.name} has {spec.records}, {expect_attr}, {spec.classes}")
    if not all(pd.api.types.is_numeric_dtype(df[c]) for c in df.columns[:-1]):
        raise InputError(f"'{path}': an attribute that should be numeric is not; is it the published {path.name}?")
    return df, FileCheck(path, digest, published is not None)
