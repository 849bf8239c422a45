"""Attribute inference against its control, and l-diversity, on constructed releases."""

from __future__ import annotations

import numpy as np

from ppdm.attacks.inference import attribute_inference, l_diversity


def _people(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Q = rng.normal(size=(n, 3))
    s = rng.choice(["a", "b", "c", "d"], n)  # unrelated to Q: the population tells nothing
    return Q, s


def test_publishing_the_members_exactly_discloses_beyond_the_control() -> None:
    Qm, sm = _people(400, 0)
    Qo, so = _people(400, 1)
    res = attribute_inference(Qm, sm, Qm, sm, Qo, so, numeric=False, k=1)
    assert res["members"] == 1.0 and res["control"] < 0.4 and res["excess"] > 0.6


def test_a_release_unrelated_to_the_members_discloses_nothing() -> None:
    Qm, sm = _people(400, 0)
    Qo, so = _people(400, 1)
    Qr, sr = _people(400, 2)
    res = attribute_inference(Qr, sr, Qm, sm, Qo, so, numeric=False)
    assert res["excess"] < 0.06


def test_numeric_sensitive_values_within_five_percent() -> None:
    rng = np.random.default_rng(3)
    Q = rng.normal(size=(300, 2))
    s = 100 + 10 * Q[:, 0]  # a function of the quasi-identifiers: everyone's value is inferable
    Qo = rng.normal(size=(300, 2))
    res = attribute_inference(Q, s, Q, s, Qo, 100 + 10 * Qo[:, 0], numeric=True)
    assert res["members"] > 0.9 and res["control"] > 0.8  # the population tells it: little excess
    assert res["excess"] < 0.15


def test_l_diversity_by_hand() -> None:
    qi = np.array([["x"], ["x"], ["y"], ["y"], ["y"]], dtype=object)
    s = np.array(["a", "b", "c", "c", "c"])
    assert l_diversity(qi, s) == {"l": 1, "groups": 2, "share_in_uniform_groups": 0.6}


def _mixed(n: int, seed: int):
    import pandas as pd

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * 10 + 100
    return pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "k": rng.choice(list("pqrs"), n),
                         "g": rng.choice(["u", "v"], n)})


def test_inference_by_column_of_a_copied_release_reads_every_value_off_it() -> None:
    from ppdm.attacks.inference import inference_by_column
    from ppdm.attacks.mixed import from_frames

    members, control = _mixed(300, 0), _mixed(200, 1)
    r, m, c = from_frames([members, members, control])
    res = inference_by_column(r, m, c, rng=np.random.default_rng(0))
    assert set(res) == {"a", "b", "c", "k", "g"}
    for col, v in res.items():
        # the other columns are unique to each member: the nearest released row is the member's own
        assert v["main"] == 1.0, col
        assert v["risk"] > 0.5 and v["interval"][0] > 0.4
    assert res["a"]["measure"].endswith("+-5 %") and res["k"]["measure"] == "share of values inferred exactly"
    # the control reads values off other people: numbers within 5 % by their closeness to the mean only
    assert res["a"]["control"] < 0.5


def test_inference_by_column_of_an_independent_release_tells_nothing_beyond_the_control() -> None:
    from ppdm.attacks.inference import inference_by_column
    from ppdm.attacks.mixed import from_frames

    members, control, other = _mixed(500, 2), _mixed(500, 3), _mixed(500, 4)
    r, m, c = from_frames([other, members, control])
    res = inference_by_column(r, m, c, rng=np.random.default_rng(0), columns=["a", "k"])
    assert set(res) == {"a", "k"}
    for v in res.values():
        assert v["risk"] < 0.1 and v["interval"][0] == 0.0


def test_inference_by_column_counts_a_number_within_the_tolerance() -> None:
    import pandas as pd

    from ppdm.attacks.inference import inference_by_column
    from ppdm.attacks.mixed import from_frames

    members = pd.DataFrame({"key": ["a", "b", "c", "d"], "x": [100.0, 100.0, 100.0, 100.0]})
    release = pd.DataFrame({"key": ["a", "b", "c", "d"], "x": [104.0, 95.0, 106.0, 94.0]})
    control = pd.DataFrame({"key": ["e", "f"], "x": [100.0, 100.0]})
    r, m, c = from_frames([release, members, control])
    res = inference_by_column(r, m, c, rng=np.random.default_rng(0), columns=["x"])
    assert res["x"]["main"] == 0.5  # 104 and 95 are within 5 % of 100; 106 and 94 are not


def test_inference_by_column_of_a_microaggregated_release_reads_the_groups_value() -> None:
    """Each group's row is released ten times: the search takes it once, and every member reads the value of the
    group whose row is nearest on the other columns, as a search of every copy would."""
    import pandas as pd

    from ppdm.attacks.inference import inference_by_column
    from ppdm.attacks.mixed import from_frames

    members, control = _mixed(400, 5), _mixed(200, 6)
    groups = members.iloc[:40].reset_index(drop=True)
    release = pd.concat([groups] * 10, ignore_index=True).sample(frac=1.0, random_state=0, ignore_index=True)
    r, m, c = from_frames([release, members, control])
    res = inference_by_column(r, m, c, rng=np.random.default_rng(0), columns=["a"], n_targets=None)
    # by hand: the Gower distance on the other columns to each group's row, the nearest group's value of a
    num, cat = ["b", "c"], ["k", "g"]
    every = pd.concat([release, members, control])
    span = (every[num].max() - every[num].min()).to_numpy()

    def read(people: pd.DataFrame) -> np.ndarray:
        d = (np.abs(people[num].to_numpy()[:, None, :] - groups[num].to_numpy()[None, :, :]) / span).sum(axis=2)
        d += (people[cat].to_numpy()[:, None, :] != groups[cat].to_numpy()[None, :, :]).sum(axis=2)
        guess = groups["a"].to_numpy()[d.argmin(axis=1)]
        return np.abs(guess - people["a"].to_numpy()) <= 0.05 * np.abs(people["a"].to_numpy())

    assert res["a"]["main"] == read(members).mean() and res["a"]["control"] == read(control).mean()
    assert read(members)[:40].all()  # the groups' own rows read their own values
