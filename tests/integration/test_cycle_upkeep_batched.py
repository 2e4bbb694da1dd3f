"""The cycle's decay upkeep in chunks (issue 22): a first `kg cycle` over a year's import restaged ~all of a
million nodes, and the upkeep read two statements per node and seven per pattern (1,087 s at 1M). Now the
counted fields come from one join with the staging table, the pending high-priority rows go in and out in
chunks, only the patterns whose rows decay changes are refreshed, and those in a few statements per chunk.

The outcome must not change: the same seeded history cycled with the batched upkeep and with the per-key one
(`aggregates.MANY` out of reach) leaves the same nodes, edges, aggregate rows and files, and both equal a full
recomputation. Real Kùzu, real files."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kg.lifecycle import api
from kg.store import Store, aggregates, tallies

T0 = datetime(2026, 1, 5, 9)
PRIORITIES = ["critical", "high", "medium", "low"]
pytestmark = pytest.mark.embedded_only("the batched path is Kùzu's (a team graph keeps no spans)")


def seed(ws, rng: random.Random) -> list[datetime]:
    """~90 entries over 110 days on 24 pattern keys (and some without), then three cycles' moments: the first
    restages most of them, the later ones (after new occurrences of half the patterns) restore and expire."""
    at = T0
    for i in range(90):
        at += timedelta(hours=rng.choice([5, 22, 30, 50]))
        key = f"tool.k{rng.randrange(24)}" if rng.random() < 0.8 else None
        ws.log(rng.choice(["error", "learning", "feature"]), f"entry {i} the tool {rng.randrange(9)} failed",
               now=at, session=f"s{rng.randrange(12)}", pattern_key=key, link=rng.random() < 0.3,
               priority=rng.choice(PRIORITIES))
    return [at + timedelta(days=45), at + timedelta(days=75), at + timedelta(days=130)]


def later(ws, rng: random.Random, at: datetime) -> None:
    for i in range(16):
        ws.log("error", f"again {i} the tool {rng.randrange(9)} failed", now=at + timedelta(minutes=i),
               session=f"s{rng.randrange(12)}", pattern_key=f"tool.k{rng.randrange(12)}", link=False,
               priority=rng.choice(PRIORITIES))


def dump(ws) -> dict:
    """Every node's properties, every edge of every table, the aggregate tables and every file kg wrote."""
    out: dict = {}
    with ws.store() as st:
        for table in ("Node", "PatternOcc", "PatternRank", "Meta {kind: 'tally'}", "PendingHigh"):  # (0011: Tally)
            out[table] = sorted(repr(sorted((k, v) for k, v in r["n"].items() if k not in ("_id",)))
                                for r in st._execute_raw(f"MATCH (n:{table}) RETURN n", {}))
        for rel in ("derived_from", "related_to", "caused_by", "led_to", "supports", "contradicts", "about",
                    "ready_span", "occ_of"):
            out[rel] = sorted(repr(sorted((k, v) for k, v in r["r"].items() if k not in ("_id", "_src", "_dst")))
                              + repr((r["a"], r["b"]))
                              for r in st._execute_raw(f"MATCH (a)-[r:{rel}]->(b) RETURN r, a.id AS a, b.id AS b", {}))
        assert aggregates.differences(st) == []
        assert tallies.differences(st) == []
    root = Path(ws.root)
    out["files"] = {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
                    if p.is_file() and ".kg" not in p.parts}
    return out


def history(ws, monkeypatch, *, batched: bool) -> tuple[dict, list[dict]]:
    if not batched:
        monkeypatch.setattr(aggregates, "MANY", 10**9)  # every pattern refreshed by key
    else:
        monkeypatch.setattr(aggregates, "MANY", 2)  # chunks of 3 patterns, 2 pending rows per statement
        monkeypatch.setattr(aggregates, "CHUNK", 3)
        monkeypatch.setattr(tallies, "HIGH_CHUNK", 2)
    rng = random.Random(17)
    moments = seed(ws, rng)
    reports = [api.cycle(ws, now=moments[0]).decayed]
    later(ws, rng, moments[1] - timedelta(days=1))
    reports += [api.cycle(ws, now=m).decayed for m in moments[1:]]
    # the sampled ids in the order the candidates query returned them: compared as sets when the sample holds
    # them all; a sample cut at SAMPLE depends on that order (it differs between two equal graphs), so only its
    # size is compared then
    return dump(ws), [{k: v if k != "ids" else {s: sorted(i) if len(i) == r[s] else len(i) for s, i in v.items()}
                       for k, v in r.items()} for r in reports]


def test_batched_decay_upkeep_leaves_what_the_per_key_upkeep_leaves(tmp_path, request, monkeypatch):
    from tests.conftest import fresh_workspace

    with monkeypatch.context() as m:
        per_key, per_key_reports = history(fresh_workspace(tmp_path / "a", request), m, batched=False)
    with monkeypatch.context() as m:
        batched, batched_reports = history(fresh_workspace(tmp_path / "b", request), m, batched=True)
    assert batched_reports == per_key_reports
    moved = {name: sum(r[name] for r in batched_reports) for name in ("demoted", "stale", "expired", "restored")}
    assert all(moved.values()), moved  # every kind of decay decision was made
    assert len(batched["ready_span"]) > 0 and len(batched["PendingHigh"]) > 0
    assert batched.keys() == per_key.keys()
    for key in batched:
        assert batched[key] == per_key[key], key


def test_decay_upkeep_statements_do_not_grow_with_what_it_restages(tmp_path, request, monkeypatch):
    """Counted: the statements one decay pass runs. On 786aecf they were two per restaged node and seven per
    pattern (hundreds here); now a fixed handful whatever the number restaged."""
    from tests.conftest import fresh_workspace

    ws = fresh_workspace(tmp_path / "ws", request)
    rng = random.Random(5)
    moments = seed(ws, rng)
    ran: list[str] = []
    raw = Store._execute_raw

    def counted(self, cypher, params):
        ran.append(cypher)
        return raw(self, cypher, params)

    monkeypatch.setattr(aggregates, "MANY", 2, raising=False)  # the chunked refresh from 3 patterns on
    monkeypatch.setattr(Store, "_execute_raw", counted)
    report = api.cycle(ws, now=moments[2], dry_run=True)
    staged = sum(report.decayed[k] for k in ("demoted", "stale", "expired", "restored"))
    assert staged > 60
    assert len(ran) < 60, len(ran)
