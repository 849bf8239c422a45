"""What the user names (columns, categories, files) is printed and read as it is: rich's markup and glob's
brackets must not rewrite it or stop a command."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

#: names rich would read as markup: a closing tag with nothing open (a markup error), a style, a link
ODD = ("[/b]", "[bold red]x", "weight[kg]")


def _odd_frame(seed: int, first_id: int, n: int = 120) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"rid": range(first_id, first_id + n), ODD[0]: rng.normal(0, 1, n),
                         ODD[1]: rng.normal(5, 2, n), ODD[2]: rng.normal(70, 10, n).round(1),
                         "town": rng.choice(["[north]", "south"], n), "class": rng.choice(["a", "b"], n)})


@pytest.fixture
def odd_table(tmp_path: Path) -> Path:
    # the file's own name holds glob's brackets too
    path = tmp_path / "survey[2024].csv"
    _odd_frame(3, 0).to_csv(path, index=False)
    return path


def test_schema_prints_bracketed_names_as_they_are(cli: Callable[..., tuple[int, str, str]],
                                                   odd_table: Path) -> None:
    code, out, err = cli("schema", str(odd_table), "--id", "rid", "--label", "class")
    assert code == 0, err
    for name in ODD:
        assert name in out


def test_perturb_and_attack_a_file_named_with_brackets(cli: Callable[..., tuple[int, str, str]],
                                                       odd_table: Path, tmp_path: Path) -> None:
    out_file, state = tmp_path / "rel[bold].csv", tmp_path / "rel.state"
    code, out, err = cli("perturb", str(odd_table), "--id", "rid", "--label", "class", "--method", "mdav",
                         "-o", str(out_file), "--state", str(state))
    assert code == 0, err
    assert "rel[bold].csv" in "".join(out.split())  # rich may fold a long path
    control = tmp_path / "others[2024].csv"  # real people not in the table (the table itself is refused)
    _odd_frame(4, 1000).to_csv(control, index=False)
    code, out, err = cli("attack", str(odd_table), str(out_file), "--id", "rid", "--label", "class",
                         "--state", str(state), "--control", str(control))
    assert code == 0, err
    # the inference of every column from the others names each column
    assert all(name in out for name in ODD), out


def test_a_pattern_still_reads_every_file_it_matches(tmp_path: Path) -> None:
    from ppdm.data.io import expand_inputs

    for i in range(2):
        pd.DataFrame({"x": [1.0, 2.0]}).to_parquet(tmp_path / f"part-{i}.parquet")
    assert [p.name for p in expand_inputs(str(tmp_path / "part-[01].parquet"))] == ["part-0.parquet",
                                                                                   "part-1.parquet"]
