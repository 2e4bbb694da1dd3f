"""A workspace on a team graph: where its store URL is configured, its member number, its origin stamp.

- `[store] url` in kg.toml (written by `kg init --store URL`, never with a password) or `KG_STORE` names the
  server (kg/store/backend.py).
- Ids stay unique across the team without asking the server at each `kg log` (which must work while the
  server is away): each workspace gets a member number from the server once (`INCR` on one key), kept in
  `memory/.kg/team.json`, and its ids carry it: `ERR-20260102-007012` is member 7's 12th error that day.
  Member 1 (the workspace that made the graph, often a team's only one at first) keeps the embedded graph's
  ids (`ERR-20260102-012`): a tagged id's number has six or more digits and, for members 2-99, a leading
  zero, which an untagged number never has; so they cannot meet (members from 100 on could only meet member
  1's ids past its 99,999th entry of one kind in one day).
- Every node it creates names the workspace and the agent (`KG_AGENT`, else user@host).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from kg.core.errors import RulesError, StoreError
from kg.ingest.journal import Journal, write_atomic
from kg.store.backend import StoreUrl, parse_url, resolve

ENV_AGENT = "KG_AGENT"
MEMBER_FILE = "team.json"
MAX_MEMBERS = 999


def configured_url(root: Path) -> str | None:
    """`[store] url` from the workspace's kg.toml, or None."""
    path = root / "kg.toml"
    if not path.exists():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RulesError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("store") or {}
    if not isinstance(table, dict) or set(table) - {"url"}:
        raise RulesError(f"{path}: [store] holds one key, url = \"falkordb://HOST:PORT/GRAPH\"")
    url = table.get("url")
    if url is not None and not isinstance(url, str):
        raise RulesError(f"{path}: [store] url must be text, falkordb://HOST:PORT/GRAPH")
    return url or None


def store_url(root: Path) -> StoreUrl | None:
    return resolve(configured_url(root), root)


def configure(root: Path, url: str) -> StoreUrl:
    """Write `[store] url` into kg.toml (added, or replacing an earlier one); the password is refused."""
    parsed = parse_url(url, allow_password=False)
    path = root / "kg.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    configured_url(root)  # refuse to edit a kg.toml that does not parse
    lines = text.splitlines()
    out: list[str] = []
    in_store = False
    for line in lines:
        head = line.strip()
        if head.startswith("["):
            in_store = head == "[store]"
            if in_store:
                continue
        if in_store:
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    block = ["", "[store]", f'url = "{parsed.public}"'] if out else ["[store]", f'url = "{parsed.public}"']
    write_atomic(path, ("\n".join(out + block) + "\n").encode("utf-8"))
    return parsed


def member(kg_dir: Path, url: StoreUrl) -> int:
    """This workspace's member number on the team graph, asked of the server once and kept."""
    path = kg_dir / MEMBER_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("graph") == url.public and isinstance(data.get("member"), int):
            return int(data["member"])
    except (OSError, ValueError, AttributeError):
        pass
    from kg.store.falkor import _client, _plain

    try:
        number = int(_client(url).connection.incr(f"kg:members:{url.graph}"))
    except Exception as exc:  # noqa: BLE001 - redis raises its own classes
        raise StoreError(f"{_plain(exc, url)}. A workspace asks the team graph for its member number once, "
                         "before its first entry: run the command again when the server is reachable") from None
    if number > MAX_MEMBERS:
        raise StoreError(f"the team graph {url.public} has given out {MAX_MEMBERS} member numbers, the most ids "
                         "can carry; use a new graph name")
    write_atomic(path, json.dumps({"graph": url.public, "member": number}).encode("utf-8"))
    return number


def origin(root: Path, kg_dir: Path, url: StoreUrl) -> dict[str, str]:
    """What every node this workspace creates on the team graph is stamped with."""
    import getpass
    import socket

    agent = os.environ.get(ENV_AGENT) or f"{getpass.getuser()}@{socket.gethostname()}"
    return {"origin_workspace": f"{root.name}#{member(kg_dir, url)}", "origin_agent": agent}


class TeamJournal(Journal):
    """The local journal, with ids that carry the workspace's member number (see the module docstring)."""

    def __init__(self, kg_dir: Path, *, timeout: float, url: StoreUrl):
        super().__init__(kg_dir, timeout=timeout)
        self._member = member(kg_dir, url)

    def _tag(self, ids: list[str]) -> list[str]:
        if self._member == 1:  # the first workspace keeps the embedded graph's ids (see the module docstring)
            return ids
        out = []
        for value in ids:
            head, number = value.rsplit("-", 1)
            out.append(f"{head}-{self._member:03d}{number}")
        return out

    def allocate(self, prefix: str, day: str, count: int = 1) -> list[str]:
        return self._tag(super().allocate(prefix, day, count))

    def allocate_many(self, requests: list[tuple[str, str]]) -> list[str]:
        return self._tag(super().allocate_many(requests))


def contributors(st: Any) -> list[dict[str, Any]]:
    """Who put what into the team graph: events and other nodes per workspace and agent."""
    return st.run("team_contributors")


def copy_graph(url: StoreUrl, suffix: str) -> StoreUrl:
    """A point-in-time copy of the team graph on its server (`GRAPH.COPY`), for a read-only snapshot: the
    analysis then reads a graph no agent writes to. Remove it with `drop_graph`."""
    from dataclasses import replace

    from kg.store.falkor import _client, _plain

    copy = replace(url, graph=f"{url.graph}.{suffix}")
    try:
        _client(url).connection.execute_command("GRAPH.COPY", url.graph, copy.graph)
    except Exception as exc:  # noqa: BLE001 - redis raises its own classes
        raise _plain(exc, url) from None
    return copy


def drop_graph(url: StoreUrl) -> None:
    """Delete a snapshot's copy of the team graph (best effort: a server away keeps it until it is back)."""
    from kg.store.falkor import _client

    try:
        _client(url).connection.execute_command("GRAPH.DELETE", url.graph)
    except Exception:  # noqa: BLE001 - nothing to do about it here; the copy is inert
        pass
