"""Parameter and array checks with messages that name the parameter, the rule and the fix."""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real

import numpy as np

from ppdm.exceptions import InputError, InputTypeError, ParameterError
from ppdm.utils.memory import check_memory

__all__ = ["check_array", "check_bool", "check_supported_input", "check_int", "check_real", "check_choice",
           "check_rank", "check_memory", "check_magnitude", "COMPLEX_MESSAGE"]

# a cap for one intermediate array (bytes) where a caller wants one below the available memory
MEMORY_BUDGET = 2 * 1024**3

#: the one-line refusal of complex values (scikit-learn's own message prints the whole array after it); it starts
#: with scikit-learn's words, which its estimator checks look for
COMPLEX_MESSAGE = ("Complex data not supported: {name} holds complex numbers; pass real values (the real part or "
                   "the modulus)")


def check_supported_input(X: object, *, name: str = "X") -> None:
    """Refuse a scipy sparse matrix and complex numbers, in one line that says what to pass instead.

    Parameters
    ----------
    X : object
        The input as given (array, frame, list, ...); it is not converted here.
    name : str, default="X"
        What the message calls it.

    Raises
    ------
    InputTypeError
        For a scipy sparse matrix or array (a float conversion would see a 0-D object, and scikit-learn's own
        message differs by estimator) and for an array or frame of complex dtype (``float64`` would drop the
        imaginary part, and scikit-learn's message prints the whole array). Complex numbers in a list or an
        object array are found where the values are converted (:func:`check_array`, ``Mechanism._check_X``).
    """
    # scipy's sparse types without importing scipy here: every one of them has ``tocsr`` and ``nnz``
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):
        raise InputTypeError(f"{name} is a scipy sparse matrix, which ppdm does not support; pass a dense array "
                             "(its .toarray())")
    dtypes = getattr(X, "dtypes", None)  # a frame: one dtype per column
    kinds = ([getattr(d, "kind", "") for d in dtypes] if dtypes is not None and not isinstance(dtypes, np.dtype)
             else [getattr(getattr(X, "dtype", None), "kind", "")])
    if "c" in kinds:
        raise InputTypeError(COMPLEX_MESSAGE.format(name=name))


def check_array(X: object, *, name: str = "X", min_rows: int = 2, min_cols: int = 1) -> np.ndarray:
    """A finite 2-D float64 array (a copy only when a conversion is needed)."""
    check_supported_input(X, name=name)
    try:
        A = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as e:
        if "complex" in str(e):  # a list or an object array of complex numbers
            raise InputTypeError(COMPLEX_MESSAGE.format(name=name)) from None
        raise InputError(f"{name} must be numeric; convert text columns or leave them out") from None
    if A.ndim != 2:
        raise InputError(f"{name} must be 2-D (rows x columns), got {A.ndim}-D; reshape it")
    if A.shape[0] < min_rows:
        raise InputError(f"{name} has {A.shape[0]} row(s); at least {min_rows} are needed")
    if A.shape[1] < min_cols:
        raise InputError(f"{name} has {A.shape[1]} column(s); at least {min_cols} are needed")
    if not np.isfinite(A).all():
        raise InputError(f"{name} holds missing or infinite values; fill or drop them first")
    return A


def check_bool(value: object, name: str) -> bool:
    """A boolean (``True``/``False`` or NumPy's).

    Parameters
    ----------
    value : object
        The parameter's value.
    name : str
        The parameter's name, for the message.

    Returns
    -------
    bool

    Raises
    ------
    ParameterError
        For anything else: the text ``"False"`` is true to Python, and 0/1 are refused too so that a typo is
        not read as a choice.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False; got {value!r} ({type(value).__name__})")
    return bool(value)


def check_int(value: object, name: str, *, low: int | None = None, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (inclusive bounds)."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ParameterError(f"{name} must be an integer; got {type(value).__name__}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        lo = "-inf" if low is None else low
        hi = "inf" if high is None else high
        raise ParameterError(f"{name} must be in [{lo}, {hi}]; got {v}")
    return v


def check_real(
    value: object,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    high_open: bool = False,
    low_open: bool = False,
) -> float:
    """A finite real number in the given interval."""
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(float(value)):
        raise ParameterError(f"{name} must be a finite number; got {value!r}")
    v = float(value)
    bad_low = low is not None and (v <= low if low_open else v < low)
    bad_high = high is not None and (v >= high if high_open else v > high)
    if bad_low or bad_high:
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        raise ParameterError(f"{name} must be in {lb}{low if low is not None else '-inf'}, "
                             f"{high if high is not None else 'inf'}{rb}; got {v:g}")
    return v


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return str(value)


def check_rank(rank: object, n: int, m: int, name: str = "rank") -> int:
    """A rank ``1 <= k < min(n, m)``: a rank-min(n, m) release would be the data itself."""
    k = check_int(rank, name)
    top = min(n, m)
    if m < 2:
        raise ParameterError(f"X has {m} feature(s); a rank-{k} release needs at least 2 columns")
    if k < 1 or k >= top:
        raise ParameterError(
            f"{name}={k} must satisfy 1 <= {name} < min(n_rows, n_columns) = {top}; choose a smaller {name}"
            if k >= 1 else f"{name}={k} must be at least 1"
        )
    return k


# squares of values must stay finite (Gram matrices, norms): 1e150^2 = 1e300 < 1.8e308
_MAX_MAGNITUDE = 1e150
# and must not underflow: a column whose values are all below 1e-150 has a variance below 1e-300, which the
# smallest normal double (2.2e-308) soon loses, so it would be scaled as a constant (scale 1) and its noise
# would dwarf it
_MIN_MAGNITUDE = 1e-150


def check_magnitude(X: np.ndarray, columns: Sequence[str] | None = None) -> None:
    """Refuse values too large or too small for the computation; the message names the first such column.

    Parameters
    ----------
    X : ndarray
        The numbers (NaN ignored), one column per attribute (a 1-D array is one column).
    columns : sequence of str, optional
        The names of ``X``'s columns, for the message.

    Raises
    ------
    InputError
        When a value is beyond 1e150 (squaring it, in norms and Gram matrices, would overflow), or when every
        nonzero value of a column is below 1e-150 in magnitude (its spread would underflow to 0 and the column
        be treated as constant). Zeros alone are a constant column, not refused; values such as 1e-10 pass.
    """
    if not X.size:
        return
    A = X if X.ndim == 2 else X.reshape(-1, 1)
    # column extremes without an |X| copy of the table; fmax/fmin skip NaN (an all-NaN column gives NaN)
    peak = np.fmax(np.fmax.reduce(A, axis=0), -np.fmin.reduce(A, axis=0))

    def name(j: int) -> str:
        return f"column '{columns[j]}'" if columns is not None and j < len(columns) else f"column {j + 1}"

    huge = np.flatnonzero(peak > _MAX_MAGNITUDE)
    if huge.size:
        raise InputError(f"{name(int(huge[0]))} holds values beyond 1e150, which would overflow the computation; "
                         "rescale it (other units) first")
    tiny = np.flatnonzero((peak > 0) & (peak < _MIN_MAGNITUDE))
    if tiny.size:
        raise InputError(f"{name(int(tiny[0]))} holds only values below 1e-150 in magnitude (besides zeros), too "
                         "small to scale without underflow; rescale it (other units) first")
