"""The steward's whole path in a real browser (Playwright driving Debian's headless Chromium): ``ppdm app`` on
the bundled WDBC table with a small grid, the schema, the policy, the run, the frontier and its filters, choosing
another candidate with a reason, and downloading the record; plus the accessibility basics (every control
labelled, the path usable from the keyboard) and no error in the browser's console.

The screenshots go to ``test-artifacts/app/``, and to the documentation's ``docs/images/app/`` when
``PPDM_DOCS_SCREENSHOTS=1`` (how the guide's pictures are made).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = [ROOT / "test-artifacts" / "app"] + (
    [ROOT / "docs" / "images" / "app"] if os.environ.get("PPDM_DOCS_SCREENSHOTS") == "1" else [])
#: a run of the small grid takes about 20 s alone; the machine may be shared
RUN_LIMIT_MS = 240_000


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (Debian: apt-get install chromium); the browser tests need one")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright (pip install "
                                                                  "playwright; no browser download needed)")
    path = _chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def server(app_files: dict[str, Path]) -> Iterator[str]:
    """``ppdm app TABLE --no-browser`` as a steward starts it; its URL with the token."""
    # paths relative to the working directory, as a steward types them (the screenshots show no machine path)
    tmp = app_files["tmp"]
    cmd = [sys.executable, "-m", "ppdm", "app", app_files["table"].name, "--no-browser", "--config",
           str(app_files["config"]), "--cache-dir", str(app_files["cache"]), "-o", app_files["out"].name]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp)
    url = None
    t0 = time.monotonic()
    while url is None and time.monotonic() - t0 < 60 and proc.poll() is None:
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", proc.stdout.readline())  # type: ignore[union-attr]
        url = m.group(1) if m else None
    assert url is not None, proc.stderr.read() if proc.poll() is not None else "no URL printed"  # type: ignore[union-attr]
    yield url
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "stopped" in err, err
    assert "Traceback" not in err and "token=" not in err


def _shot(page: Any, name: str) -> None:
    for folder in SHOTS:
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def _unlabelled(page: Any) -> list[str]:
    """The page's form controls that have no label a screen reader would read."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('input, select, textarea'))
        .filter(el => el.type !== 'hidden')
        .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
        .map(el => el.name || el.id)""")


def test_the_stewards_path(browser: Any, server: str, app_files: dict[str, Path], tmp_path: Path) -> None:
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_default_timeout(30_000)

    # open: the table given on the command line is open; the keyboard reaches the skip link first
    page.goto(server)
    assert page.locator("h1").inner_text() == "Open a table"
    assert "wdbc.csv" in page.locator("header .where").inner_text()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to the content"
    assert not _unlabelled(page)
    _shot(page, "open")

    # schema: by the keyboard, from the path field (Enter submits the form) to the schema
    page.focus("#path")
    page.keyboard.press("Enter")
    page.wait_for_url("**/schema")
    assert page.locator("h1").inner_text() == "Schema"
    assert page.get_by_label("Role of class").input_value() == "label"
    page.get_by_label("Role of id").select_option("identifier")
    assert not _unlabelled(page)
    _shot(page, "schema")
    page.get_by_role("button", name="Apply and go to the policy").click()
    page.wait_for_url("**/policy")
    assert "replaced by keyed pseudonyms" not in page.content()  # the policy page, not the schema's rows

    # policy in words with its numbers; the small grid of the config; a loose policy so that three hold
    for label, value in (("Re-identification beyond chance", "90"),
                         ("Values disclosed within 5 % beyond the control", "90"),
                         ("Singling out beyond the control", "100"), ("Linkability beyond the control", "100"),
                         ("Membership advantage on the most outlying records", "100")):
        page.get_by_label(label, exact=True).fill(value)
    assert page.get_by_label("noise", exact=True).is_checked() and page.get_by_label("mdav", exact=True).is_checked()
    assert not page.get_by_label("rotation", exact=True).is_checked()
    page.get_by_label("Threat").select_option("population")
    page.get_by_label(re.compile("^Full battery")).check()
    assert not _unlabelled(page)
    _shot(page, "policy")
    page.get_by_role("button", name="Run the sweep").click()

    # the run: live progress, then the frontier
    page.wait_for_url("**/run")
    page.wait_for_function("document.getElementById('job-detail').textContent.includes('first pass')")
    assert page.get_by_role("button", name="Cancel the run").is_visible()
    _shot(page, "run")
    page.wait_for_selector("#job-next:not([hidden])", timeout=RUN_LIMIT_MS)
    assert page.locator("#job-stage").inner_text() == "published"
    page.get_by_role("link", name="See the frontier").click()

    # the frontier: an interactive chart with one point per candidate, the released one marked
    page.wait_for_selector("#chart[data-drawn='3'] svg")
    assert page.locator("#chart-status").inner_text().startswith("3 of 3 candidates shown")
    assert page.locator("#candidates tbody tr").count() == 3
    released = page.locator("#candidates tr.released th").inner_text()
    assert released.endswith("(released)")
    page.hover("#chart svg .mark-symbol path >> nth=0")
    page.wait_for_selector("#vg-tooltip-element.visible")
    assert "candidate" in page.locator("#vg-tooltip-element").inner_text()
    # filters: leave out the noise family, then show it again
    page.get_by_label("noise", exact=True).uncheck()
    page.wait_for_selector("#chart[data-drawn='1']")
    assert page.locator("#chart-status").inner_text().startswith("1 of 3")
    assert page.locator("#candidates tbody tr:not([hidden])").count() == 1
    page.get_by_label("noise", exact=True).check()
    page.wait_for_selector("#chart[data-drawn='3']")
    page.get_by_label("Risk test on the horizontal axis").select_option("singling_out")
    page.wait_for_selector("#chart svg")
    assert not _unlabelled(page)
    _shot(page, "frontier")

    # a candidate that holds the policy but was not chosen: its page, then choosing it with a reason
    row = page.locator("#candidates tbody tr", has_text="meets the policy but lower").first
    name = row.locator("th a").inner_text()
    row.locator("th a").click()
    assert page.locator("h1").inner_text() == name
    assert page.get_by_role("heading", name="What it does not protect").is_visible()
    assert page.locator("table", has_text="linkage").count() >= 1
    page.get_by_label("Your reason (kept in the record)").fill("the board can explain additive noise")
    assert not _unlabelled(page)
    _shot(page, "candidate")
    page.get_by_role("button", name=f"Choose {name}").click()
    page.wait_for_url("**/run")
    page.wait_for_selector("#job-next:not([hidden])", timeout=RUN_LIMIT_MS)
    page.get_by_role("link", name="See the frontier").click()
    note = page.locator("p.note").inner_text()
    assert f"Released: {name}, chosen by the steward in place of the policy's" in note
    assert "the board can explain additive noise" in note

    # downloads: the record names both choices and the reason; no state offered
    page.get_by_role("link", name="Downloads", exact=True).first.click()
    assert "state" not in " ".join(page.locator("a[download]").all_inner_texts())
    with page.expect_download() as info:
        page.get_by_role("link", name="The record (release.json)").click()
    saved = tmp_path / "release.json"
    info.value.save_as(saved)
    record = json.loads(saved.read_text())
    assert record["choice"]["by"] == "steward" and record["choice"]["steward"] == name
    assert record["choice"]["reason"] == "the board can explain additive noise"
    assert record["choice"]["policy"] != name
    with page.expect_download() as info:
        page.get_by_role("link", name=re.compile(r"^The release")).click()
    assert info.value.suggested_filename == "release.csv"
    _shot(page, "downloads")
    assert not errors, errors[:5]
    context.close()
