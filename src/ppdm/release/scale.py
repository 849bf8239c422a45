"""The release sweep on a large table: screen every candidate on a sample, confirm the best on every row.

Measuring every candidate exhaustively costs ``O(n^2)`` per attack, so above :data:`SCREEN_ABOVE` rows the
sweep runs in two stages:

1. **Screening.** Every candidate is released and scored on a seeded stratified sample of
   :data:`SCREEN_ROWS` rows, exactly as a table of that size would be. On a sample, every record has fewer
   others around it, so re-identification comes out *higher* than on the whole table: screening can only
   reject a candidate that would have passed, never pass one that would not.
2. **Confirmation.** The candidates that meet the policy on the sample are confirmed, best utility first,
   until one holds the policy and no candidate left could beat it by more than :data:`SCREEN_MARGIN` (at
   most three rounds), each on every row: one release of the training rows (all rows but the real records
   held out for the train-on-release test), attacked on a seeded sample of targets (:data:`ATTACK_TARGETS`)
   searched against **all** the records (a smaller pool would make linkage easier, not harder), with a 95 %
   Clopper-Pearson interval on the rate of every attack; the policy limits the worst upper end. The first
   batch of targets (:data:`FIRST_BATCH`) settles most candidates: when every interval lies below the
   policy's limit, or one lies wholly above it, no further targets are attacked (the record says so);
   otherwise every attack goes on to all the targets.

The record says which stage measured each candidate, on how many rows and targets.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.utils.rows import row_dtype

__all__ = ["SCREEN_ABOVE", "SCREEN_ROWS", "ATTACK_TARGETS", "FIRST_BATCH", "FINALISTS", "ONE_FINALIST_ABOVE",
           "SCREEN_MARGIN", "score_at_scale", "screen_rows",
           "training_rows_first"]

#: tables with more rows than this are screened on a sample first
SCREEN_ABOVE = 20_000
#: rows of the screening sample (seeded, stratified by the label)
SCREEN_ROWS = 5_000
#: released rows attacked per candidate when confirming on the whole table (a seeded sample)
ATTACK_TARGETS = 10_000
#: the seed search of a release made with a known seed replays the mechanism on every row per seed: at this
#: scale it stops after this many seconds (the record says how many seeds it tried; the release is marked
#: as undoable whatever the search finds)
SEED_SCAN_SECONDS = 120.0
#: the first batch of those targets; the rest are attacked only when the first leaves the verdict open
FIRST_BATCH = 1_000
#: candidates confirmed on the whole table at a time (best screening utility first); above
#: :data:`ONE_FINALIST_ABOVE` rows one at a time (each confirmation then costs minutes)
FINALISTS = 2
ONE_FINALIST_ABOVE = 200_000
#: points of the objective within which a screening estimate cannot be told from a confirmed value (about the
#: 95 % half-width of a 5,000-row sample's estimate): once a candidate holds the policy on every row, the
#: next is confirmed only if its screening estimate is higher than the best confirmed value by more than this
SCREEN_MARGIN = 2.0


def screen_rows(y: np.ndarray | None, n: int, seed: int, size: int | None = None) -> np.ndarray:
    """Sorted rows of the screening sample (``size`` rows, :data:`SCREEN_ROWS` by default): stratified by the
    label when there is one."""
    from ppdm.release.utility import stratified_sample

    size = SCREEN_ROWS if size is None else size
    if y is not None:
        rows = stratified_sample(np.asarray(y), size, seed)
        if rows is not None:
            return rows
    return np.sort(np.random.default_rng([seed, 7]).choice(n, size=min(n, size), replace=False))


def score_at_scale(
    X: np.ndarray | Any,
    y: np.ndarray | None,
    method: str,
    params: dict[str, Any],
    *,
    preprocess: str,
    threat: str,
    seed: int,
    max_reidentification: float,
    key_seed: object = None,
    columns: list[str] | None = None,
    categories: np.ndarray | None = None,
    holdout: tuple[np.ndarray, np.ndarray] | None = None,
    seed_known: bool = False,
    codec: Any = None,
    targets: int = ATTACK_TARGETS,
    first_batch: int = FIRST_BATCH,
    on_step: Any = None,
    sole_user: bool = False,
    shown_names: Sequence[str] = (),
    label_name: str | None = None,
    singling_out_control: str = "audited",
) -> dict[str, Any]:
    """Score one candidate on every row of a large table (the confirmation stage; see the module).

    ``X``: the design, or on a Dask worker the :class:`~ppdm.release.cluster.TableOnWorkers` it reads the table
    from (which makes the design, the label, the shown columns and the held-out rows there).

    The candidate releases the training rows once (all rows without a label); that release is measured:
    distortion on all its rows, utility on samples (as for any table), the train-on-release models tested
    on the held-out real records, and the attacks on a seeded sample of targets against all its records.
    Returns the fields of a candidate's record after its full battery (:mod:`ppdm.release.full_battery`),
    plus ``measured_on``.
    ``on_step(what, done)``: called as each step starts, with the share of the work done before it (see
    :data:`STEP_SHARE`), so that a progress bar can show this candidate's own ETA. ``sole_user``: nothing
    else reads ``X`` while this runs, so its training rows are brought together in place instead of copied
    (see :func:`training_rows_first`; ``X`` is as it was when this returns). ``shown_names`` and ``label_name``
    name the shown columns for the tests of anonymisation (singling out and linkability of a seeded sample
    of the members against the held-out records), which read singling out's control as
    ``singling_out_control`` says.
    """
    kw = {"preprocess": preprocess, "threat": threat, "seed": seed, "max_reidentification": max_reidentification,
          "key_seed": key_seed, "columns": columns, "seed_known": seed_known, "codec": codec, "targets": targets,
          "first_batch": first_batch, "tests": {"shown_names": tuple(shown_names), "label": label_name,
                                                "control": singling_out_control}}
    if not hasattr(X, "rows_in_place"):
        return _score(X, y, method, params, categories=categories, holdout=holdout, sole_user=sole_user,
                      on_step=on_step, **kw)
    # a cluster's worker: the design read from the input, not sent to it, and this task its sole user
    kind = X.kind
    with X.rows_in_place() as (X, y, categories, holdout):
        out = _score(X, y, method, params, categories=categories, holdout=holdout, sole_user=True,
                     on_step=on_step, **kw)
    out["measured_on"]["design"] = f"read from the {kind} input by the Dask worker that confirmed it"
    return out


def _score(X: np.ndarray, y: np.ndarray | None, method: str, params: dict[str, Any], *,
           categories: np.ndarray | None, holdout: tuple[np.ndarray, np.ndarray] | None, sole_user: bool,
           on_step: Any, **kw: Any) -> dict[str, Any]:
    """:func:`score_at_scale` on the design ``X`` itself."""
    t0 = time.perf_counter()
    step = _Steps(on_step)
    n = X.shape[0]
    step("release")
    train, test = holdout if holdout is not None else (
        np.arange(n, dtype=row_dtype(n)), np.zeros(0, dtype=row_dtype(n)))
    X_test, y_test = X[test], None if y is None else y[test]
    shown_test = None if categories is None else categories[test]
    # the training rows are brought together in place when nothing else reads X meanwhile, and the label's
    # and the shown columns' with them: views of their first rows, not row-length copies
    beside = [a for a in (y, categories) if a is not None]
    X_tr, train, restore, rows_beside = training_rows_first(X, train, test, in_place=sole_user, beside=beside)
    y_tr = None if y is None else rows_beside.pop(0)
    shown = None if categories is None else rows_beside.pop(0)
    try:
        return _measure(X, X_tr, X_test, y_tr, y_test, train, test, method, params, shown=shown, step=step, t0=t0,
                        shown_test=shown_test, **kw)
    finally:
        del y_tr, shown  # views of rows about to move back
        restore()


def training_rows_first(X: np.ndarray, train: np.ndarray, test: np.ndarray, *, in_place: bool,
                        beside: Sequence[np.ndarray] = ()) -> tuple[np.ndarray, np.ndarray, Any, list[np.ndarray]]:
    """The training rows of ``X`` as one array, the row of ``X`` each of them is, ``restore()``, and the same
    rows of each array ``beside`` it (arrays with a row for each of ``X``'s: the label, the shown columns).

    The held-out rows among the first ``len(train)`` give their places to the training rows after them, in
    order. ``in_place`` (writeable arrays nobody else reads meanwhile): those rows are swapped in ``X`` and in
    each array beside it, so the training rows are views of their first rows, not row-length copies, and
    ``restore()`` swaps them back. Otherwise copies in the same order (so a candidate measures the same rows
    wherever it runs), and ``restore()`` does nothing. ``train`` and ``test`` are sorted and together are
    every row; the row numbers returned have ``train``'s type.
    """
    if len(test) == 0:
        return X, train, lambda: None, list(beside)  # every row is a training row
    n_tr = len(train)
    front, back = test[test < n_tr], train[train >= n_tr]  # as many held-out rows in front as training behind
    order = np.arange(n_tr, dtype=train.dtype)
    order[front] = back
    tables = [X, *beside]
    if not (in_place and all(a.flags.writeable for a in tables)):
        return X[order], order, lambda: None, [a[order] for a in beside]
    saved = [a[front] for a in tables]
    for a in tables:
        a[front] = a[back]
    for a, s in zip(tables, saved, strict=True):
        a[back] = s

    def restore() -> None:
        for a, s in zip(tables, saved, strict=True):
            a[back] = a[front]
            a[front] = s

    return X[:n_tr], order, restore, [a[:n_tr] for a in beside]


def _measure(X: np.ndarray, X_tr: np.ndarray, X_test: np.ndarray, y_tr: np.ndarray | None,
             y_test: np.ndarray | None, train: np.ndarray, test: np.ndarray, method: str, params: dict[str, Any], *,
             preprocess: str, threat: str, seed: int, max_reidentification: float, key_seed: object,
             columns: list[str] | None, shown: np.ndarray | None, shown_test: np.ndarray | None,
             seed_known: bool, codec: Any, targets: int, first_batch: int, step: Any, t0: float,
             tests: dict[str, Any]) -> dict[str, Any]:
    """The body of :func:`score_at_scale`: ``X_tr``, ``y_tr`` and ``shown`` hold the rows ``train`` of ``X``,
    the label and the shown columns (in that order); ``y_test`` and ``shown_test`` the label's and the shown
    columns' rows ``test``; ``tests``: how the tests of anonymisation name and read them."""
    from ppdm.attacks import run_attacks_named
    from ppdm.flow.synthesis import release_design, with_label
    from ppdm.flow.whole import block_reading
    from ppdm.metrics import value_metrics
    from ppdm.release.candidates import build_candidate, numeric_part, scaled_to_rows
    from ppdm.release.full_battery import sweep_attacks
    from ppdm.release.risk import (
        draws,
        linked_value_disclosure,
        risk_of,
        scalar_items,
        sensitive_risk,
        with_linked_risk,
    )
    from ppdm.release.utility import neighbour_preservation, tstr_scores, utility_scores

    n = X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the training rows stand in for the release of every row: counts over the table scaled to them
        mech = build_candidate(method, scaled_to_rows(method, params, len(train), n),
                               random_state=seed if key_seed is None else key_seed, codec=codec)
        # a mechanism that synthesises the whole record releases its own label (see ppdm.flow.synthesis)
        B, y_rel = release_design(X_tr, mech, preprocess=preprocess, y=y_tr, codec=codec)
    reading = block_reading(mech)
    del mech  # its fitted strata are a row-length vector nothing below reads
    if B.shape != X_tr.shape:
        raise ValueError(f"{method} changes the number of columns; value metrics need the same columns")
    X_att, B_att, X_att_test = X_tr, B, X_test
    shown = None if shown is None or shown.shape[1] == 0 else shown
    # shown as they are: one array serves both sides (unless the release has a label of its own)
    cats = None if shown is None else (shown, with_label(shown, y_rel, y_tr))
    if codec is not None:
        # decoded as published, without building their tables: the original's training and held-out rows
        # (the sensitive columns' truth) and the release
        original, original_test = codec.decode_parts(X_tr), codec.decode_parts(X_test)
        published = codec.decode_parts(B, rng=draws(key_seed, seed, 2), reading=reading)
        B = B_att = None  # the mechanism's own output, freed: what is measured is what is published
        B = B_att = codec.encode_decoded(published)
        if codec.numeric_names:
            X_att, B_att, X_att_test = original.numbers, published.numbers, original_test.numbers
            columns = codec.numeric_names
        side = np.zeros((len(train), 0), dtype=object) if shown is None else shown
        cats = (np.column_stack([codec.filled(original), side]),
                np.column_stack([codec.filled(published), with_label(side, y_rel, y_tr)]))
    step("value metrics")
    value = value_metrics(X_att, B_att)
    step("utility")
    util = utility_scores(B, y_rel, seed=seed) if y_tr is not None else {}
    util["neighbour_pct"] = neighbour_preservation(X_tr, B, seed=seed, sample=1000)
    linked = sensitive = None
    anonymisation: dict[str, Any] = {}
    if len(test):
        if y_test is not None:  # without a label the held-out rows are the tests' control only
            step("train on release")
            util.update(tstr_scores(B, y_rel, X_test, y_test, seed=seed,
                                    numeric=None if codec is None else codec.numeric_index_))
        step("linked values")
        linked = linked_value_disclosure(X_att, B_att, X_att_test, max_targets=first_batch, seed=seed)
        if codec is not None:
            sensitive = sensitive_risk(codec, X_tr, X_test, B, original, original_test, published, published,
                                       rows=train, max_targets=targets, seed=seed)
        step("tests of anonymisation")
        anonymisation = _anonymisation(X_tr, X_test, B, codec, original if codec is not None else None,
                                       original_test if codec is not None else None, published if codec is not None
                                       else None, shown, shown_test, columns, tests, seed)
    # the targets: a seeded sample of the released rows, attacked in batches against every record
    # (copied out, so that the permutation of every row is freed)
    order = np.random.default_rng([seed, 11]).permutation(len(train))[:targets].copy()
    # a combined candidate's key search replays its numeric mechanism (the one the numbers went through)
    replayed, replayed_params = numeric_part(method, params)
    mechanism = {"method": replayed, "params": replayed_params, "preprocess": preprocess, "y": y_tr}

    # the attacks that can work on the mechanism (no ICA where it mixes no columns: see sweep_attacks)
    battery = sweep_attacks(threat, method, seed_search=seed_known,
                            same_columns=X_att.shape[1] == B_att.shape[1])

    def attack(rows: np.ndarray) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        res = [scalar_items(r.to_dict()) for r in run_attacks_named(
            X_att, B_att, threat, attacks=battery, random_state=seed, n_seeds=1, columns=columns, categories=cats,
            mechanism=mechanism, seed_scan=1000 if seed_known else 0, targets=np.sort(rows),
            seed_scan_seconds=SEED_SCAN_SECONDS)]
        return res, risk_of(res, n_rows=len(train))

    step(f"attacks on {min(first_batch, len(order)):,} targets")
    attacks, risk = attack(order[:first_batch])
    settled = _settled(risk, max_reidentification)
    if not settled and len(order) > first_batch:
        # the verdict is open: every attack goes on to every target
        step(f"attacks on {len(order):,} targets")
        attacks, risk = attack(order)
    step("done")
    n_targets = int(risk.get("reidentification_targets", min(len(order), len(train))))
    risk = with_linked_risk(risk, linked, sensitive) | anonymisation
    return {
        "method": method,
        "params": params,
        "value": value,
        "utility": util,
        "attacks": attacks,
        "risk": risk,
        "seconds": time.perf_counter() - t0,
        "measured_on": {
            "stage": "confirmation", "rows": int(n), "released_rows_measured": int(len(train)),
            "held_out_real_rows": int(len(test)), "attack_targets": n_targets,
            "early_stop": bool(settled and len(order) > first_batch),
            "note": (f"released the {len(train):,} training rows once; attacks on a seeded sample of {n_targets:,} "
                     f"targets searched against all {len(train):,} records"
                     + (" (the first batch settled the verdict)" if settled and len(order) > first_batch else "")),
        },
    }




#: members and held-out records the tests of anonymisation compare at most (seeded samples above)
TEST_ROWS = 5000


def _anonymisation(X_tr: np.ndarray, X_test: np.ndarray, B: np.ndarray, codec: Any, original: Any,
                   original_test: Any, published: Any, shown: np.ndarray | None, shown_test: np.ndarray | None,
                   columns: list[str] | None, tests: dict[str, Any], seed: int) -> dict[str, Any]:
    """Singling out and linkability of the release of the training rows against a seeded sample of them (at
    most :data:`TEST_ROWS`) and of the held-out records."""
    from ppdm.release.criteria import anonymisation_of, as_mixed

    rng = np.random.default_rng([seed, 41])
    m = np.sort(rng.choice(len(X_tr), TEST_ROWS, replace=False)) if len(X_tr) > TEST_ROWS else np.arange(len(X_tr))
    c = np.sort(rng.choice(len(X_test), TEST_ROWS, replace=False)) if len(X_test) > TEST_ROWS else \
        np.arange(len(X_test))

    def side(rows: np.ndarray, cols: np.ndarray | None, n: int) -> np.ndarray:
        return np.zeros((n, 0), dtype=object) if cols is None else cols[rows]

    everyone = np.arange(len(B))
    if codec is None:
        parts = [(B, side(everyone, shown, len(B))), (X_tr[m], side(m, shown, len(m))),
                 (X_test[c], side(c, shown_test, len(c)))]
    else:
        parts = [(published, side(everyone, shown, len(B))), (original.take(m), side(m, shown, len(m))),
                 (original_test.take(c), side(c, shown_test, len(c)))]
    views = as_mixed(parts, codec=codec, columns=columns or [f"x{j}" for j in range(X_tr.shape[1])],
                     shown_names=tests["shown_names"])
    return anonymisation_of(views, seed=seed, label=tests["label"], control=tests["control"])


#: the share of a confirmation's time spent before each step starts, measured on the 1,000,000 x 20 Parquet
#: table of the scale benchmark (copula, 2 cores: 94 s, settled by the first batch of targets); an open
#: verdict's second batch is given the last quarter. A progress bar turns the shares into the candidate's ETA.
STEP_SHARE = {"release": 0.0, "value metrics": 0.14, "utility": 0.21, "train on release": 0.27,
              "linked values": 0.28, "tests of anonymisation": 0.30, "attacks": 0.48, "more attacks": 0.75,
              "done": 1.0}


class _Steps:
    """``step(what)``: tells ``on_step`` which step starts and the share of the work done before it."""

    def __init__(self, on_step: Any) -> None:
        self.on_step = on_step
        self.attacked = False

    def __call__(self, what: str) -> None:
        from ppdm.utils.memory import give_back

        # a step's table-chunk temporaries stay in the C heap once freed: handed back before the next step
        # (a confirmation's steps take seconds; trimming takes milliseconds)
        give_back()
        if self.on_step is None:
            return
        key = what
        if what.startswith("attacks"):
            key = "more attacks" if self.attacked else "attacks"
            self.attacked = True
        self.on_step(what, STEP_SHARE[key])


def _settled(risk: dict[str, Any], max_reidentification: float) -> bool:
    """The first batch decides when the rate's whole interval lies below or above the policy's limit."""
    interval = risk.get("reidentification_interval")
    if interval is None:
        return True  # measured on every row: nothing left to sample
    upper = risk.get("reidentification_excess_upper", interval[1])
    lower = risk.get("reidentification_excess_lower", interval[0])
    return upper <= max_reidentification or lower > max_reidentification
