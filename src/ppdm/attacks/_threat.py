"""What the attacker knows: an explicit, immutable threat model with a one-line CLI syntax.

Syntax: knowledge items joined by ``+``, e.g. ``known-io:20+population``::

    known-io:N          N known input-output record pairs (original row and its release row), drawn at random;
                        ``known-io`` alone means m + 1 pairs (enough to pin down any affine map of m columns)
    known-records:IDS   the known pairs are these records (comma-separated ids, or a count)
    known-sample:F      a fraction F of records from the same distribution (values only, not which release row)
    known-columns:A,B   the true values of these columns for every record (quasi-identifiers)
    population          the whole original table, without knowing which release row is whose
    no-marginals        the attacker does NOT know each column's distribution (known by default)

Presets (plain words in :data:`PRESETS`): ``outsider``, ``sample``, ``insider``, ``population``, ``default``,
``strongest``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ppdm.exceptions import ParameterError

__all__ = ["ThreatModel", "PRESETS", "DEFAULT_THREAT"]

#: preset name -> (threat string, description in plain words)
PRESETS: dict[str, tuple[str, str]] = {
    "outsider": ("", "sees only the release and the public distribution of each column"),
    "sample": ("known-sample:0.1", "also holds a 10 % sample of records from the same population (values only)"),
    "insider": ("known-io", "also knows m + 1 records together with their released rows (e.g. own records)"),
    "population": ("population", "holds the original table itself and tries to tell which released row is whose"),
    "default": ("population+known-sample:0.1+known-io",
                "the strongest realistic mix: the population, a 10 % sample and m + 1 known pairs"),
    "strongest": ("population+known-sample:1.0+known-io",
                  "upper bound: the population, a full sample and m + 1 known pairs"),
}
DEFAULT_THREAT = "default"


@dataclass(frozen=True)
class ThreatModel:
    """The attacker's background knowledge.

    Parameters
    ----------
    known_io : int or None
        Number of known input-output pairs; ``-1`` means m + 1 (resolved against the data); None: none.
    known_records : tuple of str
        Ids (or 1-based positions) of the known pairs; overrides the random draw of ``known_io``.
    known_sample : float
        Fraction of records the attacker holds as a sample of the same distribution (0 = none).
    known_columns : tuple of str
        Columns whose true values the attacker knows for every record.
    population : bool
        The attacker holds the whole original table (unordered).
    marginals : bool
        The attacker knows each column's distribution (the published marginals).
    name : str
        Preset name or the parsed text, for reports.
    """

    known_io: int | None = None
    known_records: tuple[str, ...] = ()
    known_sample: float = 0.0
    known_columns: tuple[str, ...] = ()
    population: bool = False
    marginals: bool = True
    name: str = field(default="", compare=False)

    # ------------------------------------------------------------------ parsing
    @classmethod
    def parse(cls, text: str | ThreatModel | None) -> ThreatModel:
        """Parse the CLI syntax (or a preset name); None gives the default preset."""
        if isinstance(text, ThreatModel):
            return text
        if text is None:
            text = DEFAULT_THREAT
        text = text.strip()
        if text in PRESETS:
            tm = cls._parse_items(PRESETS[text][0])
            return replace(tm, name=text)
        return replace(cls._parse_items(text), name=text)

    @classmethod
    def _parse_items(cls, text: str) -> ThreatModel:
        kw: dict[str, object] = {}
        for item in (t.strip() for t in text.split("+") if t.strip()):
            key, _, value = item.partition(":")
            key = key.strip().lower().replace("_", "-")
            value = value.strip()
            if key == "known-io":
                kw["known_io"] = -1 if not value else _count(value, "known-io")
            elif key == "known-records":
                if not value:
                    raise ParameterError("known-records needs ids or a count, e.g. known-records:a,b")
                if value.isdigit():
                    kw["known_io"] = _count(value, "known-records")
                else:
                    kw["known_records"] = tuple(v.strip() for v in value.split(",") if v.strip())
            elif key == "known-sample":
                try:
                    f = float(value)
                except ValueError:
                    raise ParameterError("known-sample needs a fraction in (0, 1], e.g. known-sample:0.1") from None
                if not 0 < f <= 1:
                    raise ParameterError("known-sample must be a fraction in (0, 1], e.g. known-sample:0.1")
                kw["known_sample"] = f
            elif key == "known-columns":
                cols = tuple(v.strip() for v in value.split(",") if v.strip())
                if not cols:
                    raise ParameterError("known-columns needs column names, e.g. known-columns:age,zip")
                kw["known_columns"] = cols
            elif key == "population":
                kw["population"] = True
            elif key == "no-marginals":
                kw["marginals"] = False
            elif key in PRESETS:
                base = cls._parse_items(PRESETS[key][0])
                kw.update({k: v for k, v in base.__dict__.items() if k != "name" and v != getattr(cls(), k)})
            else:
                raise ParameterError(
                    f"unknown threat item '{key}'; use known-io:N, known-records:IDS, known-sample:F, "
                    f"known-columns:A,B, population, no-marginals or a preset ({', '.join(PRESETS)})"
                )
        return cls(**kw)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ queries
    @property
    def has_pairs(self) -> bool:
        return bool(self.known_records) or (self.known_io is not None and self.known_io != 0)

    def n_pairs(self, n_rows: int, n_cols: int) -> int:
        """Number of known pairs for a table of this shape (at most half the rows)."""
        if self.known_records:
            return len(self.known_records)
        if self.known_io is None:
            return 0
        k = n_cols + 1 if self.known_io < 0 else self.known_io
        return int(min(k, n_rows // 2))

    def _cap_note(self, n_rows: int | None, n_cols: int | None) -> str:
        """Why fewer pairs are known than asked (a count above half the rows), or '' when none were cut."""
        if n_rows is None or n_cols is None or self.known_records or self.known_io is None or self.known_io == 0:
            return ""
        asked = n_cols + 1 if self.known_io < 0 else self.known_io
        used = self.n_pairs(n_rows, n_cols)
        if asked <= used:
            return ""
        what = f"known-io:{self.known_io}" if self.known_io > 0 else f"known-io (m + 1 = {asked})"
        # the report names the count the attacks used, never a larger one they could not use
        return (f"{what} capped at {used} known pairs, half of the {n_rows} rows: the other half is what is "
                "attacked")

    def describe(self, n_rows: int | None = None, n_cols: int | None = None) -> str:
        """Plain-words description.

        Parameters
        ----------
        n_rows, n_cols : int, optional
            Shape of the attacked table. Given, the known pairs are counted as the attacks use them
            (:meth:`n_pairs`), and a count above half the rows says it was capped; otherwise the count is the
            one asked for.
        """
        cap = self._cap_note(n_rows, n_cols)
        if self.name in PRESETS:
            return f"{self.name}: {PRESETS[self.name][1]}" + (f" ({cap})" if cap else "")
        parts = []
        if self.has_pairs:
            if n_rows is None or n_cols is None:
                asked = len(self.known_records) or self.known_io
                count: object = asked if asked != -1 else "m + 1"
            else:
                count = self.n_pairs(n_rows, n_cols)
            parts.append(f"{count} known original records with their released rows" + (f" ({cap})" if cap else ""))
        if self.known_sample:
            parts.append(f"a {self.known_sample:.0%} sample of records from the same population")
        if self.known_columns:
            parts.append(f"the true values of {len(self.known_columns)} column(s) for every record")
        if self.population:
            parts.append("the original table itself, without knowing which released row is whose")
        parts.append("each column's distribution" if self.marginals else "no column distributions")
        return "the attacker knows " + "; ".join(parts)

    def __str__(self) -> str:
        return self.name or self.to_text()

    def to_text(self) -> str:
        items = []
        if self.known_records:
            items.append("known-records:" + ",".join(self.known_records))
        elif self.known_io is not None:
            items.append("known-io" if self.known_io < 0 else f"known-io:{self.known_io}")
        if self.known_sample:
            items.append(f"known-sample:{self.known_sample:g}")
        if self.known_columns:
            items.append("known-columns:" + ",".join(self.known_columns))
        if self.population:
            items.append("population")
        if not self.marginals:
            items.append("no-marginals")
        return "+".join(items) or "outsider"


def _count(value: str, what: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ParameterError(f"{what} needs a positive count, e.g. {what}:20")
    return int(value)
