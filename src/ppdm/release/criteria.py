"""The tests of anonymisation of a candidate in the sweep: singling out, linkability, inference, membership.

Each test compares a release with the records it was made from (members) and with real records it did not
contain (the control, which the sweep holds out): a held-out fold's training rows and test rows. The tables
are compared as published: a whole table's numbers in their units and its categories as released, with the
columns shown unchanged beside them (the label among them).

* singling out and linkability: the first fold's release (the first pass; the policy limits both), and every
  fold's where the first fold's reading is within its interval of the limit (:func:`every_fold_tests`);
* inference of every column from the others: the first fold's release (the full battery; reported);
* membership: from the distance to the closest released row. With several folds every record is a
  non-member of the fold that holds it out and a member of the next fold's release: on the most outlying
  records the advantage is paired record by record (:func:`ppdm.attacks.paired_outlier_advantage`), which is
  unbiased when nothing leaks; with one fold, members against the control (the full battery; the policy
  limits it for candidates that release synthetic records or group centroids, which keep no one's row).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ppdm.release.trial import Released, SweepTable, Trial

__all__ = ["mixed_views", "as_mixed", "anonymisation_of", "first_fold_tests", "policy_reading", "inference_test",
           "membership_of", "keeps_no_row", "near_limit", "tests_to_repeat", "repeated_tests", "every_fold_tests",
           "pooled_reading"]

#: members and control records a test measures at most (seeded samples above)
TEST_ROWS = 5000
#: members and control records the sweep's linkability looks up at most, each (anonymeter's evaluator attacks
#: 500 by default): its cost grows with targets x released rows x columns, and it runs for every candidate past
#: the linkage; at 1,000 a side its 95 % interval is about +-0.016 at the 5 % limit (+-0.011 at 2,000), and
#: ``ppdm attack`` still looks up 2,000
LINK_TARGETS = 1000
#: the same on the first fold, which every candidate past the linkage reaches: a reading there within its interval
#: of the limit (about +-0.023 at 5 % with 500 a side) is measured again on every fold (:func:`every_fold_tests`,
#: :data:`LINK_TARGETS` a fold), so the first pass can look up fewer; on 5,000 optdigits records (64 columns)
#: a lookup of 1,000 a side took about 1.3 s of a first pass's 1.7 s of tests
FIRST_LINK_TARGETS = 500


def _rng(table: SweepTable, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(table.seed), stream])


def keeps_no_row(method: str, params: dict[str, Any]) -> bool:
    """Whether a candidate publishes synthetic records or group centroids (no released row is a person's own
    perturbed row): the membership test is limited for these."""
    from ppdm.release.trial import mechanism_flag

    return mechanism_flag(method, "_keeps_no_row")


def mixed_views(trial: Trial, releases: list[Released], rows: list[np.ndarray]) -> list[Any]:
    """The ``releases`` and the original ``rows`` (members, control, ...), in that order, as mixed tables with
    codes shared by all of them."""
    t = trial.table

    def shown(r: np.ndarray | None, n: int) -> np.ndarray:
        if t.shown is None:
            return np.zeros((n, 0), dtype=object)
        return t.shown if r is None else t.shown[r]

    parts = []
    for rel in releases:
        parts.append((rel.numbers if t.codec is None else rel.published, shown(rel.rows, len(rel.numbers))))
    original = trial.original()
    for r in rows:
        parts.append((t.X[r] if t.codec is None else original.take(r), shown(r, len(r))))
    return as_mixed(parts, codec=t.codec, columns=t.columns, shown_names=t.shown_names)


def as_mixed(parts: list[tuple[Any, np.ndarray]], *, codec: Any, columns: Sequence[str],
             shown_names: Sequence[str]) -> list[Any]:
    """Tables as mixed tables with shared codes: each part a pair of its numbers (a numeric table's rows in
    their units, or a whole table's decoded rows, :class:`~ppdm.data.codec.Decoded`) and the columns shown
    beside them (as text)."""
    from ppdm.attacks import encode_tables

    width = parts[0][1].shape[1] if parts else 0
    shown_names = list(shown_names) if len(shown_names) == width else [f"shown {j + 1}" for j in range(width)]
    if codec is None:
        return encode_tables([p for p, _ in parts], [s for _, s in parts], list(columns), shown_names)
    return encode_tables([p.numbers for p, _ in parts], [np.column_stack([codec.filled(p), s]) for p, s in parts],
                         list(codec.numeric_names), list(codec.categorical_names) + shown_names)


def anonymisation_of(views: list[Any], *, seed: int, label: str | None, control: str,
                     singling_out_limit: float | None = None, link_targets: int = LINK_TARGETS) -> dict[str, Any]:
    """Singling out (read as the policy reads it) and linkability of a release against its members and a
    control (``views``: the three as mixed tables, :func:`as_mixed`).

    With ``singling_out_limit``, a release whose singling out is above it is not looked up for linkability
    (the result has no ``linkability``): it breaks the policy already, and the linkability costs the most of
    the two (about half a second a candidate on 4,000 records of 36 columns, the singling out a quarter).
    ``link_targets``: the members and the control records the linkability looks up at most, each.
    """
    from ppdm.attacks import linkability, singling_out

    release, members, control_table = views
    so = policy_reading(singling_out(release, members, control_table, rng=np.random.default_rng([int(seed), 43])),
                        control)
    if singling_out_limit is not None and so["risk"] > singling_out_limit:
        return {"singling_out": so}
    return {"singling_out": so,
            "linkability": linkability(release, members, control_table, rng=np.random.default_rng([int(seed), 44]),
                                       label=label, n_targets=link_targets)}


def _cap(rows: np.ndarray, table: SweepTable, stream: int) -> np.ndarray:
    """At most :data:`TEST_ROWS` of ``rows`` (a seeded sample, in order)."""
    if len(rows) <= TEST_ROWS:
        return rows
    return np.sort(_rng(table, stream).choice(rows, TEST_ROWS, replace=False))


def first_fold_tests(trial: Trial, part: Released, train: np.ndarray, test: np.ndarray) -> dict[str, Any]:
    """Singling out and linkability of the first fold's release ``part`` (made from ``train``), with the
    held-out ``test`` rows as the control; no linkability when the singling out breaks the policy."""
    t = trial.table
    views = mixed_views(trial, [part], [_cap(train, t, 41), _cap(test, t, 42)])
    return anonymisation_of(views, seed=t.seed, label=t.label_name,
                            control=getattr(t.policy, "singling_out_control", "audited"),
                            singling_out_limit=getattr(t.policy, "max_singling_out", None),
                            link_targets=FIRST_LINK_TARGETS)


def near_limit(test: dict[str, Any] | None, limit: float | None) -> bool:
    """Whether a test measured on one fold (``{risk, interval}``) cannot be told from its ``limit``: the limit
    lies within the test's 95 % interval."""
    if not isinstance(test, dict) or limit is None or not test.get("interval"):
        return False
    low, high = (float(v) for v in test["interval"])
    return low <= float(limit) <= high


def tests_to_repeat(tests: dict[str, Any], policy: Any) -> set[str]:
    """The tests of the first fold (``tests``: :func:`first_fold_tests`) to measure again on every fold: those
    within their interval of their limits, and the linkability the first fold left out because its singling
    out broke the limit (when that singling out is itself within its interval of the limit)."""
    so, link = tests.get("singling_out"), tests.get("linkability")
    out = set()
    if near_limit(so, getattr(policy, "max_singling_out", None)):
        out.add("singling_out")
        if link is None:
            out.add("linkability")
    if near_limit(link, getattr(policy, "max_linkability", None)):
        out.add("linkability")
    return out


def repeated_tests(table: SweepTable, method: str, tests: dict[str, Any]) -> set[str]:
    """The first fold's ``tests`` a candidate of ``method`` has measured on every fold (:func:`tests_to_repeat`),
    where there is more than one fold and the candidate is not a synthesiser of whole records (each fold's
    release would be one more fit of its model)."""
    from ppdm.release.trial import synthesises_records

    if not table.folds or len(table.folds) < 2 or synthesises_records(method):
        return set()
    return tests_to_repeat(tests, table.policy)


def every_fold_tests(trial: Trial, parts: list[Released], tests: dict[str, Any]) -> dict[str, Any]:
    """Singling out and linkability pooled over every fold's release where the first fold's reading could not
    tell them from their limits (:func:`tests_to_repeat`); ``parts``: the folds' releases in the folds' order,
    ``tests``: the first fold's readings. The other tests are returned as they were.

    One fold reads each test on a few hundred held-out records and a few hundred predicates or targets: near
    the limit its 95 % interval spans several points (about +-4 at 5 % on 700 records), and which side of the
    limit a candidate falls on is the draw's. Each further fold's release is measured against that fold's own
    held-out records with fresh draws, and the mean over the folds is what the policy reads, its interval
    narrowed by the number of folds (:func:`pooled_reading`). Every fold's reading stays in the record. As on
    the first fold, a release whose singling out breaks the limit is not looked up for linkability (the
    costlier test); a linkability the first fold left out is measured on it first, and on every fold only
    when that reading is near its limit too.
    """
    t = trial.table
    policy = t.policy
    if not t.folds or len(parts) < len(t.folds):
        return tests
    out = dict(tests)
    if "singling_out" in tests_to_repeat(tests, policy):
        out["singling_out"] = _pooled_singling_out(
            [tests["singling_out"]] + [_fold_test("singling_out", trial, parts, i) for i in range(1, len(parts))])
        limit = getattr(policy, "max_singling_out", None)
        if limit is not None and out["singling_out"]["risk"] > limit:
            return out
    if out.get("linkability") is None and "singling_out" in out:
        out["linkability"] = _fold_test("linkability", trial, parts, 0)
    if near_limit(out.get("linkability"), getattr(policy, "max_linkability", None)):
        out["linkability"] = _pooled_test(
            [out["linkability"]] + [_fold_test("linkability", trial, parts, i) for i in range(1, len(parts))])
    return out


def _fold_test(name: str, trial: Trial, parts: list[Released], i: int) -> dict[str, Any]:
    """Singling out (read as the policy reads it) or linkability of fold ``i``'s release ``parts[i]`` against
    that fold's training rows and its held-out control, with the fold's own draws."""
    from ppdm.attacks import linkability, singling_out

    t = trial.table
    train, test = t.folds[i]
    views = mixed_views(trial, [parts[i]], [_cap(train, t, 41), _cap(test, t, 42)])
    if name == "singling_out":
        so = singling_out(*views, rng=np.random.default_rng([int(t.seed), 43, i]))
        return policy_reading(so, getattr(t.policy, "singling_out_control", "audited"))
    rng = np.random.default_rng([int(t.seed), 44] if i == 0 else [int(t.seed), 44, i])
    return linkability(*views, rng=rng, label=t.label_name, n_targets=LINK_TARGETS)


def pooled_reading(readings: list[dict[str, Any]]) -> dict[str, Any]:
    """The mean of one test's readings on several folds (``{risk, risk_raw, interval}`` each): ``risk`` the mean
    of the unfloored excesses floored at 0, ``interval`` the mean's 95 % interval from the folds' own (each
    fold's error read off its interval around its excess; the folds' draws are independent)."""
    raw = np.array([float(r.get("risk_raw", r["risk"])) for r in readings])
    errors = []
    for r, x in zip(readings, raw, strict=True):
        low, high = (float(v) for v in (r.get("interval") or (x, x)))
        errors.append(max(high - x, x - low, 0.0) / 1.96)
    mean = float(raw.mean())
    half = 1.96 * float(np.sqrt(np.sum(np.square(errors)))) / len(readings)
    return {"risk": min(max(mean, 0.0), 1.0), "risk_raw": mean,
            "interval": [min(max(mean - half, 0.0), 1.0), min(max(mean + half, 0.0), 1.0)]}


def _folds(readings: list[dict[str, Any]]) -> dict[str, Any]:
    """What the record keeps of a test's readings on the folds: how many, each one's risk, the first fold's."""
    first = readings[0]
    return {"n": len(readings), "risks": [round(float(r["risk"]), 6) for r in readings],
            "first_fold": {k: first.get(k) for k in ("risk", "interval", "family") if k in first}}


def _pooled_test(readings: list[dict[str, Any]]) -> dict[str, Any]:
    """A test pooled over the folds: the first fold's details, the pooled risk and interval, every fold's."""
    return {**readings[0], **pooled_reading(readings), "folds": _folds(readings)}


def _pooled_singling_out(readings: list[dict[str, Any]]) -> dict[str, Any]:
    """Singling out pooled over the folds, family by family as the policy reads it (:func:`policy_reading`),
    the worst pooled family binding."""
    families = {name: pooled_reading([r["readings"][name] for r in readings]) for name in readings[0]["readings"]}
    worst = max(families, key=lambda k: families[k]["risk"])
    return {**readings[0], "readings": families, "risk": families[worst]["risk"],
            "interval": families[worst]["interval"], "family": worst, "folds": _folds(readings)}


def policy_reading(so: dict[str, Any], control: str) -> dict[str, Any]:
    """Singling out as the policy reads it: the worst family, each read with its control as the auditors' tool
    scales it (``control="audited"``) or at equal sizes (``"equal-size"``). ppdm's targeted family has no
    counterpart in the auditors' tool: it is always read at equal sizes (what the release discloses beyond
    the population's own rarity), so that a table's rarity, which the scaled control counts as risk, is not
    counted twice. The auditors' worst reading stays in the record as ``audited``."""
    readings = {}
    for family in ("univariate", "multivariate", "targeted"):
        f = so[family]
        equal = control == "equal-size" or family == "targeted"
        r = f["equal_size"] if equal else f
        readings[family + (" (equal size)" if equal else "")] = {
            "risk": float(r["risk"]), "risk_raw": float(r.get("risk_raw", r["risk"])), "interval": r.get("interval")}
    worst = max(readings, key=lambda k: readings[k]["risk"])
    return {**so, "audited": {"risk": so["risk"], "interval": so["interval"], "family": so["family"]},
            "readings": readings, "risk": readings[worst]["risk"], "interval": readings[worst]["interval"],
            "family": worst}


def inference_test(trial: Trial, part: Released, train: np.ndarray, test: np.ndarray) -> dict[str, Any]:
    """The inference of every column from the others, members against the control (reported, not limited)."""
    from ppdm.attacks import inference_by_column

    t = trial.table
    release, members, control = mixed_views(trial, [part], [_cap(train, t, 41), _cap(test, t, 42)])
    if len(release.columns) < 2:  # one column: no other column to infer it from
        return {}
    return inference_by_column(release, members, control, rng=_rng(t, 45))


#: the last table's outlyingness in this process (every candidate of a sweep asks it of the same records)
_OUTLYING: dict[str, np.ndarray] = {}


def _outlyingness_of(original: Any) -> np.ndarray:
    """How isolated each of the original's records is (:func:`ppdm.attacks.outlyingness`, on the original's own
    ranges): a property of the table, not of a candidate, computed once per table in a worker."""
    import hashlib

    from ppdm.attacks import column_ranges, outlyingness

    digest = hashlib.sha256(np.ascontiguousarray(original.numbers).tobytes()
                            + np.ascontiguousarray(original.codes).tobytes()).hexdigest()
    if digest not in _OUTLYING:
        _OUTLYING.clear()
        _OUTLYING[digest] = outlyingness(original, k=int(min(5, original.n_rows - 1)),
                                         ranges=column_ranges(original))
    return _OUTLYING[digest]


def membership_of(trial: Trial, parts: list[Released]) -> dict[str, Any]:
    """Membership inference from the distance to the closest released row (see the module): ``parts`` are the
    releases of the folds' training rows, in the folds' order."""
    from ppdm.attacks import (
        column_ranges,
        distance_to_closest,
        membership_advantage,
        paired_outlier_advantage,
    )

    t = trial.table
    folds = t.folds or []
    if len(parts) < 2:
        train, test = folds[0]
        release, members, control = mixed_views(trial, parts[:1], [_cap(train, t, 41), _cap(test, t, 42)])
        from ppdm.attacks.anonymisation import membership_test

        return {**membership_test(release, members, control, rng=_rng(t, 46)), "paired": False}
    held = [_cap(test, t, 50 + f) for f, (_, test) in enumerate(folds)]
    everyone = np.sort(np.concatenate(held))
    *released, original = mixed_views(trial, parts, [everyone])
    ranges = column_ranges(*released, original)
    dcr_in, dcr_out = [], []
    for f, rows in enumerate(held):
        # the fold's held-out records: non-members of its release, members of the next fold's
        people = original.take(np.searchsorted(everyone, rows))
        dcr_out.append(distance_to_closest(people, released[f], ranges=ranges, rng=_rng(t, 60 + f)))
        dcr_in.append(distance_to_closest(people, released[(f + 1) % len(folds)], ranges=ranges, rng=_rng(t, 70 + f)))
    order = np.argsort(np.concatenate(held), kind="stable")  # the records in ``everyone``'s order
    d_in, d_out = np.concatenate(dcr_in)[order], np.concatenate(dcr_out)[order]
    outlying = _outlyingness_of(original)
    overall = membership_advantage(d_in, d_out)
    outliers = paired_outlier_advantage(d_in, d_out, outlying, overall["threshold"])
    return {"overall": overall, "outliers": outliers, "paired": True,
            "measure": "distance to the closest released row (Gower); each record a member of one fold's "
                       "release and a non-member of the fold that held it out"}
