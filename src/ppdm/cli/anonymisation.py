"""The three tests of anonymisation as ``ppdm attack --control`` prints them (beside anonymeter's with
``--anonymeter``)."""

from __future__ import annotations

from typing import Any


def _pct(v: object) -> str:
    return "-" if v is None else f"{100 * float(v):.1f}"  # type: ignore[arg-type]


def _span(iv: list[float] | None) -> str:
    if iv is None:
        return "-"
    joint = " to " if iv[0] < 0 else "-"
    return f"{100 * iv[0]:.1f}{joint}{100 * iv[1]:.1f}"


def _rows(anon: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], dict[str, Any] | None]]:
    """(test, detail, ppdm's figures {risk, interval, main, control}, anonymeter's {risk, interval} or None)."""
    peer = anon.get("anonymeter") or {}
    so, li, mem = anon["singling_out"], anon["linkability"], anon["membership"]
    rows: list[tuple[str, str, dict[str, Any], dict[str, Any] | None]] = []
    for fam in ("univariate", "multivariate", "targeted"):
        rows.append(("singling out", fam, so[fam], peer.get(f"singling_out_{fam}")))
    worst, default = li["splits"][li["split"]], li["splits"][0]
    rows.append(("linkability", f"worst split {li['split'] + 1}/{len(li['splits'])}", worst, None))
    rows.append(("linkability", "usual split", default, peer.get("linkability")))
    for name, key in (("all records", "overall"), (f"{mem['outliers']['n_members']} outliers", "outliers")):
        m = mem[key]
        rows.append(("membership", name, {"risk": m["advantage"], "interval": m["interval"], "main": m["tpr"],
                                          "control": m["fpr"]}, None))
    for col, v in anon["inference"].items():
        rows.append(("inference", col, v, (peer.get("inference") or {}).get(col)))
    return rows


def print_anonymisation(console: Any, anon: dict[str, Any]) -> None:
    """The tests as one table (risk beyond the control, interval, the two rates) and what they mean."""
    from rich import box
    from rich.table import Table

    from ppdm.cli.console import plain_console

    if not console.is_terminal:
        console = plain_console(width=max(console.width, 110))  # a log or a pipe: no need to wrap

    n = anon["n_rows"]
    peer = anon.get("anonymeter")
    tab = Table(title=f"tests of anonymisation (%): release {n['release']} rows, original {n['original']}, "
                      f"control {n['control']}", box=box.SIMPLE_HEAD, pad_edge=False)
    heads = ["test", "detail", "risk", "95% CI", "members", "control"]
    if peer is not None:
        heads += ["anonym.", "anonym. CI"]
    for h in heads:
        tab.add_column(h, justify="left" if h in ("test", "detail") else "right", no_wrap=True)
    for test, detail, v, a in _rows(anon):
        cells = [test, detail, _pct(v["risk"]), _span(v["interval"]), _pct(v.get("main")), _pct(v.get("control"))]
        if peer is not None:
            cells += [_pct(a["risk"]) if a else "-", _span(a["interval"]) if a else "-"]
        tab.add_row(*cells)
    console.print(tab)
    so = anon["singling_out"]
    scale = so["control_scale"]
    console.print(
        "risk: success on the release's members beyond the control, (members - control) / (1 - control); "
        "membership: true- minus false-positive rate of 'member' when the distance to the release is small.")
    if scale["factor"] != 1.0:
        console.print(
            f"singling out: the control's successes are scaled by {scale['factor']:.3f} as anonymeter 1.1 scales "
            f"them (its size correction); unscaled, the worst family's risk is "
            f"{100 * max(so[f]['unscaled']['risk'] for f in ('univariate', 'multivariate', 'targeted')):.1f} %; "
            f"with members and control at the same size ({so['equal_size']['size']} records), "
            f"{100 * so['equal_size']['risk']:.1f} %.")
        # the release's policy reads the targeted family at equal sizes (ppdm.release.criteria.policy_reading):
        # said here, so that this figure and a release record's can be compared
        from ppdm.release.criteria import policy_reading

        read = policy_reading(so, "audited")
        console.print(f"ppdm release's policy reads singling out as {100 * read['risk']:.1f} % ({read['family']}): "
                      "anonymeter's two families with the scaled control, the targeted one at equal sizes.")
    if peer is not None:
        console.print(f"anonymeter {peer['version']}: {peer['n_attacks']} attacks per evaluator, linkability at "
                      "one neighbour on its usual split.")
