"""The marked block kg keeps in USER.md (the preferences), under the same contract as the lifecycle's blocks
(`kg/lifecycle/blocks.py`):

- kg writes only between its markers; every byte outside them stays as it was, non-UTF-8 bytes included
  (the file is decoded with `surrogateescape` and encoded back the same way);
- the file's line endings are kept (a CRLF file gets CRLF lines);
- a line a person wrote inside the block is kept (after kg's lines) and flagged, never deleted: kg remembers
  what it last wrote there (`memory/.kg/blocks.json`), so any other line is a human's;
- a symlinked file is written through (the link stays a link).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kg.errors import KgError
from kg.journal import write_atomic
from kg.lifecycle.blocks import newline_of

STATE = "blocks.json"
_OWN_LINE = re.compile(r"^(## User Preferences|_Kept by kg .*_|- \(none yet\)|- \*\*[^*]+\*\*: .*|)$")


def markers(name: str) -> tuple[str, str]:
    return f"<!-- kg:{name}:begin -->", f"<!-- kg:{name}:end -->"


def replace_block(text: str, name: str, body: str, *, keep: list[str] = ()) -> str:
    """`text` with the block `name` holding `body` (then the `keep` lines): replaced in place if present,
    else appended. Lines are written with the text's own line ending. Pure."""
    begin, end = markers(name)
    nl = newline_of(text) if text else "\n"
    inner = nl.join([*body.rstrip().split("\n"), *keep])
    block = f"{begin}{nl}{inner}{nl}{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    found = pattern.findall(text)
    if len(found) > 1:
        raise KgError(f"the block {name!r} appears {len(found)} times; keep one pair of {begin} / {end}")
    if text.count(begin) != text.count(end):
        raise KgError(f"the block {name!r} is not closed: restore the line {end if begin in text else begin}")
    if found:
        return pattern.sub(lambda _m: block, text, count=1)
    sep = "" if not text else (nl if text.endswith(nl) else nl + nl)
    return f"{text}{sep}{block}{nl}"


def inner_lines(text: str, name: str) -> list[str] | None:
    """The lines between the markers (line endings dropped), or None when there is no block. Pure."""
    begin, end = markers(name)
    m = re.search(re.escape(begin) + r"(.*?)" + re.escape(end), text, re.DOTALL)
    if m is None:
        return None
    return [line.rstrip("\r") for line in m.group(1).split("\n")][1:-1]


def human_lines(current: list[str] | None, last_written: str | None) -> list[str]:
    """Lines inside the block that kg did not write. Without a record of kg's last text (a block from an
    older kg), kg's own line shapes are recognised instead. Pure."""
    if not current:
        return []
    if last_written is not None:
        own = set(last_written.split("\n"))
        return [line for line in current if line not in own and line.strip()]
    return [line for line in current if not _OWN_LINE.match(line)]


def render_into(path: Path, name: str, body: str, *, state_dir: Path | None = None) -> list[str]:
    """Write the block; returns the human lines found inside it (kept, and to be reported)."""
    try:
        old = path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        old = ""
    key = f"{path.name}:{name}"
    state = _load_state(state_dir)
    kept = human_lines(inner_lines(old, name), state.get(key))
    new = replace_block(old, name, body, keep=kept)
    if new != old:
        write_atomic(path, new.encode("utf-8", "surrogateescape"))
    if state_dir is not None and state.get(key) != body.rstrip():
        state[key] = body.rstrip()
        write_atomic(state_dir / STATE, json.dumps(state, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    return kept


def _load_state(state_dir: Path | None) -> dict[str, str]:
    if state_dir is None:
        return {}
    try:
        data = json.loads((state_dir / STATE).read_bytes())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
