"""Exceptions and warnings of ppdm.

Every expected failure is a :class:`PPDMError`. Its message names the problem and the fix and never
contains data values, keys or seeds; the command-line interface prints it as one line and exits with
code 2.
"""

from __future__ import annotations

__all__ = [
    "PPDMError",
    "InputError",
    "InputTypeError",
    "ParameterError",
    "OutputError",
    "StateError",
    "ResourceError",
    "MissingDependencyError",
    "PrivacyWarning",
    "UtilityWarning",
    "ColumnWarning",
    "ReadWarning",
]


class PPDMError(Exception):
    """Base class of every error ppdm raises on purpose."""


class InputError(PPDMError, ValueError):
    """The input table cannot be used as given (format, missing values, column names, ...)."""


class InputTypeError(InputError, TypeError):
    """The input has a type that cannot be used (object, complex, sparse where unsupported)."""


class ParameterError(PPDMError, ValueError):
    """A parameter is outside its allowed range or inconsistent with the data."""


class OutputError(PPDMError):
    """An output cannot be written safely (exists, equals the input, unwritable directory)."""


class StateError(PPDMError):
    """A state file is missing, truncated, tampered with, or belongs to another table."""


class ResourceError(PPDMError, MemoryError):
    """An operation would exceed the memory budget; the message names the option that makes it feasible."""


class MissingDependencyError(PPDMError, ImportError):
    """An optional dependency (a ppdm extra) is not installed; the message names the pip command."""


class PrivacyWarning(UserWarning):
    """A choice that weakens protection (identity release, zero noise, linearly invertible output, ...)."""


class UtilityWarning(UserWarning):
    """A release whose mining utility collapsed."""


class ReadWarning(UserWarning):
    """Cells of an input read in a way that its file does not say outright (numbers written with a decimal
    comma): what was read, so that a wrong reading is seen."""


class ColumnWarning(UserWarning):
    """A column left out of a release without being asked (free text, an identifier, no values): why, and how
    to keep it."""
