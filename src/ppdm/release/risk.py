"""What a candidate release discloses, as the record keeps it: the worst case over attacks with its interval,
values read off the row an attacker finds for a person (beyond the control), the sensitive columns' inference
(all JSON-able, no keys)."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["risk_of", "binomial_interval", "scalar_items", "sensitive_risk", "linked_value_disclosure",
           "with_linked_risk", "draws"]


def with_linked_risk(risk: dict[str, Any], linked: dict[str, Any] | None,
                     sensitive: dict[str, Any] | None) -> dict[str, Any]:
    """The policy's value disclosure beyond its control, and the sensitive columns' risk, into ``risk``.

    Values read off the row an attacker finds for a person, for people in the release against people not in
    it; the aligned figure (which assumes the attacker already knows each person's row) stays in the record
    as an upper bound.
    """
    if linked is not None:
        risk["within_5pct_aligned"] = risk["within_5pct"]
        risk["within_5pct_aligned_attack"] = risk["within_5pct_attack"]
        risk["within_5pct"] = linked["excess"]
        risk["within_5pct_attack"] = f"linked {linked['attack']}"
        risk["within_5pct_by_reconstruction"] = linked["by_reconstruction"]
    if sensitive:
        risk["sensitive"] = sensitive
    return risk


def linked_value_disclosure(A_in: np.ndarray, B: np.ndarray, A_out: np.ndarray, *, max_targets: int | None = None,
                            seed: int = 0) -> dict[str, Any]:
    """Value disclosure beyond its control, for an attacker who must first find a person's row.

    ``B`` is the release of the records ``A_in``; ``A_out`` are real records it does not contain. For each
    reconstruction of the release (read at face value, Wiener-filtered, low-rank denoised) the attacker takes,
    for a person, the reconstructed row nearest to them (population z-scores) and reads their values off it.
    Main: the share of values within +-5 % (among those the column median misses) for people in the release;
    control: the same for people not in it, which is what the release tells about anyone from the population.
    The excess is what the release discloses about its own records. A release that keeps groups but no
    individual (microaggregation, synthetic records) tells members and non-members alike.

    ``max_targets``: measure on a seeded sample of at most that many people on each side (a large table);
    each still searches every reconstructed row.
    """
    from ppdm.attacks._filtering import low_rank_map, wiener_map
    from ppdm.attacks._linkage import nearest_in_pool
    from ppdm.utils.linalg import union_mean_std

    mu, sd = union_mean_std([A_in, A_out])
    sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
    med = np.array([np.median(np.concatenate([A_in[:, j], A_out[:, j]])) for j in range(A_in.shape[1])])

    def share(est: np.ndarray, truth: np.ndarray) -> float:
        tol = 0.05 * np.abs(truth) + 1e-12 * (np.abs(truth) + 1)
        missed = np.abs(med - truth) > tol
        return float((np.abs(est - truth) <= tol)[missed].mean()) if missed.any() else 0.0

    def reconstruction(name: str) -> Any:
        """The reconstruction as a map of blocks of released rows (none is ever the release's size)."""
        if name == "face_value":
            return lambda rows: rows
        if name == "mmse":
            return wiener_map(population, B)[0]
        return low_rank_map(B)[0]

    population = (A_in, A_out)  # the Wiener attacker's records: all of them, not the sampled targets
    if max_targets is not None:
        rng = np.random.default_rng([seed, 13])
        if len(A_in) > max_targets:
            A_in = A_in[np.sort(rng.choice(len(A_in), max_targets, replace=False))]
        if len(A_out) > max_targets:
            A_out = A_out[np.sort(rng.choice(len(A_out), max_targets, replace=False))]
    Z_in, Z_out = (A_in - mu) / sd, (A_out - mu) / sd
    out: dict[str, Any] = {}
    for name in ("face_value", "mmse", "low_rank_denoise"):
        estimate = reconstruction(name)

        def readable(rows: np.ndarray, estimate: Any = estimate) -> np.ndarray:
            R = estimate(rows)
            return R if np.isfinite(R).all() else np.where(np.isfinite(R), R, med)

        # every reconstructed row is searched, in population z-scores, a block of the release at a time
        main = share(readable(B[nearest_in_pool(Z_in, B, None, lambda b: (readable(b) - mu) / sd)]), A_in)
        ctrl = share(readable(B[nearest_in_pool(Z_out, B, None, lambda b: (readable(b) - mu) / sd)]), A_out)
        out[name] = {"main": main, "control": ctrl, "excess": max(0.0, main - ctrl)}
    worst = max(out, key=lambda k: out[k]["excess"])
    return {"excess": out[worst]["excess"], "attack": worst, "by_reconstruction": out}


def binomial_interval(hits: int, n: int, level: float = 0.95) -> list[float]:
    """Clopper-Pearson interval of a rate measured as ``hits`` successes in ``n`` sampled targets."""
    from scipy.stats import beta

    a = (1 - level) / 2
    lo = 0.0 if hits <= 0 else float(beta.ppf(a, hits, n - hits + 1))
    hi = 1.0 if hits >= n else float(beta.ppf(1 - a, hits + 1, n - hits))
    return [lo, hi]


def _targets_of(a: dict[str, Any]) -> int | None:
    """How many released rows an attack's re-identification rate was measured on."""
    from ppdm.attacks._result import MAX_REID_TARGETS

    det = a.get("details") or {}
    if det.get("n_targets") is not None:
        return int(det["n_targets"])
    if det.get("n_attacked_records") is not None:
        return int(min(det["n_attacked_records"], MAX_REID_TARGETS))
    return None


def risk_of(attacks: list[dict[str, Any]], n_rows: int | None = None) -> dict[str, Any]:
    """The worst case over attacks.

    With ``n_rows`` (the rows of the release) and attacks measured on a sample of targets, the worst
    re-identification rate also gets its 95 % Clopper-Pearson interval (``reidentification_interval``) and
    ``reidentification_excess_upper``, the upper end beyond chance, which is what the policy then limits.

    ``reidentification``: the highest share of released rows linked to their own record (any attack, any
    space); ``reidentification_excess``: the same beyond its control (chance); ``within_5pct``: the
    highest share of values disclosed within +-5 % *beyond the no-release guess* (among the values that
    guessing each column's median misses), which is what the policy limits; ``within_5pct_raw``: the
    raw share, next to the median guess's own share ``within_5pct_median_guess``.
    """
    def worst(key: str) -> tuple[float, str | None]:
        vals = [(float(a[key]), a["attack"]) for a in attacks if a.get(key) is not None]
        return max(vals, default=(0.0, None))

    reid, reid_by = worst("reidentification_rate")
    excess = max((float(a["excess"]) for a in attacks if a.get("excess") is not None
                  and a.get("success_measure") == "reidentification_rate"), default=0.0)
    beyond, beyond_by = worst("within_5pct_beyond_baseline")
    raw, _ = worst("within_5pct")
    guesses = [a.get("baseline_no_release") for a in attacks]
    base = [g["within_5pct"] for g in guesses if isinstance(g, dict) and g.get("within_5pct") is not None]
    out = {"reidentification": reid, "reidentification_attack": reid_by, "reidentification_excess": excess,
           "within_5pct": beyond, "within_5pct_attack": beyond_by, "within_5pct_raw": raw,
           "within_5pct_median_guess": float(max(base, default=0.0))}
    if n_rows is not None:
        # the worst attack's rate from a sample of targets is an estimate: its upper end is what the policy limits
        # every attack's re-identification counts (a reconstruction linked to its nearest record is a linkage
        # too), each beyond its chance
        chance = 1.0 / max(n_rows, 1)
        sampled = [(float(a["reidentification_rate"]), _targets_of(a),
                    float(a.get("control_rate") or 0.0) if a.get("success_measure") == "reidentification_rate"
                    else chance)
                   for a in attacks if a.get("reidentification_rate") is not None]
        sampled = [(r, t, c) for r, t, c in sampled if t is not None and t < n_rows]
        if sampled:
            intervals = [(binomial_interval(round(r * t), t), t, c, r) for r, t, c in sampled]
            # the interval of the headline rate (the worst point estimate); the policy takes the worst upper end
            (lo, hi), t, _, _ = max(intervals, key=lambda v: v[3])
            out["reidentification_interval"] = [lo, hi]
            out["reidentification_targets"] = t
            out["reidentification_excess_upper"] = max(max(0.0, v[0][1] - v[2]) for v in intervals)
            out["reidentification_excess_lower"] = max(max(0.0, v[0][0] - v[2]) for v in intervals)
    return out


def scalar_items(d: dict[str, Any]) -> dict[str, Any]:
    """Only scalar/short fields of an attack result go into the record (no reconstructed rows)."""
    keep: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, (bool, int, float, str)) or v is None:
            keep[k] = v
        elif isinstance(v, (list, tuple)) and len(v) <= 4 and all(isinstance(x, (int, float)) for x in v):
            keep[k] = list(v)
        elif isinstance(v, dict) and (k.startswith("baseline") or k in ("details", "rates", "special_uniques")):
            keep[k] = scalar_items(v)
    return keep


def draws(key_seed: object, seed: int, stream: int) -> np.random.Generator:
    """The categorical draws of a decoded release: from the release key (the evaluation seed without one)."""
    return np.random.default_rng([int(seed if key_seed is None else key_seed), stream])  # type: ignore[call-overload]


def sensitive_risk(codec: Any, X_tr: np.ndarray, X_test: np.ndarray, B_t: np.ndarray, original_tr: Any,
                   original_test: Any, released_t: Any, published: Any, *, rows: np.ndarray | None = None,
                   max_targets: int | None = None, seed: int = 0) -> dict[str, Any] | None:
    """Attribute inference (members against held-out real records) and l-diversity of each sensitive column.

    ``X_tr`` (the design of the members: the rows the release ``B_t`` was made from, re-encoded as published)
    and ``X_test`` (held-out real records); ``original_tr``, ``original_test``, ``released_t`` and
    ``published`` (the release of the whole table) decoded (:meth:`~ppdm.data.codec.TableCodec.decode_parts`).
    ``rows``: the table's row number of each member (default: their order), which a sample of them keeps.
    ``max_targets``: infer for a seeded sample of at most that many members (the model learns from the
    whole release).
    """
    from ppdm.attacks.inference import attribute_inference, l_diversity

    sensitive = codec.role_names("sensitive")
    qis = codec.role_names("quasi-identifier")
    if not sensitive or not qis:
        return None
    q = codec.design_columns(qis)
    cat_qis = [c for c in qis if c in codec.categorical_names]
    n_tr = X_tr.shape[0]
    rows = np.arange(n_tr) if rows is None else np.asarray(rows)
    members = slice(None)  # every member, in their order
    if max_targets is not None and n_tr > max_targets:
        # the same members as a sample of their row numbers, in the table's order
        picked = np.random.default_rng([seed, 17]).choice(n_tr, max_targets, replace=False)
        members = picked[np.argsort(rows[picked], kind="stable")]
    out = {}
    for s in sensitive:
        numeric = s in codec.numeric_names
        def value(d: Any, s: str = s, numeric: bool = numeric) -> np.ndarray:
            # a number as the design holds it (a gap at the column's median), a category as published
            return d.numbers[:, codec.numeric_names.index(s)] if numeric else codec.values_of(d, s)

        inf = attribute_inference(B_t[:, q], value(released_t), X_tr[members][:, q], value(original_tr)[members],
                                  X_test[:, q], value(original_test), numeric=numeric)
        out[s] = {"attribute_inference": inf}
        if not numeric:
            qi_values = (np.column_stack([codec.values_of(published, c) for c in cat_qis]) if cat_qis
                         else np.zeros((published.rows, 0), dtype=object))
            out[s]["l_diversity"] = l_diversity(qi_values, codec.values_of(published, s))
    return out
