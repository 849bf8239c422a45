"""Render the release record to one self-contained HTML file (no network, no CDN)."""

from __future__ import annotations

import base64
from importlib import resources
from typing import Any

__all__ = ["render_report"]


def _data_uri(png: bytes | None) -> str | None:
    return None if png is None else "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _num(v: Any) -> str:
    """Compact display of a number, a list of numbers or a dict of them."""
    if isinstance(v, bool) or v is None:
        return "-" if v is None else str(v)
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_num(x) for x in v) + "]"
    if isinstance(v, dict):
        return ", ".join(f"{k} {_num(x)}" for k, x in v.items())
    return str(v)


def _pct(v: Any) -> str:
    """A share as a percentage with one decimal ("-" when not measured)."""
    return "-" if v is None or isinstance(v, bool) else f"{100 * float(v):.1f} %"


def render_report(record: dict[str, Any], plot_data: dict[str, Any]) -> str:
    """HTML for a release record; ``plot_data`` holds aggregates only (see ppdm.release.summary)."""
    import jinja2

    from ppdm.report import plots

    figures = [("Privacy-utility trade-off", _data_uri(plots.tradeoff_png(record)),
                "Each point is a candidate release; lower risk and higher utility are better. The black step is "
                "the Pareto front, the red circle the chosen release, the dotted line the policy limit.")]
    uri = _data_uri(plots.sweeps_png(record))
    if uri:
        figures.append(("Utility and attack success along each mechanism's parameters", uri,
                        "One panel per mechanism tried with several parameters: the objective (left axis), "
                        "re-identification and singling out (right axis)."))
    figures.append(("Per-attribute distortion", _data_uri(plots.per_column_png(record["per_column_re"])), ""))
    fid = _data_uri(plots.fidelity_png(record["fidelity"])) if record.get("fidelity") else None
    if fid:
        figures.append(("Pairwise fidelity", fid,
                        "How much the association of each pair of columns changed: absolute correlation for two "
                        "numbers, Cramer's V for two categories, the correlation ratio for one of each. White is "
                        "kept; red is lost, or made up by the release."))
    figures.append(("Shepard plot", _data_uri(plots.shepard_png(plot_data["shepard"])),
                    "Pairwise distances before and after, on a seeded sample of pairs: points on the diagonal mean "
                    "distances (and so clusters and neighbours) survive."))
    hist = _data_uri(plots.histograms_png(plot_data["histograms"]))
    if hist:
        figures.append(("Distributions of a few attributes", hist, ""))
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("ppdm.report").joinpath("templates"))),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
    )
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    obj = record["policy"]["objective"]
    return env.get_template("report.html.j2").render(record=record, figures=figures, objective=obj,
                                                     chosen=record["chosen"])
