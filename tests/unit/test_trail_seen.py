"""The import's duplicate check in bounded memory (kg/ingest/trail_seen.py, issue 22): a Bloom filter answers
"new" for nearly every id and the graph answers the rest, with the same verdicts as a set of every id."""

from __future__ import annotations

import random

from kg.ingest.trail_seen import SeenIds


def run_batches(seen: SeenIds, batches: list[list[str]], graph: set[str]) -> tuple[list[str], list[str]]:
    """Each batch's fresh ids are "loaded" into `graph`, as the import's COPY does, before the next batch."""
    fresh_all, repeated_all = [], []
    for batch in batches:
        fresh, repeated = seen.split(batch)
        graph.update(fresh)
        fresh_all += fresh
        repeated_all += repeated
    return fresh_all, repeated_all


def reference(batches: list[list[str]]) -> tuple[list[str], list[str]]:
    met: set[str] = set()
    fresh, repeated = [], []
    for batch in batches:
        for key in batch:
            (repeated if key in met else fresh).append(key)
            met.add(key)
    return fresh, repeated


def test_same_verdicts_as_a_set_even_when_the_filter_is_saturated():
    rng = random.Random(5)
    ids = [f"ERR-20260101-{i:05d}" for i in range(3000)]
    batches = [[rng.choice(ids) for _ in range(400)] for _ in range(12)]  # repeats within and across batches
    for bits in (64, 1 << 12, 1 << 20):  # 64 bits: nearly every id is a "maybe" the graph must answer
        graph: set[str] = set()
        seen = SeenIds(lambda maybe, g=graph: {k for k in maybe if k in g}, bits=bits)
        assert run_batches(seen, batches, graph) == reference(batches)


def test_the_graph_is_asked_about_repeats_only_when_the_filter_is_large():
    ids = [f"LRN-20260101-{i:06d}" for i in range(50_000)]
    asked: list[str] = []
    graph: set[str] = set()

    def in_graph(maybe: list[str]) -> set[str]:
        asked.extend(maybe)
        return {k for k in maybe if k in graph}

    seen = SeenIds(in_graph)
    batches = [ids[i:i + 5000] for i in range(0, len(ids), 5000)] + [ids[:100]]
    fresh, repeated = run_batches(seen, batches, graph)
    assert fresh == ids and repeated == ids[:100]
    assert 100 <= len(asked) <= 110  # the 100 repeats, and at most a few ids the filter cannot tell apart
