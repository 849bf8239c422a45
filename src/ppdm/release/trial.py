"""One candidate on one table: the table every stage of the sweep measures, and the candidate's releases.

A :class:`SweepTable` is what the sweep's workers receive once per task: the design, the label, the columns
shown unchanged beside the release, the held-out folds and the settings of the measurement. A
:class:`Trial` makes a candidate's releases of it (of every row, or of a fold's training rows), each once,
and decodes them as they would be published: what is measured is what is published.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SweepTable", "Trial", "Released", "synthesises_records", "draws_from_model", "mechanism_flag",
           "candidate_block_reading"]


@dataclass(frozen=True)
class SweepTable:
    """The table a sweep measures and how (plain data: it travels to worker processes).

    ``X``: the design (a whole table's, from its codec); ``y``: the label as text (None: no usable label);
    ``shown``: the columns reaching the release unchanged (the label among them), as text; ``folds``: disjoint
    (training rows, held-out real rows) splits, the first of which the first pass uses; ``columns``: the
    design's names; ``key_seed``: the release key's mechanism stream (the chosen candidate is the very release
    published); ``seed``: the evaluation's seed (folds, samples, attack draws); ``seed_known``: the key is a
    user's seed, which the seed search tries; ``objective`` and ``policy``: what the sweep maximises and
    limits; ``shown_names``: the names of ``shown``'s columns, ``label_name`` the label's among them;
    ``repeats``: a small table's further splits of every row, on which the full battery measures the
    train-on-release utility again (:func:`~ppdm.release.utility.repeat_folds`; None: none).
    """

    X: np.ndarray
    y: np.ndarray | None
    codec: Any
    shown: np.ndarray | None
    folds: list[tuple[np.ndarray, np.ndarray]] | None
    columns: list[str]
    preprocess: str
    threat: str
    seed: int
    key_seed: object = None
    seed_known: bool = False
    objective: str = "tstr_knn_pct"
    policy: Any = None
    shown_names: tuple[str, ...] = ()
    label_name: str | None = None
    repeats: list[tuple[np.ndarray, np.ndarray]] | None = None

    @property
    def utility_folds(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every split the train-on-release utility is measured on: the folds, then the repeats."""
        return [*(self.folds or ()), *(self.repeats or ())]

    def tested_rows(self) -> np.ndarray:
        """The held-out record of every prediction of the train-on-release utility, in the order of a fully
        measured candidate's hits (the folds', then the repeats')."""
        return np.concatenate([te for _, te in self.utility_folds]) if self.utility_folds else np.zeros(0, int)

    @property
    def mechanism_seed(self) -> object:
        return self.seed if self.key_seed is None else self.key_seed

    def draws(self, stream: int) -> np.random.Generator:
        """The categorical draws of a decoded release: from the release key (the evaluation seed without one)."""
        return np.random.default_rng([int(self.mechanism_seed), stream])  # type: ignore[call-overload]


@dataclass
class Released:
    """A candidate's release of some rows, as published.

    ``design``: its design (a whole table's re-encoded as published); ``numbers``: the numbers the attacks
    compare (a whole table's numeric columns in their units, else the design); ``published``: a whole table's
    decoded release (:class:`~ppdm.data.codec.Decoded`; None for a numeric table); ``rows``: the table's rows it
    releases (None: all); ``label``: the label of those rows; ``seconds``: the time it took.
    """

    design: np.ndarray
    numbers: np.ndarray
    published: Any
    rows: np.ndarray | None
    label: np.ndarray | None
    seconds: float
    synthetic_label: bool = False  # the mechanism synthesised ``label`` (see ppdm.flow.synthesis)
    raw: np.ndarray | None = None  # a synthesiser's design as it drew it (before the codec): see Trial.adopt


class Trial:
    """A candidate (``method``, ``params``) on a :class:`SweepTable`: its releases, each made once."""

    def __init__(self, table: SweepTable, method: str, params: dict[str, Any]) -> None:
        self.table, self.method, self.params = table, method, params
        self._made: dict[str, Released] = {}
        self._original: dict[str, Any] = {}

    def release(self, rows: np.ndarray | None = None, *, name: str = "all") -> Released:
        """The release of the table's ``rows`` (None: every row), made on first use under ``name``.

        The draws are the key's: a fold's release is the same candidate fitted on fewer rows, its counts over
        the whole table scaled to them (:func:`~ppdm.release.candidates.scaled_to_rows`). A whole table's
        categorical draws take stream 1 for every row and stream 2 for a fold (as the published release and
        the held-out measurements always have).
        """
        if name in self._made:
            return self._made[name]
        from ppdm.flow.synthesis import release_design
        from ppdm.release.candidates import build_candidate, scaled_to_rows

        t = self.table
        t0 = time.perf_counter()
        X = t.X if rows is None else t.X[rows]
        y = t.y if rows is None or t.y is None else t.y[rows]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params = self.params if rows is None else scaled_to_rows(self.method, self.params, len(rows), len(t.X))
            mech = build_candidate(self.method, params, random_state=t.mechanism_seed, codec=t.codec)
            # a synthesiser of the whole record releases its own label (see ppdm.flow.synthesis)
            B, y_out = release_design(X, mech, preprocess=t.preprocess, y=y, codec=t.codec)
        if B.shape != X.shape:
            raise ValueError(f"{self.method} changes the number of columns; value metrics need the same columns")
        return self._keep(name, rows, B, y_out, synthetic_label=y_out is not y, seconds=time.perf_counter() - t0)

    def adopt(self, name: str, rows: np.ndarray | None, raw: np.ndarray, label: np.ndarray | None) -> Released:
        """Take a synthesiser's release made elsewhere (another stage's ``Released.raw`` and label) as this
        trial's release ``name``: published as :meth:`release` would publish it, without fitting a model again
        (a fit is the costliest step of the sweep)."""
        t = self.table
        own = t.y if rows is None or t.y is None else t.y[rows]  # a label it did not synthesise is the table's
        return self._keep(name, rows, np.asarray(raw, dtype=np.float64), own if label is None else label,
                          synthetic_label=label is not None, seconds=0.0)

    def _keep(self, name: str, rows: np.ndarray | None, B: np.ndarray, y_out: np.ndarray | None, *,
              synthetic_label: bool, seconds: float) -> Released:
        t = self.table
        raw = B if draws_from_model(self.method) else None
        published = None
        numbers = B
        if t.codec is not None:
            # scored as published: decoded (rounded, clipped, categories chosen) and re-encoded
            published = t.codec.decode_parts(B, rng=t.draws(1 if rows is None else 2),
                                             reading=candidate_block_reading(self.method))
            B = t.codec.encode_decoded(published)
            numbers = published.numbers if t.codec.numeric_names else B
        made = Released(B, numbers, published, rows, y_out, seconds, synthetic_label=synthetic_label, raw=raw)
        self._made[name] = made
        return made

    def original(self, rows: np.ndarray | None = None, *, name: str = "all") -> Any:
        """The original rows decoded as a release of them would be (a whole table's); None for numbers only."""
        if self.table.codec is None:
            return None
        if name not in self._original:
            X = self.table.X if rows is None else self.table.X[rows]
            self._original[name] = self.table.codec.decode_parts(X)
        return self._original[name]

    def attack_view(self, released: Released) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray] | None,
                                                         list[str]]:
        """What the attacks compare for a release: the original's numbers and the release's (rows aligned),
        the categorical columns and shown columns of both as text (None when there are none), the names."""
        from ppdm.flow.synthesis import with_label

        t = self.table
        rows = released.rows
        shown = t.shown if t.shown is None or rows is None else t.shown[rows]
        if released.synthetic_label:  # the label shown beside the release is the synthesised one
            shown_r = with_label(shown, released.label, t.y if rows is None else t.y[rows])
        else:
            shown_r = shown
        if t.codec is None:
            X = t.X if rows is None else t.X[rows]
            cats = None if shown is None or shown.shape[1] == 0 else (shown, shown_r)
            return X, released.numbers, cats, t.columns
        original = self.original(rows, name="all" if rows is None else f"rows{len(rows)}")
        side = np.zeros((len(released.numbers), 0), dtype=object) if shown is None else shown
        cats_o = np.column_stack([t.codec.filled(original), side])
        side_r = side if shown_r is None else shown_r
        cats_r = np.column_stack([t.codec.filled(released.published), side_r])
        if t.codec.numeric_names:
            X_att, columns = original.numbers, t.codec.numeric_names
        else:
            X_att, columns = t.X if rows is None else t.X[rows], t.columns
        return X_att, released.numbers, (cats_o if cats_o.shape[1] else None,
                                         cats_r if cats_r.shape[1] else None) if cats_o.shape[1] else None, columns

    def mechanism(self) -> dict[str, Any]:
        """What the publisher states about the mechanism (Kerckhoffs): the seed search replays it. A combined
        candidate's numeric mechanism is the one the numbers went through."""
        from ppdm.release.candidates import numeric_part

        replayed, replayed_params = numeric_part(self.method, self.params)
        return {"method": replayed, "params": replayed_params, "preprocess": self.table.preprocess, "y": self.table.y}


def synthesises_records(method: str) -> bool:
    """Whether a candidate's mechanism synthesises whole records from a fitted model (see
    :mod:`ppdm.flow.synthesis`): every release of it is a model's fit, the costliest of the sweep."""
    return mechanism_flag(method, "_releases_table")


def draws_from_model(method: str) -> bool:
    """Whether every release of a candidate is drawn from a model fitted to the rows it is made from (synthetic
    records, formally private or not): a release costs a fit, so the first pass makes one, the first fold's, and
    the full battery adopts it instead of fitting it again."""
    return mechanism_flag(method, "_draws_from_model")


def mixes_columns(method: str) -> bool:
    """Whether a candidate's mechanism (the numeric part of a combined candidate) may release a column as a mix
    of several original columns (see ``Mechanism._mixes_columns``); a mechanism that does not say so may."""
    return mechanism_flag(method, "_mixes_columns", default=True)


def candidate_block_reading(method: str) -> str:
    """How the codec reads the categorical blocks of a candidate's release (see
    :func:`ppdm.flow.whole.block_reading`): a combined candidate's come from its categorical mechanism."""
    from ppdm.flow.whole import block_reading
    from ppdm.mechanisms.combined import Combined
    from ppdm.registry import MECHANISMS
    from ppdm.release.candidates import split_method

    numeric, categorical = split_method(method)
    entry = MECHANISMS.get(numeric)
    return block_reading(Combined if categorical is not None else None if entry is None else entry.load())


def mechanism_flag(method: str, flag: str, *, default: bool = False) -> bool:
    """A class attribute ``flag`` of a candidate's mechanism (the numeric part of a combined candidate);
    ``default`` for a mechanism that does not set it, or a method the registry does not know."""
    from ppdm.registry import MECHANISMS
    from ppdm.release.candidates import split_method

    entry = MECHANISMS.get(split_method(method)[0])
    return default if entry is None else bool(getattr(entry.load(), flag, default))
