"""A release by parts: a table larger than one worker should hold is released a part at a time.

Rows go to parts by a keyed draw, one block of :data:`PART_BLOCK` rows at a time, so whoever reads a part
needs the key and the row count, never a permutation of every row. The assignment is key material (the
owner recomputes it from the state to put the release back in the original order): the released rows come
part after part, so which part a released row came from is public, but without the key no one can tell
which records went to which part.

Each part is a release of its own rows by the chosen candidate with its own draws (part 1 with the key's
own, the others with draws derived from it), written by the worker that read it. This machine streams the
parts into one release file and one state, a row group or an array at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["PART_ROWS", "concat_releases", "describe", "merge_states", "part_count", "read_part"]

#: the most rows a part holds by default: a worker needs about four times a part (5,000,000 x 20 numbers:
#: 0.8 GB, a worker of about 3.5 GB)
PART_ROWS = 5_000_000


def part_count(rows: int, most: int) -> int:
    """The parts a table of ``rows`` rows is cut into, each of at most about ``most`` rows."""
    return max(1, -(-int(rows) // int(most)))


def read_part(files: Sequence[Path], entropy: int, parts: int, n: int, part: int) -> pd.DataFrame:
    """The rows of ``part`` read from Parquet ``files``, a column and a batch at a time: the reader holds the
    part and one batch of one column, never the whole table. The frame is what reading the whole table and
    keeping the part's rows gives."""
    from ppdm.data.io import read_parquet_rows
    from ppdm.keys import part_rows

    return read_parquet_rows(files, part_rows(entropy, parts, n, part), n)


def concat_releases(pieces: Sequence[Path], out: Path, fmt: str) -> int:
    """The parts' release files streamed into one at ``out`` (a row group or a block of lines at a time);
    the bytes written."""
    from ppdm.data.io import atomic_write

    with atomic_write(out) as f:
        if fmt == "parquet":
            _concat_parquet(pieces, f)
        else:
            _concat_csv(pieces, f)
    return out.stat().st_size


def _concat_csv(pieces: Sequence[Path], f: Any) -> None:
    import shutil

    header = None
    for p in pieces:
        with open(p, "rb") as src:
            first = src.readline()
            if header is None:
                header = first
                f.write(first)
            elif first != header:
                raise RuntimeError(f"the parts of the release have different columns ({p.parent.name})")
            shutil.copyfileobj(src, f, 1 << 20)


def _concat_parquet(pieces: Sequence[Path], f: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ppdm.utils.memory import give_back

    # a column can come out of one part as integers and of another (with a gap) as decimals: the release
    # takes the type that holds both
    schema = pa.unify_schemas([pq.read_schema(p).remove_metadata() for p in pieces], promote_options="permissive")
    coded = [field.name for field in schema if not pa.types.is_floating(field.type)]
    with pq.ParquetWriter(f, schema, use_dictionary=coded) as writer:
        for p in pieces:  # one part open at a time, its buffers handed back before the next
            with pq.ParquetFile(p) as pf:
                for i in range(pf.num_row_groups):
                    writer.write_table(pf.read_row_group(i).replace_schema_metadata(None).cast(schema))
            give_back()


def merge_states(pieces: Sequence[Path], out: Path, parts: dict[str, Any]) -> None:
    """One state file from the parts' states: the first part's header and arrays as they are, each other
    part's arrays named ``part<j>.<name>`` and its mechanism and preprocessing under ``parts.states`` (the
    first part's fingerprints are not the whole release's: none are recorded)."""
    from ppdm.state import copy_states, read_header

    headers = [read_header(p, "release") for p in pieces]
    members = [(p, name, ("" if j == 0 else f"part{j}.") + name)
               for j, (p, h) in enumerate(zip(pieces, headers, strict=True)) for name in h["arrays"]]
    header = {k: v for k, v in headers[0].items()
              if k not in ("arrays", "header_sha256", "seal", "magic", "format_version", "kind", "fingerprints")}
    header["parts"] = parts | {"states": [{k: h[k] for k in ("mechanism", "preprocess")} for h in headers[1:]]}
    copy_states(out, "release", header, members)


def describe(parts: int, sizes: Sequence[int]) -> dict[str, Any]:
    """What the record says of a release by parts."""
    from ppdm.keys import PART_BLOCK

    return {"count": int(parts), "rows": [int(s) for s in sizes], "block": PART_BLOCK,
            "assignment": f"each row to a part by a keyed draw (blocks of {PART_BLOCK:,} rows); the assignment "
                          "is in the state file only",
            "measured_on": "part 1: the sweep, the record's scores, figures and fidelity, and the input's "
                           "fingerprint (its design's); each other part is a release of its own rows by the chosen "
                           "candidate with its own draws"}
