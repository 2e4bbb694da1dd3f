"""The first pass of `kg import trail` (kg/ingest/importing.py) over its files, before anything is written: the whole
input is read and checked once, so a bad file is refused with nothing loaded and the progress bar has a total; with it
come the trail's own patterns by key, the first plain ids (refused on a team graph this workspace is not member 1 of)
and the highest id of each kind and day (so the journal never gives out an id the trail holds)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kg.core.errors import UsageError
from kg.ingest.import_read import items

_PLAIN_ID = re.compile(r"-\d{1,5}$")  # an embedded graph's (and a team's member 1's) id: kg/store/team.py
_NUMBERED = re.compile(r"^([A-Za-z]+-\d{8})-(\d{1,9})$")


def count(files: list[Path]) -> tuple[int, dict[str, str], list[str], list[str]]:
    """A first pass: the whole input is valid before anything is written, and the progress bar has a total.
    With it, the trail's own patterns (key -> id; a live one over a merged one): its entries come before its
    graph section, and an entry whose pattern the trail holds must join that pattern, not a new one of its key
    (every key was held twice in a graph rebuilt from its trail). And the first few plain ids (`plain_ids`), and
    the highest id of each kind and day (an entry or pattern given a new id must not take one the trail holds)."""
    from kg.ingest.trail import ImportReport, item_id

    scratch = ImportReport()
    total = 0
    keys: dict[str, tuple[bool, str]] = {}
    plain: list[str] = []
    highest: dict[str, tuple[int, str]] = {}
    for f in files:
        for kind, item in items(f, scratch, named=False):
            total += kind != "edges"
            if kind != "edges" and (number := _NUMBERED.match(item_id(kind, item) or "")):
                if int(number.group(2)) > highest.get(number.group(1), (-1, ""))[0]:
                    highest[number.group(1)] = (int(number.group(2)), number.group(0))
            if kind != "edges" and len(plain) < 3 and _PLAIN_ID.search(item_id(kind, item) or ""):
                plain.append(item_id(kind, item))
            if kind == "nodes" and item.get("type") == "pattern" and item_id(kind, item):
                key = item.get("pattern_key")
                live = item.get("status") != "merged"
                if isinstance(key, str) and key and (key not in keys or (live and not keys[key][0])):
                    keys[key] = (live, item["id"])
    return total, {key: pid for key, (_, pid) in keys.items()}, plain, [top for _, top in highest.values()]


def plain_ids(ws: Any, plain: list[str]) -> None:
    """Refuse (bad input, before anything is written) a trail with plain ids on a team graph this workspace is not
    member 1 of: plain ids are member 1's there, so member 1's next entries would be given the same ids (its journal
    cannot know them) and one of the two was lost. Member 1's own journal counts them, as an embedded one does."""
    if not plain or ws.store_url is None:
        return
    from kg.store.team import member

    number = member(ws.kg_dir, ws.store_url)
    if number != 1:
        raise UsageError(
            f"this trail holds plain ids ({', '.join(plain)}, ...), an embedded workspace's; on the team graph "
            f"{ws.store_url.public} plain ids are member 1's, and this workspace is member {number}, so member 1's "
            "next entries would be given the same ids. Import it in the workspace that made the team graph (member "
            "1), or into an embedded workspace")
