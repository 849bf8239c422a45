"""Candidates of the release sweep: a registered mechanism, or a numeric and a categorical one combined.

A combined candidate is named ``numeric+categorical`` (``mdav+pram``): the numeric mechanism releases the
numbers of a whole table and the categorical mechanism (``pram``, ``recode``, ``suppress``) its categories
(:class:`ppdm.mechanisms.combined.Combined`). Its grid names the numeric parameters as they are and the
categorical ones prefixed with the mechanism (``{"k": [20], "pram.pd": [0.5, 0.7]}``); the record shows the
candidate as ``mdav(k=20)+pram(pd=0.5)``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.exceptions import ParameterError

__all__ = ["CATEGORICAL_MECHANISMS", "split_method", "check_method", "parameters_of", "build_candidate",
           "describe", "column_treatments", "numeric_part", "scaled_to_rows"]

#: categorical mechanisms a combined candidate can use: name -> (class, what it protects)
CATEGORICAL_MECHANISMS: dict[str, tuple[str, str]] = {
    "pram": ("PRAM", "post-randomised (invariant PRAM: each value may change category, expected frequencies kept)"),
    "recode": ("RareCategoryRecoding", "globally recoded (categories rarer than min_share merged into one "
               "published value)"),
    "suppress": ("LocalSuppression", "locally suppressed (the fewest cells of the categorical "
                 "quasi-identifiers blanked until every combination is shared by k records)"),
}


def _categorical_class(name: str) -> type:
    from ppdm.mechanisms import categorical

    return getattr(categorical, CATEGORICAL_MECHANISMS[name][0])


def split_method(method: str) -> tuple[str, str | None]:
    """``"mdav+pram"`` -> ``("mdav", "pram")``; a single mechanism -> ``(method, None)``."""
    numeric, plus, categorical = method.partition("+")
    return numeric, (categorical if plus else None)


def check_method(method: str) -> None:
    """Raise :class:`ParameterError` unless ``method`` names a mechanism or a valid combination."""
    from ppdm.registry import MECHANISMS

    numeric, categorical = split_method(method)
    if numeric not in MECHANISMS:
        raise ParameterError(f"unknown mechanism '{numeric}'; choose from {', '.join(MECHANISMS)}")
    if categorical is not None and categorical not in CATEGORICAL_MECHANISMS:
        raise ParameterError(f"unknown categorical mechanism '{categorical}' in '{method}'; choose from "
                             f"{', '.join(CATEGORICAL_MECHANISMS)}")


def parameters_of(method: str) -> set[str]:
    """The grid keys a candidate accepts (categorical ones prefixed with their mechanism's name)."""
    from ppdm.registry import MECHANISMS

    check_method(method)
    numeric, categorical = split_method(method)
    cls = MECHANISMS[numeric].load()
    names = set(inspect.signature(cls.__init__).parameters) - {"self", "random_state"}
    if categorical is not None:
        cat = inspect.signature(_categorical_class(categorical).__init__).parameters
        names |= {f"{categorical}.{p}" for p in cat if p not in ("self", "random_state")}
    return names


def _split_params(method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    _, categorical = split_method(method)
    prefix = f"{categorical}."
    cat = {k[len(prefix):]: v for k, v in params.items() if categorical and k.startswith(prefix)}
    num = {k: v for k, v in params.items() if not (categorical and k.startswith(prefix))}
    return num, cat


def numeric_part(method: str, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The numeric mechanism of a candidate and its parameters (the candidate itself when not combined)."""
    return split_method(method)[0], _split_params(method, params)[0]


def scaled_to_rows(method: str, params: dict[str, Any], rows: int, total: int) -> dict[str, Any]:
    """``params`` for a release of ``rows`` of a table's ``total`` rows that stands in for the release of
    every row: the parameters the candidate's mechanisms count over the whole table (``_table_counts``, such as
    MDAV's ``min_count``) scaled by the share of the rows (rounded, at least 1); the others as they are."""
    from ppdm.registry import MECHANISMS

    if rows >= total:
        return params
    numeric, categorical = split_method(method)
    counted = set(getattr(MECHANISMS[numeric].load(), "_table_counts", ()))
    if categorical is not None:
        counted |= {f"{categorical}.{name}" for name in getattr(_categorical_class(categorical), "_table_counts", ())}
    return {k: (max(1, round(v * rows / total)) if k in counted and isinstance(v, (int, float)) else v)
            for k, v in params.items()}


def build_candidate(method: str, params: dict[str, Any], *, random_state: object, codec: Any = None) -> Any:
    """The mechanism of one candidate, seeded from ``random_state`` (the release key's stream).

    A combined candidate needs the ``codec`` of a whole table with categorical columns (its design layout);
    the categorical draws use a seed derived from ``random_state``, independent of the numeric draws.
    """
    from ppdm import registry
    from ppdm.flow.whole import take_codec_blocks

    numeric, categorical = split_method(method)
    if categorical is None:
        mech = registry.build(method, params, random_state=random_state)
        # a categorical column's one-hot block is one variable: its released row holds one category (unless the
        # parameters give blocks of their own: the helper leaves them)
        take_codec_blocks(mech, codec)
        return mech
    check_method(method)
    if codec is None or not codec.categorical_names:
        raise ParameterError(f"'{method}' combines a categorical mechanism: it needs a table with categorical "
                             "columns")
    from ppdm.mechanisms.combined import Combined

    num_params, cat_params = _split_params(method, params)
    cls = _categorical_class(categorical)
    if "random_state" in inspect.signature(cls.__init__).parameters:
        base = None if random_state is None else int(random_state)  # type: ignore[call-overload]
        cat_params = cat_params | {"random_state": np.random.default_rng(
            None if base is None else [base, 0x0CA7]).integers(0, 2**63 - 1)}
    blocks = [b.tolist() for b in codec.blocks_]
    chosen = None
    if categorical == "suppress":
        # k-anonymity is about what an attacker may know: the categorical quasi-identifiers
        qis = set(codec.role_names("quasi-identifier"))
        chosen = [i for i, name in enumerate(codec.categorical_names) if name in qis]
    return Combined(registry.build(numeric, num_params, random_state=random_state), cls(**cat_params),
                    numeric_columns=codec.numeric_index_.tolist(), blocks=blocks, categorical_blocks=chosen)


def _call(name: str, params: dict[str, Any]) -> str:
    inner = ", ".join(f"{k}={v}" for k, v in sorted(params.items()))
    return f"{name}({inner})"


def describe(method: str, params: dict[str, Any]) -> str:
    """A candidate as text: ``mdav(k=20)+pram(pd=0.5)``."""
    numeric, categorical = split_method(method)
    num, cat = _split_params(method, params)
    return _call(numeric, num) + (f"+{_call(categorical, cat)}" if categorical else "")


def column_treatments(infos: Sequence[Any], codec: Any, method: str, params: dict[str, Any], *,
                      released: Sequence[str] = (), passthrough: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Each column's record entry, its treatment naming the mechanism that touched it (if any).

    ``released`` and ``passthrough`` are the perturbed and the unchanged columns of a numeric release (without
    a ``codec``).
    """
    out = [i.to_dict() for i in infos]
    if codec is None:
        for entry in out:
            if entry["name"] in released:
                entry["mechanism"] = _call(method, params)
                entry["treatment"] = f"perturbed by {entry['mechanism']} with the other numeric columns"
            elif entry["name"] in passthrough:
                entry["mechanism"] = None
                entry["treatment"] = "released unchanged (passed through)"
        return out
    numeric, categorical = split_method(method)
    num, cat = _split_params(method, params)
    nums, cats = set(codec.numeric_names), set(codec.categorical_names)
    qis = set(codec.role_names("quasi-identifier"))
    for entry in out:
        name = entry["name"]
        if entry["treatment"] != "perturbed" or name not in nums | cats:
            continue
        if categorical is None:
            entry["mechanism"] = _call(numeric, num)
            entry["treatment"] = (f"perturbed by {entry['mechanism']} on the whole design (numbers z-scored, "
                                  "categories one-hot), then decoded to its type")
        elif name in nums:
            entry["mechanism"] = _call(numeric, num)
            entry["treatment"] = f"perturbed by {entry['mechanism']} on the numeric columns, then decoded to its type"
        elif categorical == "suppress" and name not in qis:
            entry["mechanism"] = None
            entry["treatment"] = "released unchanged (not a quasi-identifier: local suppression leaves it)"
        else:
            entry["mechanism"] = _call(categorical, cat)
            entry["treatment"] = f"{CATEGORICAL_MECHANISMS[categorical][1]} by {entry['mechanism']}"
    return out
