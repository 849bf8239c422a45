"""Reading and writing tables, column roles (Schema) and invertible preprocessing."""

from __future__ import annotations

from ppdm.data.io import atomic_write, check_output_path, read_table, write_table
from ppdm.data.preprocess import Scaler
from ppdm.data.schema import Schema, resolve_schema

__all__ = ["Scaler", "Schema", "atomic_write", "check_output_path", "read_table", "resolve_schema", "write_table"]
