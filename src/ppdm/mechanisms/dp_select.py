"""Which marginals a marginal-based synthetic table measures: MST's spanning tree and AIM's adaptive choice.

Both recipes spend their budget through OpenDP (:class:`~ppdm.mechanisms.dp_accounting.Budget`) and leave the
estimation and the draws to Private-PGM (:class:`~ppdm.mechanisms.dp_marginals.MarginalSynthesis`).

* :class:`DPMST` is the MST recipe as its authors describe it (McKenna, Miklau and Sheldon 2021, the winner of
  the NIST 2018 challenge): the budget in thirds; every one-way marginal; the codes whose noisy count is below
  three noise deviations merged into one; a maximum spanning tree of the two-way marginals, chosen edge by
  edge by the exponential mechanism (score: how far the one-way model is from the true pair, L1); the tree's
  pairs measured.
* :class:`DPAIM` is AIM (McKenna, Mullins, Sheldon and Miklau 2022) with a workload of every pair of columns
  and, weighted ``label_weight`` times, the label's pairs and its three-way marginals with every pair of other
  columns: every one-way marginal first; then, round by round, the exponential mechanism picks the marginals
  the current model gets most wrong (weighted error beyond the noise a measurement of it would show, under a
  model-size cap that grows with the budget spent), they are measured, and Private-PGM re-estimates the model.
  The published algorithm re-estimates after every pick (up to 16 picks per column); here ``rounds`` rounds of
  ``per_round`` picks bound the estimations (each compiles new JAX programs), the model of the first
  measurements is computed in closed form (:func:`first_tables`: what Private-PGM would estimate from them,
  without compiling a model the final fit does not reuse), and the current model's counts on a candidate
  outside its cliques are approximated from its clique marginals (:func:`model_marginal`).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ppdm.exceptions import ParameterError
from ppdm.mechanisms.dp_columns import ColumnCode
from ppdm.mechanisms.dp_marginals import MarginalSynthesis, flat_cells
from ppdm.utils.validation import check_int, check_real

__all__ = ["DPMST", "DPAIM"]

#: MST merges the codes whose noisy one-way count is below this many noise deviations
MST_SUPPORT = 3.0
#: AIM's split of each round's budget: selection and measurement (the paper's 0.1 / 0.9)
AIM_SELECT_SHARE = 0.1
#: AIM's picks per round unless given: as many as the columns, at most this many (each pick enlarges the model
#: whose programs JAX compiles; on the adult extract 12 picks kept as much of the label signal as 16, 8 less)
PER_ROUND = 12


def model_tables(model: Any) -> tuple[list[tuple[tuple[str, ...], np.ndarray]], float]:
    """The fitted model's clique marginals as NumPy arrays (projected here, never by JAX: each new shape of a
    JAX operation would compile a program), and its total."""
    return [(tuple(cl), np.asarray(model.marginals[cl].values, dtype=np.float64)) for cl in model.marginals.cliques], \
        float(model.total)


def on_simplex(y: np.ndarray, total: float) -> np.ndarray:
    """The closest (Euclidean) non-negative vector to ``y`` that sums to ``total``: ``y`` less one constant,
    clipped at 0 (the least-squares fit Private-PGM makes of a noisy marginal with a known total)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    if total <= 0:
        return np.zeros_like(y)
    top = np.sort(y)[::-1]
    excess = np.cumsum(top) - total
    kept = np.flatnonzero(top - excess / np.arange(1, len(y) + 1) > 0)[-1] + 1
    return np.maximum(y - excess[kept - 1] / kept, 0.0)


def first_tables(found: list[Any], sizes: np.ndarray, cliques: list[tuple[int, ...]],
                 total: float) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """The clique marginals of the model of AIM's first measurements, in closed form.

    The first measurements are every one-way marginal, or every column's pair with the label (a star). Their
    maximum-entropy model, the one Private-PGM estimates, is the product of the one-way marginals, or the tree
    through the label, each marginal fitted by least squares: one-way marginals projected on the counts of
    ``total`` records (:func:`on_simplex`); for the star, the label's counts (the mean of the pairs' noisy label
    counts, as all have the same noise) projected so, then each pair's column projected within each class on
    that class's count. Post-processing of the noisy counts only: nothing more is spent.

    Parameters
    ----------
    found : list of Private-PGM measurements
        The noisy marginals, in the order of ``cliques``.
    sizes : ndarray
        Each column's number of codes.
    cliques : list of tuples of int
        One column each, or a column and the label (the last column) each.
    total : float
        The number of records (public).
    """
    noisy = [np.asarray(m.noisy_measurement, dtype=np.float64).reshape([int(sizes[j]) for j in cl])
             for m, cl in zip(found, cliques, strict=True)]
    if all(len(cl) == 1 for cl in cliques):
        out = [on_simplex(y, total) for y in noisy]
    elif all(len(cl) == 2 and cl[1] == cliques[0][1] for cl in cliques):
        label = on_simplex(np.mean([y.sum(axis=0) for y in noisy], axis=0), total)
        out = [np.column_stack([on_simplex(y[:, c], label[c]) for c in range(len(label))]) for y in noisy]
    else:
        raise ParameterError("the first model in closed form takes one-way marginals or pairs with one column")
    return [(tuple(f"c{j}" for j in cl), t.reshape([int(sizes[j]) for j in cl]))
            for cl, t in zip(cliques, out, strict=True)]


def _project(tables: list[tuple[tuple[str, ...], np.ndarray]], cols: tuple[str, ...]) -> np.ndarray | None:
    for names, values in tables:
        if set(cols) <= set(names):
            kept = [names.index(c) for c in cols]
            summed = values.sum(axis=tuple(i for i in range(len(names)) if i not in kept))
            return np.transpose(summed, np.argsort(np.argsort(kept)))
    return None


def model_marginal(tables: list[tuple[tuple[str, ...], np.ndarray]], total: float,
                   clique: tuple[int, ...]) -> np.ndarray:
    """The current model's counts on ``clique`` (flattened row-major), from its clique marginals alone.

    Exact when a model clique holds ``clique``; otherwise each column after the first is taken given one earlier
    column it shares a model clique with (independent of the others: a tree through the model's cliques), or
    independently of all when it shares none. The exact marginal would need inference over the junction tree;
    the selection only ranks the candidates' errors.
    """
    names = tuple(f"c{j}" for j in clique)
    whole = _project(tables, names)
    if whole is not None:
        return whole.ravel()
    joint = _project(tables, names[:1]) / total
    for i, name in enumerate(names[1:], start=1):
        pair = next(((k, t) for k in range(i) if (t := _project(tables, (names[k], name))) is not None), None)
        if pair is None:  # independent of the columns before it
            one = _project(tables, (name,))
            joint = np.multiply.outer(joint, one / max(one.sum(), 1e-300))
            continue
        k, t = pair
        cond = t / np.maximum(t.sum(axis=1, keepdims=True), 1e-300)  # P(name | names[k])
        shape = [1] * i + [cond.shape[1]]  # broadcast over the columns before it, along axis k
        shape[k] = cond.shape[0]
        joint = joint[..., None] * cond.reshape(shape)
    return (joint * total).ravel()


def _within_cap(sizes: np.ndarray, base: list[tuple[int, ...]], candidates: list[tuple[int, ...]],
                cap: float) -> dict[tuple[int, ...], bool]:
    """Whether the model of the cliques ``base`` (column numbers) and each candidate stays within ``cap``
    megabytes (:func:`~ppdm.mechanisms.dp_model_size.model_size_mb`).

    The junction tree depends on the graph of the cliques alone, the pairs of columns they join: the candidates
    that add the same pairs to the base's graph share one size, computed once (a label's three-way marginal adds
    no more than its pair when the label's pairs are measured).
    """
    from ppdm.mechanisms.dp_model_size import model_size_mb

    cliques = [tuple(cl) for cl in base]
    joined = {frozenset(p) for cl in cliques for p in itertools.combinations(cl, 2)}
    known: dict[frozenset[frozenset[int]], float] = {}
    out = {}
    for c in candidates:
        new = frozenset(frozenset(p) for p in itertools.combinations(c, 2)) - joined
        if new not in known:
            known[new] = model_size_mb(sizes, [*cliques, c])
        out[c] = known[new] <= cap
    return out


def _true_marginals(t: np.ndarray, coded: Any, cliques: list[tuple[int, ...]], sizes: np.ndarray) -> list[np.ndarray]:
    codes = coded(t)
    return [np.bincount(flat_cells(codes, cl, sizes), minlength=int(np.prod([sizes[j] for j in cl])))
            .astype(np.float64) for cl in cliques]


class _ModelErrors:
    """The L1 error of the model's counts on each candidate marginal, for a table: a function of the table alone
    (OpenDP hands the scoring the table at every pick of a round), each error computed once per table (the digest
    of its bytes says whether it is the same one)."""

    def __init__(self, coded: Any, model_counts: dict[tuple[int, ...], np.ndarray], sizes: np.ndarray) -> None:
        self.coded, self.model_counts, self.sizes = coded, model_counts, sizes
        self.errors: dict[tuple[int, ...], float] = {}
        self.digest = b""

    def __call__(self, t: np.ndarray, cliques: list[tuple[int, ...]]) -> list[float]:
        import hashlib

        digest = hashlib.sha256(np.ascontiguousarray(t).tobytes()).digest() + repr(t.shape).encode()
        if digest != self.digest:
            self.errors, self.digest = {}, digest
        todo = [c for c in cliques if c not in self.errors]
        if todo:
            for c, x in zip(todo, _true_marginals(t, self.coded, todo, self.sizes), strict=True):
                self.errors[c] = float(np.abs(x - self.model_counts[c]).sum())
        return [self.errors[c] for c in cliques]


class DPMST(MarginalSynthesis):
    """(epsilon, delta)-DP synthetic records by MST: one-way marginals, a private maximum spanning tree of the
    two-way marginals, Private-PGM (budget in thirds, as its authors describe it).

    Parameters
    ----------
    epsilon, delta : float, default=1.0, 1e-9
        The guarantee of the whole release for one record added or removed (its values and its label).
    kinds : list of {'continuous', 'integer', 'categorical'} or None, default=None
        Each column's kind (None: every column is a number).
    levels : list of int or None, default=None
        Each categorical column's number of categories (its codes are ``0..levels-1``; public).
    bounds : list of (low, high) or None, default=None
        Public bounds of number columns (None for a column, or for all: measured, see ``RANGE_SHARE``).
    n_bins : int, default=16
        Codes of a number column (its two outer codes are the bounds themselves).
    random_state : int, Generator or None
        Seeds the draws from the fitted model. OpenDP draws its noise from its own secure generator.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-9, kinds: list[str] | None = None,
                 levels: list[int] | None = None, bounds: list[Any] | None = None, n_bins: int = 16,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.kinds = kinds
        self.levels = levels
        self.bounds = bounds
        self.n_bins = n_bins
        self.random_state = random_state

    def _check_recipe(self) -> None:
        return None

    def _measure(self, budget: Any, codes: list[ColumnCode],
                 sizes: np.ndarray) -> tuple[list[Any], list[np.ndarray] | None]:
        d = len(codes)
        third = budget.left / 3.0
        oneway = [self.measure_clique(budget, codes, sizes, (j,), third / d) for j in range(d)]
        # the codes each noisy one-way count supports (post-processing): the rest share one code
        merge = []
        for m in oneway:
            keep = np.asarray(m.noisy_measurement) >= MST_SUPPORT * m.stddev
            mapping = np.full(len(keep), int(keep.sum()), dtype=np.int64)
            mapping[keep] = np.arange(int(keep.sum()))
            merge.append(mapping)
        model_sizes = np.array([int(mp.max()) + 1 for mp in merge])
        full = self.model_domain(sizes)
        log1 = [m.compress({f"c{j}": merge[j]}, full) for j, m in enumerate(oneway)]
        if d < 2:
            return log1, merge
        est = self.estimate_model(log1, model_sizes, self.n_records_, iters=500)
        edges = self._spanning_tree(budget, codes, merge, model_sizes, est, third)
        log2 = [self.measure_clique(budget, codes, sizes, e, third / len(edges), merge) for e in edges]
        return log1 + log2, merge

    def _spanning_tree(self, budget: Any, codes: list[ColumnCode], merge: list[np.ndarray],
                       model_sizes: np.ndarray, est: Any, third: float) -> list[tuple[int, int]]:
        from scipy.cluster.hierarchy import DisjointSet

        d = len(codes)
        pairs = list(itertools.combinations(range(d), 2))
        tables, total = model_tables(est)
        xhat = [model_marginal(tables, total, p) for p in pairs]

        def merged(t: np.ndarray) -> np.ndarray:
            coded = self.encoded(t, codes)
            return np.column_stack([merge[j][coded[:, j]] for j in range(d)])

        tree = DisjointSet(range(d))
        edges: list[tuple[int, int]] = []
        for _ in range(d - 1):
            open_pairs = [k for k, (a, b) in enumerate(pairs) if not tree.connected(a, b)]

            def scores(t: np.ndarray, open_pairs: list[int] = open_pairs) -> list[float]:
                true = _true_marginals(t, merged, [pairs[k] for k in open_pairs], model_sizes)
                return [float(np.abs(x - xhat[k]).sum()) for x, k in zip(true, open_pairs, strict=True)]

            # a record added or removed moves one cell of each pair by one: each L1 error by at most 1
            pick = open_pairs[budget.noisy_max("tree edge", scores, 1.0, third / (d - 1))]
            edges.append(pairs[pick])
            tree.merge(*pairs[pick])
        return edges


class DPAIM(MarginalSynthesis):
    """(epsilon, delta)-DP synthetic records by AIM: workload-aware marginals chosen adaptively, Private-PGM.

    Parameters
    ----------
    epsilon, delta : float, default=1.0, 1e-9
        The guarantee of the whole release for one record added or removed (its values and its label).
    kinds, levels, bounds, n_bins, random_state
        As for :class:`DPMST`.
    rounds : int, default=1
        Rounds of picks after the first measurements; the model is re-estimated with Private-PGM after each (a
        new model structure: JAX compiles it anew, about 5 s of CPU on the adult extract). On the adult extract
        two rounds of 8 picks kept the same label signal as one of 16 (see the formal privacy guide).
    per_round : int or None, default=None
        Marginals chosen and measured per round (None: as many as the columns, the label included, at most
        ``PER_ROUND`` = 12).
    label_weight : float, default=4.0
        Weight of the label's marginals in the workload (every other pair of columns weighs 1).
    label_triples : bool, default=True
        The workload holds the label's three-way marginals with every pair of other columns too.
    label_star : bool, default=True
        With a label, the first measurements are its pairs with every other column (which hold every one-way
        marginal) instead of the one-way marginals.
    max_model_size : float, default=2.0
        AIM's cap on the model (megabytes of the junction tree's tables), reached as the budget is spent.
    """

    def __init__(self, *, epsilon: float = 1.0, delta: float = 1e-9, kinds: list[str] | None = None,
                 levels: list[int] | None = None, bounds: list[Any] | None = None, n_bins: int = 16,
                 rounds: int = 1, per_round: int | None = None, label_weight: float = 4.0,
                 label_triples: bool = True, label_star: bool = True, max_model_size: float = 2.0,
                 random_state: object = None) -> None:
        self.epsilon = epsilon
        self.delta = delta
        self.kinds = kinds
        self.levels = levels
        self.bounds = bounds
        self.n_bins = n_bins
        self.rounds = rounds
        self.per_round = per_round
        self.label_weight = label_weight
        self.label_triples = label_triples
        self.label_star = label_star
        self.max_model_size = max_model_size
        self.random_state = random_state

    def _check_recipe(self) -> None:
        check_int(self.rounds, "rounds", low=1, high=50)
        if self.per_round is not None:
            check_int(self.per_round, "per_round", low=1, high=200)
        check_real(self.label_weight, "label_weight", low=0.0, low_open=True)
        check_real(self.max_model_size, "max_model_size", low=0.0, low_open=True)

    def workload_weights(self, d: int, labelled: bool) -> dict[tuple[int, ...], float]:
        """AIM's candidates (the workload's marginals and every marginal within one) and their weights: the
        workload marginals that share columns with a candidate, weighted by their weights and the columns shared.

        The workload: every pair of columns (weight 1), the label's pairs and the label's three-way marginals with
        two other columns (``label_triples``) weighing ``label_weight``: what a classifier of the label needs.
        """
        label = d - 1 if labelled else None
        work = {p: (float(self.label_weight) if label in p else 1.0) for p in itertools.combinations(range(d), 2)}
        if labelled and self.label_triples:
            work |= {(a, b, label): float(self.label_weight) for a, b in itertools.combinations(range(d - 1), 2)}
        cands = sorted({sub for w in work for r in range(1, len(w) + 1) for sub in itertools.combinations(w, r)},
                       key=lambda c: (len(c), c))
        # sum over p of w_p |c & p| is the sum over the columns j of c of the weight of the marginals holding j:
        # summed per column once (a sum over every workload marginal per candidate took 10 s on 65 columns). The
        # weights are small integers, so both sums are exact and equal
        per_column = np.zeros(d)
        for p, w in work.items():
            per_column[list(p)] += w
        return {c: float(sum(per_column[j] for j in c)) for c in cands}

    def _measure(self, budget: Any, codes: list[ColumnCode],
                 sizes: np.ndarray) -> tuple[list[Any], list[np.ndarray] | None]:
        d = len(codes)
        if d < 2:
            raise ParameterError("dp-aim needs at least two columns (the label counts as one)")
        labelled = len(self.classes_) > 0
        weights = self.workload_weights(d, labelled)
        per_round = int(self.per_round) if self.per_round is not None else min(d, PER_ROUND)
        picks = int(self.rounds) * per_round
        # the first measurements: every one-way marginal, or with a label, the label's pair with every other
        # column (they hold every one-way marginal, and the workload weighs them most)
        first = [(j, d - 1) for j in range(d - 1)] if labelled and self.label_star else [(j,) for j in range(d)]
        # every measurement costs the same; a pick costs AIM_SELECT_SHARE / (1 - AIM_SELECT_SHARE) of one
        unit = budget.left / (len(first) + picks * (1.0 + AIM_SELECT_SHARE / (1.0 - AIM_SELECT_SHARE)))
        found = [self.measure_clique(budget, codes, sizes, c, unit) for c in first]
        measured = {sub for c in first for r in (1, len(c)) for sub in itertools.combinations(c, r)}
        n = self.n_records_
        # the first model in closed form: Private-PGM's estimate from these measurements is their product (a
        # tree through the label), and estimating it would compile JAX programs the final fit does not reuse
        base, tables = list(first), first_tables(found, sizes, first, float(n))
        total, model = float(n), None
        round_cost = per_round * unit / (1.0 - AIM_SELECT_SHARE)
        for round_no in range(int(self.rounds)):
            # AIM's cap on the model grows with the share of the budget spent by the end of the round
            cap = float(self.max_model_size) * min(1.0, (budget.spent + round_cost) / budget.rho)
            chosen = self._pick(budget, codes, sizes, (base, tables, total), weights, measured, per_round, unit,
                                cap, float(found[0].stddev))
            for c in chosen:
                found.append(self.measure_clique(budget, codes, sizes, c, unit))
                measured |= {sub for r in range(1, len(c) + 1) for sub in itertools.combinations(c, r)}
            # the next round picks against the new model; after the last one the fit estimates its own
            if round_no + 1 < int(self.rounds):
                model = self.estimate_model(found, sizes, n, iters=300, warm=model)
                base = [tuple(int(name[1:]) for name in cl) for cl in model.potentials.cliques]
                tables, total = model_tables(model)
        return found, None

    def _pick(self, budget: Any, codes: list[ColumnCode], sizes: np.ndarray,
              model: tuple[list[tuple[int, ...]], list[tuple[tuple[str, ...], np.ndarray]], float],
              weights: dict[tuple[int, ...], float], measured: set[tuple[int, ...]], k: int, unit: float,
              cap: float, sigma: float) -> list[tuple[int, ...]]:
        """At most ``k`` marginals the model (its cliques, their marginals and its total) gets most wrong, each
        chosen by OpenDP's noisy max (exponential mechanism) among those not measured whose addition keeps the
        model within ``cap``; a pick that would take the model with the round's earlier picks beyond ``cap`` is
        dropped unmeasured."""
        from ppdm.mechanisms.dp_model_size import model_size_mb

        base, tables, total = model
        # AIM's size cap (a structural fact, not a data one), checked against the model before this round
        fits = _within_cap(sizes, base, [c for c in weights if c not in measured], cap)
        eligible = [c for c in weights if c not in measured and fits[c]]
        model_counts = {c: model_marginal(tables, total, c) for c in eligible}
        chosen: list[tuple[int, ...]] = []
        dropped: list[tuple[int, ...]] = []
        errors = _ModelErrors(lambda s: self.encoded(s, codes), model_counts, sizes)
        for _ in range(k):
            eligible = [c for c in eligible if c not in chosen and c not in dropped]
            if not eligible:
                break
            # the L1 error a measurement of the marginal would show from noise alone, expected
            bias = [np.sqrt(2 / np.pi) * sigma * len(model_counts[c]) for c in eligible]
            w = [weights[c] for c in eligible]

            def scores(t: np.ndarray, eligible: list[tuple[int, ...]] = eligible, bias: list[float] = bias,
                       w: list[float] = w) -> list[float]:
                return [wi * (e - b) for e, b, wi in zip(errors(t, eligible), bias, w, strict=True)]

            # a record added or removed moves each candidate's L1 error by at most 1: its score by its weight
            pick = budget.noisy_max("workload marginal", scores, max(w),
                                    unit * AIM_SELECT_SHARE / (1.0 - AIM_SELECT_SHARE))
            # the picks of a round fit the cap one by one, not always together: twelve that each fit built a model
            # seven times the cap on the letter table (its 26-class label joins every pick) and its estimation took
            # minutes. Checking every candidate again after each pick cost a minute on sixty columns; checking the
            # pick costs one model size, and dropping it spends only its selection (its measurement is not made)
            if model_size_mb(sizes, [*base, *chosen, eligible[pick]]) > cap:
                dropped.append(eligible[pick])
                continue
            chosen.append(eligible[pick])
        return chosen
