"""The mechanism contract shared by every perturbation method.

A mechanism is a scikit-learn transformer: parameters are stored unchanged by ``__init__``; ``fit``
learns or draws everything else into attributes ending in ``_``; ``transform`` releases rows;
``fit_transform`` releases the table it was fitted on. The attributes listed in ``_secret`` are key
material: they invert or de-noise the release and live only in state files.
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ppdm.exceptions import InputError, InputTypeError, PPDMError
from ppdm.utils.validation import COMPLEX_MESSAGE, check_bool, check_magnitude, check_supported_input

__all__ = ["Mechanism", "given_up", "keep_key_secret", "seed_from", "strata_of"]


def seed_from(random_state: object) -> int:
    """A 63-bit integer seed drawn from ``random_state`` (None, int, RandomState or Generator)."""
    rng = np.random.default_rng(random_state)  # type: ignore[arg-type]
    return int(rng.integers(0, 2**63 - 1))


def strata_of(y: object, n: int, use: bool = True) -> np.ndarray:
    """Each record's stratum (class of ``y``, compared as text) as 0..K-1; one stratum without ``y`` or ``use``.

    In the smallest signed integer type that holds K (a fitted mechanism keeps them: a million records of a
    few classes take 1 MB, not 8)."""
    if y is None or not use:
        return np.zeros(n, dtype=np.int8)
    yy = np.asarray(y)
    yy = yy if yy.dtype.kind == "U" else yy.astype(str)
    if len(yy) != n:
        from ppdm.exceptions import ParameterError

        raise ParameterError(f"y has {len(yy)} values for {n} records")
    classes, codes = np.unique(yy, return_inverse=True)
    return codes.ravel().astype(np.min_scalar_type(-max(len(classes), 1)))


def given_up(X: object, overwrite_input: bool) -> bool:
    """``X`` may take a release written over it: asked for (``overwrite_input``), and a writeable C-ordered
    float64 table (what :func:`~ppdm.flow.arrays.perturb_array` gives as its own preprocessed copy)."""
    return bool(overwrite_input and isinstance(X, np.ndarray) and X.dtype == np.float64 and X.ndim == 2
                and X.flags.writeable and X.flags.c_contiguous)


@functools.cache
def _bool_parameters(cls: type) -> tuple[str, ...]:
    """The parameters ``cls.__init__`` declares ``bool``: each is checked at ``fit`` (a string such as "False"
    counts as true, and the mechanism would do the opposite of what was asked)."""
    import inspect

    return tuple(p.name for p in inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
                 if p.annotation in ("bool", bool))


#: a seed as scikit-learn's repr writes it (nested mechanisms' too)
_SEED_IN_REPR = re.compile(r"random_state=-?\d+")


def keep_key_secret(mechanism: Any) -> Any:
    """Mark a mechanism seeded with a release's key, and the mechanisms among its parameters, so that their
    ``repr`` hides the seed (:attr:`Mechanism._secret_key`); returns it."""
    if isinstance(mechanism, Mechanism):
        mechanism._secret_key = True
        for value in mechanism.get_params(deep=False).values():
            keep_key_secret(value)
    return mechanism


class Mechanism(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class: input checks, state export and the identity of fitted attributes."""

    #: set by :func:`keep_key_secret` on a mechanism seeded with a release's key: its ``repr`` (what a notebook,
    #: ``print`` or a log line shows) then hides ``random_state``, with which anyone could redraw its noise
    _secret_key: bool = False

    def __repr__(self, N_CHAR_MAX: int = 700) -> str:  # noqa: N803 (scikit-learn's signature)
        text = super().__repr__(N_CHAR_MAX)
        return _SEED_IN_REPR.sub("random_state=<secret>", text) if self._secret_key else text

    #: fitted attributes that are key material (never published)
    _secret: ClassVar[tuple[str, ...]] = ()
    #: True when the release depends on random draws
    _stochastic: ClassVar[bool] = False
    #: True when released rows depend on other rows (cannot release new rows one by one)
    _table_level: ClassVar[bool] = False
    #: True when no released row is one person's perturbed row (synthetic records, group centroids): whether a
    #: person was in the table is then the question the membership test asks, and the policy limits it
    _keeps_no_row: ClassVar[bool] = False
    #: True when every release is drawn from a model fitted to the rows it is made from (synthetic records): a
    #: release costs a fit, and a release of some of the rows is that model's release of those people alone
    _draws_from_model: ClassVar[bool] = False
    #: False when part of the randomness is not drawn from ``random_state`` (OpenDP's own secure generator):
    #: a seed then repeats only the draws made from it, not the release
    _seed_reproducible: ClassVar[bool] = True
    #: True when the release commutes with increasing affine maps of each column (ranks, order statistics,
    #: tree splits, real values drawn as they are): such a mechanism is given the data in its own units, so
    #: no preprocessed copy of the table is made
    _scale_free: ClassVar[bool] = False
    #: False when every released column is made from its own original column alone (noise added to it, a
    #: group's mean of it, its values swapped or drawn from a model of the records), never as a mix of several:
    #: the ICA attack, which unmixes linear mixtures of the columns, has nothing to separate in such a release,
    #: and the release sweep leaves it out of such a candidate's battery
    _mixes_columns: ClassVar[bool] = True
    #: True when ``fit_transform(X, y, overwrite_input=True)`` may write the release into ``X`` and return it:
    #: :func:`~ppdm.flow.arrays.perturb_array` gives such a mechanism its own preprocessed copy this way, so
    #: a release-sized array is not made beside it (never the caller's table: the flag is off by default)
    _releases_into_input: ClassVar[bool] = False
    #: parameters that count records of the whole table (a category held by fewer than ``min_count`` records is
    #: never released): a release of some of the rows standing in for the release of every row (the sweep's
    #: held-out folds) scales them by its share of the rows, so that it suppresses what the whole release would
    _table_counts: ClassVar[tuple[str, ...]] = ()
    #: how the codec of a whole table reads a categorical column's released one-hot block (see
    #: :data:`ppdm.data.codec.READINGS`): ``calibrated`` when each released column is its own column's
    #: values perturbed or reconstructed (noise, swaps, low-rank reconstructions, rows released as one
    #: category); ``shares`` for a group's shares (microaggregation), drawn so that the group keeps its mix;
    #: ``original`` when every released column mixes all of them (a rotation, a projection); ``nearest``: the
    #: largest indicator
    _block_reading: ClassVar[str] = "calibrated"

    def _check_bool_params(self) -> None:
        """Refuse a parameter declared ``bool`` that holds anything else (see :func:`_bool_parameters`)."""
        for name in _bool_parameters(type(self)):
            check_bool(getattr(self, name), name)

    def _check_X(self, X: object, *, reset: bool) -> np.ndarray:
        """Validate with scikit-learn's public ``validate_data`` (shape, finiteness, the feature names and
        count seen in fit) and :func:`~ppdm.utils.validation.check_magnitude` (values beyond 1e150 overflow the
        eigen- and least-squares solvers; a column below 1e-150 would be scaled as a constant); failures become
        :class:`InputError`, in one line (a sparse matrix or complex values are refused by
        :func:`~ppdm.utils.validation.check_supported_input` first: scikit-learn's messages for them vary or
        print the array)."""
        A = self._validated(X, reset=reset, ensure_min_samples=2 if reset else 1)
        check_magnitude(A)
        return A

    def _validated(self, X: object, *, reset: bool, **checks: Any) -> np.ndarray:
        """``X`` through scikit-learn's ``validate_data`` as float64 (``checks``: its other options), the
        parameters declared ``bool`` checked at ``fit`` (``reset``), every failure one line of ppdm's."""
        check_supported_input(X)
        if reset:
            self._check_bool_params()
        try:
            return validate_data(self, X, reset=reset, dtype=np.float64, **checks)
        except TypeError as e:
            if "complex" in str(e):  # a list or an object array of complex numbers, met by float()
                raise InputTypeError(COMPLEX_MESSAGE.format(name="X")) from None
            raise InputTypeError(str(e)) from None
        except ValueError as e:
            if isinstance(e, PPDMError):
                raise
            if str(e).startswith("Complex data not supported"):  # a list or an object array of complex numbers
                raise InputTypeError(COMPLEX_MESSAGE.format(name="X")) from None
            raise InputError(str(e)) from None

    def _check_fitted(self) -> None:
        check_is_fitted(self)

    # -- state -------------------------------------------------------------------------------------

    def fitted_attributes(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if k.endswith("_") and not k.startswith("_")}

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Split the fitted mechanism into a JSON-able header and arrays (for :mod:`ppdm.state`)."""
        self._check_fitted()
        scalars: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        for k, v in self.fitted_attributes().items():
            if isinstance(v, np.ndarray):
                arrays[k] = v
            elif isinstance(v, (np.integer, np.floating, np.bool_)):
                scalars[k] = v.item()
            elif v is None or isinstance(v, (int, float, str, bool, list, tuple)):
                scalars[k] = list(v) if isinstance(v, tuple) else v
        params = {k: v for k, v in self.get_params(deep=False).items() if _jsonable(v)}
        return {"class": type(self).__name__, "params": params, "fitted": scalars}, arrays

    @classmethod
    def from_state(cls, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Mechanism:
        obj = cls(**header["params"])
        for k, v in header["fitted"].items():
            setattr(obj, k, v)
        for k, v in arrays.items():
            setattr(obj, k, v)
        return obj

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags


def _jsonable(v: object) -> bool:
    return v is None or isinstance(v, (int, float, str, bool)) or (
        isinstance(v, (list, tuple)) and all(_jsonable(x) for x in v)
    )
