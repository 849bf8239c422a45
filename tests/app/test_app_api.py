"""The workbench without a browser: the token, the pages, a run, the steward's choice in the record, the
downloads (never the state), one run at a time and cancelling."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

TOKEN = "test-token-not-secret"


def _bench(files: dict[str, Path], out: Path | None = None):  # type: ignore[no-untyped-def]
    from ppdm.app.workbench import Workbench

    return Workbench(upload_dir=files["uploads"], output=out or files["out"], config_path=files["config"],
                     cache_dir=files["cache"])


def _client(bench):  # type: ignore[no-untyped-def]
    import warnings

    from ppdm.app.server import make_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Starlette's notice about the version of its HTTP client
        from starlette.testclient import TestClient

    return TestClient(make_app(bench, TOKEN))


def _wait(bench, limit: float = 300.0) -> dict:  # type: ignore[no-untyped-def, type-arg]
    t0 = time.monotonic()
    while bench.runner.busy():
        assert time.monotonic() - t0 < limit, "the run did not end"
        time.sleep(0.2)
    return bench.runner.job.public()


@pytest.fixture(scope="module")
def swept(app_files: dict[str, Path]):  # type: ignore[no-untyped-def]
    """A workbench whose sweep ran through the policy page, and its client."""
    bench = _bench(app_files)
    bench.open_table(app_files["table"])
    client = _client(bench)
    assert client.get(f"/?token={TOKEN}").status_code == 200
    r = client.post("/schema", data={f"role:{i.name}": i.role for i in bench.infos} | {"role:id": "identifier",
                                                                                         "role:class": "label"})
    assert r.status_code == 200, r.text[-300:]
    r = client.post("/policy", data=_policy_form(bench, action="run"), follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/run", r.text[-500:]
    job = _wait(bench)
    assert job["state"] == "done", job
    return bench, client


def _policy_form(bench, **extra: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    form = {"use:noise": "1", "grid:noise": "{scale: [1.0, 2.0]}", "use:mdav": "1", "grid:mdav": "{k: [20]}",
            "max_reidentification": "90", "max_within_5pct": "90", "max_singling_out": "100", "max_linkability": "100",
            "max_membership_outliers": "100", "max_attribute_inference": "10", "threat": "population",
            "objective": "tstr", "full_battery": "1", "output": str(bench.output)}
    return form | extra


def test_every_request_needs_the_token(app_files: dict[str, Path]) -> None:
    bench = _bench(app_files)
    client = _client(bench)
    for path in ("/", "/schema", "/policy", "/api/job", "/download/record", "/static/app.js"):
        assert client.get(path).status_code == 403, path
        assert client.get(f"{path}?token=wrong").status_code == 403, path
    assert client.post("/open", data={"path": str(app_files["table"])}).status_code == 403
    assert bench.table is None
    r = client.get(f"/?token={TOKEN}")
    assert r.status_code == 200 and "<html" in r.text
    assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
    assert client.get("/static/app.js").status_code == 200  # the cookie now stands for the token
    assert "default-src 'self'" in r.headers["content-security-policy"]


def test_a_run_publishes_and_the_pages_show_it(swept) -> None:  # type: ignore[no-untyped-def]
    bench, client = swept
    record = json.loads((bench.output / "release.json").read_text())
    assert bench.record["chosen"] == record["chosen"]
    # the schema page took the roles: the id is pseudonymised, the class is the label
    assert record["input"]["id"] == "id" and record["input"]["label"] == "class"
    assert record["config"]["methods"] == [{"method": "noise", "grid": {"scale": [1.0, 2.0]}},
                                           {"method": "mdav", "grid": {"k": [20]}}]
    assert record["policy"]["max_reidentification"] == pytest.approx(0.9)
    frontier = client.get("/frontier").text
    for c in record["candidates"]:
        assert f">{c['method']}(" in frontier
    points = client.get("/api/frontier").json()["points"]
    assert [p["mark"] for p in points].count("released") == 1
    released = next(p for p in points if p["mark"] == "released")
    assert released["name"] == record["chosen"]["candidate"]
    page = client.get(f"/candidate/{released['index']}").text
    assert "What it does not protect" in page and "This candidate is the release." in page
    assert "mean_radius" in page  # per-column fidelity of the released candidate


def test_no_value_of_the_table_in_any_page(swept, app_files: dict[str, Path]) -> None:  # type: ignore[no-untyped-def]
    bench, client = swept
    df = pd.read_csv(app_files["table"])
    pages = "".join(client.get(p).text for p in ("/", "/schema", "/policy", "/run", "/frontier", "/downloads",
                                                 *(f"/candidate/{i}" for i in range(len(bench.record["candidates"])))))
    # values with enough digits that a page could not show them by chance (radii, areas of real tumours)
    probes = {repr(float(v)) for v in df["mean_area"].head(30)} | {repr(float(v)) for v in df["worst_area"].head(30)}
    assert not [p for p in probes if p in pages]
    assert "release.state" in client.get("/downloads").text  # named as what stays on the machine


def test_downloads_never_the_state(swept) -> None:  # type: ignore[no-untyped-def]
    bench, client = swept
    r = client.get("/download/release")
    assert r.status_code == 200 and r.content == (bench.output / "release.csv").read_bytes()
    assert client.get("/download/report").text.startswith("<!DOCTYPE html>")
    for what in ("state", "release.state", "..%2Frelease.state"):
        assert client.get(f"/download/{what}").status_code == 404
    assert "/download/state" not in client.get("/downloads").text


def test_steward_choice_with_reason_is_in_the_record(swept) -> None:  # type: ignore[no-untyped-def]
    bench, client = swept
    from ppdm.release.override import candidate_name

    record = bench.record
    policy_pick = next(c for c in record["candidates"] if c["chosen"])
    i = next(i for i, c in enumerate(record["candidates"]) if not c["chosen"])
    # no reason: refused on the page, nothing runs
    r = client.post(f"/candidate/{i}", data={"reason": "  "})
    assert r.status_code == 400 and "needs the reason" in r.text
    r = client.post(f"/candidate/{i}", data={"reason": "the board can explain it"}, follow_redirects=False)
    assert r.status_code == 303
    assert _wait(bench)["state"] == "done"
    written = json.loads((bench.output / "release.json").read_text())
    assert written["choice"] == {"by": "steward", "policy": candidate_name(policy_pick),
                                 "steward": candidate_name(record["candidates"][i]),
                                 "reason": "the board can explain it"}
    assert "the board can explain it" in client.get("/frontier").text
    assert "the board can explain it" in client.get("/download/report").text


def test_one_run_at_a_time_and_cancel(app_files: dict[str, Path]) -> None:
    bench = _bench(app_files, out=app_files["tmp"] / "cancelled")
    bench.open_table(app_files["table"])
    client = _client(bench)
    client.get(f"/?token={TOKEN}")
    form = _policy_form(bench, action="run") | {"grid:noise": "{scale: [0.5, 1.0, 1.5, 2.0, 3.0]}",
                                                "use:rankswap": "1", "grid:rankswap": "{p: [5.0, 15.0]}"}
    form.pop("full_battery")
    assert client.post("/policy", data=form, follow_redirects=False).status_code == 303
    # a second tab asks for another run meanwhile: refused, the first goes on
    second = client.post("/policy", data=form)
    assert second.status_code == 400 and "a run is under way" in second.text
    assert client.post("/api/cancel", headers={"accept": "application/json"}).json() == {"cancelling": True}
    job = _wait(bench)
    assert job["state"] == "cancelled" and "nothing was published" in job["message"]
    assert not bench.output.exists() or not any(bench.output.iterdir())


def test_bad_input_is_one_line_on_the_page(app_files: dict[str, Path]) -> None:
    bench = _bench(app_files)
    client = _client(bench)
    client.get(f"/?token={TOKEN}")
    r = client.post("/open", data={"path": str(app_files["tmp"] / "missing.csv")})
    assert r.status_code == 400 and 'role="alert"' in r.text and "Traceback" not in r.text
    r = client.post("/upload?name=../../etc/passwd", content=b"a,b\n1,2\n")
    assert r.status_code == 400 and "CSV, TSV or Parquet" in r.json()["error"]
    r = client.post("/upload?name=..%2Fup.csv", content=(app_files["table"]).read_bytes())
    assert r.status_code == 200, r.text
    assert bench.table is not None and bench.table.parent == app_files["uploads"] and bench.table.name == "up.csv"
    assert (bench.table.stat().st_mode & 0o077) == 0
