"""The three tests of anonymisation on a user's own release: ``ppdm attack ORIGINAL RELEASE --control``.

The release is compared with the table it was made from (its members) and with real records it did not
contain (the control), on the release's columns: singling out, linkability, membership inference from the
distance to the release, and the inference of every column from the others. With ``anonymeter=True``
anonymeter's evaluators run on the same tables (:mod:`ppdm.attacks.audit`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.inference import inference_by_column
from ppdm.attacks.linkability import linkability
from ppdm.attacks.membership import distance_to_closest, membership_advantage, outlier_advantage, outlyingness
from ppdm.attacks.mixed import MixedTable, column_ranges, from_frames, sample_rows
from ppdm.attacks.singling_out import singling_out
from ppdm.exceptions import InputError

__all__ = ["anonymisation_tests", "membership_test", "check_anonymeter", "check_control"]

PathOrFrame = str | os.PathLike[str] | pd.DataFrame
#: members and control records whose distance to the release is measured (a seeded sample above it)
MEMBERSHIP_ROWS = 5000


def membership_test(release: MixedTable, members: MixedTable, control: MixedTable, *, rng: np.random.Generator,
                    n_rows: int | None = MEMBERSHIP_ROWS, n_outliers: int = 20) -> dict[str, Any]:
    """Membership advantage from the distance to the release, overall and on the most outlying records.

    Members' and control records' distances to their closest released row (:func:`distance_to_closest`,
    ranges over the three tables); ``overall``: :func:`membership_advantage`; ``outliers``:
    :func:`outlier_advantage` at the overall threshold, on the ``n_outliers`` most outlying members and
    control records (outlyingness among the real records of both). ``sampled`` says when a seeded sample of
    ``n_rows`` records a side was measured.
    """
    ranges = column_ranges(release, members, control)
    sm, sc = sample_rows(members, n_rows, rng), sample_rows(control, n_rows, rng)
    m, c = members.take(sm), control.take(sc)
    dm = distance_to_closest(m, release, ranges=ranges, rng=rng)
    dc = distance_to_closest(c, release, ranges=ranges, rng=rng)
    overall = membership_advantage(dm, dc)
    k = int(min(5, m.n_rows + c.n_rows - 1))
    out = outlyingness(MixedTable.concat([m, c]), k=k, ranges=ranges) if k >= 1 else np.zeros(m.n_rows + c.n_rows)
    outliers = outlier_advantage(dm, dc, out[: m.n_rows], out[m.n_rows:], overall["threshold"],
                                 n_outliers=n_outliers)
    return {"overall": overall, "outliers": outliers,
            "sampled": {"members": len(sm) < members.n_rows, "control": len(sc) < control.n_rows},
            "measure": "distance to the closest released row (Gower, numbers scaled by their range, "
                       "categories 0/1, mean over the columns)"}


def _columns(original: pd.DataFrame, release: pd.DataFrame, control: pd.DataFrame,
             id: str | None) -> tuple[list[str], list[str], list[str]]:
    cols = [c for c in release.columns if c != id]
    if not cols:
        raise InputError("the release has no column to attack besides the id; check the file and --id")
    for name, table in (("original", original), ("control", control)):
        missing = [c for c in cols if c not in table.columns]
        if missing:
            raise InputError(f"release column '{missing[0]}' is not in the {name} table; the original and the "
                             "control must hold every column of the release (pass --id for an id column)")
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(original[c])
               and not pd.api.types.is_bool_dtype(original[c])]
    return cols, numeric, [c for c in cols if c not in numeric]


def _row_hashes(table: pd.DataFrame, cols: list[str], numeric: set[str]) -> np.ndarray:
    """One 64-bit hash per row over ``cols``: numbers as float64 and everything else as text, so that a column
    read as integers in one table and as floats (or text) in another still hashes the same value alike."""
    canon = pd.DataFrame({c: (pd.to_numeric(table[c], errors="coerce").astype("float64") if c in numeric
                              else table[c].astype(str)) for c in cols})
    return pd.util.hash_pandas_object(canon, index=False).to_numpy()


#: control rows found in the original beyond the share its own rows repeat within it, before a warning
CONTROL_OVERLAP_SLACK = 0.02


def check_control(original: pd.DataFrame, control: pd.DataFrame, *, overlap_refused: float = 0.5) -> int:
    """Refuse a control made of the original's own records; warn when some of its records are.

    Every risk is measured beyond the control, so a control holding the release's own people measures the
    release against itself and reports every risk as 0. A control row counts as one of the original's when it
    equals an original row on every column the two tables share (an id column included: the same person
    under the same id); rows are hashed, so the check is one pass over each table. Overlap no larger than the
    share of the original's rows that repeat within it (plus :data:`CONTROL_OVERLAP_SLACK`) is what real other
    people match by chance on coarse columns, and passes.

    Parameters
    ----------
    original, control : DataFrame
        The table the release was made from, and the control.
    overlap_refused : float, default=0.5
        Above this share of the control's rows found in the original, the control is refused.

    Returns
    -------
    int
        The control rows found in the original (0 for a proper control).

    Raises
    ------
    InputError
        When more than ``overlap_refused`` of the control's rows are the original's.
    """
    import warnings

    from ppdm.exceptions import PrivacyWarning

    shared = [c for c in control.columns if c in original.columns]
    if not shared or len(control) == 0:
        return 0
    numeric = {c for c in shared if all(pd.api.types.is_numeric_dtype(t[c]) and not pd.api.types.is_bool_dtype(t[c])
                                        for t in (original, control))}
    mine = _row_hashes(original, shared, numeric)
    overlap = int(np.isin(_row_hashes(control, shared, numeric), mine).sum())
    # on a few coarse columns different people share rows: the original's own repeated rows say how often a
    # real person outside it matches one of its rows by chance, and so much overlap is no sign of a bad control
    counts = np.unique(mine, return_counts=True)[1]
    chance = float(counts[counts > 1].sum()) / max(len(mine), 1)
    if overlap <= (chance + CONTROL_OVERLAP_SLACK) * len(control):
        return overlap
    where = f"identical to a row of the original on the {len(shared)} columns they share"
    if overlap > overlap_refused * len(control):
        raise InputError(f"{overlap} of the control's {len(control)} rows are {where}: a control must hold real "
                         "people the release did not contain (risks measured against the original itself read "
                         "0); give records kept out of the original")
    if overlap:
        warnings.warn(f"{overlap} of the control's {len(control)} rows are {where}: the risks measured beyond "
                      "this control are understated; drop those rows from the control", PrivacyWarning,
                      stacklevel=3)
    return overlap


def anonymisation_tests(
    original: PathOrFrame,
    release: PathOrFrame,
    control: PathOrFrame,
    *,
    id: str | None = None,
    label: str | None = None,
    seed: int = 0,
    sep: str | None = None,
    anonymeter: bool = False,
    n_predicates: int = 1000,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Singling out, linkability, membership and per-column inference of a release against a control.

    Parameters
    ----------
    original : path or DataFrame
        The table the release was made from (its members); it must hold the release's columns.
    release : path or DataFrame
        The released table (from ppdm or any tool); its rows need not match the original's.
    control : path or DataFrame
        Real records of the same population that the release did not contain, with the release's columns.
    id : str, optional
        An identifier column, dropped from the three tables.
    label : str, optional
        The class column: left out of anonymeter's usual linkability split.
    seed : int, default=0
        Seeds every draw (predicates, targets, splits, tie-breaking).
    anonymeter : bool, default=False
        Also run anonymeter's evaluators on the same tables (needs the ``audit`` extra).
    n_predicates : int, default=1000
        Singling-out predicates per family.
    progress : callable, optional
        Called with the name of each test as it starts.

    Returns
    -------
    dict
        ``schema`` (``ppdm.anonymisation/1``), ``singling_out``, ``linkability``, ``membership``
        (:func:`membership_test`), ``inference`` (per column), ``anonymeter`` (or None), ``columns``,
        ``n_rows`` (``{original, release, control}``), ``control_in_original`` (control rows found in the
        original: :func:`check_control`) and ``seed``.

    Raises
    ------
    InputError
        When a table is empty, lacks a release column, or when the control is mostly the original's own rows
        (:func:`check_control`; a few such rows give a :class:`~ppdm.exceptions.PrivacyWarning`).
    """
    from ppdm.data.io import read_table

    o, r, c = (read_table(t, sep=sep) for t in (original, release, control))
    cols, numeric, categorical = _columns(o, r, c, id)
    for name, t in (("original", o), ("release", r), ("control", c)):
        if len(t) == 0:
            raise InputError(f"the {name} table has no rows")
    in_original = check_control(o, c)
    M, R, C = from_frames([o[cols], r[cols], c[cols]], numeric, categorical,
                          names=("original table", "release", "control table"))
    rng = np.random.default_rng(seed)
    say = progress or (lambda _name: None)
    say("singling out")
    so = singling_out(R, M, C, rng=rng, n_predicates=n_predicates)
    say("linkability")
    li = linkability(R, M, C, rng=rng, label=label if label in cols else None)
    say("membership")
    mem = membership_test(R, M, C, rng=rng)
    say("inference")
    inf = inference_by_column(R, M, C, rng=rng)
    peer = None
    if anonymeter:
        from ppdm.attacks.audit import anonymeter_tests

        say("anonymeter")
        peer = anonymeter_tests(r[cols], o[cols], c[cols], seed=seed, label=label if label in cols else None,
                                inference_columns=None)
    return {"schema": "ppdm.anonymisation/1", "singling_out": so, "linkability": li, "membership": mem,
            "inference": inf, "anonymeter": peer, "columns": cols,
            "n_rows": {"original": len(o), "release": len(r), "control": len(c)},
            "control_in_original": in_original, "seed": seed}


def check_anonymeter() -> None:
    """Refuse ``--anonymeter`` before any work when anonymeter is missing."""
    from ppdm.attacks.audit import INSTALL_HINT, anonymeter_available
    from ppdm.exceptions import MissingDependencyError

    if not anonymeter_available():
        raise MissingDependencyError(f"--anonymeter needs anonymeter; {INSTALL_HINT}")
