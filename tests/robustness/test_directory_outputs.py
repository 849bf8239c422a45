"""A directory named as a file output is refused before any work, with --force too: a run that tried committed
a set of outputs it could never complete, and every later run on the same state file failed the same way."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.exceptions import OutputError
from tests.conftest import one_line_error


def _tables(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(5)
    df = pd.DataFrame(rng.normal(size=(300, 6)), columns=[f"x{j}" for j in range(6)])
    df["class"] = rng.integers(0, 2, 300)
    src, batch = tmp_path / "t.csv", tmp_path / "batch.csv"
    df.iloc[:200].to_csv(src, index=False)
    df.iloc[200:].to_csv(batch, index=False)
    return src, batch


def test_perturb_and_stream_refuse_a_directory_as_their_output_and_leave_nothing(cli, tmp_path: Path) -> None:
    src, batch = _tables(tmp_path)
    (tmp_path / "od").mkdir()
    state = tmp_path / "p.state"
    line = one_line_error(*cli("perturb", src, "-o", tmp_path / "od", "--method", "noise", "--label", "class",
                               "--state", state, "--force"))
    assert "output 'od' is a directory; give a file's path" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batch.csv", "od", "t.csv"]  # nothing staged
    code, out, err = cli("perturb", src, "-o", tmp_path / "ok.csv", "--method", "noise", "--label", "class",
                         "--state", state)
    assert code == 0, out + err

    s = tmp_path / "s.state"
    assert cli("stream", "init", src, "--state", s, "--rank", 3, "--label", "class")[0] == 0
    line = one_line_error(*cli("stream", "update", s, batch, "-o", tmp_path / "od", "--force"))
    assert "output 'od' is a directory" in line, line
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    code, out, err = cli("stream", "update", s, batch, "-o", tmp_path / "u.csv")
    assert code == 0, out + err


def test_a_committed_set_whose_file_became_a_directory_says_how_to_finish_it(tmp_path: Path) -> None:
    """A set committed before its output's path became a directory (or left by the earlier defect) cannot go
    in whole: the run says which path is in the way, and leaves the set to be finished once it is moved."""
    from ppdm.data.publish import _complete_moves

    stage, target = tmp_path / ".od.0123456789ab.stage", tmp_path / "od"
    stage.write_text("a,b\n1,2\n")
    target.mkdir()
    (target / "keep.txt").write_text("the user's")
    with pytest.raises(OutputError, match="'od' is a directory where a finished run's output of that name goes; "
                                          "move the directory away"):
        _complete_moves([(stage, target)], None, [])
    assert stage.exists() and (target / "keep.txt").read_text() == "the user's"
    target.rename(tmp_path / "moved")
    _complete_moves([(stage, target)], None, [])
    assert target.read_text() == "a,b\n1,2\n"
