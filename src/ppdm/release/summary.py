"""Plain-words summary of a release record, and the aggregate plot data the report needs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["summary_text", "plot_data", "skipped_line"]

_OBJECTIVE_NAMES = {"tstr_knn_pct": "k-NN trained on the release and tested on real held-out records",
                    "tstr_logreg_pct": "logistic regression trained on the release and tested on real held-out "
                                       "records",
                    "knn_pct": "k-NN accuracy", "svm_pct": "SVM accuracy", "kmeans_pct": "K-means accuracy",
                    "neighbour_pct": "nearest-neighbour preservation"}


def summary_text(record: dict[str, Any]) -> list[str]:
    """A few sentences a data steward can read: what was chosen, the risk, the utility."""
    ch = record["chosen"]
    obj = record["policy"]["objective"]
    params = ", ".join(f"{k}={v}" for k, v in ch["params"].items()) or "default parameters"
    risk = ch["risk"]
    lines = [
        (f"Released with {ch['candidate']} (numbers and categories each by its own mechanism); relative error "
         f"RE = {ch['value']['re']:.4f}." if "+" in ch["method"] and ch.get("candidate") else
         f"Released with {ch['method']} ({params}); relative error RE = {ch['value']['re']:.4f}."),
        f"Threat model: {record['threat']['description']}. The attacker knows the mechanism and its published "
        "parameters, never its random draws (Kerckhoffs). Under it the strongest attack "
        f"({risk.get('reidentification_attack') or 'linkage'}) re-identifies {risk['reidentification']:.1%} of the "
        f"records (chance {1 / max(record['input']['n_rows'], 1):.2%}).",
    ]
    if "within_5pct_aligned" in risk:
        lines.append(
            f"Values: reading the row an attacker finds for a person ({risk['within_5pct_attack']}) recovers "
            f"{risk['within_5pct']:.1%} more of their values within +-5 % than the same attack gets for people who are "
            "not in the release (beyond the column-median guess); an attacker who already knew each person's row "
            f"would read {risk['within_5pct_aligned']:.1%} ({risk['within_5pct_aligned_attack']}).")
    else:
        lines.append(
            f"Values: the strongest reconstruction recovers {risk['within_5pct']:.1%} of the values within +-5 % "
            f"beyond what guessing each column's median gets ({risk.get('within_5pct_raw', risk['within_5pct']):.1%} "
            f"of all values; the median guess {risk.get('within_5pct_median_guess', 0.0):.1%}).")
    choice = record.get("choice")
    if choice and choice["by"] == "steward":
        lines.append(f"Chosen by the data steward in place of the policy's choice ({choice['policy']}): "
                     f"{choice['steward']}, because: {choice['reason']}")
    elif choice:
        lines.append(f"The data steward confirmed the policy's choice ({choice['policy']}), because: "
                     f"{choice['reason']}")
    tests = _tests_line(risk)
    if tests:
        lines.append(tests)
    g = record.get("guarantee")
    if g:
        public = f" Public (not measured): {'; '.join(g['public'])}." if g.get("public") else ""
        lines.append(
            f"Formal guarantee: ({g['epsilon']:g}, {g['delta']:g})-differential privacy for {g['unit']} "
            f"(OpenDP's accountant: {g['epsilon_spent']:.4g}, {g['delta_spent']:.3g} spent; column bounds "
            f"{g['bounds']}).{public} Not covered: {'; '.join(g['not_covered'])}.")
    skipped = record.get("skipped_methods") or {}
    if skipped:
        lines.append(skipped_line(skipped))
    key = record.get("key", {})
    if key.get("seed_known"):
        lines.append("WARNING: the release was made with a known seed: anyone who knows or guesses it can regenerate "
                     "the random draws and undo the release.")
        if g:  # a formal mechanism's noise comes from OpenDP's own generator, which no seed repeats
            lines.append("The seed does not repeat the formal guarantee's noise (OpenDP draws it from its own secure "
                         "generator): another run with the same seed gives another release.")
    chosen = next((c for c in record.get("candidates", []) if c.get("chosen")), None)
    link = next((a for a in (chosen or {}).get("attacks", []) if a.get("attack") == "linkage"), None)
    det = (link or {}).get("details", {})
    if "unique_share" in det:
        which = ("The released categorical columns and the label" if record.get("whole_table") else
                 "The columns that reach the release unchanged (the label and passed-through columns)")
        lines.append(f"{which} single out {det['unique_share']:.1%} of the records; the smallest group sharing their "
                     f"values has {det['k_anonymity']} record(s) (k-anonymity).")
    su = det.get("special_uniques")
    if su and su.get("subsets"):
        line = (f"Special uniques (unique on at most {su['max_size']} of the categorical columns, as SUDA finds them): "
                f"{su['original_share']:.1%} of the original records; {su['pointing_share']:.1%} of the released rows "
                "are unique on such a subset whose values single out one real person")
        if su.get("correct_share") is not None:
            line += f", and {su['correct_share']:.2%} single out their own (chance {su['chance']:.2%})"
        lines.append(line + ".")
    if record.get("formula_cells"):
        f = record["formula_cells"]
        cols = ", ".join(f"'{k}' ({v})" for k, v in f["columns"].items())
        lines.append(("Escaped" if f["escaped"] else "WARNING: passed through")
                     + f" text cells that spreadsheets run as formulas: {cols}"
                     + ("." if f["escaped"] else "; release with --escape-formulas to prefix them with '."))
    if record.get("utility_note"):
        lines.append(f"Note: {record['utility_note']}.")
    ident = record.get("identity", {}).get("layout")
    if ident:
        lines.append(f"Identity: {ident}.")
    orig = record["original_utility"].get(obj)
    name = _OBJECTIVE_NAMES.get(obj, obj)
    if orig is not None:
        line = f"{name}: {ch['utility'][obj]:.1f} % on the release vs {orig:.1f} % on the original"
        maj = record["original_utility"].get("majority_pct")
        if obj in ("tstr_knn_pct", "tstr_logreg_pct") and maj is not None and orig > maj:
            kept = (ch["utility"][obj] - maj) / (orig - maj)
            line += f" (majority class {maj:.1f} %: the release keeps {kept:.0%} of the signal above it)"
        lines.append(line + ".")
    for col, r in (record.get("chosen", {}).get("risk", {}).get("sensitive") or {}).items():
        inf = r["attribute_inference"]
        line = (f"Sensitive column '{col}': a model learnt from the release infers it from the quasi-identifiers for "
                f"{inf['members']:.1%} of the people in the release and {inf['control']:.1%} of people not in it "
                f"({inf['excess']:.1%} beyond that control)")
        if "l_diversity" in r:
            ld = r["l_diversity"]
            line += (f"; l-diversity {ld['l']} ({ld['share_in_uniform_groups']:.1%} of the records in groups with a "
                     "single value)")
        lines.append(line + ".")
    fid = record.get("fidelity")
    if fid and fid.get("mean_marginal_distance") is not None:
        pair = fid["pairwise"]
        lines.append(f"Fidelity: column distributions differ by {fid['mean_marginal_distance']:.3f} on average "
                     "(Kolmogorov-Smirnov for numbers, total variation for categories; 0 is the same); the "
                     f"association of a pair of columns changes by {pair['mean_abs_difference']:.3f} on average "
                     f"(at most {pair['max_abs_difference']:.3f}).")
    n = len(record["candidates"])
    pol = record["policy"]
    limits = (f"(re-identification <= {pol['max_reidentification']:.0%} beyond chance, values disclosed beyond the "
              f"control <= {pol['max_within_5pct']:.0%}"
              + (f", singling out <= {pol['max_singling_out']:.0%} and linkability <= {pol['max_linkability']:.0%} "
                 "beyond the control" if "max_singling_out" in pol else "")
              + (f", sensitive columns inferred beyond the control <= {pol['max_attribute_inference']:.0%}"
                 if "max_attribute_inference" in pol and any(c.get("role") == "sensitive"
                                                             for c in record.get("columns") or ()) else "")
              + ")")
    confirmed = [c for c in record["candidates"] if (c.get("measured_on") or {}).get("stage") == "confirmation"]
    if confirmed:
        passed = sum(1 for c in record["candidates"] if c["verdict"].startswith("screened")
                     and "violates the policy there" not in c["verdict"]) + sum(
            1 for c in confirmed if c["measured_on"].get("screening", {}).get("met_policy"))
        held = sum(1 for c in confirmed if not c["verdict"].startswith("violates"))
        lines.append(f"{n} candidates were screened on a sample, {passed} met the policy there; "
                     f"{len(confirmed)} were confirmed on every row and {held} held it {limits}.")
    else:
        feasible = sum(1 for c in record["candidates"] if not c["verdict"].startswith("violates"))
        lines.append(f"{n} candidates were tried; {feasible} met the policy {limits}.")
    if record.get("not_measured_candidates"):
        lines.append(f"{len(record['not_measured_candidates'])} formally private candidate(s) were not measured: "
                     "the ends of their epsilon ladder settled them (see the table).")
    if record.get("failed_candidates"):
        lines.append(f"{len(record['failed_candidates'])} candidate(s) failed and were left out (see the table).")
    return lines


def _tests_line(risk: dict[str, Any]) -> str | None:
    """The tests of anonymisation of the chosen release in one sentence (None when they were not measured)."""
    so, lk, mb = risk.get("singling_out"), risk.get("linkability"), risk.get("membership")
    if not so and not lk:
        return None
    parts = []
    if so:
        f = so.get("folds")
        folds = f"the mean of {f['n']} folds' releases, the first fold {f['first_fold']['risk']:.1%}; " if f else ""
        parts.append(f"singling out {so['risk']:.1%} ({so.get('family', '')} predicates; {folds}"
                     f"{(so.get('equal_size') or {}).get('risk', 0.0):.1%} against a control as large as the table)")
    if lk:
        parts.append("linkability not applicable (one column)" if lk.get("not_applicable")
                     else f"linkability {lk['risk']:.1%}" + (f" (the mean of {lk['folds']['n']} folds' releases)"
                                                            if "folds" in lk else ""))
    if mb:
        parts.append(f"membership advantage {mb['overall']['advantage']:.1%} overall and "
                     f"{mb['outliers']['advantage']:.1%} on the {mb['outliers'].get('n_outliers', 20)} most outlying "
                     "records")
    return ("Tests of anonymisation, beyond real records the release did not contain: " + ", ".join(parts) + ".")


def skipped_line(skipped: dict[str, str]) -> str:
    """One sentence for the default candidates this sweep left out (the formally private ones without the ``dp``
    extra): which, and the one command that adds them."""
    fixes = sorted({why.split("install it with: ")[-1] for why in skipped.values()})
    return (f"Not in this sweep: the formally private candidates {', '.join(sorted(skipped))} (their dependencies "
            f"are not installed; add them with: {' and '.join(fixes)}).")


def plot_data(
    X: np.ndarray, B: np.ndarray, y: np.ndarray | None, columns: Sequence[str], *, seed: int = 0,
    n_pairs: int = 3000, n_hist: int = 4,
) -> dict[str, Any]:
    """Aggregates for the report's plots: a sample of pairwise distances and a few histograms.

    Only aggregates leave this function (distances of a seeded sample of pairs, histogram counts), never
    rows of the table.
    """
    rng = np.random.default_rng(seed)
    n = len(X)
    i = rng.integers(0, n, size=n_pairs)
    j = rng.integers(0, n, size=n_pairs)
    keep = i != j
    from ppdm.utils.linalg import column_mean_std

    sx = column_mean_std(X, ddof=0)[1]  # no centred copy of a large table
    sx[sx == 0] = 1.0
    d_orig = np.linalg.norm((X[i[keep]] - X[j[keep]]) / sx, axis=1)
    d_rel = np.linalg.norm((B[i[keep]] - B[j[keep]]) / sx, axis=1)
    hists = []
    for c in range(min(n_hist, X.shape[1])):
        lo = float(min(X[:, c].min(), B[:, c].min()))
        hi = float(max(X[:, c].max(), B[:, c].max()))
        edges = np.linspace(lo, hi if hi > lo else lo + 1, 31)
        hists.append({"column": str(columns[c]), "edges": edges,
                      "original": np.histogram(X[:, c], edges)[0], "release": np.histogram(B[:, c], edges)[0]})
    return {"shepard": {"original": d_orig, "release": d_rel}, "histograms": hists}
