"""The files of one `kg import trail` in runs that share no id (kg/ingest/importing.py imports each run after the one
before it)."""

from __future__ import annotations

from pathlib import Path

from kg.ingest.trail_seen import SeenIds

_GROUP_BITS = 1 << 24  # 2 MB a filter
_GROUP_EXACT = 100_000  # a file's ids kept as a list up to this many, then in a filter of their own


def groups(files: list[Path]) -> list[list[Path]]:
    """The files in runs that share no id, each imported after the one before. Two workspaces' trails give out
    the same ids (each one's first learning of a day is `LRN-<day>-001`): in one run the second file's entry was
    a repeat of the first's and skipped, where imported one after the other it is another workspace's entry,
    kept under a new id (kg/ingest/import_renames.py). A repeat inside one file stays a repeat. The ids met are
    kept in Bloom filters (kg/ingest/trail_seen.py): bounded memory, and a false "met" only splits a run."""
    from kg.ingest.import_read import items
    from kg.ingest.trail import ImportReport, item_id

    if len(files) < 2:
        return [files]
    scratch = ImportReport()
    runs: list[list[Path]] = []
    met = SeenIds(lambda ids: set(), bits=_GROUP_BITS)
    for f in files:
        own: list[str] = []  # a file's ids, met once the file is read (its own repeats are not shared)
        big: SeenIds | None = None  # ... in a filter of their own past _GROUP_EXACT ids
        shared = False
        for kind, item in items(f, scratch, named=False):
            key = item_id(kind, item) if kind != "edges" else None
            if key is None:
                continue
            shared = shared or met.maybe(key)
            if big is not None:
                big.maybe_add(key)
            elif len(own) < _GROUP_EXACT:
                own.append(key)
            else:
                big = SeenIds(lambda ids: set(), bits=_GROUP_BITS)
                for k in [*own, key]:
                    big.maybe_add(k)
                own = []
        if shared or not runs:
            runs.append([f])
            met = SeenIds(lambda ids: set(), bits=_GROUP_BITS)
        else:
            runs[-1].append(f)
        if big is not None:
            met.absorb(big)
        for k in own:
            met.maybe_add(k)
    return runs
