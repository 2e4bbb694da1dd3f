"""The workspace: where the graph and the memory files live, and the public API that works on them.

A workspace is a folder holding the agent's instruction files and `memory/`. It is found the way git finds
`.git` (kg/workspace_root.py).
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property, partial
from pathlib import Path
from typing import Any

from kg import workspace_toml as _toml
from kg import workspace_zone as _zone
from kg.core import clock, paths
from kg.core.errors import SchemaError, StoreError, UsageError
from kg.graph import reads
from kg.ingest import drain, ids_rebuild, writes
from kg.ingest.apply import PATTERN_KEY_META, pattern_for_key  # noqa: F401 - public here since before kg.ingest
from kg.ingest.background import BackgroundApplier, close_at_exit
from kg.ingest.drain import DrainReport
from kg.ingest.journal import Journal, write_atomic
from kg.ingest.writes import LogResult
from kg.redaction import cache as _rule_cache
from kg.store import Store
from kg.workspace_root import MARKER, find_root

ENV_LOCK_TIMEOUT = "KG_LOCK_TIMEOUT"
GRAPH_FILE = "graph.kuzu"


def open_workspace(path: str | os.PathLike[str] | None = None, *, rules_dir: Path | None = None,
                   fallback: bool = False) -> Workspace:
    """The workspace at `path`, or the one found from the current directory. With `fallback`, see Workspace."""
    return Workspace(find_root(path), rules_dir=rules_dir, fallback=fallback)


class Workspace:
    """One agent workspace. Every method opens the graph, works and closes it again, unless the workspace
    is used as a context manager (`with ws:`), which holds the graph open (and other processes out) for a
    batch of calls.

    A kg.toml that cannot be read, or whose rules a command would refuse, refuses the workspace, except with
    `fallback` (`kg doctor`, and the hooks, which must not lose a capture to a typo in kg.toml): then the packaged
    rules are used and `rules_problem` says what is wrong and how to fix it (kg/workspace_toml.py)."""

    def __init__(self, root: Path, *, rules_dir: Path | None = None, fallback: bool = False):
        self.root = root
        self.memory = root / "memory"
        self.kg_dir = root / MARKER
        _rule_cache.in_workspace(self.kg_dir)  # the parsed secret rules are kept here, not in the home folder
        self.graph_path = self.kg_dir / GRAPH_FILE
        self.rules_problem: str | None = None
        _toml.open_rules(self, rules_dir, fallback)  # kg.toml read: its rules, [store] and [clock]
        _zone.open_zone(self, fallback)  # the clock zone in effect from here on
        self._held: Store | None = None
        self._held_read_only = False  # the held handle is a `reading()` one: nothing to drain into
        self._held_reader = False  # the held handle is a reader's, whose drain had a budget: no second drain
        self._held_cm: Any = None
        self._depth = 0
        self._mutex = threading.RLock()  # one thread at a time in the graph
        self._in_store = threading.local()  # .depth: this thread's open `store()` blocks
        self._applier: BackgroundApplier | None = None
        self.open_options: dict[str, Any] = {}  # Store.open's arguments over the writer's defaults (kg/serve's)
        self._applier_lock = threading.Lock()  # not the mutex: a log must not wait for the applier's batch
        self._queued = 0  # logs handed to the applier since the last drain
        self._close_after_batch = False
        self._atexit: Callable[[], None] | None = None
        self._last_drain = DrainReport()
        self.pending = 0  # acknowledged entries the last read did not wait for (its drain ran out of budget)
        self._journal: Journal | None = None
        self._allow_new_graph = False  # `kg doctor --repair` only: start a graph over a missing one
        self.lock_wait = 0.0  # the least `lock_timeout` (seconds)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    @property
    def policy(self):
        return self.rules.policy

    @property
    def lock_timeout(self) -> float:
        """How long an open waits for the graph: KG_LOCK_TIMEOUT, else the policy's; at least `lock_wait`, which a
        process that no runtime waits for sets (a detached session end: `kg.runtimes.hooks.wait_longer`)."""
        env = os.environ.get(ENV_LOCK_TIMEOUT)
        try:
            own = max(0.0, float(env)) if env else self.policy.lock_timeout
        except ValueError:
            raise UsageError(f"{ENV_LOCK_TIMEOUT}={env!r} is not a number of seconds") from None
        return max(own, self.lock_wait)

    @property
    def journal(self) -> Journal:
        if self._journal is None:
            lane = self._lane()
            # the plain lane takes back what waits in its store's lane from a time the workspace was configured for
            # another store (QA2 #2: `kg init --store B`, then `--store A` again, stranded A's waiting writes)
            adopt = None
            if lane is None:
                from kg.store.backend import own_lane  # (light: no team client imported)

                adopt = own_lane(self.store_url)
            if self.store_url is None:
                self._journal = Journal(self.kg_dir, timeout=self.lock_timeout, lane=lane, adopt=adopt)
            else:
                from kg.store.team import TeamJournal  # ids carry a member number on a team graph

                self._journal = TeamJournal(self.kg_dir, timeout=self.lock_timeout, url=self.store_url,
                                            lane=lane, adopt=adopt)
        return self._journal

    def _lane(self) -> str | None:
        """The journal lane of the store this process writes to (kg/ingest/journal.py): None (the plain names)
        for the store kg.toml configures, else one named for the store `KG_STORE` chose instead."""
        if not os.environ.get("KG_STORE"):
            return None
        from kg.store.backend import lane, resolve_configured

        return lane(self.store_url, resolve_configured(self._store_conf))

    _store_conf: Any = None  # kg.toml's [store] table, read with the rule overrides
    _clock_conf: Any = None  # kg.toml's [clock] table (its zone: kg/workspace_zone.py)
    zone_checked = False  # the store was asked for its zone (`zone_recorded`: its record, None: none)
    zone_recorded: str | None = None
    zone_mirror_fixed: str | None = None  # what the writer's open did to a mirror that was wrong or missing
    ran_on: str | None = None  # with `fallback`, what a wrong kg.toml left in use (kg/workspace_toml.py)
    _toml_broken = False  # kg.toml did not parse (opened with `fallback`): _store_conf is its [store] read alone
    ids_rebuilt: str | None = None  # what the last open of the graph did about a damaged ids.json
    drain_budget: float | None = None  # see `_drain`
    # who applies what a reader's bounded drain leaves (the console's detached applier, the MCP server's drain
    # thread): called once, when the read would stop, True when it was arranged (kg/ingest/drain.py `behind`)
    apply_behind: Callable[[], bool] | None = None

    def rebuild_ids(self) -> None:
        """Open the graph without draining the journal: the open rebuilds a damaged ids.json (see `_opened`)."""
        with self.store(apply_journal=False):
            pass

    @cached_property
    def store_url(self) -> Any:
        """The team graph's URL (a FalkorDB server: kg/store/backend.py), or None for the embedded graph."""
        if self._store_conf is None and not os.environ.get("KG_STORE"):
            return None  # the embedded graph, without importing the team modules
        if self._toml_broken:  # (`fallback`) the [store] table read alone, or none: KG_STORE may still name one
            from kg.store.backend import resolve

            url = self._store_conf.get("url") if isinstance(self._store_conf, dict) else None
            return resolve(url if isinstance(url, str) else None, self.root)
        from kg.store.team import store_url

        return store_url(self.root)

    def _team(self) -> dict[str, Any]:
        """Store.open's arguments for a team graph (none for the embedded one)."""
        if self.store_url is None:
            return {}
        from kg.store.team import origin

        return {"url": self.store_url, "origin": origin(self.root, self.kg_dir, self.store_url, self.rules.redactor)}

    # -- the graph ----------------------------------------------------------------------------------------
    def _acknowledged(self) -> str | None:
        """Why this workspace's graph must exist (asked before a missing or empty graph file is created)."""
        from kg.ingest.journal import read_ids

        given = read_ids(self.journal.ids_path)
        if not given:
            return None
        if self.journal.lane == "kuzu":  # ids.json counts the team's ids too: this graph may never have been made
            return (f"{given:,} id(s) were given out (memory/.kg/ids.json), some or all of them on the team graph "
                    "kg.toml names (with KG_STORE=kuzu a team workspace uses an embedded graph of its own, which "
                    "`KG_STORE=kuzu kg doctor --repair` starts when it was never made)")
        return f"{given:,} id(s) were given out (memory/.kg/ids.json)"

    @contextmanager
    def store(self, *, unless: Callable[[], bool] | None = None, polite: bool = False,
              budget: float | None = None, apply_journal: bool = True) -> Iterator[Store]:
        """The open graph, with the journal drained into it first (with a `budget`, for that many seconds
        after the first batch: see `kg.ingest.drain`; `pending` then says how many entries were left).

        With `unless`, the check runs once the graph lock is held; when it is true the graph is not opened
        and None is yielded instead of a store. One thread at a time works in the graph: another thread's
        block (the background applier's) finishes first."""
        with self._mutex:
            self._in_store.depth = getattr(self._in_store, "depth", 0) + 1
            try:
                if self._held is not None:
                    # a read-only handle has nothing to drain into; a reader's (budgeted) one drained already,
                    # and a nested call inside the read must not then wait for everyone's backlog after all
                    if not self._held_read_only and not self._held_reader:
                        self.pending = self._drain(self._held, budget=budget).pending
                    yield self._held
                    return
                with self._opened(unless, polite, budget, apply_journal) as st:
                    yield st
            finally:
                self._in_store.depth -= 1

    @contextmanager
    def reading(self, *, buffer_pool_mb: int = 256, max_threads: int = 1) -> Iterator[Store]:
        """`_reading`, with Kùzu's "the buffer pool is full" said in one line with what to do (`drain.reader_pool`)."""
        with drain.reader_pool(self), self._reading(buffer_pool_mb=buffer_pool_mb, max_threads=max_threads) as st:
            yield st

    @contextmanager
    def _reading(self, *, buffer_pool_mb: int = 256, max_threads: int = 1) -> Iterator[Store]:
        """The graph for a one-off read (search, inject, recall, the session brief). When the journal holds
        nothing to apply, it is opened read-only with a small page cache: no migration check, no WAL settings,
        and tens of MB less resident memory than a writer's open. Otherwise (entries to apply, a graph not
        made or not migrated yet, or one already open in this process) it is `store()`, which applies the
        journal first. That drain is bounded (`write.reader_drain_seconds`): past it the read goes on with the
        graph as it is, and `ws.pending` says how many acknowledged entries it does not show yet, so a
        reader's wait does not grow with the number of agents logging. One query thread: a one-off read's
        queries are small, and each worker thread costs resident memory."""
        budget = self.policy.reader_drain_seconds
        with self._mutex:
            if self._held is None:  # a read nested in another keeps the outer one's count
                self.pending = 0
            # `with ws:` reads its own writes; a missing embedded graph is made by the writer's open
            if self._held is not None or (not self.graph_path.exists() and self.store_url is None):
                with self.store() as st:
                    yield st
                return
            if self.journal.has_pending():  # straight to the writer's open: one wait for the lock, not two
                with self.store(budget=budget) as st:
                    yield st
                return
            entered = False
            try:
                with Store.open(self.graph_path, lock_path=self.kg_dir / "graph.lock", read_only=True,
                                lock_timeout=self.lock_timeout, unless=self.journal.has_pending,
                                queries_dir=self.rules.rules_dir / "queries" if self.rules.rules_dir else None,
                                buffer_pool_mb=buffer_pool_mb, max_threads=max_threads, **self._team()) as st:
                    # (issue 22) a graph without its old full-text index nor the mark of its clean drop (a kill
                    # in an older kg's drop) needs the writer's open, which finds out and repairs it
                    if st is not None and (st.has_fts() or getattr(st, "fts_retired", bool)()):
                        _zone.check_store(self, st, read_only=True)
                        entered = True
                        self._held, self._held_read_only = st, True
                        try:
                            yield st
                        finally:
                            self._held, self._held_read_only = None, False
            except (StoreError, SchemaError):  # not openable read-only (an old graph): the writer's way
                if entered:
                    raise
            if not entered:
                with self.store(budget=budget) as st:
                    yield st

    @contextmanager
    def _opened(self, unless: Callable[[], bool] | None, polite: bool = False,
                budget: float | None = None, apply_journal: bool = True) -> Iterator[Store | None]:
        with Store.open(self.graph_path, lock_path=self.kg_dir / "graph.lock", lock_timeout=self.lock_timeout,
                        queries_dir=self.rules.rules_dir / "queries" if self.rules.rules_dir else None,
                        unless=unless, polite=polite, min_free_mb=self.policy.min_free_mb,
                        must_exist=None if self._allow_new_graph else self._acknowledged,
                        **{"buffer_pool_mb": self.policy.buffer_pool_mb, **self.open_options}, **self._team()) as st:
            if st is None:
                yield None
                return
            for repair in st.repairs:
                drain.warn(repair)
            _zone.check_store(self, st)
            if ids_rebuild.damaged(self.journal.ids_path):  # before the drain, which may give out a pattern's id
                self.ids_rebuilt = ids_rebuild.rebuild(self, st)
                drain.warn(self.ids_rebuilt)
            # (the read server opens with `apply_journal=False`: it drains between and before its reads)
            self.pending = self._drain(st, polite=polite, budget=budget).pending if apply_journal else 0
            self._held, self._held_reader = st, budget is not None  # nested store() calls share this handle
            try:
                yield st
            finally:
                self._held, self._held_reader = None, False

    @property
    def is_held(self) -> bool:
        """Whether the graph is open in this process (inside `with ws:` or a `ws.store()` block)."""
        return self._held is not None

    @property
    def in_batch(self) -> bool:
        """Whether the caller holds the workspace open across calls (`with ws:`): worth caching for, unlike
        the single `ws.store()` block of a one-off command."""
        return self._depth > 0

    def __enter__(self) -> Workspace:
        """Hold the graph open (and other processes out) until the outermost `with` ends. Re-entrant, and
        inside a `ws.store()` block it holds that block's handle.

        While it is held, `log()` answers once the entry is durable and a background thread applies it
        (see `log`); leaving the outermost `with` applies what is left, so everything logged is in the graph
        when the block ends (or, if the block raised or the graph failed, in the journal for the next
        command; or, with a `drain_budget` under contention, for the appliers and the read server)."""
        with self._mutex:
            if self._depth == 0 and self._held is None:
                cm = self._opened(None)
                cm.__enter__()
                self._held_cm = cm
            self._depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._mutex.acquire()  # a background batch in flight ends first
        except BaseException:
            # Ctrl-C while waiting for that batch: the thread closes the graph once the batch ends, so the
            # graph is not left held by a program that carries on.
            if self._depth == 1:
                self._close_after_batch = True
            raise
        try:
            self._depth -= 1
            if self._depth == 0:
                self._close_held(drain=exc[0] is None, exc=exc)
        finally:
            self._mutex.release()

    def _close_held(self, *, drain: bool = True, exc: tuple[Any, ...] = (None, None, None)) -> None:
        """Stop the background thread, apply what it had not, and close the graph `with ws:` opened. Also
        registered with `atexit` while a background thread runs, for a block never left (a notebook): a
        daemon thread still inside Kùzu when the interpreter ends would abort the process."""
        with self._mutex:
            cm, self._held_cm = self._held_cm, None
            self._depth = 0
            try:  # the graph is closed whatever happens here (a Ctrl-C in the drain included)
                with self._applier_lock:
                    applier, self._applier = self._applier, None
                    self._queued = 0
                if applier is not None:
                    applier.stop()
                if drain and self._held is not None:
                    self._drain(self._held)
            finally:
                if self._atexit is not None:
                    atexit.unregister(self._atexit)
                    self._atexit = None
                if cm is not None:
                    cm.__exit__(*exc)

    def drain(self, *, if_pending: bool = False) -> DrainReport:
        """Apply every acknowledged write still waiting in the journal. With `if_pending`, the graph is not
        opened at all when the journal is empty once the lock is held (another process drained it)."""
        with self._mutex:
            self._last_drain = DrainReport()
            # `if_pending` is the background drain (after `kg log` answered, or the `with ws:` thread): it is
            # polite, standing aside for a foreground process that waits for the graph (which drains itself).
            with self.store(unless=(lambda: not self.journal.has_pending()) if if_pending else None,
                            polite=if_pending):
                pass
            return self._last_drain

    def _drain(self, st: Store, *, polite: bool = False, budget: float | None = None) -> DrainReport:
        """Apply the journal into the open graph (see `kg.ingest.drain`): all of it, or, `polite`, until a
        foreground process waits, or, with a `budget` in seconds, until that has passed. `drain_budget` set (by
        the lifecycle's commands) gives every drain of the block that budget: a cycle under contention takes
        its turn and runs, it does not apply everyone's backlog first."""
        behind = self.apply_behind if budget is not None else None  # a reader's: not the lifecycle's block
        # a writer's command compacts a grown file that fills Kùzu's buffer pool (kg/ingest/drain.py recovering),
        # not a reader nor a background applier: a session's start would wait for the rebuild
        apply = drain.drain if polite or budget is not None else drain.recovering
        budget = self.drain_budget if budget is None and not polite else budget
        report = apply(self, st, polite=polite, budget=budget, behind=behind)
        self._last_drain = report
        return report

    def _forget_queued(self) -> None:
        """A drain round took the journal: the background thread's backlog count starts again."""
        with self._applier_lock:
            self._queued = 0

    # -- the current session ------------------------------------------------------------------------------
    @property
    def _session_file(self) -> Path:
        return self.kg_dir / "current-session"

    def current_session(self) -> str | None:
        """The session later logs default to (set by `kg session start`), or None."""
        try:
            value = self._session_file.read_text(encoding="utf-8").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            return None
        return value if paths.is_name(value) else None  # a hand-edited file must not name a path

    def set_current_session(self, session_id: str | None) -> None:
        if session_id is None:
            self._session_file.unlink(missing_ok=True)
        else:
            write_atomic(self._session_file, paths.check_name(session_id, "session id").encode("utf-8"))

    # -- writing (kg/ingest/writes.py) ------------------------------------------------------------------
    def log(self, kind: str, summary: str, *, now: datetime | str | None = None, session: str | None = None,
            apply: bool = True, wait: bool = False, link: bool = True, learned: datetime | str | None = None,
            **fields: Any) -> LogResult:
        """Record a learning, error or feature request.

        The entry is validated, redacted and made durable in the journal before this returns. Then it is
        applied to the graph: linked to what it relates to and joined to the pattern it repeats (`link=False`
        skips both; an explicit pattern key still applies).

        - By default the call applies it before returning (`applied`, and the pattern's figures), unless
          another process holds the graph past the retry budget: then the next kg command applies it.
        - Inside `with ws:` it answers at the ack instead (`queued`), and the workspace's background thread
          applies it; every read, and leaving the block, waits for that. `wait=True` applies it here.
        - `apply=False` only journals it: the next command that opens the graph applies it.
        - `learned`: when kg learns it, when that is later than `now` (the entry's own time, read from a
          transcript): its age, for decay, counts from the later of the two.
        """
        return writes.log(self, kind, summary, now=now, session=session, apply=apply, wait=wait, link=link,
                          learned=learned, **fields)

    def _hand_to_applier(self) -> bool:
        """Hand a just-journaled entry to the background thread (inside `with ws:`, between calls): True if
        it took it. A caller inside `ws.store()` goes on to read the graph with the handle it holds, and must
        find the entry there, so it applies in the foreground; so does a caller past the backlog bound
        (everything waiting, in one batch), so that a caller logging faster than entries apply is slowed down
        and no read or exit waits for an unbounded backlog."""
        if not self.in_batch or getattr(self._in_store, "depth", 0):
            return False
        with self._applier_lock:
            if not self.in_batch or self._queued >= self.policy.background_max_queued:  # the block may be closing
                return False
            if self._applier is None or not self._applier.alive:
                self._applier = BackgroundApplier(self)
                if self._atexit is None:
                    self._atexit = partial(close_at_exit, weakref.ref(self))
                    atexit.register(self._atexit)
            if self._applier.error is None:
                self._queued += 1
                self._applier.kick()
                return True
            self._applier.error = None  # it failed: apply here, where the failure is reported
            return False

    def log_many(self, items: Any, **options: Any) -> Any:
        """Log a conversation or a transcript in one pass (one journal write, one graph open, linked as it
        goes): see `kg.ingest.batch.log_many`."""
        from kg.ingest.batch import log_many

        return log_many(self, items, **options)

    def node_add(self, kind: str, text: str, *, now: datetime | str | None = None,
                 tags: list[str] | None = None, source: str = "manual", link: bool = True) -> dict[str, Any]:
        """Add a lesson, principle, knowledge, pattern or event node by hand. It is auto-linked to what it
        relates to (`links`), unless `link=False`."""
        return writes.node_add(self, kind, text, now=now, tags=tags, source=source, link=link)

    def link_auto(self, node_id: str, *, now: datetime | str | None = None,
                  dry_run: bool = False) -> dict[str, Any]:
        """Auto-link an existing node now (the write path does this for every new node): candidates from
        the full-text index, re-ranked, typed by cue words; existing edges are kept, none is duplicated."""
        return writes.link_auto(self, node_id, now=now, dry_run=dry_run)

    def edge_add(self, src: str, dst: str, edge_type: str, *, now: datetime | str | None = None,
                 reason: str | None = None) -> dict[str, Any]:
        """Join two nodes by a typed edge (manual). Duplicates and self-links are refused."""
        return writes.edge_add(self, src, dst, edge_type, now=now, reason=reason)

    def resolve(self, entry_id: str, status: str, *, now: datetime | str | None = None) -> dict[str, Any]:
        """Set a logged entry's status."""
        return writes.resolve(self, entry_id, status, now=now)

    # -- reading (kg/graph/reads.py) ----------------------------------------------------------------------
    def show(self, node_id: str) -> dict[str, Any]:
        """A node with its edges in both directions (and, for a pattern, its derived recurrence)."""
        return reads.show(self, node_id)

    def list(self, *, type: str | None = None, status: str | None = None, priority: str | None = None,
             area: str | None = None, since: str | datetime | None = None, now: datetime | str | None = None,
             limit: int = 50) -> list[dict[str, Any]]:
        """Nodes newest first, filtered by type, status, priority, area and age."""
        return reads.list_nodes(self, type=type, status=status, priority=priority, area=area, since=since,
                                now=now, limit=limit)

    def status(self, *, now: datetime | str | None = None, limit: int = 10) -> dict[str, Any]:
        """The status `kg status --json` prints and the MCP server returns: the graph's counts, the lifecycle's
        sections and the scheduled cycle's last run, read in one read-only open."""
        from kg.lifecycle.api import lifecycle_status
        from kg.runtimes.schedule import last_run

        at = clock.now(now)
        with self.reading():
            data = reads.status(self, now=at, limit=limit)
            data["lifecycle"] = lifecycle_status(self, at, limit, undecided=True)
        data["last_cycle"] = last_run(self)
        return data
