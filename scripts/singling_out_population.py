"""Regenerate the figures of "a release of other people" in the attack guide (docs/guide/attacks.md).

A release made of real records of the same population, none of them a member, tells nothing about the
members. It is scored as the three tests score a release: predicates built from it, counted on the members
and on a control of real records it did not contain. On the bundled adult sample, for several seeded
splits, with the control smaller than the members (2,000 members, 600 control records, a release of 2,000
other people) and as large (1,500 of each, a release of 1,500):

- ppdm's singling out, per family: members' and control's shares, the risk with the control scaled as
  anonymeter 1.1 scales it (ppdm's default), unscaled, and at equal sizes;
- anonymeter's SinglingOutEvaluator (univariate and multivariate, 500 attacks), when anonymeter is
  importable here (``pip install 'ppdm[audit]'``); ppdm's figures are measured without it.

    python scripts/singling_out_population.py [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

SETTINGS = {"smaller control": (2000, 600, 2000), "equal sizes": (1500, 1500, 1500)}
FAMILIES = ("univariate", "multivariate", "targeted")


def split(df: pd.DataFrame, seed: int, sizes: tuple[int, int, int]) -> tuple[pd.DataFrame, ...]:
    """Members, control and release: disjoint seeded samples of the table."""
    idx = np.random.default_rng(seed).permutation(len(df))
    bounds = np.cumsum((0, *sizes))
    return tuple(df.iloc[idx[a:b]].reset_index(drop=True) for a, b in zip(bounds[:-1], bounds[1:], strict=True))


def ppdm_figures(members: pd.DataFrame, control: pd.DataFrame, release: pd.DataFrame, seed: int) -> dict[str, Any]:
    from ppdm.attacks import from_frames, singling_out

    r, m, c = from_frames([release, members, control])
    res = singling_out(r, m, c, rng=np.random.default_rng(1000 + seed))
    return {f: {"main": res[f]["main"], "control": res[f]["control"], "risk": res[f]["risk"],
                "unscaled": res[f]["unscaled"]["risk"], "equal_size": res[f]["equal_size"]["risk"]}
            for f in FAMILIES} | {"factor": res["control_scale"]["factor"]}


def anonymeter_figures(members: pd.DataFrame, control: pd.DataFrame, release: pd.DataFrame,
                       seed: int) -> dict[str, Any] | None:
    try:
        from anonymeter.evaluators import SinglingOutEvaluator
    except ImportError:
        return None
    from ppdm.attacks.singling_out import control_scale

    n_m, n_c = len(members.drop_duplicates()), len(control.drop_duplicates())
    factor = control_scale(n_m, n_c, "anonymeter")
    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode in ("univariate", "multivariate"):
            ev = SinglingOutEvaluator(ori=members, syn=release, control=control, n_attacks=500, n_cols=3,
                                      max_attempts=50_000, seed=seed).evaluate(mode=mode)
            res = ev.results()
            out[mode] = {"risk": ev.risk().value, "main": res.n_success / res.n_attacks_ori,
                         # anonymeter reports the control's successes after its scaling; undone here
                         "control": res.n_control / factor / res.n_attacks_control}
    return out


def run(repeats: int) -> dict[str, Any]:
    from ppdm import datasets

    df = datasets.load("adult")
    out: dict[str, Any] = {}
    for name, sizes in SETTINGS.items():
        rows = []
        for seed in range(repeats):
            members, control, release = split(df, seed, sizes)
            t0 = time.perf_counter()
            rows.append({"seed": seed, "ppdm": ppdm_figures(members, control, release, seed),
                         "anonymeter": anonymeter_figures(members, control, release, seed)})
            print(f"{name}, split {seed}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out[name] = {"sizes": dict(zip(("members", "control", "release"), sizes, strict=True)), "runs": rows}
    return out


def _range(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def table(figures: dict[str, Any]) -> str:
    """The guide's table: ranges over the splits."""
    lines = ["| setting | test | members | control | risk, control scaled (anonymeter 1.1) | unscaled | "
             "equal sizes |", "|---|---|---|---|---|---|---|"]
    for name, block in figures.items():
        runs = block["runs"]
        for f in FAMILIES:
            p = [r["ppdm"][f] for r in runs]
            lines.append(f"| {name} | ppdm {f} | {_range([x['main'] for x in p])} | "
                         f"{_range([x['control'] for x in p])} | {_range([x['risk'] for x in p])} | "
                         f"{_range([x['unscaled'] for x in p])} | {_range([x['equal_size'] for x in p])} |")
        if all(r["anonymeter"] for r in runs):
            for mode in ("univariate", "multivariate"):
                a = [r["anonymeter"][mode] for r in runs]
                lines.append(f"| {name} | anonymeter {mode} | {_range([x['main'] for x in a])} | "
                             f"{_range([x['control'] for x in a])} | {_range([x['risk'] for x in a])} | - | - |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5, help="seeded splits per setting")
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    args = ap.parse_args()
    figures = run(args.repeats)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)
    print(table(figures))


if __name__ == "__main__":
    main()
