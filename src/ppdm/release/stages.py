"""The stages of ``ppdm release`` that run wherever the table is (here, or on a Dask cluster's workers): the
sweep's candidates, the note on how it measured them, and the choice by the policy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ppdm.exceptions import ParameterError
from ppdm.release.config import DEFAULT_GRIDS, ReleaseConfig
from ppdm.release.sweep import Cache

__all__ = ["candidate_jobs", "mark_choice", "split_failed", "sweep_notes"]


def candidate_jobs(cfg: ReleaseConfig, cache: Cache, *, shape: tuple[int, int], codec: Any, fingerprint: str,
                   label: str | None, shown: Sequence[str], side: str) -> list[tuple[str, str, dict[str, Any]]]:
    """The sweep's candidates as (cache key, method, parameters): the configured grids, less the default
    candidates that do not fit the table."""
    from ppdm import __version__
    from ppdm.release.candidates import check_method, split_method
    from ppdm.release.halving import SCORING_VERSION

    jobs = []
    categories = codec is not None and bool(codec.categorical_names)
    for mg in cfg.methods:
        check_method(mg.method)
        default_grid = mg.grid == DEFAULT_GRIDS.get(mg.method)
        if default_grid and split_method(mg.method)[1] and not categories:
            continue  # a combined default candidate needs categories: on numbers alone it repeats its numeric part
        seen = []
        for params in mg.candidates():
            # default grids adapt to the table (narrow tables, no categories); a grid the user wrote is checked
            # as given
            if default_grid and isinstance(params.get("rank"), int) and params["rank"] >= min(shape):
                continue
            if default_grid and not categories:
                params = {k: v for k, v in params.items() if k not in _CATEGORY_PARAMETERS}
            if params in seen:
                continue
            seen.append(params)
            # a secret key is not part of the cache key: a cached score measured an equivalent draw; the
            # scores depend on the label's values and on every column shown beside the release, not only on X
            payload = {"fp": fingerprint, "method": mg.method, "params": params, "seed": cfg.seed,
                       "pre": cfg.preprocess, "threat": cfg.threat, "label": label, "shown": list(shown),
                       "side": side, "objective": cfg.policy.objective, "v": SCORING_VERSION, "ppdm": __version__,
                       "whole_table": None if codec is None else codec.names}
            jobs.append((cache.key(payload), mg.method, params))
    if not jobs:
        raise ParameterError("no candidate fits a table this small; give --methods noise,rotation or a --config grid")
    return jobs


#: parameters of default grids that only act on categorical columns (left out on a table without them)
_CATEGORY_PARAMETERS = ("min_support", "min_count")


def split_failed(everything: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The candidates that failed and those scored; refuses a sweep in which every one failed."""
    failed = [c for c in everything if "failed" in c]
    cands = [c for c in everything if "failed" not in c]
    if not cands:
        c = failed[0]
        raise ParameterError(f"every candidate failed; the first, {c['method']} {c['params']}: {c['failed']}")
    return failed, cands


def sweep_notes(label_note: str | None, *, n: int, y_rows: int | None, where: str | None,
                confirmed_here: bool = False, folds: Any = None, on_workers: str | None = None,
                parts: list[int] | None = None, repeats: Any = None) -> str | None:
    """What the record says about how the sweep measured (samples, folds, where it ran), in one note.

    ``confirmed_here``: the confirmations on every row ran on this machine; ``on_workers``: the kind of input
    (``"Parquet"``, ``"CSV"``) the workers read themselves, confirmed the candidates and made and wrote the
    chosen release from; ``parts``: the rows of each part of a release by parts (the sweep measured the first);
    ``repeats``: a small table's further splits of every row (:func:`~ppdm.release.utility.repeat_folds`).
    """
    from ppdm.release.scale import SCREEN_ABOVE, SCREEN_ROWS
    from ppdm.release.utility import SVM_SAMPLE, TSTR_TRAIN_SAMPLE, UTILITY_SAMPLE

    notes = [label_note] if label_note else []
    if y_rows is not None and y_rows > SVM_SAMPLE:
        # estimates, not exhaustive computation: say on how many rows each was measured
        rows = f"a seeded stratified sample of {UTILITY_SAMPLE} of {y_rows} rows" if y_rows > UTILITY_SAMPLE else (
            f"all {y_rows} rows")
        notes.append(f"cross-validated k-NN and K-means on {rows} (95 % interval about +-1.4 points at 5,000), the "
                     f"RBF SVM on {SVM_SAMPLE} of them (about +-2.2 points); train-on-release models learn from at "
                     f"most {TSTR_TRAIN_SAMPLE} released rows")
    if where is not None:
        made = (f"made and written by a worker from the {on_workers} input" if not parts else
                "made and written by the workers, a part each (below)")
        here = (f"its workers read the {on_workers} input themselves to confirm candidates on every row; the "
                f"chosen release was {made}; this machine held samples and scores only" if on_workers else
                "the confirmations on every row and the chosen release were computed here" if confirmed_here else
                "the chosen release was computed here")
        notes.append(f"the candidates were scored as tasks on a Dask cluster ({where}); {here}")
    if folds and len(folds) > 1:
        notes.append(f"train-on-release accuracy is pooled over {len(folds)} disjoint held-out folds "
                     f"({sum(len(te) for _, te in folds):,} real records tested, each against a release of the "
                     "other rows)")
    if folds and repeats:
        notes.append(f"for the candidates measured fully, every record was held out {1 + len(repeats) // len(folds)} "
                     "times, in fresh splits into as many folds: their accuracy is pooled over every split, and "
                     "each record's differences count once in the comparison of two candidates")
    if n > SCREEN_ABOVE:
        notes.append(f"{n:,} rows: every candidate was screened on a seeded sample of {SCREEN_ROWS:,} rows and "
                     "the best were confirmed on every row, attacked on a seeded sample of targets against all "
                     "records (each candidate's 'measured_on' says which)")
    if parts:
        notes.append(f"released by parts: the {sum(parts):,} rows went to {len(parts)} parts by a keyed draw; the "
                     f"sweep read and measured the first ({parts[0]:,} rows; its attacks' population is that part, "
                     "as for an attacker who knew which part a person is in), and each part was released with its "
                     "own draws by a worker that read that part only")
    return "; ".join(notes) if notes else None


def mark_choice(cands: list[dict[str, Any]], cfg: ReleaseConfig, *, shown: Sequence[str], categories: Any = None,
                uniqueness: dict[str, Any] | None = None, majority_pct: float | None = None) -> int:
    """Choose by the policy; every candidate gets its verdict, whether it is on the Pareto front and chosen
    (``majority_pct``: the share of the commonest class among the held-out records, the floor of a label's
    accuracy, :func:`~ppdm.release.select.utility_floor`)."""
    from ppdm.release.select import choose, pareto_front, risk_score, utility_floor

    floor = utility_floor(cfg.policy.objective, majority_pct)
    best, reasons = choose(cands, cfg.policy, shown=shown, categories=categories, uniqueness=uniqueness,
                           floor=floor)
    front = set(pareto_front(cands, cfg.policy.objective, floor=floor))
    for i, c in enumerate(cands):
        c["risk_score"] = risk_score(c)
        c["pareto"] = i in front
        c["verdict"] = reasons[i]
        c["chosen"] = i == best
    return best
