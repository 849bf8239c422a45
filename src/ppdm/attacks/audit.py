"""anonymeter's three evaluators on the same tables: the auditors' figures beside ppdm's (extra ``audit``).

anonymeter (Giomi et al., PoPETs 2023) is the tool data protection authorities accept for the three tests
of anonymisation. ppdm never computes its own figures with it; it runs it, on request, as an independent
cross-check: ``ppdm attack --control --anonymeter`` and the cross-check test.

Its randomness is made repeatable: the singling-out evaluators take ``seed``; the linkability and
inference evaluators draw their targets with the global numpy generator, so they are given exactly
``n_attacks`` targets drawn here with ``seed`` (their draw then only reorders them).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ppdm.exceptions import MissingDependencyError

__all__ = ["anonymeter_available", "anonymeter_tests"]

INSTALL_HINT = "install it with: pip install 'ppdm[audit]'"


def anonymeter_available() -> bool:
    """Whether anonymeter can be imported here."""
    try:
        import anonymeter.evaluators  # noqa: F401
    except ImportError:
        return False
    return True


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anonymeter")
    except PackageNotFoundError:
        return "unknown"


def _risk(r: Any) -> dict[str, Any]:
    return {"risk": float(r.value), "interval": [float(r.ci[0]), float(r.ci[1])]}


def anonymeter_tests(
    release: pd.DataFrame,
    members: pd.DataFrame,
    control: pd.DataFrame,
    *,
    seed: int = 0,
    label: str | None = None,
    n_attacks: int | None = None,
    inference_columns: Sequence[str] | None = (),
    max_attempts: int = 50_000,
) -> dict[str, Any]:
    """anonymeter's singling out (univariate, multivariate), linkability and inference on the same tables.

    Parameters
    ----------
    release, members, control : DataFrame
        The release, the records it was made from and real records it did not contain, on the same columns.
    seed : int, default=0
    label : str, optional
        Left out of the linkability split (anonymeter's usual split: the other columns halved in order).
    n_attacks : int, optional
        Attacks per evaluator (default: 500, at most the control's size).
    inference_columns : sequence of str or None, default=()
        Secrets for the inference evaluator, the other columns known (None: every column).
    max_attempts : int, default=50000
        Multivariate singling-out attempts.

    Returns
    -------
    dict
        ``singling_out_univariate``, ``singling_out_multivariate``, ``linkability`` (with ``columns``):
        ``{risk, interval}`` as anonymeter reports them (linkability at one neighbour); ``inference``: per
        secret column; ``n_attacks`` and ``version``.

    Raises
    ------
    MissingDependencyError
        anonymeter is not installed.
    """
    try:
        from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator
    except ImportError:
        raise MissingDependencyError(f"--anonymeter needs anonymeter; {INSTALL_HINT}") from None
    cols = list(release.columns)
    members, control = members[cols].reset_index(drop=True), control[cols].reset_index(drop=True)
    release = release.reset_index(drop=True)
    n_att = int(min(n_attacks or 500, len(control), len(members)))
    rng = np.random.default_rng(seed)
    targets_m = members.iloc[np.sort(rng.choice(len(members), n_att, replace=False))]
    targets_c = control.iloc[np.sort(rng.choice(len(control), n_att, replace=False))]
    out: dict[str, Any] = {"n_attacks": n_att, "version": _version()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anonymeter warns on every attack weaker than its baseline
        for mode in ("univariate", "multivariate"):
            so = SinglingOutEvaluator(ori=members, syn=release, control=control, n_attacks=n_att, n_cols=3,
                                      max_attempts=max_attempts, seed=seed)
            out[f"singling_out_{mode}"] = _risk(so.evaluate(mode=mode).risk())
        aux = [c for c in cols if c != label]
        half = len(aux) // 2
        li = LinkabilityEvaluator(ori=targets_m, syn=release, control=targets_c, n_attacks=n_att,
                                  aux_cols=(aux[:half], aux[half:]), n_neighbors=10)
        li.evaluate(n_jobs=1)
        out["linkability"] = {**_risk(li.risk(n_neighbors=1)), "columns": [aux[:half], aux[half:]],
                              "neighbors": _risk(li.risk(n_neighbors=10))}
        secrets = cols if inference_columns is None else list(inference_columns)
        out["inference"] = {}
        for secret in secrets:
            ev = InferenceEvaluator(ori=targets_m, syn=release, control=targets_c, n_attacks=n_att,
                                    aux_cols=[c for c in cols if c != secret], secret=secret)
            out["inference"][secret] = _risk(ev.evaluate(n_jobs=1).risk())
    return out
