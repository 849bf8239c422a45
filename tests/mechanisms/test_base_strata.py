"""Strata (a fitted mechanism keeps one per record) in the smallest integer type that holds them."""

from __future__ import annotations

import numpy as np
import pytest

from ppdm.mechanisms.base import strata_of


@pytest.mark.parametrize(("k", "kind"), [(1, np.int8), (128, np.int8), (129, np.int16), (40_000, np.int32)])
def test_strata_are_the_classes_in_the_smallest_type(k: int, kind: type) -> None:
    y = np.arange(2 * k) % k
    s = strata_of(y, len(y))
    assert s.dtype == kind
    # classes compared as text, numbered in the order of their sorted text
    names = np.unique(y.astype(str))
    np.testing.assert_array_equal(names[s], y.astype(str))


def test_without_a_label_every_record_is_one_stratum() -> None:
    s = strata_of(None, 5)
    assert s.dtype == np.int8 and not s.any()
