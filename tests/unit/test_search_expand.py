"""Graph-aware recall's pure pieces (kg/memory/expand.py): seeds, session steps, paths and their evidence."""

import pytest

from kg.core.errors import RulesError
from kg.core.policy import packaged
from kg.memory import expand
from kg.memory.expand import ExpandRules, Path


@pytest.fixture
def rules() -> ExpandRules:
    return ExpandRules.from_mapping(packaged("search"))


def test_packaged_rules_load(rules):
    assert rules.seeds >= 1 and 0 < rules.session_weight <= 1
    assert set(rules.edge_weight) <= set(expand.EDGE_TYPES)


@pytest.mark.parametrize("change, message", [
    ({"seeds": -1}, "expand.seeds: must be a whole number"),
    ({"session_stepz": 2}, "expand.session_stepz: unknown key"),
    ({"edge_weight": {"derived_from": 1.0}}, "expand.edge_weight.derived_from: is not an edge search follows"),
    ({"edge_weight": {"led_to": 2}}, "expand.edge_weight.led_to: must be a number from 0"),
])
def test_bad_rules_are_refused_with_the_key(change, message):
    data = packaged("search")
    data["expand"] = {**data["expand"], **change}
    with pytest.raises(RulesError, match=message.replace(".", r"\.")):
        ExpandRules.from_mapping(data)


def test_seeds_are_the_best_hits_above_the_floor_ties_by_id(rules):
    r = ExpandRules(**{**rules.__dict__, "seeds": 3, "seed_floor": 0.5})
    scores = {"b": 0.8, "a": 0.8, "c": 1.0, "d": 0.49, "e": 0.0}
    assert expand.seeds(scores, r) == ["c", "a", "b"]
    assert expand.seeds({"x": 0.0}, r) == []
    assert expand.seeds(scores, ExpandRules(**{**rules.__dict__, "seeds": 0})) == []


def test_session_neighbours_are_the_nearest_in_time_either_way():
    members = [(3, "c"), (1, "a"), (2, "b"), (4, "d"), (4, "e"), (None, "z")]  # unsorted; d, e tie by time
    assert expand.session_neighbours(members, "c", 2) == [("b", 1), ("d", 1), ("a", 2), ("e", 2)]
    assert expand.session_neighbours(members, "a", 1) == [("b", 1)]
    assert expand.session_neighbours(members, "e", 1) == [("d", 1), ("z", 1)]  # an entry without a time is last
    assert expand.session_neighbours(members, "missing", 2) == []
    assert expand.session_neighbours(members, "c", 0) == []


def test_paths_are_worth_their_type_link_and_distance(rules):
    assert expand.edge_path("a", "b", "led_to", 1.0, rules).weight == rules.edge_weight["led_to"]
    assert expand.edge_path("a", "b", "related_to", 0.4, rules).weight == pytest.approx(
        rules.edge_weight["related_to"] * 0.4)
    assert expand.edge_path("a", "b", "derived_from", 1.0, rules).weight == 0.0
    near, far = expand.session_path("a", "b", 1, rules), expand.session_path("a", "c", 2, rules)
    assert near.weight == rules.session_weight and far.weight == pytest.approx(rules.session_weight * rules.step_decay)


def test_two_seeds_reaching_a_candidate_beat_one():
    strength = {"s1": 1.0, "s2": 0.8, "s3": 1.0}
    paths = [Path("s1", "x", 0.5, "led_to"), Path("s2", "x", 0.5, "session"),   # x: two seeds
             Path("s3", "y", 0.5, "led_to"), Path("s3", "y", 0.3, "session")]   # y: one seed, two paths
    ev = expand.evidence(paths, strength)
    assert ev["y"] == pytest.approx(0.5)                       # one seed counts once, its strongest path
    assert ev["x"] == pytest.approx(1 - (1 - 0.5) * (1 - 0.4))  # independent evidence from two seeds
    assert ev["x"] > ev["y"]


def test_evidence_stays_below_one_and_ignores_a_seed_reaching_itself():
    ev = expand.evidence([Path("s", "s", 1.0, "led_to"), Path("s", "x", 1.0, "led_to"),
                          Path("t", "x", 1.0, "led_to")], {"s": 0.5, "t": 0.5})
    assert "s" not in ev and ev["x"] == pytest.approx(0.75)
    assert expand.evidence([Path("z", "x", 1.0, "led_to")], {}) == {"x": 0.0}


def test_graph_part_combines_evidence_and_session_share(rules):
    assert expand.graph_part(0.0, 0.0, rules) == 0.0
    both = expand.graph_part(0.5, 0.5, rules)
    assert both > expand.graph_part(0.5, 0.0, rules) and both > expand.graph_part(0.0, 0.5, rules)
    assert expand.graph_part(1.0, 1.0, rules) <= 1.0
