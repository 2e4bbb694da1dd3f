"""Issue 20, the pure parts: the one name rule, journal record checks, bounded input, the preferences block
contract and kg.toml range checks. No database."""

from __future__ import annotations

import gzip
import os
import threading
from pathlib import Path

import pytest

from kg.core import inputs, paths
from kg.core.errors import RulesError, UsageError
from kg.ingest.journal import check_record, read_lines
from kg.store.lock import FileLock, Yielded


@pytest.mark.parametrize("name, ok", [
    ("2026-12-01-001", True), ("fe5e1c67-53e7-4862-81ae-d0e013e3270b", True), ("reflect-20261201-101010", True),
    ("demo-s1", True), ("auto.deploy.x", True), ("a" * 128, True),
    ("../../AGENTS", False), ("/abs/path", False), ("..", False), (".hidden", False), ("a/b", False),
    ("a..b", False), ("", False), ("a" * 129, False), ("x\n", False), ("../../../../usr/**/*", False),
    ("caf\udce9", False), ("C:\\x", False), ("a b", False), (None, False), (3, False),
])
def test_one_name_rule(name, ok):
    assert paths.is_name(name) is ok
    if not ok and isinstance(name, str):
        with pytest.raises(UsageError, match="invalid session id"):
            paths.check_name(name, "session id")


def test_inside_refuses_a_link_out(tmp_path: Path):
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "out").symlink_to(tmp_path)
    assert paths.inside(root, root / "memory" / "x.md", "f") == (root / "memory" / "x.md").resolve()
    with pytest.raises(UsageError, match="leads outside the workspace"):
        paths.inside(root, root / "memory" / "out" / "x.md", "the session file")


GOOD = {"op": "log", "id": "LRN-20261201-001", "link": True, "redacted": [],
        "fields": {"entry_type": "learning", "text": "t", "priority": "medium", "status": "pending",
                   "created_at": "2026-12-01T10:00:00", "tokens": "t", "tags": ["a"], "session": None}}


@pytest.mark.parametrize("change, reason", [
    ({}, None),
    ({"fields": None}, "no 'fields' object"),
    ({"op": "drop"}, "unknown op"),
    ({"id": "LRN-1"}, "bad id"),
    ({"id": 900}, "bad id"),
    ({"fields": {**GOOD["fields"], "entry_type": {"x": 1}}}, "fields.entry_type"),
    ({"fields": {**GOOD["fields"], "entry_type": "nope"}}, "unknown entry type"),
    ({"fields": {**GOOD["fields"], "created_at": "soon"}}, "not an ISO time"),
    ({"fields": {**GOOD["fields"], "tags": "a,b"}}, "fields.tags"),
    ({"fields": {**GOOD["fields"], "area": 3}}, "fields.area"),
    ({"redacted": "x"}, "'redacted'"),
    ({"link": "yes"}, "'link'"),
])
def test_check_record(change, reason):
    rec = {**GOOD, **change}
    if "fields" in change and change["fields"] is None:
        del rec["fields"]
    got = check_record(rec, ("learning", "error", "feature"))
    assert (got is None) if reason is None else (reason in got)


def test_read_lines_hands_back_every_bad_line(tmp_path: Path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(b'{"op": "log"}\n\xff\xfegarbled\n[1, 2]\n\n{"op": "log", "id": "x"}\n{"op": "lo')
    records, bad = read_lines(path)
    assert [r.get("id") for r in records] == [None, "x"]
    assert [(b.lineno, b.reason.split(" (")[0]) for b in bad] == [
        (2, "not a JSON line"), (3, "not a JSON object"), (6, "not a JSON line")]


def test_read_file_refuses_fifos_devices_and_oversize(tmp_path: Path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        inputs.read_file(fifo, what="the transcript")  # returns at once: opened non-blocking
    with pytest.raises(UsageError, match="not a regular file"):
        inputs.read_file("/dev/zero")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2000)
    with pytest.raises(inputs.InputTooLarge, match="larger than"):
        inputs.read_file(big, limit=1000)
    assert inputs.read_file(big, limit=2000) == b"x" * 2000
    with pytest.raises(UsageError, match="does not exist"):
        inputs.read_file(tmp_path / "nope")


def test_gunzip_is_bounded_and_keeps_a_truncated_stream():
    bomb = gzip.compress(b"\0" * (8 * 1024 * 1024))
    assert len(bomb) < 20_000
    with pytest.raises(inputs.InputTooLarge, match="expands to more than"):
        inputs.gunzip(bomb, limit=1024 * 1024)
    text = b"line one\nline two\n" * 5000
    packed = gzip.compress(text)
    assert inputs.gunzip(packed) == text
    assert text.startswith(inputs.gunzip(packed[: len(packed) // 2]))


def test_kg_toml_values_are_range_checked_and_named(tmp_path: Path):
    from kg.workspace import Workspace

    root = tmp_path / "ws"
    (root / "memory" / ".kg").mkdir(parents=True)
    (root / "kg.toml").write_text("[rules.policy.store]\nbuffer_pool_mb = 99999999999\n")
    with pytest.raises(RulesError) as err:
        _ = Workspace(root).policy
    assert str(err.value).startswith(f"{root / 'kg.toml'} [rules.policy]: store.buffer_pool_mb: must be a whole "
                                     "number from 1 to 1048576")
    (root / "kg.toml").write_text("[rules.policy.store]\nbuffer_pool_mb = 128\n")  # too small to checkpoint
    with pytest.raises(RulesError, match=r"store.buffer_pool_mb: must be at least 256 \(MB\), not 128: .*"
                                         r"buffer pool is full.*CHECKPOINT"):
        _ = Workspace(root).policy
    (root / "kg.toml").write_text("[rules.nope]\nx = 1\n")
    with pytest.raises(RulesError, match=r"unknown table \[rules.nope\]"):
        Workspace(root)


def test_a_polite_acquirer_stands_aside_for_a_waiting_reader(tmp_path: Path):
    lock = tmp_path / "graph.lock"
    holder = FileLock(lock, timeout=5)
    holder.acquire()
    reader = FileLock(lock, timeout=5)
    got = threading.Event()
    t = threading.Thread(target=lambda: (reader.acquire(), got.set()))
    t.start()
    try:
        for _ in range(500):  # the reader announces itself once its first try fails
            if holder.others_waiting():
                break
            threading.Event().wait(0.005)
        assert holder.others_waiting()
        with pytest.raises(Yielded):
            FileLock(lock, timeout=5, polite=True).acquire()
    finally:
        holder.release()
    t.join(5)
    assert got.is_set()
    reader.release()
    assert not holder.others_waiting()


@pytest.mark.parametrize(("cypher", "writes"), [
    ("MATCH (n:Node {id: $id}) RETURN n.id AS id", False),
    ("MATCH (s:Session) WHERE s.id STARTS WITH $day RETURN s.id AS id", False),
    ("BEGIN TRANSACTION", False), ("COMMIT", False), ("ROLLBACK", False),
    ("MERGE (s:Session {id: $id}) ON CREATE SET s.started_at = $at", True),
    ("MATCH (n:Node {id: $id}) SET n.status = $status", True),
    ("MATCH (n:Node {id: $id}) DETACH DELETE n", True),
    ("UNWIND $rows AS r CREATE (:Node {id: r.id})", True),
    ("COPY ready_span FROM '/x.csv'", True), ("CHECKPOINT", True), ("create node table T(id STRING)", True),
])
def test_a_statement_that_may_write_is_told_from_a_read(cypher, writes):
    """The free-space floor is checked before a statement that commits on its own when it may write (Kùzu aborts
    the process when its WAL cannot be written); a read pays nothing."""
    from kg.store.values import writes as may_write

    assert may_write(cypher) is writes
