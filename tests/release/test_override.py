"""The data steward's choice in place of the policy's: released by the same flow, named in the record."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import one_line_error
from tests.release.conftest import CHOICE_CONFIG


@pytest.fixture(scope="module")
def swept(wdbc_csv: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One sweep by the policy (every candidate fully measured), its cache and its record."""
    from ppdm.release import release

    tmp = tmp_path_factory.mktemp("choice")
    config = tmp / "choice.yaml"
    config.write_text(CHOICE_CONFIG)
    res = release(wdbc_csv, output_dir=tmp / "policy", config=_load(config), label="class", id="pid",
                  cache_dir=tmp / "cache", progress=False, full_battery=True)
    return {"tmp": tmp, "config": config, "record": res.record}


def _load(config: Path):  # type: ignore[no-untyped-def]
    from ppdm.release import load_config

    return load_config(config, {})


def _names(record: dict) -> list[str]:  # type: ignore[type-arg]
    from ppdm.release.override import candidate_name

    return [candidate_name(c) for c in record["candidates"]]


def test_steward_choice_is_released_and_recorded(cli, wdbc_csv: Path, swept: dict) -> None:  # type: ignore[type-arg]
    tmp, record = swept["tmp"], swept["record"]
    policy_pick = next(c for c in record["candidates"] if c["chosen"])
    other = next(c for c in record["candidates"] if not c["chosen"] and c["verdict"].startswith("meets the policy"))
    from ppdm.release.override import candidate_name

    out = tmp / "steward"
    code, stdout, err = cli("release", wdbc_csv, "--label", "class", "--id", "pid", "--config", swept["config"],
                            "-o", out, "--cache-dir", tmp / "cache", "--full-battery",
                            "--choose", candidate_name(other), "--reason", "a mechanism  the\nboard can explain")
    assert code == 0, err
    rec = json.loads((out / "release.json").read_text())
    assert rec["choice"] == {"by": "steward", "policy": candidate_name(policy_pick), "steward": candidate_name(other),
                             "reason": "a mechanism the board can explain"}
    assert rec["chosen"]["method"] == other["method"] and rec["chosen"]["params"] == other["params"]
    chosen = [c for c in rec["candidates"] if c["chosen"]]
    assert len(chosen) == 1 and candidate_name(chosen[0]) == candidate_name(other)
    assert "board can explain" in stdout and "board can explain" in (out / "report.html").read_text()
    # the release was made by the steward's mechanism: every released column names it
    treated = {c["name"]: c.get("mechanism") for c in rec["columns"]}
    assert treated["mean_radius"] and treated["mean_radius"].startswith(other["method"])
    assert len(pd.read_csv(out / "release.csv")) == rec["input"]["n_rows"]


@pytest.mark.parametrize(("args", "match"), [
    (("--choose", "noise(scale=2.0)"), "needs the reason"),
    (("--reason", "because"), "--reason explains"),
    (("--choose", "noise(scale=9.0)", "--reason", "x"), "no candidate of the sweep is named"),
])
def test_bad_choice_is_one_line(cli, wdbc_csv: Path, swept: dict, args: tuple[str, ...], match: str) -> None:  # type: ignore[type-arg]
    tmp = swept["tmp"]
    code, out, err = cli("release", wdbc_csv, "--label", "class", "--id", "pid", "--config", swept["config"],
                         "-o", tmp / "bad", "--cache-dir", tmp / "cache", "--full-battery", *args)
    assert match in one_line_error(code, out, err)
    assert not (tmp / "bad").exists()


def test_a_candidate_breaking_the_policy_cannot_be_chosen(swept: dict) -> None:  # type: ignore[type-arg]
    from ppdm.exceptions import ParameterError
    from ppdm.release.config import Policy
    from ppdm.release.override import apply_choice

    cands = json.loads(json.dumps(swept["record"]["candidates"]))
    best = next(i for i, c in enumerate(cands) if c["chosen"])
    strict = Policy(max_reidentification=0.0)
    other = next(n for i, n in enumerate(_names(swept["record"])) if i != best)
    with pytest.raises(ParameterError, match="breaks the policy"):
        apply_choice(cands, best, other, "why not", strict)
