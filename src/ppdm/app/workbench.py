"""The steward's workbench: the table opened, its schema, the release's settings, the runs and their record.

One workbench per server (one steward on their own machine). It holds the opened table to infer its schema
(never shown: the pages show counts and names only), the choices made on the pages, and starts the runs, each
a call of :func:`ppdm.release.release` as ``ppdm release`` makes it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppdm.app.jobs import Job, Runner
from ppdm.exceptions import InputError, ParameterError

__all__ = ["Workbench", "ROLE_CHOICES"]

#: the roles a column can be given on the schema page (the identifier becomes keyed pseudonyms, as ``--id``)
ROLE_CHOICES = ("identifier", "quasi-identifier", "sensitive", "label", "other", "drop")


@dataclass
class Workbench:
    """What the steward has opened and chosen; ``upload_dir`` is private and removed by the server on exit."""

    upload_dir: Path
    output: Path | None = None
    config_path: Path | None = None
    cache_dir: Path | None = None
    table: Path | None = None
    id: str | None = None
    label: str | None = None
    roles: dict[str, str] = field(default_factory=dict)
    infos: list[Any] = field(default_factory=list)
    n_rows: int = 0
    settings: dict[str, Any] = field(default_factory=dict)
    full_battery: bool = False
    force: bool = False
    runner: Runner = field(default_factory=Runner)
    record: dict[str, Any] | None = None

    # ------------------------------------------------------------------ the table and its schema

    def open_table(self, path: str | Path) -> None:
        """Read the table with the CLI's reader and infer its schema; the previous table's choices are reset."""
        from ppdm.data.io import read_table

        p = Path(path).expanduser()
        if not str(path).strip():
            raise InputError("give the path of a table (CSV, TSV or Parquet) on this machine, or upload one")
        df = read_table(p)
        self.table, self.id, self.label, self.roles, self.record = p, None, None, {}, None
        self.n_rows = len(df)
        self.infos = self._infer(df)
        if self.output is None:
            self.output = Path.cwd() / f"{_safe_stem(p)}-release"
        self._guess_label(df)

    def save_upload(self, name: str, chunks: list[bytes]) -> Path:
        """Write an uploaded table into the private directory (owner-only) under a safe name; returns its path."""
        import os

        safe = _safe_name(name)
        path = self.upload_dir / safe
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
        return path

    def set_roles(self, chosen: dict[str, str]) -> None:
        """Apply the schema page's roles: one identifier (pseudonymised) and one label at most."""
        names = [i.name for i in self.infos]
        bad = [c for c in chosen if c not in names]
        if bad:
            raise InputError(f"unknown column '{bad[0]}'")
        for c, r in chosen.items():
            if r not in ROLE_CHOICES:
                raise InputError(f"'{r}' for column '{c}' is not a role; use one of {', '.join(ROLE_CHOICES)}")
        labels = [c for c, r in chosen.items() if r == "label"]
        if len(labels) > 1:
            raise InputError(f"one label at most (the class analysts predict); {', '.join(labels)} are all labels")
        ids = [c for c, r in chosen.items() if r == "identifier"]
        new_id = ids[0] if ids else None
        new_label = labels[0] if labels else None
        from ppdm.data.columns import infer_columns
        from ppdm.data.io import read_table

        df = read_table(self.table)  # type: ignore[arg-type]
        # only the roles that differ from what ppdm infers (with this id and label) are overrides
        inferred = {i.name: i.role for i in infer_columns(df, id=new_id, label=new_label)}
        roles = {c: r for c, r in chosen.items() if c not in (new_id, new_label) and r != inferred.get(c)}
        infos = infer_columns(df, id=new_id, label=new_label, roles=roles)
        self.id, self.label, self.roles, self.infos = new_id, new_label, roles, infos

    def _infer(self, df: Any) -> list[Any]:
        from ppdm.data.columns import infer_columns

        return infer_columns(df, id=self.id, label=self.label, roles=self.roles)

    def _guess_label(self, df: Any) -> None:
        """A column named as a class usually is the label (the steward confirms or changes it)."""
        for i in self.infos:
            if i.name.lower() in ("class", "label", "target", "diagnosis", "income") and i.n_distinct <= 20:
                self.label = i.name
                self.infos = self._infer(df)
                return

    # ------------------------------------------------------------------ the release's settings

    def config(self) -> Any:
        """The release configuration: the starting config (``--config`` or the defaults) with the page's
        settings, validated as the CLI validates its own."""
        from ppdm.release import load_config

        base = load_config(self.config_path, {})
        if not self.settings:
            return base
        data = base.model_dump()
        data["policy"] = data["policy"] | self.settings.get("policy", {})
        for k in ("threat", "seed"):
            if k in self.settings:
                data[k] = self.settings[k]
        if "methods" in self.settings:
            data["methods"] = self.settings["methods"]
        return load_config(None, data)

    def apply_settings(self, form: dict[str, Any]) -> None:
        """The policy page's form: limits in per cent, the objective, the threat, the mechanisms and grids."""
        import yaml

        policy: dict[str, Any] = {}
        for key, value in form.items():
            if key.startswith("max_"):
                try:
                    policy[key] = float(value) / 100.0
                except ValueError:
                    raise ParameterError(f"{key} must be a number of per cent; got '{value}'") from None
        if form.get("objective"):
            policy["objective"] = form["objective"]
        methods = []
        for key, value in form.items():
            if key.startswith("use:") and value:
                method = key[4:]
                text = form.get(f"grid:{method}", "") or "{}"
                try:
                    grid = yaml.safe_load(text) or {}
                except yaml.YAMLError:
                    raise ParameterError(f"the grid of {method} is not a mapping like {{k: [20, 30]}}") from None
                if not isinstance(grid, dict):
                    raise ParameterError(f"the grid of {method} is not a mapping like {{k: [20, 30]}}")
                methods.append({"method": method, "grid": grid})
        if not methods:
            raise ParameterError("choose at least one mechanism to sweep")
        old = dict(self.settings)
        self.settings = {"policy": policy, "threat": form.get("threat") or "default", "methods": methods}
        self.full_battery = bool(form.get("full_battery"))
        self.force = bool(form.get("force"))
        if form.get("output"):
            self.output = Path(str(form["output"])).expanduser()
        try:
            self.config()
        except Exception:
            self.settings = old
            raise

    # ------------------------------------------------------------------ runs

    def start_sweep(self) -> Job:
        """Run ``ppdm release`` on the table with the page's schema and settings."""
        cfg, table, out = self._ready()
        return self.runner.start("sweep", lambda: self._release(cfg, table, out, force=self.force),
                                 on_done=self._keep)

    def start_choice(self, name: str, reason: str) -> Job:
        """Release the steward's candidate ``name`` with ``reason``: the same sweep (scored from the cache) and
        the same output layer, replacing the policy's release this workbench published."""
        from ppdm.release.override import candidate_name, choosable, clean_reason

        cfg, table, out = self._ready()
        if self.record is None:
            raise ParameterError("run the sweep first: a candidate is chosen from its results")
        reason = clean_reason(reason)
        c = next((c for c in self.record["candidates"] if candidate_name(c) == name), None)
        refused = "it is not a candidate of the last sweep" if c is None else choosable(c, cfg.policy)
        if refused is not None:
            raise ParameterError(f"candidate '{name}' cannot be chosen: {refused}")
        return self.runner.start("choice", lambda: self._release(cfg, table, out, force=True, choose=name,
                                                                 reason=reason), on_done=self._keep)

    def _ready(self) -> tuple[Any, Path, Path]:
        if self.table is None:
            raise InputError("open a table first")
        if self.output is None:
            raise ParameterError("give an output directory on the policy page")
        return self.config(), self.table, self.output

    def _release(self, cfg: Any, table: Path, out: Path, **kwargs: Any) -> dict[str, Any]:
        from ppdm.release import release

        res = release(table, output_dir=out, config=cfg, id=self.id, label=self.label, roles=self.roles or None,
                      cache_dir=self.cache_dir, progress=False, full_battery=self.full_battery, **kwargs)
        return res.record

    def _keep(self, job: Job) -> None:
        self.record = job.record

    def load_record(self) -> None:
        """The record of the release in the output directory, when there is one (a previous session's)."""
        path = None if self.output is None else self.output / "release.json"
        if path is not None and path.is_file():
            self.record = json.loads(path.read_text(encoding="utf-8"))


def _safe_name(name: str) -> str:
    """An uploaded file's name as a plain file name (no directories, no control or shell characters)."""
    base = Path(name.replace("\\", "/")).name
    base = re.sub(r"[^A-Za-z0-9._-]", "_", base).lstrip(".")[:100]
    if not base or not re.search(r"\.(csv|tsv|txt|parquet|pq)$", base, re.IGNORECASE):
        raise InputError("upload a CSV, TSV or Parquet table (a name ending in .csv, .tsv, .txt or .parquet)")
    return base


def _safe_stem(p: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", p.stem)[:60] or "table"
