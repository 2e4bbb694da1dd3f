"""A minimal marked-block writer for the files kg renders into (USER.md).

kg writes only between its own markers and never touches the human text around them. The lifecycle layer
owns the generic block editor (`kg/lifecycle/blocks.py`); this module is a stop-gap with the same contract,
used until that one exists; then `render_into` should call it.
"""

from __future__ import annotations

import re
from pathlib import Path

from kg.errors import KgError
from kg.journal import write_atomic


def markers(name: str) -> tuple[str, str]:
    return f"<!-- kg:{name}:begin -->", f"<!-- kg:{name}:end -->"


def replace_block(text: str, name: str, body: str) -> str:
    """`text` with the block `name` holding `body`: replaced in place if present, else appended."""
    begin, end = markers(name)
    block = f"{begin}\n{body.rstrip()}\n{end}"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    found = pattern.findall(text)
    if len(found) > 1:
        raise KgError(f"the block {name!r} appears {len(found)} times; keep one pair of {begin} / {end}")
    if text.count(begin) != text.count(end):
        raise KgError(f"the block {name!r} is not closed: restore the line {end if begin in text else begin}")
    if found:
        return pattern.sub(lambda _m: block, text, count=1)
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    return f"{text}{sep}{block}\n"


def render_into(path: Path, name: str, body: str) -> bool:
    """Write the block; True if the file changed."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    new = replace_block(old, name, body)
    if new == old:
        return False
    write_atomic(path, new.encode("utf-8"))
    return True
