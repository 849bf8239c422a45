"""What an analyst gets from a candidate release: models trained on it and tested on real records it did not
contain (train on release, test on real), cross-validated accuracies on the release itself, neighbour
preservation, and the held-out folds they are measured on."""

from __future__ import annotations

import numpy as np

from ppdm.utils.rows import row_dtype

__all__ = ["UTILITY_SAMPLE", "SVM_SAMPLE", "TSTR_TRAIN_SAMPLE", "TSTR_TESTED", "TSTR_MAX_FOLDS", "REPEAT_TESTED",
           "REPEAT_MAX", "stratified_sample", "utility_scores", "holdout_split", "holdout_folds", "repeat_folds",
           "random_folds", "train_on_release_accuracy", "train_on_release_logreg", "knn_predictions",
           "logreg_predictions", "tstr_hits", "tstr_scores", "pooled", "hit_rates", "objective_hits",
           "neighbour_preservation"]


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
#: a small table whose folds test every record once is split again (fresh folds of every row) until about this
#: many predictions are made, at most :data:`REPEAT_MAX` times in all: on German credit's 700 records, seven
#: seeds of the same two MDAV candidates measured on one set of folds differed by -3.1 to +1.0 points, so the
#: choice among close candidates was the split's
REPEAT_TESTED = 2000
REPEAT_MAX = 3


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
    from ppdm.utils.threads import openmp_threads_for

    out = {}
    with openmp_threads_for(X.size * len(X) / folds):  # each fold searches its fifth among the rest
        out["knn_pct"] = 100.0 * float(np.mean(cross_val_score(
            make_pipeline(StandardScaler(), KNeighborsClassifier(4)), X, y, cv=cv)))
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
    n_splits, wanted = _fold_counts(len(y), len(first[1]), tested)
    labels = np.asarray(y).astype(str)
    _, counts = np.unique(labels, return_counts=True)
    if wanted < 2 or counts.min() < n_splits:
        return [first]
    from sklearn.model_selection import StratifiedKFold

    splits = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(np.zeros(len(y)), labels)
    return [(np.sort(tr), np.sort(te)) for _, (tr, te) in zip(range(wanted), splits, strict=False)]


def repeat_folds(y: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]] | None, *, seed: int = 0,
                 tested: int = REPEAT_TESTED, most: int = REPEAT_MAX) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Further splits of a small table's rows into as many stratified folds as ``folds``, each repetition with
    its own shuffle, for the train-on-release utility of the candidates that can still be chosen (repeated
    cross-validation): until about ``tested`` predictions are made, at most ``most`` repetitions in all.

    None when ``folds`` do not hold out every record once (a larger table: its folds test enough records) or one
    repetition already makes ``tested`` predictions.
    """
    if not folds or len(folds) < 2 or sum(len(te) for _, te in folds) != len(y):
        return None
    repeats = min(most, -(-tested // len(y)))
    if repeats < 2:
        return None
    from sklearn.model_selection import StratifiedKFold

    labels, dtype, out = np.asarray(y).astype(str), row_dtype(len(y)), []
    for r in range(1, repeats):
        splits = StratifiedKFold(n_splits=len(folds), shuffle=True, random_state=(seed + r) % 2**32)
        out += [(np.sort(tr).astype(dtype), np.sort(te).astype(dtype))
                for tr, te in splits.split(np.zeros(len(y)), labels)]
    return out


def _fold_counts(n: int, n_test: int, tested: int) -> tuple[int, int]:
    """Into how many folds ``n`` rows split with ``n_test`` held out each, and how many of them are used: until
    about ``tested`` records are held out in all, at most :data:`TSTR_MAX_FOLDS`."""
    n_splits = max(2, round(n / n_test))
    return n_splits, min(TSTR_MAX_FOLDS, -(-tested // n_test), n_splits)


def random_folds(n: int, *, share: float = 0.2, max_rows: int = 5000, seed: int = 0, tested: int = TSTR_TESTED,
                 many: bool = True) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Disjoint held-out folds (train rows, test rows) of a table without a label to stratify by, sized as
    :func:`holdout_folds` sizes them (``many=False``: one split). Their held-out rows are the real people
    outside a fold's release that the tests of singling out, linkability and membership compare against.
    None below 10 rows."""
    if n < 10:
        return None
    from sklearn.model_selection import KFold

    n_splits, wanted = _fold_counts(n, int(min(max_rows, max(2, round(share * n)))), tested)
    wanted = wanted if many else 1
    splits = KFold(n_splits=n_splits, shuffle=True, random_state=seed).split(np.zeros(n))
    dtype = row_dtype(n)
    return [(np.sort(tr).astype(dtype), np.sort(te).astype(dtype))
            for _, (tr, te) in zip(range(max(1, wanted)), splits, strict=False)]


def knn_predictions(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, k: int = 5) -> np.ndarray:
    """Classes a k-NN trained on a release predicts for real records ``T`` (as text).

    The analyst standardises with the release's own statistics (they never see the original's).
    """
    from sklearn.neighbors import KNeighborsClassifier

    mu = B.mean(axis=0)
    sd = B.std(axis=0, ddof=1)
    sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
    from ppdm.utils.threads import openmp_threads_for

    clf = KNeighborsClassifier(min(k, len(B))).fit((B - mu) / sd, np.asarray(y_b).astype(str))
    with openmp_threads_for(B.size * len(T)):
        return clf.predict((T - mu) / sd)


def logreg_predictions(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, numeric: np.ndarray | None = None
                       ) -> np.ndarray:
    """Classes a logistic regression trained on a release predicts for real records ``T`` (as text).

    The usual protocol for released microdata: standardised numbers (with the release's own statistics) and
    one-hot categories as they are. ``numeric`` are the columns to standardise (default: all of them); the
    others are a whole table's indicators (:class:`~ppdm.data.codec.TableCodec`'s design), which hold
    :data:`~ppdm.data.codec.ONE_HOT_WEIGHT` where they are on: they are given back as 0/1 indicators, since the
    model's L2 penalty depends on their scale (weighted, the categories' coefficients were penalised twice as
    much as an analyst's model penalises them).
    """
    from sklearn.linear_model import LogisticRegression

    from ppdm.data.codec import ONE_HOT_WEIGHT

    cols = np.arange(B.shape[1]) if numeric is None else np.asarray(numeric, dtype=int)
    B, T = B.copy(), T.copy()
    if cols.size:
        mu = B[:, cols].mean(axis=0)
        sd = B[:, cols].std(axis=0, ddof=1)
        sd = np.where((sd == 0) | ~np.isfinite(sd), 1.0, sd)
        B[:, cols] = (B[:, cols] - mu) / sd
        T[:, cols] = (T[:, cols] - mu) / sd
    indicators = np.setdiff1d(np.arange(B.shape[1]), cols)
    if indicators.size:
        B[:, indicators] /= ONE_HOT_WEIGHT
        T[:, indicators] /= ONE_HOT_WEIGHT
    labels = np.asarray(y_b).astype(str)
    if len(np.unique(labels)) < 2:  # a release with one class left: the model predicts it
        return np.full(len(T), labels[0])
    return LogisticRegression(max_iter=2000).fit(B, labels).predict(T)


def train_on_release_accuracy(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray, k: int = 5) -> float:
    """k-NN trained on a release and tested on real records the release did not contain (%)."""
    return 100.0 * float((knn_predictions(B, y_b, T, k) == np.asarray(y_t).astype(str)).mean())


def train_on_release_logreg(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray,
                            numeric: np.ndarray | None = None) -> float:
    """Logistic regression trained on a release and tested on real records the release did not contain (%)."""
    return 100.0 * float((logreg_predictions(B, y_b, T, numeric) == np.asarray(y_t).astype(str)).mean())


def tstr_hits(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray, *, seed: int,
              numeric: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Which real records ``T`` a k-NN and a logistic regression trained on a release (at most
    :data:`TSTR_TRAIN_SAMPLE` of its rows, a seeded stratified sample) classify right: a boolean per record,
    by the name of the accuracy it makes (``tstr_knn_pct``, ``tstr_logreg_pct``)."""
    fit_rows = stratified_sample(y_b, TSTR_TRAIN_SAMPLE, seed)
    B_fit, y_fit = (B, y_b) if fit_rows is None else (B[fit_rows], y_b[fit_rows])
    truth = np.asarray(y_t).astype(str)
    return {"tstr_knn_pct": knn_predictions(B_fit, y_fit, T) == truth,
            "tstr_logreg_pct": logreg_predictions(B_fit, y_fit, T, numeric) == truth}


def hit_rates(hits: dict[str, np.ndarray]) -> dict[str, float]:
    """The accuracies (%) that per-record hits by model (:func:`tstr_hits`) make."""
    return {k: 100.0 * float(v.mean()) for k, v in hits.items()}


def objective_hits(hits: dict[str, np.ndarray], objective: str) -> np.ndarray:
    """The hits of the model the objective names (the k-NN's for an objective that is not one of them)."""
    return hits.get(objective, hits["tstr_knn_pct"])


def tstr_scores(B: np.ndarray, y_b: np.ndarray, T: np.ndarray, y_t: np.ndarray, *, seed: int,
                numeric: np.ndarray | None = None) -> dict[str, float]:
    """The accuracies (%) of :func:`tstr_hits`."""
    return hit_rates(tstr_hits(B, y_b, T, y_t, seed=seed, numeric=numeric))


def pooled(scores: list[tuple[int, dict[str, float]]]) -> dict[str, float]:
    """Accuracies of disjoint held-out folds pooled over their records (weighted by each fold's size)."""
    total = sum(n for n, _ in scores)
    return {k: sum(n * d[k] for n, d in scores) / total for k in scores[0][1]}


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
