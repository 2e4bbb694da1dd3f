"""Which inputs `kg ingest` has journaled already, so that running it again does not log every entry twice.

A bulk ingest of thousands of lines can outlast an agent's shell timeout: the run is killed after its entries
were journaled (they are applied by the next command) but before it printed anything, so the caller runs it
again, and every entry was stored twice (a QA pass: 600 lines became 1,200 entries, every pattern's recurrence
doubled). Each journaled input is remembered by the SHA-1 of its lines (`memory/.kg/ingested.jsonl`, one line a
batch, written under the journal's lock right after the batch is journaled); the same input again is answered
with the entries it gave the first time, and nothing is logged, unless the caller says `--again`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

LEDGER = "ingested.jsonl"


def fingerprint(lines: list[str], session: str | None) -> str:
    """The input's identity: its non-blank lines as read, and the session its entries default to."""
    h = hashlib.sha1()
    h.update(f"session={session or ''}\n".encode())
    for line in lines:
        h.update(line.rstrip("\r\n").encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest()


def seen(kg_dir: Path, sha1: str) -> dict[str, Any] | None:
    """The batch this input gave when it was journaled: `{"sha1", "entries", "first", "last", "at"}`. A damaged
    line of the ledger is passed over (it only ever saves a repeat)."""
    path = kg_dir / LEDGER
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    for line in reversed(text.splitlines()):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("sha1") == sha1:
            return rec
    return None


def remember(kg_dir: Path, sha1: str, ids: list[str], at: str) -> None:
    """Record a journaled batch (called under the journal's lock, after the journal holds it)."""
    rec = {"sha1": sha1, "entries": len(ids), "first": ids[0], "last": ids[-1], "at": at}
    with (kg_dir / LEDGER).open("a", encoding="utf-8") as f:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
