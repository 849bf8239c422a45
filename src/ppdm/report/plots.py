"""Matplotlib figures of the report, returned as PNG bytes (Agg backend, imported lazily)."""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np

__all__ = ["tradeoff_png", "sweeps_png", "per_column_png", "shepard_png", "histograms_png"]

_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf"]


def _plt():  # type: ignore[no-untyped-def]
    import matplotlib

    matplotlib.use("Agg")
    # column names are data: shown as plain text, never parsed as TeX math (a "$" cannot break a plot)
    matplotlib.rcParams["text.parse_math"] = False
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any, *, tight: bool = True) -> bytes:
    """The figure as PNG bytes; ``tight`` crops it to its artists (one more drawing of the figure: a figure
    whose layout is fixed or constrained skips it)."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # a column named in a script the fonts lack (Chinese, say) is drawn as boxes: the report's tables name it
        # as it is, and matplotlib's warning, one per glyph, would fill stderr
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        fig.savefig(buf, format="png", dpi=100, bbox_inches="tight" if tight else None)
    _plt().close(fig)
    return buf.getvalue()


def _risk(c: dict[str, Any]) -> float:
    # the sweep's one risk number (the worst of its risks), or the two every record has
    return float(c.get("risk_score", max(c["risk"]["reidentification"], c["risk"]["within_5pct"])))


def tradeoff_png(record: dict[str, Any]) -> bytes:
    """Risk vs utility of every candidate, the Pareto front, the policy limit and the chosen point."""
    plt = _plt()
    obj = record["policy"]["objective"]
    # a candidate rejected on risk during a large table's screening has no utility measured: not drawn
    cands = [c for c in record["candidates"] if obj in c["utility"]]
    methods = sorted({c["method"] for c in cands})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, m in enumerate(methods):
        # a formally private candidate is a diamond; one measured by the first pass only is hollow
        formal = any(c.get("guarantee") for c in cands if c["method"] == m)
        marker = "D" if formal else "o"
        name = f"{m} (formally private)" if formal else m
        for full in (True, False):
            pts = [c for c in cands if c["method"] == m and (c.get("stage") != "first pass") == full]
            if pts:
                colour = _COLOURS[k % 10]
                ax.scatter([_risk(c) for c in pts], [c["utility"][obj] for c in pts], marker=marker, alpha=0.8,
                           facecolors=colour if full else "none", edgecolors=colour,
                           label=name if full or not any(c["method"] == m and c.get("stage") != "first pass"
                                                         for c in cands) else None)
    front = sorted((c for c in cands if c.get("pareto")), key=_risk)
    if front:
        ax.step([_risk(c) for c in front], [c["utility"][obj] for c in front], where="post", color="black",
                linewidth=1, label="Pareto front")
    ch = next(c for c in cands if c.get("chosen"))
    ax.scatter([_risk(ch)], [ch["utility"][obj]], s=250, facecolors="none", edgecolors="red", linewidths=2,
               label="chosen")
    limit = min(v for k, v in record["policy"].items() if k.startswith("max_") and k != "max_attribute_inference")
    ax.axvline(limit, color="red", linestyle=":", linewidth=1, label="policy limit")
    orig = record["original_utility"].get(obj)
    if orig is not None:
        ax.axhline(orig, color="grey", linestyle="--", linewidth=1, label="original data")
    ax.set_xlabel("risk: the worst of re-identification, values within 5 % beyond the control,\n"
                  "singling out and linkability beyond the control")
    ax.set_ylabel(obj.replace("_pct", " (%)"))
    ax.legend(fontsize=8, loc="best")
    ax.set_title("privacy-utility trade-off (hollow: first pass only; diamond: formal guarantee)", fontsize=10)
    return _png(fig)


def sweeps_png(record: dict[str, Any]) -> bytes | None:
    """One panel per mechanism with several candidates: utility and attack success along its parameters (one
    figure: a sweep of many mechanisms is read side by side, and drawn at once)."""
    plt = _plt()
    obj = record["policy"]["objective"]
    methods = [m for m in dict.fromkeys(c["method"] for c in record["candidates"])
               if sum(c["method"] == m for c in record["candidates"]) >= 2]
    if not methods:
        return None
    cols = min(3, len(methods))
    rows = -(-len(methods) // cols)
    # fixed spacing: a constrained layout of many twin axes costs seconds to draw
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False)
    fig.subplots_adjust(hspace=0.75, wspace=0.45, top=1 - 0.35 / rows)
    legend: tuple[list[Any], list[str]] = ([], [])
    for ax, method in zip(axes.ravel(), methods, strict=False):
        pts = [c for c in record["candidates"] if c["method"] == method]
        x = np.arange(len(pts))
        ax.plot(x, [c["utility"].get(obj, np.nan) for c in pts], marker="o", label=obj)
        ax2 = ax.twinx()
        ax2.plot(x, [100 * c["risk"]["reidentification"] for c in pts], marker="s", color="#d62728",
                 label="re-identification %")
        ax2.plot(x, [100 * float((c["risk"].get("singling_out") or {}).get("risk", np.nan)) for c in pts],
                 marker="^", color="#ff7f0e", label="singling out %")
        varying = [k for k in pts[0]["params"] if len({str(c["params"].get(k)) for c in pts}) > 1]
        ax.set_xticks(x, [", ".join(f"{k}={c['params'][k]}" for k in varying) or "default" for c in pts],
                      rotation=30, ha="right", fontsize=7)
        ax.set_title(method, fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
        ax2.tick_params(axis="y", labelsize=7)
        if not legend[0]:  # the first panel's lines, on both of its axes, name them all
            (h1, l1), (h2, l2) = ax.get_legend_handles_labels(), ax2.get_legend_handles_labels()
            legend = (h1 + h2, l1 + l2)
    for ax in axes.ravel()[len(methods):]:
        ax.set_visible(False)
    fig.legend(*legend, loc="upper center", ncols=3, fontsize=8)
    return _png(fig, tight=False)


def per_column_png(per_column: dict[str, float]) -> bytes:
    plt = _plt()
    names = list(per_column)
    fig, ax = plt.subplots(figsize=(7, max(2.5, 0.22 * len(names))))
    ax.barh(names, [per_column[n] for n in names], color="#1f77b4")
    ax.invert_yaxis()
    ax.set_xlabel("relative error of the column ||a - b|| / ||a||")
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title("per-attribute distortion of the chosen release")
    return _png(fig)


def fidelity_png(fid: dict[str, Any]) -> bytes | None:
    """Heat map of how much each pair of columns' association changed (0 = kept, 1 = lost or made up)."""
    pair = fid.get("pairwise", {})
    names = pair.get("columns", [])
    if len(names) < 2:
        return None
    plt = _plt()
    D = np.asarray(pair["difference"], dtype=float)
    side = max(4.0, 0.35 * len(names) + 2.0)
    fig, ax = plt.subplots(figsize=(side + 1.0, side))
    im = ax.imshow(D, vmin=0.0, vmax=max(0.3, float(D.max())), cmap="Reds")
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(im, ax=ax, shrink=0.8, label="|association in release - in original|")
    ax.set_title(f"pairwise fidelity (mean change {pair['mean_abs_difference']:.3f})")
    return _png(fig)


def shepard_png(shepard: dict[str, np.ndarray]) -> bytes:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    a, b = shepard["original"], shepard["release"]
    ax.scatter(a, b, s=3, alpha=0.4)
    top = float(max(a.max(), b.max())) if len(a) else 1.0
    ax.plot([0, top], [0, top], color="grey", linewidth=1)
    ax.set_xlabel("distance in the original (standardised)")
    ax.set_ylabel("distance in the release")
    ax.set_title("Shepard plot (sample of pairs)")
    return _png(fig)


def histograms_png(hists: list[dict[str, Any]]) -> bytes | None:
    if not hists:
        return None
    plt = _plt()
    # a constrained layout keeps the figure's title clear of the panels' titles
    fig, axes = plt.subplots(1, len(hists), figsize=(3.2 * len(hists), 3.1), squeeze=False, layout="constrained")
    for ax, h in zip(axes[0], hists, strict=False):
        # one filled step outline per histogram (a bar per bin is an artist per bin to lay out and draw)
        ax.stairs(h["original"], h["edges"], fill=True, alpha=0.5, label="original")
        ax.stairs(h["release"], h["edges"], fill=True, alpha=0.5, label="release")
        ax.set_title(h["column"], fontsize=9)
        ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=7)
    fig.suptitle("before / after distributions")
    return _png(fig, tight=False)
