"""What keeps the import's CPU and memory down (issue 22): each guarded here by what it changes, not by a time."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import kg
import kg.ingest.importing as importing
import kg.ingest.trail
from kg.store import aggregates, bulk

sys.path.insert(0, str(Path(__file__).parent))
from test_import_stream import graph_facts, write_trail  # noqa: E402


def test_the_cyclic_collector_runs_once_per_batch_not_every_few_hundred_allocations(tmp_path, monkeypatch):
    """An import allocates millions of short-lived rows; the collector walking them was a fifth of the CPU. It is
    paused for the import and run once per batch: no automatic (young-generation) collection happens."""
    trail = tmp_path / "trail.json"
    write_trail(trail, 900)
    monkeypatch.setattr(importing, "BATCH", 300)
    ws = kg.init_workspace(tmp_path / "ws")
    collections: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(seen)
    try:
        report = kg.ingest.trail.import_trail(ws, [trail])
    finally:
        gc.callbacks.remove(seen)
    assert report.entries == 900
    assert gc.isenabled()
    young = [g for g in collections if g < 2]
    assert young == [] and 1 <= len(collections) <= 12, collections


def test_a_value_the_gate_found_clean_is_not_scanned_again_and_secrets_are_still_caught(tmp_path, monkeypatch):
    """A trail repeats most of its values (sessions, pattern keys, areas): each is scanned once per import,
    not once per group of 128 entries; a secret in a later group, beside values already known clean, is
    still redacted."""
    trail = tmp_path / "trail.json"
    write_trail(trail, 1000)
    doc = json.loads(trail.read_text())
    for e in doc["entries"]:
        e["area"] = "repeated-area-value"
    doc["entries"][900]["details"] = "export password=uL5bI9vmJdUh again"
    trail.write_text(json.dumps(doc))
    ws = kg.init_workspace(tmp_path / "ws")
    redactor = ws.rules.redactor
    scanned: list[str] = []
    real = type(redactor).redact
    monkeypatch.setattr(type(redactor), "redact", lambda self, text: (scanned.append(text), real(self, text))[1])
    report = kg.ingest.trail.import_trail(ws, [trail])
    assert report.entries == 1000
    joined = [t for t in scanned if t != "repeated-area-value"]  # (a group with a secret is redacted value by value)
    assert sum(t.split("\n").count("repeated-area-value") for t in joined) == 1
    with ws.store() as st:
        marked = [r["id"] for r in st.execute("MATCH (n:Node) WHERE size(n.redactions) > 0 RETURN n.id AS id")]
    assert marked == ["ERR-20260101-0900"]
    assert not any(b"uL5bI9vmJdUh" in p.read_bytes() for p in ws.root.rglob("*") if p.is_file())


def test_batches_are_bounded_by_the_text_they_read_not_only_by_their_number_of_items(tmp_path, monkeypatch):
    """Memory follows a batch's size in characters: 300 entries of 20 kB each (6 MB), with batches of 2 MiB,
    are loaded in several batches, though far fewer than BATCH items, and the graph is the same."""
    trail = tmp_path / "trail.json"
    write_trail(trail, 300)
    doc = json.loads(trail.read_text())
    for i, e in enumerate(doc["entries"]):
        e["details"] = f"step {i}: " + "the build log line repeats here " * 600
    trail.write_text(json.dumps(doc))
    monkeypatch.setattr(importing, "BATCH_CHARS", 2 << 20, raising=False)
    batches: list[int] = []
    entry_rows = kg.ingest.trail._entry_rows
    monkeypatch.setattr(kg.ingest.trail, "_entry_rows",
                        lambda ws, entries, *a, **k: (batches.append(len(entries)),
                                                      entry_rows(ws, entries, *a, **k))[1])
    ws = kg.init_workspace(tmp_path / "ws")
    report = kg.ingest.trail.import_trail(ws, [trail])
    assert report.entries == 300 and sum(batches) == 300
    assert len(batches) >= 3 and max(batches) * 20_000 <= 2 * importing.BATCH_CHARS
    assert graph_facts(ws)["nodes"] == 300 + 1 + 5


def test_the_aggregate_rebuild_streams_its_rows_into_the_copy(tmp_path, monkeypatch):
    """The rebuild writes PatternOcc's rows to the COPY file as it makes them (at a million entries, every
    pattern's member lists at once were a few hundred MB), and the table equals a full recomputation."""
    trail = tmp_path / "trail.json"
    write_trail(trail, 400)
    ws = kg.init_workspace(tmp_path / "ws")
    kinds: dict[str, str] = {}
    copy = bulk.copy_rows
    monkeypatch.setattr(bulk, "copy_rows", lambda st, label, rows, **k: (
        kinds.setdefault(label, type(rows).__name__), copy(st, label, rows, **k))[1])
    kg.ingest.trail.import_trail(ws, [trail])
    assert kinds["PatternOcc"] == "generator" and kinds["PatternRank"] == "generator"
    with ws.store() as st:
        assert aggregates.ready(st) and aggregates.differences(st) == []
        assert len(st.execute("MATCH (a:PatternOcc) RETURN a.id AS id")) == 5
