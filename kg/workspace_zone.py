"""The workspace's clock zone: one per workspace, whatever the zone of the process (kg/core/clock.py).

The store keeps it (Meta `clock:zone`, both backends: a team shares its graph's), recorded the first time a
writer's open finds none, from the zone this workspace had until then: the process's own the first time
(times kg wrote before there was a zone were that process's wall-clock times, so nothing is converted).
`memory/.kg/clock-zone` mirrors it, so the fast paths that never open the graph (`kg log`'s answer, the hooks,
the read server, `kg status`) know it; a workspace without one takes the zone of the first process that asks,
and the store's record, once a writer opens it, wins over the mirror. `[clock] zone = "Europe/Berlin"` in
kg.toml sets it by hand: checked at once (exit 2 naming it), and refused, with how to fix it, when the
workspace already keeps its times in another zone (kg converts no stored time).
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


def settle(kg_dir: Path, pinned: tzinfo | None, toml: Path) -> tuple[tzinfo, bool]:
    """The workspace's zone, put in effect in this process, and whether the mirror was missing (the store, once
    opened, is then asked: `agree`). kg.toml's zone when set (refused when the workspace keeps its times in
    another), else the mirror's, else this process's own, which the mirror then names (the first process that
    asks decides; two asking at once agree on the first one's)."""
    have = cached(kg_dir)
    if pinned is not None and have is not None and clock.zone_name(have) != clock.zone_name(pinned):
        raise mismatch(toml, pinned, have)
    zone = pinned or have
    if zone is None:
        zone = _record(kg_dir, clock.local_zone(), replace=False)
    elif have is None:
        _record(kg_dir, zone, replace=False)
    clock.use_zone(zone)
    return zone, have is None


def agree(st: Any, zone: tzinfo, pinned: tzinfo | None, kg_dir: Path, toml: Path, *,
          read_only: bool = False) -> tzinfo:
    """On a writer's open (or a reader's, when the mirror was missing): the store's zone. Recorded from `zone`
    when it has none (not by a reader); the store's own, mirrored and put in effect, when it differs (a team
    graph's, a mirror lost); refused when kg.toml pins another."""
    rows = st.run("meta_get", key=META_KEY)
    recorded = rows[0]["value"] if rows and rows[0].get("value") else None
    if recorded is None and read_only:
        return zone
    if recorded is None:
        st.run("meta_set", key=META_KEY, value=clock.zone_name(zone))
        if cached(kg_dir) is None:  # (a workspace whose folder `settle` found not made yet)
            _record(kg_dir, zone, replace=False)
        return zone
    if recorded == clock.zone_name(zone):
        return zone
    try:
        kept = clock.parse_zone(recorded)
    except UsageError:  # a zone this machine's tz database lacks: say so, change nothing
        raise RulesError(f"this workspace's graph keeps its times in the zone {recorded!r}, which this machine "
                         "does not know: install the time zone database (the tzdata package)") from None
    if pinned is not None:
        raise mismatch(toml, pinned, kept)
    _record(kg_dir, kept, replace=True)
    clock.use_zone(kept)
    return kept


def mismatch(toml: Path, pinned: tzinfo, kept: tzinfo) -> RulesError:
    name, have = clock.zone_name(pinned), clock.zone_name(kept)
    return RulesError(f"{toml}: [clock] zone = {name!r}, but this workspace keeps its times in {have}: set "
                      f"zone = \"{have}\" in [clock] or remove the line (kg does not convert the times it stored)")


def _record(kg_dir: Path, zone: tzinfo, *, replace: bool) -> tzinfo:
    """Name `zone` in the mirror. Not `replace`: only when there is none, else the zone it names wins."""
    target = kg_dir / CACHE
    text = clock.zone_name(zone) + "\n"
    if replace:
        from kg.core.files import write_atomic

        try:
            write_atomic(target, text.encode())
        except OSError:
            pass  # a read-only workspace: the store's record still holds
        return zone
    tmp = kg_dir / f".{CACHE}.{os.getpid()}.tmp"
    try:
        tmp.write_text(text, encoding="utf-8")
        try:
            os.link(tmp, target)  # the first process to name one wins; a second reads the first's
        except FileExistsError:
            return cached(kg_dir) or zone
        finally:
            tmp.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only workspace, a folder not made yet: the zone holds for this process
    return zone


def open_zone(ws: Any, fallback: bool) -> None:
    """The workspace's zone (`ws.zone`, `ws.zone_pinned`: kg.toml's), in effect from here on; with `fallback` (the
    hooks, `kg doctor`), a kg.toml zone that is wrong is reported in `ws.rules_problem` and the kept one used."""
    toml = ws.root / "kg.toml"
    try:
        ws.zone_pinned = configured(ws._clock_conf, toml)
        ws.zone, ws.zone_guessed = settle(ws.kg_dir, ws.zone_pinned, toml)
    except RulesError as exc:
        if not fallback:
            raise
        ws.rules_problem = ws.rules_problem or str(exc)
        ws.zone_pinned = None
        ws.zone, ws.zone_guessed = settle(ws.kg_dir, None, toml)


def check_store(ws: Any, st: Any, *, read_only: bool = False) -> None:
    """The store's zone, once `ws` opened it (`agree`): a reader asks only when the mirror was missing."""
    if read_only and not ws.zone_guessed:
        return
    ws.zone = agree(st, ws.zone, ws.zone_pinned, ws.kg_dir, ws.root / "kg.toml", read_only=read_only)
    ws.zone_guessed = False
