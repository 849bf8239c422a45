"""Score one candidate release: distortion, utility and attack results (all JSON-able, no keys)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ppdm.utils.rows import row_dtype

__all__ = ["utility_scores", "score_candidate", "risk_of", "holdout_split", "holdout_folds",
           "train_on_release_accuracy", "binomial_interval", "pooled", "scalar_items", "sensitive_risk",
           "linked_value_disclosure", "tstr_scores", "with_linked_risk"]

#: bump when the scoring changes, so cached results are recomputed
SCORING_VERSION = 7


#: cross-validated utilities (an RBF SVM is quadratic or worse in the rows) run on a seeded stratified sample
#: of at most this many rows, the same rows for the original and every candidate; the record says so
UTILITY_SAMPLE = 5000
#: the RBF SVM's cross-validation (quadratic or worse in the rows) runs on at most this many of those rows
SVM_SAMPLE = 2000
#: train-on-release models learn from at most this many released rows (a seeded stratified sample)
TSTR_TRAIN_SAMPLE = 20_000
#: train-on-release accuracy is pooled over disjoint held-out folds until about this many real records were
#: tested (at most :data:`TSTR_MAX_FOLDS` folds): on 600 held-out records a 95 % interval is about +-3 points,
#: wider than the differences between the best candidates, so one split would pick among them by chance
TSTR_TESTED = 5000
TSTR_MAX_FOLDS = 5


def stratified_sample(y: np.ndarray, size: int, seed: int) -> np.ndarray | None:
    """Sorted row indices of a seeded sample of ``size`` rows with the label's class shares (None: all rows).

    Each class (classes compared as text) gets its share of ``size``, rounded by largest remainders, drawn
    without replacement; a label with a single-record class is sampled as a whole. It holds a code per row and
    one class's rows at a time: 20,000 of a million labels take 33 MB and 0.1 s (a stratified split of
    scikit-learn lists every row not drawn as a Python integer: 79 MB and 10 s).
    """
    n = len(y)
    if n <= size:
        return None
    rng = np.random.default_rng(seed)
    y = np.asarray(y)
    # text, integers and booleans are equal exactly when their text is; anything else is compared as text
    codes = np.unique(y if y.dtype.kind in "USbiu" else y.astype(str), return_inverse=True)[1].ravel()
    counts = np.bincount(codes)
    if counts.min() < 2:
        return np.sort(rng.choice(n, size=size, replace=False))
    share = size * counts / n
    take = np.floor(share).astype(np.int64)
    take[np.argsort(take - share, kind="stable")[:size - int(take.sum())]] += 1  # the largest remainders
    keep = np.empty(size, dtype=np.int64)
    at = 0
    for c, k in enumerate(take):
        keep[at:at + k] = rng.choice(np.flatnonzero(codes == c), size=k, replace=False)
        at += k
    keep.sort()
    return keep


def utility_scores(X: np.ndarray, y: np.ndarray | None, *, seed: int = 0) -> dict[str, float]:
    """k-NN (k=4) and RBF-SVM 5-fold accuracy and K-means accuracy (%), or neighbour preservation.

    Above :data:`UTILITY_SAMPLE` rows they are measured on a seeded stratified sample of that many rows (the
    same rows for every table of one label and seed): a 95 % interval of about +-1.4 points at 5,000 rows;
    the RBF SVM on at most :data:`SVM_SAMPLE` of them.
    """
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from ppdm.metrics import kmeans_accuracy

    if y is None:
        return {}
    rows = stratified_sample(np.asarray(y), UTILITY_SAMPLE, seed)
    if rows is not None:
        X, y = X[rows], np.asarray(y)[rows]
    classes, counts = np.unique(y, return_counts=True)
    folds = int(max(2, min(5, counts.min())))
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    out = {}
    out["knn_pct"] = 100.0 * float(np.mean(cross_val_score(make_pipeline(StandardScaler(), KNeighborsClassifier(4)),
                                                           X, y, cv=cv)))
    # the SVM on a smaller stratified sample of those rows (95 % interval about +-2.2 points at 2,000)
    few = stratified_sample(np.asarray(y), SVM_SAMPLE, seed)
    Xs, ys = (X, y) if few is None else (X[few], np.asarray(y)[few])
    cv_s = StratifiedKFold(int(max(2, min(5, np.unique(ys, return_counts=True)[1].min()))), shuffle=True,
                           random_state=seed)
    out["svm_pct"] = 100.0 * float(np.mean(cross_val_score(make_pipeline(StandardScaler(), SVC(kernel="rbf", C=1.0)),
                                                           Xs, ys, cv=cv_s)))
    out["kmeans_pct"] = kmeans_accuracy(X, y)
    return out


def holdout_split(y: np.ndarray, *, share: float = 0.2, max_rows: int = 5000, seed: int = 0,
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows a candidate is trained on and real rows held out for testing (stratified, seeded).

    None when the label cannot be split (a class with a single record, or one class only).
    """
    classes, counts = np.unique(np.asarray(y).astype(str), return_counts=True)
    if len(classes) < 2 or counts.min() < 2 or len(y) < 10:
        return None
    from sklearn.model_selection import train_test_split

    n_test = int(min(max_rows, max(len(classes), round(share * len(y)))))
    idx = np.arange(len(y))
    train, test = train_test_split(idx, test_size=n_test, stratify=np.asarray(y).astype(str), random_state=seed)
    # row numbers held for the whole sweep: 32 bits each on any table that fits them
    return np.sort(train).astype(row_dtype(len(y))), np.sort(test).astype(row_dtype(len(y)))


def holdout_folds(y: np.ndarray, *, share: float = 0.2, max_rows: int = 5000, seed: int = 0,
                  tested: int = TSTR_TESTED) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Disjoint held-out folds (train rows, test rows) for train-on-release utility, the first one included.

    Each fold holds out about ``share`` of the rows (at most ``max_rows``), stratified by the label; folds are
    added until about ``tested`` real records are tested in all or :data:`TSTR_MAX_FOLDS` are reached. A
    table whose first held-out part already has ``tested`` rows gets the single split of
    :func:`holdout_split`. None when the label cannot be split.
    """
    first = holdout_split(y, share=share, max_rows=max_rows, seed=seed)
    if first is None:
        return None
    n_test = len(first[1])
    wanted = min(TSTR_MAX_FOLDS, -(-tested // n_test), max(2, round(len(y) / n_test)))
    labels = np.asarray(y).astype(str)
    _, counts = np.unique(labels, return_counts=True)
    n_splits = max(2, round(len(y) / n_test))
    if wanted < 2 or counts.min() < n_splits:
        return [first]
    from sklearn.model_selection import StratifiedKFold

    splits = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(np.zeros(len(y)), labels)
    return [(np.sort(tr), np.sort(te)) for _, (tr, te) in zip(range(wanted), splits, strict=False)]


def train_on_release_accuracy(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray, k: int = 5) -> float:
    """k-NN trained on a release and tested on real records the release did not contain (%).

    The analyst standardises with the release's own statistics (they never see the original's).
    """
    from sklearn.neighbors import KNeighborsClassifier

    mu = B.mean(axis=0)
    sd = B.std(axis=0, ddof=1)
    sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
    clf = KNeighborsClassifier(min(k, len(B))).fit((B - mu) / sd, np.asarray(y_b).astype(str))
    return 100.0 * float((clf.predict((T - mu) / sd) == np.asarray(y_t).astype(str)).mean())


def train_on_release_logreg(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray,
                            numeric: np.ndarray | None = None) -> float:
    """Logistic regression trained on a release and tested on real records the release did not contain (%).

    The usual protocol for released microdata: standardised numbers (with the release's own statistics) and
    one-hot categories as they are. ``numeric`` are the columns to standardise (default: all of them).
    """
    from sklearn.linear_model import LogisticRegression

    cols = np.arange(B.shape[1]) if numeric is None else np.asarray(numeric, dtype=int)
    B, T = B.copy(), T.copy()
    if cols.size:
        mu = B[:, cols].mean(axis=0)
        sd = B[:, cols].std(axis=0, ddof=1)
        sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
        B[:, cols] = (B[:, cols] - mu) / sd
        T[:, cols] = (T[:, cols] - mu) / sd
    labels = np.asarray(y_b).astype(str)
    if len(np.unique(labels)) < 2:  # a release with one class left: the model predicts it
        return 100.0 * float((np.asarray(y_t).astype(str) == labels[0]).mean())
    clf = LogisticRegression(max_iter=2000).fit(B, labels)
    return 100.0 * float((clf.predict(T) == np.asarray(y_t).astype(str)).mean())


def tstr_scores(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray, *, seed: int,
                numeric: np.ndarray | None = None) -> dict[str, float]:
    """k-NN and logistic regression trained on a release (at most :data:`TSTR_TRAIN_SAMPLE` of its rows, a
    seeded stratified sample) and tested on real records ``T`` it did not contain (%)."""
    fit_rows = stratified_sample(y_b, TSTR_TRAIN_SAMPLE, seed)
    B_fit, y_fit = (B, y_b) if fit_rows is None else (B[fit_rows], y_b[fit_rows])
    return {"tstr_knn_pct": train_on_release_accuracy(B_fit, y_fit, T, y_t),
            "tstr_logreg_pct": train_on_release_logreg(B_fit, y_fit, T, y_t, numeric)}


def pooled(scores: list[tuple[int, dict[str, float]]]) -> dict[str, float]:
    """Accuracies of disjoint held-out folds pooled over their records (weighted by each fold's size)."""
    total = sum(n for n, _ in scores)
    return {k: sum(n * d[k] for n, d in scores) / total for k in scores[0][1]}


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


def neighbour_preservation(A: np.ndarray, B: np.ndarray, k: int = 10, sample: int = 2000, seed: int = 0) -> float:
    """Share (%) of each record's k nearest neighbours that stay among its k nearest in the release."""
    from ppdm.utils.neighbors import nearest_neighbors

    n = len(A)
    idx = np.random.default_rng(seed).choice(n, size=min(n, sample), replace=False)
    k = min(k, n - 1)
    # exact brute-force search of the sampled rows against every row (trees degrade in many dimensions)
    na = nearest_neighbors(A[idx], A, k + 1)[:, 1:]
    nb = nearest_neighbors(B[idx], B, k + 1)[:, 1:]
    return 100.0 * float(np.mean([len(set(a) & set(b)) / k for a, b in zip(na, nb, strict=True)]))


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


def score_candidate(
    X: np.ndarray,
    y: np.ndarray | None,
    method: str,
    params: dict[str, Any],
    *,
    preprocess: str,
    threat: str,
    seed: int,
    key_seed: object = None,
    columns: list[str] | None = None,
    categories: np.ndarray | None = None,
    holdout: tuple[np.ndarray, np.ndarray] | None = None,
    seed_known: bool = False,
    codec: Any = None,
    more_folds: list[tuple[np.ndarray, np.ndarray]] | None = None,
    screening: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Release ``X`` with one candidate and score it. Runs in a worker process; returns plain data.

    ``key_seed`` seeds the mechanism's draws (the release key's mechanism stream, so the chosen candidate is
    the very release that is published); ``seed`` seeds the evaluation (folds, attack samples).
    ``categories`` are the passed-through columns (label included) that reach the release unchanged.
    ``holdout`` (train rows, test rows): the candidate is also fitted on the train rows alone and a k-NN
    classifier trained on that release is tested on the real test rows (``tstr_knn_pct``).
    ``more_folds``: further disjoint (train rows, test rows) splits; the train-on-release accuracies are
    pooled over the held-out records of every fold (the linked risk uses the first split only).

    ``screening`` (``{"objective": ..., "max_reidentification": ...}``: a large table's screening stage, which
    only ranks and rejects) measures the policy's objective alone among the utilities, and attacks by
    linkage first: a candidate whose re-identification beyond chance already exceeds the limit is rejected
    without the other attacks and without utility (``screened_out`` says so).

    With a ``codec`` (a whole table), ``X`` is its design matrix. Each release is decoded into the table it
    publishes (types, ranges, categories) and scored as published: utility on its re-encoded design, value
    measures and attacks on its numbers in their units, with its categorical columns beside them.
    """
    import warnings

    from ppdm.attacks import run_attacks_named
    from ppdm.flow.synthesis import release_design, with_label
    from ppdm.metrics import value_metrics
    from ppdm.release.candidates import build_candidate, numeric_part

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mech = build_candidate(method, params, random_state=seed if key_seed is None else key_seed, codec=codec)
        # a mechanism that synthesises the whole record releases its own label (see ppdm.flow.synthesis)
        B, y_rel = release_design(X, mech, preprocess=preprocess, y=y, codec=codec)
    if B.shape != X.shape:
        raise ValueError(f"{method} changes the number of columns; value metrics need the same columns")
    X_att, B_att, cats_o, cats_r = X, B, categories, with_label(categories, y_rel, y)
    if codec is not None:
        # scored as published: decoded (rounded, clipped, categories chosen) and re-encoded
        original, published = codec.decode_parts(X), codec.decode_parts(B, rng=draws(key_seed, seed, 1))
        B = B_att = codec.encode_decoded(published)  # what is measured is what is published
        if codec.numeric_names:
            X_att, B_att = original.numbers, published.numbers
            columns = codec.numeric_names
        side = np.zeros((X.shape[0], 0), dtype=object) if categories is None else categories
        cats_o = np.column_stack([codec.filled(original), side])
        cats_r = np.column_stack([codec.filled(published), with_label(side, y_rel, y)])
    value = value_metrics(X_att, B_att)
    # the attacker knows the mechanism and its parameters (Kerckhoffs); a key drawn from OS entropy is beyond
    # any seed scan, so the seed search runs only when the seed was chosen by the user
    # (a combined candidate's key search replays its numeric mechanism: the one the numbers went through)
    replayed, replayed_params = numeric_part(method, params)
    mechanism = {"method": replayed, "params": replayed_params, "preprocess": preprocess, "y": y}
    cats = None if cats_o is None or cats_o.shape[1] == 0 else (cats_o, cats_r)

    def attack(names: list[str] | None) -> list[dict[str, Any]]:
        # one seed per attack keeps the sweep affordable; `ppdm attack` reports intervals over seeds
        return [scalar_items(r.to_dict()) for r in run_attacks_named(
            X_att, B_att, threat, attacks=names, random_state=seed, n_seeds=1, columns=columns, categories=cats,
            mechanism=mechanism, seed_scan=1000 if seed_known else 0)]

    first: list[dict[str, Any]] = []
    rest: list[str] = []
    if screening is not None:
        from ppdm.attacks import ThreatModel, applicable_attacks

        # the battery's seeds depend on the attack, not on which others run: linkage first, the rest after
        battery = [a for a in applicable_attacks(ThreatModel.parse(threat), True) if seed_known or a != "seed_search"]
        if "linkage" in battery:
            rest = [a for a in battery if a != "linkage"]
            first = attack(["linkage"])
            risk = risk_of(first)
            if risk["reidentification_excess"] > screening["max_reidentification"]:
                return {"method": method, "params": params, "value": value, "utility": {}, "attacks": first,
                        "risk": risk, "seconds": time.perf_counter() - t0,
                        "screened_out": "re-identification by linkage beyond the policy on the sample: the other "
                                        "attacks and the utility were not measured"}
    objective = None if screening is None else screening["objective"]
    util = {}
    if objective is None or objective in ("knn_pct", "svm_pct", "kmeans_pct"):
        util = utility_scores(B, y_rel, seed=seed)
    if objective is None or objective == "neighbour_pct":
        util["neighbour_pct"] = neighbour_preservation(X, B, seed=seed)
    linked, sensitive = None, None
    if holdout is not None and y is not None:
        train, test = holdout

        def fit_on(rows: np.ndarray) -> tuple[np.ndarray, Any, Any]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mech_t = build_candidate(method, params, random_state=seed if key_seed is None else key_seed,
                                         codec=codec)
                B_rows, y_rows = release_design(X[rows], mech_t, preprocess=preprocess, y=y[rows], codec=codec)
            if codec is None:
                return B_rows, None, y_rows
            pub = codec.decode_parts(B_rows, rng=draws(key_seed, seed, 2))
            return codec.encode_decoded(pub), pub, y_rows

        B_t, published_t, y_t = fit_on(train)
        numeric = None if codec is None else codec.numeric_index_
        scores = [(len(test), tstr_scores(B_t, y_t, X[test], y[test], seed=seed, numeric=numeric))]
        for tr, te in more_folds or ():
            B_f, _, y_f = fit_on(tr)
            scores.append((len(te), tstr_scores(B_f, y_f, X[te], y[te], seed=seed, numeric=numeric)))
        util.update(pooled(scores))
        if codec is not None and B_t.shape == X[train].shape:
            B_t_att = published_t.numbers if codec.numeric_names else B_t
            linked = linked_value_disclosure(X_att[train], B_t_att, X_att[test])
            sensitive = sensitive_risk(codec, X[train], X[test], B_t, original.take(train), original.take(test),
                                       published_t, published, rows=train)
        else:
            linked = linked_value_disclosure(X[train], B_t, X[test]) if B_t.shape == X[train].shape else None
    if first:
        from ppdm.attacks import ATTACKS

        order = list(ATTACKS)
        attacks = sorted(first + (attack(rest) if rest else []), key=lambda a: order.index(a["attack"]))
    else:
        attacks = attack(None)
    risk = with_linked_risk(risk_of(attacks), linked if holdout is not None and y is not None else None,
                            sensitive)
    return {
        "method": method,
        "params": params,
        "value": value,
        "utility": util,
        "attacks": attacks,
        "risk": risk,
        "seconds": time.perf_counter() - t0,
    }


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
        inf = attribute_inference(B_t[:, q], codec.values_of(released_t, s), X_tr[members][:, q],
                                  codec.values_of(original_tr, s)[members], X_test[:, q],
                                  codec.values_of(original_test, s), numeric=numeric)
        out[s] = {"attribute_inference": inf}
        if not numeric:
            qi_values = (np.column_stack([codec.values_of(published, c) for c in cat_qis]) if cat_qis
                         else np.zeros((published.rows, 0), dtype=object))
            out[s]["l_diversity"] = l_diversity(qi_values, codec.values_of(published, s))
    return out
