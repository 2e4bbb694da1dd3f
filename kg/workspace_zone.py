"""The workspace's clock zone: one per workspace, whatever the zone of the process (kg/core/clock.py).

The store keeps it (Meta `clock:zone`, both backends: a team shares its graph's), recorded by a writer's open
that finds none: kg.toml's zone, else the process's own when the store is new (nothing stored nor journaled). A
store an older kg filled gets no guessed zone (each process keeps its own, as before; `kg status` and `kg doctor`
say how to set one). `memory/.kg/clock-zone` mirrors the record, so the fast paths that never open the graph
(`kg log`'s answer, the hooks, the read server) know it; only a writer's open that read the store's record
writes it. `[clock] zone = "Europe/Berlin"` in kg.toml sets it by hand: checked at once (exit 2 naming it), and
refused, with how to fix it, when the workspace already keeps its times in another zone (kg converts no
stored time).
"""

from __future__ import annotations

import os
from datetime import tzinfo
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import RulesError, UsageError

CACHE = "clock-zone"  # in memory/.kg: the zone's name, one line
META_KEY = "clock:zone"


def configured(table: Any, path: Path) -> tzinfo | None:
    """kg.toml's `[clock]` table: its `zone`, checked (None: not set)."""
    if table is None:
        return None
    if not isinstance(table, dict):
        raise RulesError(f"{path}: clock must be a table ([clock] with zone = \"Europe/Berlin\")")
    unknown = sorted(set(table) - {"zone"})
    if unknown:
        raise RulesError(f"{path}: unknown key(s) {', '.join(unknown)} in [clock]; only zone is read "
                         "(zone = \"Europe/Berlin\")")
    if "zone" not in table:
        return None
    try:
        return clock.parse_zone(table["zone"], what="[clock] zone")
    except UsageError as exc:
        raise RulesError(f"{path}: {exc}") from None


def cached(kg_dir: Path) -> tzinfo | None:
    """The zone the workspace's mirror names (None: no mirror, or one kg cannot read, made anew)."""
    try:
        return clock.parse_zone((kg_dir / CACHE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, UsageError):
        return None


def use_cached(kg_dir: Path) -> None:
    """Put the zone the mirror names in effect, before the workspace is opened (a time read first: the CLI's
    `--now`, the scheduled cycle's start); none, the process's own until the workspace settles it."""
    clock.use_zone(cached(kg_dir))


def settle(kg_dir: Path, pinned: tzinfo | None, toml: Path, *, mirror: bool = True) -> tuple[tzinfo, bool]:
    """The workspace's zone as far as known before the store is opened, put in effect in this process, and
    whether the mirror was missing or unreadable (the store, once opened, is then asked: `agree`). kg.toml's zone
    when set (refused when the mirror names another), else the mirror's, else this process's own. Nothing is
    written here: only a writer's open that read the store's record writes the mirror (`agree`). Without
    `mirror` (a store KG_STORE chose: the mirror is the configured store's) the mirror is not read: the store is
    asked, as when it is missing."""
    have = cached(kg_dir) if mirror else None
    if pinned is not None and have is not None and not clock.same_zone(have, pinned):
        raise mismatch(toml, pinned, have)
    zone = have or pinned or clock.local_zone()  # (the recorded spelling of a zone kg.toml names otherwise)
    clock.use_zone(zone)
    return zone, have is None


def agree(st: Any, zone: tzinfo, pinned: tzinfo | None, kg_dir: Path, toml: Path, *, read_only: bool = False,
          fresh: Any = None, mirror: bool = True) -> tuple[tzinfo, str | None, str | None]:
    """On a writer's open (or a reader's, when the mirror was missing): the store's zone, the name recorded (None:
    none) and what was done to the mirror (None: nothing). The store has none: recorded from kg.toml's zone, or
    from this process's when the store is new (`fresh()`: nothing stored nor journaled yet); a store an older kg
    filled keeps each process's own zone, unrecorded (its times were written in whatever zone each process
    had: guessing one would move them), until `[clock] zone` names it. The store's own zone is put in effect
    when it differs (a team graph's, a mirror lost), and a writer (`mirror`: not one whose store KG_STORE chose)
    rewrites a mirror that is missing, unreadable or different; refused when kg.toml pins another."""
    rows = st.run("meta_get", key=META_KEY)
    recorded = rows[0]["value"] if rows and rows[0].get("value") else None
    if recorded is None:
        if read_only or (pinned is None and not (fresh is not None and fresh())):
            return zone, None, None
        st.run("meta_set", key=META_KEY, value=clock.zone_name(zone))
        recorded = clock.zone_name(zone)
    try:
        kept = clock.parse_zone(recorded)
    except UsageError:  # a zone this machine's tz database lacks: say so, change nothing
        raise RulesError(f"this workspace's graph keeps its times in the zone {recorded!r}, which this machine "
                         "does not know: install the time zone database (the tzdata package)") from None
    if pinned is not None and not clock.same_zone(pinned, kept):
        raise mismatch(toml, pinned, kept)  # (`Etc/UTC` is `UTC`: the record's spelling is kept)
    done = None
    if mirror and not read_only:
        text = _mirror_text(kg_dir)
        if text != recorded:
            unwritten = _record(kg_dir, kept)
            done = (f"the mirror memory/.kg/{CACHE} named {text!r}, the graph records {recorded}: rewritten"
                    if text is not None else f"the mirror memory/.kg/{CACHE} was missing: written ({recorded})")
            if unwritten:
                done = (f"the mirror memory/.kg/{CACHE} {'was missing' if text is None else f'named {text!r}'}, "
                        f"the graph records {recorded}: not written ({unwritten}); the graph's record holds")
    clock.use_zone(kept)
    return kept, recorded, done


def _mirror_text(kg_dir: Path) -> str | None:
    try:
        return (kg_dir / CACHE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


def mismatch(toml: Path, pinned: tzinfo, kept: tzinfo) -> RulesError:
    name, have = clock.zone_name(pinned), clock.zone_name(kept)
    return RulesError(f"{toml}: [clock] zone = {name!r}, but this workspace keeps its times in {have}: set "
                      f"zone = \"{have}\" in [clock] or remove the line (kg does not convert the times it stored)")


def _record(kg_dir: Path, zone: tzinfo) -> str | None:
    """Name `zone` in the mirror (a writer's open, from the store's record); why it could not (None: written)."""
    from kg.core.errors import UnusableFile
    from kg.core.files import write_atomic

    try:
        write_atomic(kg_dir / CACHE, (clock.zone_name(zone) + "\n").encode())
    except OSError as exc:  # a read-only workspace, a folder not made yet: the store's record still holds
        return exc.strerror or str(exc)
    except UnusableFile as exc:  # a link out of memory/.kg: it stopped every command (QA3 #1's kind); same
        return str(exc)
    return None


def open_zone(ws: Any, fallback: bool) -> None:
    """The workspace's zone (`ws.zone`, `ws.zone_pinned`: kg.toml's), in effect from here on; with `fallback` (the
    hooks, `kg doctor`), a kg.toml zone that is wrong is reported in `ws.rules_problem` and the kept one used (said
    in `ws.ran_on`: kg.toml's rules still hold unless they are wrong too)."""
    toml = ws.root / "kg.toml"
    mirror = not os.environ.get("KG_STORE") or ws._lane() is None  # (KG_STORE naming kg.toml's store: its own)
    try:
        ws.zone_pinned = configured(ws._clock_conf, toml)
        ws.zone, ws.zone_guessed = settle(ws.kg_dir, ws.zone_pinned, toml, mirror=mirror)
    except RulesError as exc:
        if not fallback:
            raise
        ws.rules_problem = f"{ws.rules_problem}; {exc}" if ws.rules_problem else str(exc)
        ws.zone_pinned = None
        ws.zone, ws.zone_guessed = settle(ws.kg_dir, None, toml, mirror=mirror)
        whose = "this process's zone" if ws.zone_guessed else "the zone the workspace keeps"
        ws.ran_on = (f"{ws.ran_on or 'the rules of kg.toml'}, without kg.toml's [clock] zone: times in "
                     f"{clock.zone_name(ws.zone)}, {whose}")


def check_store(ws: Any, st: Any, *, read_only: bool = False) -> None:
    """The store's zone, once `ws` opened it (`agree`), a reader's open too: one key read, and the store's zone is
    the one its times are in, whatever the mirror says (a reader does not rewrite it)."""
    ws.zone, ws.zone_recorded, fixed = agree(
        st, ws.zone, ws.zone_pinned, ws.kg_dir, ws.root / "kg.toml", read_only=read_only,
        fresh=lambda: not st.run("node_any") and (not ws.journal.has_pending() or _restarted(ws)),
        mirror=ws._lane() is None)
    if fixed and " named " in fixed and not read_only:  # a mirror naming another zone: said when it is found
        from kg.ingest.drain import warn

        warn(f"{fixed}; entries written meanwhile are kept in {ws.zone_recorded}'s time (their ids and daily-log "
             "lines keep the mirror's)")
    ws.zone_mirror_fixed = fixed or ws.zone_mirror_fixed
    ws.zone_checked = True
    ws.zone_guessed = ws.zone_recorded is None


LEARN_WAIT = 1.0  # seconds `learn` waits for a graph another process holds: then the applier converts


def learn(ws: Any) -> None:
    """Before a write stamps its time (its id's date, its daily-log line): the store's zone, when no trusted
    mirror names it (lost, unreadable, or KG_STORE chose another store than kg.toml's) and the store exists, read
    by a read-only open that drains nothing and waits at most LEARN_WAIT for the graph's lock (the fast path of
    `kg log` and the hooks). A store that cannot be opened now leaves the guess: the applier, which opens it,
    puts the entry's times in its zone all the same (kg/ingest/apply.py `restamp`); only its id's date and its
    daily-log line keep the guess."""
    if ws.zone_checked or not ws.zone_guessed or ws.is_held or \
            (ws.store_url is None and not ws.graph_path.exists()):
        return
    from kg.core.errors import KgError
    from kg.store import Store

    try:
        with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", read_only=True, lock_timeout=LEARN_WAIT,
                        buffer_pool_mb=64, max_threads=1, url=ws.store_url) as st:  # (read-only: no origin stamp)
            if st is not None:
                check_store(ws, st, read_only=True)
    except (KgError, OSError):
        pass


def _restarted(ws: Any) -> bool:
    """Whether the mirror names a zone for a graph that holds no node while entries wait in the journal: a graph
    started anew over a lost or damaged one (`kg doctor --repair`), or one that lost its nodes with its write-ahead
    log. Only a writer that read the store's record writes the mirror (an older kg never did), so the zone it names
    is the one the entries were written in (`settle` put it in effect): recorded as it was. (QA5 #2: a write
    journaled while the graph could not be opened left the repaired workspace with "no clock zone is recorded ...
    made by an older kg", its mirror still naming it.) Not a mirror of another store than the one KG_STORE chose."""
    return ws._lane() is None and cached(ws.kg_dir) is not None


def is_recorded(ws: Any) -> bool:
    """Whether the workspace's zone is recorded: the store's answer when it was asked, else the mirror's (only a
    writer that read the store's record writes one)."""
    return ws.zone_recorded is not None if ws.zone_checked else cached(ws.kg_dir) is not None


def note(ws: Any) -> str | None:
    """What `kg status` and `kg doctor` say beside the zone: none recorded (`unrecorded_text`), and why this
    process's zone, when it is the one in effect, is not the one its TZ names (clock.local_note)."""
    said = [] if is_recorded(ws) else [unrecorded_text(ws)]
    local = clock.local_note()
    if local and clock.zone_name(ws.zone) == clock.zone_name(clock.local_zone()):
        said.append(local)
    return "; ".join(said) or None


def unrecorded_text(ws: Any) -> str:
    """What `kg status` and `kg doctor` say of a workspace an older kg made, whose store records no zone."""
    here = clock.zone_name(clock.local_zone())
    return (f"no clock zone is recorded for this workspace (made by an older kg): each process keeps its times in "
            f"its own zone; set [clock] zone = \"{here}\" (this process's zone) in kg.toml, or the zone the "
            "history was written in, and kg records it")
