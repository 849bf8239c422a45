from __future__ import annotations

import pytest

from ppdm.attacks import PRESETS, ThreatModel, applicable_attacks, targeted_attacks
from ppdm.exceptions import ParameterError


def test_parse_items() -> None:
    t = ThreatModel.parse("known-io:20+population+known-columns:a,b+known-sample:0.25+no-marginals")
    assert t.known_io == 20 and t.population and t.known_columns == ("a", "b")
    assert t.known_sample == 0.25 and not t.marginals
    assert t.n_pairs(1000, 30) == 20
    assert ThreatModel.parse(t.to_text()) == t


def test_known_io_default_is_m_plus_one_and_capped() -> None:
    t = ThreatModel.parse("known-io")
    assert t.n_pairs(1000, 30) == 31
    assert t.n_pairs(40, 30) == 20  # at most half the rows


def test_known_records_ids_and_count() -> None:
    assert ThreatModel.parse("known-records:p1,p7").known_records == ("p1", "p7")
    assert ThreatModel.parse("known-records:5").known_io == 5


def test_presets_and_default() -> None:
    for name in PRESETS:
        t = ThreatModel.parse(name)
        assert str(t) == name and name in t.describe()
    assert ThreatModel.parse(None) == ThreatModel.parse("default")
    assert ThreatModel.parse("outsider") == ThreatModel()


@pytest.mark.parametrize("bad", ["known-io:0", "known-io:x", "known-sample:2", "known-sample:", "telepathy",
                                 "known-columns:", "known-records:"])
def test_bad_threats_raise(bad: str) -> None:
    with pytest.raises(ParameterError):
        ThreatModel.parse(bad)


def test_attack_selection() -> None:
    assert targeted_attacks("known-io:5") == ["known_io", "distance"]
    assert targeted_attacks("outsider") == applicable_attacks("outsider")
    # the population is the largest known sample: the PCA alignment runs under both
    assert "pca" in applicable_attacks("known-sample:0.1") and "pca" in applicable_attacks("population")
    assert "seed_search" in applicable_attacks("population") and "seed_search" not in applicable_attacks("outsider")
    assert "linkage" in targeted_attacks("population")
    # a release with other columns: only attacks that do not need the original's columns
    # an embedding with its own columns: still linked by distance profiles under the population threat
    assert set(applicable_attacks("default", same_columns=False)) == {"known_io", "distance", "pca", "linkage",
                                                                      "seed_search", "ica"}
