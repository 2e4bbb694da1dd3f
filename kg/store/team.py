"""A workspace on a team graph: where its store URL is configured, its member number, its origin stamp.

- `[store] url` in kg.toml (written by `kg init --store URL`, never with a password) or `KG_STORE` names the
  server (kg/store/backend.py).
- Ids stay unique across the team without asking the server at each `kg log` (which must work while the
  server is away): each workspace gets a member number from the server once (`INCR` on one key), kept in
  `memory/.kg/team.json` (one per graph it opened), and its ids carry it: `ERR-20260102-007012` is member 7's
  12th error that day.
  Member 1 (the workspace that made the graph, often a team's only one at first) keeps the embedded graph's
  ids (`ERR-20260102-012`): a tagged id's number has six or more digits and, for members 2-99, a leading
  zero, which an untagged number never has; so they cannot meet (members from 100 on could only meet member
  1's ids past its 99,999th entry of one kind in one day).
- A member number belongs to one folder: team.json names the state folder it was given to (its path and inode).
  A copy (`cp -a`, rsync, a backup restored beside the original) has another inode, so before it gives out an id
  it asks the server for a number of its own (with the server away it refuses to log, as a new member does: ids
  shared with the original would be two members' acknowledged entries under one id). A folder moved on its
  filesystem (`mv`) keeps its inode, and so its number: the original is gone, nothing else gives out its ids.
  Entries journaled before the copy sit in both journals with the same ids: they are one write each, and the
  second drain skips them as a replay (kg/ingest/apply.py `_renamed`), whichever workspace drains first.
- Every node it creates names the workspace and the agent (`KG_AGENT`, else user@host), redacted as entries are.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kg.core.errors import RulesError, StoreError, TeamGraphBusy, UsageError
from kg.core.files import retried, write_atomic
from kg.core.text import clean
from kg.ingest.journal import Journal
from kg.store.backend import StoreUrl, parse_url, resolve

ENV_AGENT = "KG_AGENT"
AGENT_MAX_CHARS = 120  # an agent's name as nodes keep it (`origin`)
MEMBER_FILE = "team.json"
MAX_MEMBERS = 999


def configured_url(root: Path) -> str | None:
    """`[store] url` from the workspace's kg.toml, or None."""
    path = root / "kg.toml"
    if not path.exists():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
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


STORE_BLOCK = "store"
STORE_FIX = "delete the block (both marker lines) and run `kg init --store URL` again"


def store_table(public_url: str) -> str:
    """kg's block of kg.toml: the `[store]` table, between '#' comment markers."""
    return f'[store]\nurl = "{public_url}"\n'


def check_store(url: str) -> StoreUrl:
    """The parsed `--store` URL, once kg can use it: a bad URL, or the FalkorDB client not installed, is bad
    input refused before `kg init` writes anything (a kg.toml naming a server kg cannot reach made every later
    command fail)."""
    parsed = parse_url(url, allow_password=False)
    try:
        import falkordb  # noqa: F401
        import redis  # noqa: F401
    except ImportError:
        raise UsageError("a team graph on FalkorDB needs its client, an optional extra: install it with "
                         "`pip install 'kaizen-kg[falkordb]'`, then run `kg init --store URL` again") from None
    return parsed


def configure(root: Path, url: str, *, dry_run: bool = False) -> StoreUrl:
    """Write `[store] url` into kg.toml (added, or replacing an earlier one); the password is refused.

    kg.toml is the person's file: kg's table is a marked block written through the one block editor (every
    other byte kept, a human edit inside the block kept and reported as an error saying what to do). kg writes
    nothing else into kg.toml. `dry_run`: only refuse what would be refused, writing nothing."""
    parsed = parse_url(url, allow_password=False)
    retried(lambda: _configure_once(root, parsed, dry_run))  # kg.toml written meanwhile: read and merged again
    return parsed


def _configure_once(root: Path, parsed: StoreUrl, dry_run: bool) -> None:
    """One read of kg.toml and the write of kg's block into it, only over what was read (else FileChanged)."""
    from dataclasses import replace

    from kg.lifecycle import blocks

    path = root / "kg.toml"
    configured_url(root)  # refuse to edit a kg.toml that does not parse
    before = blocks.read(path)
    current = None if before is None else _without_own_store_table(before, path)
    state_dir = root / "memory" / ".kg"
    plan = blocks.sync_block(current, STORE_BLOCK, store_table(parsed.public),
                             write=lambda p: blocks.apply(path, replace(p, base=before)), state_dir=state_dir,
                             key="kg.toml:store", fix=STORE_FIX, markers=blocks.TOML, dry_run=dry_run)
    if plan.action == "flag":
        raise UsageError(f"{path}: kg's [store] block was not changed: {plan.reason}")
    if plan.action == "none" and current != before and not dry_run:  # an older kg's table, now in the block: taken out
        blocks.apply(path, blocks.SyncPlan("update", current, None, "", base=before))


def _without_own_store_table(text: str, path: Path) -> str:
    """kg.toml without an unmarked `[store]` table that holds only `url` (as an older kg wrote it, or a person
    the same way), every other byte as it was. Any other unmarked [store] table is a person's: refused."""
    from kg.lifecycle import blocks

    lines = text.splitlines(keepends=True)
    offsets = [sum(map(len, lines[:i])) for i in range(len(lines))]
    for i, line in enumerate(lines):
        if line.strip() != "[store]" or blocks.block_of_line(text, offsets[i], blocks.TOML) is not None:
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("[")), len(lines))
        body = [ln.strip() for ln in lines[i + 1:end] if ln.strip()]
        if len(body) > 1 or (body and not body[0].replace(" ", "").startswith("url=")):
            raise UsageError(f"{path}: its [store] table (line {i + 1}) holds more than url; give kg the url with "
                             "`kg init --store URL` after removing the table, or edit url there by hand")
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1  # the blank lines before the next table stay
        start = i
        while start > 0 and not lines[start - 1].strip():
            start -= 1  # and the blank lines an older kg put before the table go with it
        return "".join(lines[:start] + lines[end:])
    return text


INIT_SOURCE = "the URL given to `kg init --store`"


def reach(url: StoreUrl) -> None:
    """Whether the server answers (and accepts the password), as kg's own plain error if not: `kg init --store`
    asks before it makes a folder."""
    from kg.store.falkor import _connect, _plain, named_by

    with named_by(INIT_SOURCE):
        try:
            _connect(url).connection.ping()
        except Exception as exc:  # noqa: BLE001 - redis raises its own classes
            raise _plain(exc, url, journaled=False) from None


def trial(ws: Any, url: StoreUrl) -> None:
    """Open the team graph at `url` as the workspace `ws` will once kg.toml names it: the server's graph module,
    the writer lock and the schema, then its member number, each refused as kg's plain error. `kg init --store` asks
    this before it writes kg.toml: a server that answers a ping but is a plain Redis (or lets this user read but
    not write) left kg.toml naming a graph no command could open."""
    from kg.ingest import drain
    from kg.store import Store
    from kg.store.falkor import named_by

    queries = ws.rules.rules_dir / "queries" if ws.rules.rules_dir else None
    with named_by(INIT_SOURCE):
        with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", lock_timeout=ws.lock_timeout,
                        queries_dir=queries, url=url) as st:
            for repair in st.repairs:
                drain.warn(repair)
        member(ws.kg_dir, url)  # once the graph opened: a refused attempt takes no number and writes no team.json


def member(kg_dir: Path, url: StoreUrl) -> int:
    """This workspace's member number on the team graph, asked of the server once and kept, one per graph: a
    workspace that also opened another graph (`KG_STORE`) kept only the last, so back on its own graph it could not
    log while the server was away (a new member's ids need the server) and was given another number each switch.
    The numbers belong to the folder team.json names: a copy's are the original's, so it asks anew (and says so)."""
    path = kg_dir / MEMBER_FILE
    key = _member_key(url)
    here = _folder(kg_dir)
    known, made = _read(path)
    if key in known and made == here:
        return known[key]
    with _folder_locked(kg_dir):  # two processes asking at once: one asks the server, the other reads its answer
        known, made = _read(path)  # (and two graphs' numbers kept at once: neither write drops the other's)
        if made is not None and not same_folder(made, here):
            known = {}  # a copy's numbers are the original's: each graph is asked for one of its own
        changed = made != here  # a copy, a moved folder (its path), an older kg's file: the folder is recorded
        if key not in known:
            known[key] = _next_member(url, copy_of=None if made is None or same_folder(made, here) else made)
            changed = True
        if changed:
            write_atomic(path, json.dumps({"members": known, **here}, sort_keys=True).encode("utf-8"))
    if made is not None and not same_folder(made, here):
        from kg.ingest import drain

        drain.warn(f"this workspace is a copy of {made['folder']} (its memory/.kg/team.json was made there): the "
                   f"team graph gave it member number {known[key]} of its own, so its ids are not the original's")
    return known[key]


def _folder(kg_dir: Path) -> dict[str, Any]:
    """The state folder a member number is given to: its path (for people) and its inode (what tells a copy)."""
    return {"folder": str(kg_dir.resolve()), "inode": os.stat(kg_dir).st_ino}


def same_folder(made: dict[str, Any], here: dict[str, Any]) -> bool:
    """Whether team.json's numbers belong to this folder: the same inode, wherever it now is (`mv` keeps it, a copy
    never has it while the original lives). The device number is not compared: some file systems give another one
    at each mount."""
    return made.get("inode") == here["inode"]


def made_for(path: Path) -> dict[str, Any] | None:
    """The folder team.json was written for, or None: no file, or an older kg's, which named none (a copy made
    before this kg cannot be told from its original; the first open here records the folder)."""
    return _read(path)[1]


def _read(path: Path) -> tuple[dict[str, int], dict[str, Any] | None]:
    """team.json, read once: its member numbers (`_members`) and the folder it was written for (`made_for`)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, None
    if not isinstance(data, dict):
        return {}, None
    made = ({"folder": data["folder"], "inode": data["inode"]}
            if type(data.get("inode")) is int and isinstance(data.get("folder"), str) else None)
    return _members(data), made


def copied_from(kg_dir: Path) -> str | None:
    """The folder whose team.json this workspace holds, when that is another folder (a copy that has not opened
    its team graph since), else None: `kg doctor` says it."""
    made = made_for(kg_dir / MEMBER_FILE)
    if made is None or same_folder(made, _folder(kg_dir)):
        return None
    return made["folder"]


def _next_member(url: StoreUrl, *, copy_of: dict[str, Any] | None = None) -> int:
    from kg.store.falkor import _connect, _plain

    try:
        client = _connect(url).connection
        # a FalkorDB server first: a plain Redis answered the INCR, kept kg's key, and the entry it acknowledged
        # waited for a graph that server can never hold (QA6 #6); GRAPH.LIST is refused there as unknown
        client.execute_command("GRAPH.LIST")
        number = int(client.incr(f"kg:members:{url.graph}"))
    except Exception as exc:  # noqa: BLE001 - redis raises its own classes
        plain = _plain(exc, url, journaled=False)
        if isinstance(plain, TeamGraphBusy) or copy_of is not None:
            why = (f"this workspace is a copy of {copy_of['folder']} (its memory/.kg/team.json was made there) and "
                   "needs a member number of its own before it gives out an id, or its ids would be the "
                   "original's" if copy_of is not None else
                   "a workspace asks the team graph once for the member number its ids carry, before its first entry")
            plain = StoreError(f"{plain} ({why}); run the command again once the server answers")
        raise plain from None
    if number > MAX_MEMBERS:
        raise StoreError(f"the team graph {url.public} has given out {MAX_MEMBERS} member numbers, the most ids "
                         "can carry; use a new graph name")
    return number


TEAM_LOCK_WAIT = 120.0  # seconds: `_folder_locked`


@contextmanager
def _folder_locked(kg_dir: Path) -> Iterator[None]:
    """An exclusive flock on `team.lock` in the workspace's state folder, while team.json is read, its number asked
    for and the file written. A file opened for writing, as the other locks: on NFS a flock is a write lock,
    which a folder (open read-only) cannot take."""
    from kg.core.paths import flock_wait

    fd = os.open(kg_dir / "team.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        # its holder asks the server for a number, which its socket timeout bounds: a wait far past that is a
        # holder stuck, said, not waited for for ever
        if not flock_wait(fd, TEAM_LOCK_WAIT):
            raise StoreError(f"another kg process has held {kg_dir / 'team.lock'} for {TEAM_LOCK_WAIT:.0f} s while "
                             "asking the team server for this workspace's member number; try again, and if it "
                             "stays, find that process (`fuser` on the file) and end it")
        yield
    finally:
        os.close(fd)


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1"})


def _member_key(url: StoreUrl) -> str:
    """A graph as the server knows it: its address and name, whatever the user name, scheme or spelling of this
    machine's loopback (each spelling asked for a number of its own)."""
    host = url.host.lower()
    return f"{'127.0.0.1' if host in _LOOPBACK else host}:{url.port}/{url.graph}"


def _members(data: dict[str, Any]) -> dict[str, int]:
    """team.json's member numbers by graph (`_member_key`); an older kg's file held one: {"graph", "member"}."""
    if isinstance(data.get("members"), dict):
        return {k: v for k, v in data["members"].items() if isinstance(k, str) and type(v) is int and v > 0}
    if isinstance(data.get("graph"), str) and type(data.get("member")) is int:
        try:
            return {_member_key(parse_url(data["graph"], allow_password=False)): data["member"]}
        except UsageError:  # an IPv6 host an older kg wrote without brackets (falkordb://::1:6379/team)
            head, _, graph = data["graph"].rpartition("/")
            host, _, port = head.split("://", 1)[-1].rpartition(":")
            if host and port.isdigit():
                return {_member_key(StoreUrl(host=host.split("@")[-1], port=int(port), graph=graph)): data["member"]}
            return {}
    return {}


def origin(root: Path, kg_dir: Path, url: StoreUrl, redactor: Any = None) -> dict[str, str]:
    """What every node this workspace creates on the team graph is stamped with: each value redacted by the
    workspace's `redactor` (QA2 #5: KG_AGENT="ci-bot token=ghp_..." was stored on the server, kept in its AOF and
    listed by `kg status`), as every other value kg stores is; the folder's name and user@host too, which the
    environment and the file system give and no person typed as an entry."""
    import getpass
    import socket

    def plain(value: str) -> str:
        # one line of printable text (QA6 #7: a newline and a control byte were stored as given, and `kg status`
        # lists contributors by it), redacted whole before it is cut (a secret cut short is no longer found)
        value = clean(value, one_line=True)
        return clean(redactor.redact(value).text, one_line=True) if redactor is not None else value

    agent = plain(os.environ.get(ENV_AGENT) or "")[:AGENT_MAX_CHARS]
    agent = agent or plain(f"{getpass.getuser()}@{socket.gethostname()}")[:AGENT_MAX_CHARS]
    return {"origin_workspace": f"{plain(root.name)}#{member(kg_dir, url)}", "origin_agent": agent}


class TeamJournal(Journal):
    """The local journal, with ids that carry the workspace's member number (see the module docstring)."""

    def __init__(self, kg_dir: Path, *, timeout: float, url: StoreUrl, lane: str | None = None,
                 adopt: str | None = None):
        super().__init__(kg_dir, timeout=timeout, lane=lane, adopt=adopt)
        self._member = member(kg_dir, url)

    def _tag(self, ids: list[str]) -> list[str]:
        if self._member == 1:  # the first workspace keeps the embedded graph's ids (see the module docstring)
            return ids
        out = []
        for value in ids:
            head, number = value.rsplit("-", 1)
            out.append(f"{head}-{self._member:03d}{number}")
        return out

    def counter_of(self, digits: str) -> int | None:
        """The counter behind one of this member's own ids, else None (QA2 #4: member 1 importing the team's trail
        took member 2's `002001` for its 2001st id, and its next was -2002; past 100 members an imported `100005`
        made member 1's next id member 100's 6th). Member 1's ids are untagged (fewer than six digits, see the
        module docstring); another member's are its three-digit number, then the counter."""
        if self._member == 1:
            return super().counter_of(digits) if len(digits) < 6 else None
        if len(digits) < 6 or digits[:3] != f"{self._member:03d}":
            return None
        return super().counter_of(digits[3:])

    def allocate(self, prefix: str, day: str, count: int = 1) -> list[str]:
        return self._tag(super().allocate(prefix, day, count))

    def allocate_many(self, requests: list[tuple[str, str]]) -> list[str]:
        return self._tag(super().allocate_many(requests))


def copy_graph(st: Any, kind: str = "snapshot") -> StoreUrl:
    """A point-in-time copy of the open team graph `st` on its server, for a read-only snapshot: the analysis
    then reads a graph no agent writes to (`FalkorStore.copy_into`: by queries, the writer lock held). Its name
    says this machine and process (`falkor_clone.copy_name`). Remove it with `drop_graph`."""
    from dataclasses import replace

    from kg.store import falkor_clone

    copy = replace(st.url, graph=falkor_clone.copy_name(st.url.graph, kind))
    st.copy_into(copy.graph)
    return copy


def drop_graph(url: StoreUrl) -> None:
    """Delete a snapshot's copy of the team graph (best effort: a server away keeps it until it is back)."""
    from kg.store import falkor_clone
    from kg.store.falkor import _client

    try:
        falkor_clone.drop(_client(url), url.graph)
    except StoreError:  # the client cannot even be made: the server is away; the copy is inert
        pass


def left_copies(st: Any) -> list[str]:
    """The copies of the open team graph `st` that a process of this machine made and was killed before it could
    drop them (`falkor_clone.dead_copies`); empty when the server does not say."""
    from kg.store import falkor_clone
    from kg.store.falkor import _client

    try:
        return falkor_clone.dead_copies(_client(st.url), st.url.graph)
    except Exception:  # noqa: BLE001 - redis raises its own classes; doctor's other checks say a server away
        return []
