"""Small files in the published layouts of the UCI sets ppdm reads from a data directory (test data only).

The values are drawn at random; the layouts (separators, missing-value marks, where the class is, record
counts) are those of the published files, so the readers are exercised as on the real ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

YEAST_CLASSES = {"CYT": 463, "NUC": 429, "MIT": 244, "ME3": 163, "ME2": 51, "ME1": 44, "EXC": 35, "VAC": 30, "POX": 20,
                 "ERL": 5}
ECOLI_CLASSES = {"cp": 143, "im": 77, "pp": 52, "imU": 35, "om": 20, "omL": 5, "imL": 2, "imS": 2}


def _named_rows(rng: np.random.Generator, classes: dict[str, int], n_attr: int, suffix: str) -> str:
    labels = [c for c, k in classes.items() for _ in range(k)]
    lines = []
    for i, c in enumerate(labels):
        vals = "  ".join(f"{v:.2f}" for v in rng.uniform(0, 1, n_attr))
        lines.append(f"S{i:04d}_{suffix}  {vals}  {c}")
    return "\n".join(lines) + "\n"


def write(key: str, directory: Path, seed: int = 0) -> Path:
    """Write the published file of ``key`` (a key of ``ppdm.datasets.uci.UCI_SETS``) into ``directory``."""
    rng = np.random.default_rng(seed)
    if key == "yeast":
        path, text = directory / "yeast.data", _named_rows(rng, YEAST_CLASSES, 8, "YEAST")
    elif key == "ecoli":
        path, text = directory / "ecoli.data", _named_rows(rng, ECOLI_CLASSES, 7, "ECOLI")
    elif key == "page_blocks":
        y = np.repeat([1, 2, 3, 4, 5], [4913, 329, 28, 88, 115])
        rows = [" ".join(f"{int(v):5d}" for v in rng.integers(1, 500, 10)) + f" {c}" for c in y]
        path, text = directory / "page-blocks.data", "\n".join(rows) + "\n"
    elif key == "mfeat":
        rows = ["".join(f"{int(v):4d}" for v in rng.integers(0, 1000, 216)) for _ in range(2000)]
        path, text = directory / "mfeat-fac", "\n".join(rows) + "\n"
    elif key == "scc":
        rows = [" ".join(f"{v:.4f}" for v in rng.normal(30, 5, 60)) for _ in range(600)]
        path, text = directory / "synthetic_control.data", "\n".join(rows) + "\n"
    elif key == "hepatitis":
        rows = []
        for i in range(155):
            vals = [str(int(v)) if rng.random() > 0.05 else "?" for v in rng.integers(1, 3, 19)]
            rows.append(",".join([str(1 + (i % 5 != 0)), *vals]))
        path, text = directory / "hepatitis.data", "\n".join(rows) + "\n"
    elif key == "credit":
        rows = []
        for i in range(690):
            a = [rng.choice(["a", "b"]), f"{rng.uniform(15, 60):.2f}", f"{rng.uniform(0, 20):.3f}",
                 rng.choice(["u", "y"]), rng.choice(["g", "p"]), rng.choice(["c", "q", "w"]), rng.choice(["v", "h"]),
                 f"{rng.uniform(0, 5):.3f}", rng.choice(["t", "f"]), rng.choice(["t", "f"]), str(rng.integers(0, 9)),
                 rng.choice(["t", "f"]), rng.choice(["g", "s"]), f"{rng.integers(0, 500):05d}",
                 str(rng.integers(0, 1000))]
            if i % 40 == 0:
                a[0] = "?"
            rows.append(",".join([*a, "+" if i % 2 else "-"]))
        path, text = directory / "crx.data", "\n".join(rows) + "\n"
    else:
        raise KeyError(key)
    path.write_text(text, encoding="ascii")
    return path
