"""Rules are data: this module loads `rules/*.toml`, applies a workspace's overrides, validates them, and
hands out frozen policy objects. Pure decisions elsewhere take these objects as arguments.

Overrides come from the workspace's `kg.toml` (`[rules.NAME]` tables) and from `--rules DIR` (a `NAME.toml`
there). An override may only set keys that the packaged file has, with a value of the same type, except inside
tables the packaged file lists in its top-level `open_tables` (for example user-defined topics).

Every module that turns a rule file into a policy object reads its values through `RuleReader`, so a bad value is
refused in one wording everywhere: `rules/linking.toml: link.min_score: must be a number from 0.0 to 1.0, not 1.5`.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from kg.core.errors import RulesError

_META_KEYS = {"open_tables"}
_REQUIRED: Any = object()  # no default given: a missing key is refused


class RuleReader:
    """Reads the values of one parsed rules table and refuses a wrong one with a `RulesError` worded the same for
    every rule file: `{source}: {dotted.key}: {reason}`, the reason saying what is wrong and what is expected.

    `where` is the table's place in its file, so the reader of a sub-table (`table(...)`, `tables(...)`) names its
    keys from the top of the file. A name is looked up whole first, so a key of an open table may hold a dot
    ("node.js"), then as a dotted path. With a `default`, a missing key gives the default (checked like a value);
    without one, it is refused. `error` is the class raised: `RulesError` or a subclass.
    """

    def __init__(self, data: Any, source: str, *, where: str = "", error: type[RulesError] = RulesError):
        self.source, self.where, self.error = source, where, error
        if not isinstance(data, Mapping):
            raise self.fail("", f"must be a table, not {data!r}")
        self.data: Mapping[str, Any] = data

    def key(self, name: str) -> str:
        return ".".join(part for part in (self.where, name) if part)

    def fail(self, name: str, reason: str) -> RulesError:
        return self.error(f"{self.source}: {self.key(name) or 'the top level'}: {reason}")

    def get(self, name: str, default: Any = _REQUIRED) -> Any:
        if name in self.data:
            return self.data[name]
        node: Any = self.data
        parts = name.split(".")
        for i, part in enumerate(parts):
            if not isinstance(node, Mapping):
                raise self.fail(".".join(parts[:i]), f"must be a table, not {node!r}")
            if part not in node:
                if default is _REQUIRED:
                    raise self.fail(".".join(parts[:i + 1]), "missing")
                return default
            node = node[part]
        return node

    def table(self, name: str, default: Any = _REQUIRED) -> RuleReader:
        return RuleReader(self.get(name, default), self.source, where=self.key(name), error=self.error)

    def tables(self, name: str, default: Any = _REQUIRED, *, empty: bool = True) -> list[RuleReader]:
        """An array of tables (`[[name]]`), each read by its own reader (`name[0]`, `name[1]` ...)."""
        value = self.get(name, default)
        if not isinstance(value, list) or not (value or empty):
            what = "a list" if empty else "a non-empty list"
            raise self.fail(name, f"must be {what} of [[{self.key(name)}]] tables, not {value!r}")
        return [RuleReader(item, self.source, where=f"{self.key(name)}[{i}]", error=self.error)
                for i, item in enumerate(value)]

    def known(self, names: Iterable[str]) -> RuleReader:
        """Refuse a key of this table that is not in `names` (a typo must not be a silently ignored setting)."""
        names = tuple(names)
        unknown = sorted(set(self.data) - set(names))
        if unknown:
            raise self.fail(unknown[0], f"unknown key (known keys here: {', '.join(names) or 'none'})")
        return self

    def whole(self, name: str, lo: int | None = None, hi: int | None = None, *, default: Any = _REQUIRED,
              int_only: bool = False) -> int:
        """A whole number; 3.0 counts as 3 unless `int_only`. A boolean is never a number."""
        value = self.get(name, default)
        if not (_is_number(value) and (isinstance(value, int) or (not int_only and value.is_integer()))
                and _within(value, lo, hi)):
            hint = " written without a decimal point" if isinstance(value, float) and value.is_integer() else ""
            raise self.fail(name, f"must be a whole number{_span(lo, hi)}{hint}, not {value!r}")
        return int(value)

    def number(self, name: str, lo: float | None = None, hi: float | None = None, *,
               default: Any = _REQUIRED) -> float:
        value = self.get(name, default)
        if not (_is_number(value) and _within(value, lo, hi) and math.isfinite(value)):
            finite = " finite" if _is_number(value) and math.isinf(value) else ""  # inf: no key said it before
            raise self.fail(name, f"must be a{finite} number{_span(lo, hi)}, not {value!r}")
        return float(value)

    def regex(self, name: str, text: str | None = None, flags: int = 0, *,
              groups: Sequence[int | str] = ()) -> re.Pattern[str]:
        """The regular expression at `name` (or `text`, read from there), compiled. `groups` are the groups the code
        reads of a match (1, "obj"), declared where the rule is read: a pattern without one is refused here, not
        by an IndexError at its first match (a hook's lost capture)."""
        pattern = self.string(name) if text is None else text
        try:
            compiled = re.compile(pattern, flags)
        except re.error as exc:
            raise self.fail(name, f"is not a valid regex ({exc})") from None
        missing = [g for g in groups if (g > compiled.groups if isinstance(g, int) else g not in compiled.groupindex)]
        if missing:
            need = " and ".join(f"group {g}" if isinstance(g, int) else f"a group named (?P<{g}>...)" for g in missing)
            raise self.fail(name, f"must have {need}, which kg reads of each match; {pattern!r} has "
                                  f"{compiled.groups or 'no'} group{'' if compiled.groups == 1 else 's'}")
        return compiled

    def replacement(self, name: str, pattern: re.Pattern[str], template: str) -> str:
        """A replacement template for `pattern`, tried on an empty sample (Python parses the template before it
        looks for a match): a back-reference to a group the pattern lacks is refused here, not at a match."""
        try:
            pattern.sub(template, "")
        except (re.error, IndexError) as exc:
            raise self.fail(name, f"is not a valid replacement for {pattern.pattern!r} ({exc}); refer only to "
                                  "groups the pattern has, and double a backslash meant as itself") from None
        return template

    def string(self, name: str, allowed: Sequence[str] | None = None, *, default: Any = _REQUIRED) -> str:
        value = self.get(name, default)
        if allowed is not None and value not in allowed:
            raise self.fail(name, f"must be one of {_listing(allowed)}, not {value!r}")
        if not isinstance(value, str):
            raise self.fail(name, f"must be a string, not {value!r}")
        return value

    def strings(self, name: str, default: Any = _REQUIRED, *, empty: bool = True,
                items: Literal["any", "non-empty", "non-blank"] = "any",
                allowed: Sequence[str] | None = None) -> tuple[str, ...]:
        """A list of strings. `empty=False` refuses an empty list; `items` is "any", "non-empty" (refuses "") or
        "non-blank" (refuses "" and white space); `allowed` limits the items to those values."""
        value = self.get(name, default)
        what = (f"a {'' if empty else 'non-empty '}list of {'' if items == 'any' else 'non-empty '}strings"
                + (f" from {_listing(allowed)}" if allowed is not None else ""))
        if not isinstance(value, list) or not (value or empty):
            raise self.fail(name, f"must be {what}, not {value!r}")
        for i, item in enumerate(value):
            if (not isinstance(item, str) or (items == "non-empty" and not item)
                    or (items == "non-blank" and not item.strip()) or (allowed is not None and item not in allowed)):
                raise self.fail(name, f"must be {what}; item {i + 1} is {item!r}")
        return tuple(value)

    def flag(self, name: str, default: Any = _REQUIRED) -> bool:
        value = self.get(name, default)
        if not isinstance(value, bool):
            raise self.fail(name, f"must be true or false, not {value!r}")
        return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _within(value: float, lo: float | None, hi: float | None) -> bool:
    """Also false for NaN, which no threshold can mean."""
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _span(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f" from {lo} to {hi}"
    if lo is not None:
        return f" of at least {lo}"
    return f" of at most {hi}" if hi is not None else ""


def _listing(values: Sequence[str]) -> str:
    return ", ".join(v or '""' for v in values)


def _read_toml(path: Path | None, text: str | None, source: str) -> dict[str, Any]:
    try:
        if text is None:
            assert path is not None
            text = path.read_text(encoding="utf-8-sig")
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise RulesError(f"{source}: not UTF-8 text") from None
    except OSError as exc:
        raise RulesError(f"{source}: cannot read: {exc.strerror}") from None


# Rule files read from the package only, whatever a workspace says: text they fold is matched against what other
# workspaces (and a team's graph) folded, so a workspace's own table would make the same words two (QA10: a kg.toml
# [rules.hanzi] was accepted and then ignored).
PACKAGE_ONLY = {"hanzi": "its character table (from OpenCC) folds traditional Chinese alike in every workspace"}


def package_only(name: str, where: str) -> RulesError | None:
    """The error for overriding a rule file that is read from the package only, or None."""
    why = PACKAGE_ONLY.get(name)
    return RulesError(f"{where}: {name}.toml cannot be overridden: {why}; remove it") if why else None


def packaged_names() -> list[str]:
    """The rule files kg ships (the names a `[rules.NAME]` table of kg.toml may name: `overridable` those it may
    override)."""
    return sorted(e.name[:-5] for e in resources.files("kg.rules").iterdir() if e.name.endswith(".toml"))


def overridable() -> list[str]:
    """The rule files a workspace may override (kg.toml `[rules.NAME]`, `--rules DIR`): all but `PACKAGE_ONLY`."""
    return [n for n in packaged_names() if n not in PACKAGE_ONLY]


def check_rules_dir(folder: Path) -> None:
    """`--rules DIR` names a folder whose every `*.toml` is a rule file kg ships: a missing folder, a file, or a
    misspelt file name (`lifecyle.toml`) was passed over in silence and the packaged rules applied."""
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise RulesError(f"--rules {folder} {what}: name a folder of rule files (lifecycle.toml, reflect.toml, ...)")
    known = packaged_names()
    for path in sorted(folder.glob("*.toml")):
        if refused := package_only(path.name[:-5], str(path)):
            raise refused
        if path.name[:-5] not in known:
            raise RulesError(f"{path}: not a rule file kg knows; rename it to one of "
                             f"{', '.join(n + '.toml' for n in overridable())}, or move it out of --rules {folder}")


def packaged(name: str) -> dict[str, Any]:
    entry = resources.files("kg.rules") / f"{name}.toml"
    return _read_toml(None, entry.read_text(encoding="utf-8"), f"rules/{name}.toml")


def merge(default: dict[str, Any], override: dict[str, Any], source: str, *, path: str = "",
          open_tables: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Deep-merge `override` onto `default`, refusing unknown keys and type changes."""
    given = RuleReader({k: v for k, v in override.items() if path or k not in _META_KEYS}, source, where=path)
    if path not in open_tables:
        given.known(sorted(k for k in default if k not in _META_KEYS))
    out = dict(default)
    for key, value in given.data.items():
        if key not in default:
            out[key] = value
        elif isinstance(default[key], dict):
            out[key] = merge(default[key], given.table(key).data, source, path=given.key(key),
                             open_tables=open_tables)
        elif _same_type(default[key], value):
            _same_items(given, key, default[key], value)
            out[key] = value
        else:
            raise given.fail(key, f"must be {_type_name(default[key])}, not {_type_name(value)}")
    return out


def _same_items(given: RuleReader, key: str, base: Any, value: Any) -> None:
    """A list overriding a packaged list whose items are all of one type holds items of that type: `[1]` for a list
    of phrases passed the type check and failed at use (`'int' object has no attribute 'lower'`)."""
    if not (isinstance(base, list) and isinstance(value, list) and base):
        return
    sample = base[0]
    if not all(_same_type(sample, item) for item in base):
        return
    for i, item in enumerate(value):
        if not _same_type(sample, item):
            raise given.fail(key, f"must be a list of {_plural(sample)}; item {i + 1} is {item!r}")


def _same_type(base: Any, value: Any) -> bool:
    if isinstance(base, bool) or isinstance(value, bool):
        return isinstance(base, bool) and isinstance(value, bool)
    if isinstance(base, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(base))


def _plural(value: Any) -> str:
    return {bool: "booleans", int: "numbers", float: "numbers", str: "strings", list: "lists",
            dict: "tables"}.get(type(value), type(value).__name__)


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class RuleSet:
    """All rule files for one workspace, loaded lazily by name."""

    rules_dir: Path | None = None
    workspace_overrides: dict[str, Any] = field(default_factory=dict)
    workspace_source: str = "kg.toml"

    def __post_init__(self) -> None:
        if self.rules_dir is not None:
            check_rules_dir(Path(self.rules_dir))

    def raw(self, name: str) -> dict[str, Any]:
        return self._cache_get(name)

    def _cache_get(self, name: str) -> dict[str, Any]:
        cache = self.__dict__.setdefault("_cache", {})
        if name not in cache:
            data = packaged(name)
            open_tables = frozenset(data.get("open_tables", []))
            if self.rules_dir is not None:
                candidate = self.rules_dir / f"{name}.toml"
                if candidate.exists():
                    data = merge(data, _read_toml(candidate, None, str(candidate)), str(candidate),
                                 open_tables=open_tables)
            if name in self.workspace_overrides:
                section = RuleReader(self.workspace_overrides, self.workspace_source, where="rules").table(name)
                data = merge(data, section.data, f"{self.workspace_source} [rules.{name}]", open_tables=open_tables)
            cache[name] = data
        return cache[name]

    @cached_property
    def policy(self) -> Policy:
        return self.checked("policy", Policy.from_mapping)

    def checked(self, name: str, build: Any) -> Any:
        """`build(self.raw(name))`, with an error about a value that came from an override worded to name
        where it came from (kg.toml or the --rules file), not only the packaged rules file."""
        data = self.raw(name)
        try:
            return build(data)
        except RulesError as exc:
            message = self.worded(str(exc))
            if message != str(exc):
                raise type(exc)(message) from None
            raise

    def worded(self, message: str) -> str:
        """A message about `rules/NAME.toml` (a builder names the packaged file) worded to name the override the
        value came from (kg.toml's [rules.NAME] or the --rules file); unchanged when NAME is not overridden."""
        if not message.startswith("rules/") or ".toml:" not in message:
            return message
        packaged_name = message[:message.index(".toml:") + 5]
        name = packaged_name[len("rules/"):-len(".toml")]
        overridden = []
        if name in self.workspace_overrides:
            overridden.append(f"{self.workspace_source} [rules.{name}]")
        if self.rules_dir is not None and (self.rules_dir / f"{name}.toml").exists():
            overridden.append(str(self.rules_dir / f"{name}.toml"))
        if not overridden:
            return message
        return f"{' / '.join(overridden)}{message[len(packaged_name):]} (checked against {packaged_name})"

    @cached_property
    def redactor(self):  # -> kg.redaction.redact.Redactor
        from kg.redaction.redact import Redactor, load_default

        overridden = self.rules_dir is not None and (self.rules_dir / "secrets.toml").exists()
        if not overridden and "secrets" not in self.workspace_overrides:
            return load_default()  # the packaged rules: parsed once per process, compiled as they are used
        try:
            return Redactor.from_mapping(self.raw("secrets"))
        except ValueError as exc:
            raise RulesError(str(exc)) from None


@dataclass(frozen=True)
class Policy:
    summary_max_chars: int
    field_max_chars: int
    list_max_items: int
    lock_timeout: float
    buffer_pool_mb: int
    min_free_mb: int
    background_max_queued: int
    drain_batch: int
    team_drain_batch: int
    reader_drain_seconds: float
    reader_leave_backlog: int
    applier_nice: int
    kinds: tuple[str, ...]
    priorities: tuple[str, ...]
    statuses: tuple[str, ...]
    sources: tuple[str, ...]
    categories: tuple[str, ...]
    reproducible: tuple[str, ...]
    complexity: tuple[str, ...]
    frequency: tuple[str, ...]
    entry_prefix: dict[str, str]
    default_priority: dict[str, str]
    default_source: dict[str, str]
    default_category: dict[str, str]
    node_prefix: dict[str, str]
    node_icon: dict[str, str]
    log_icon: dict[str, str]
    log_label: dict[str, str]
    bulk_batch: int = 64
    compact_factor: float = 2.0
    compact_floor_mb: int = 64
    full_pool_factor: float = 2.0
    full_pool_floor_mb: int = 1024

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Policy:
        r = RuleReader(data, "rules/policy.toml")
        policy = cls(
            summary_max_chars=r.whole("limits.summary_max_chars", 1, 1_000_000),
            field_max_chars=r.whole("limits.field_max_chars", 1, 100_000_000),
            list_max_items=r.whole("limits.list_max_items", 1, 100_000),
            lock_timeout=r.number("lock.timeout_seconds", 0, 86_400),
            buffer_pool_mb=_buffer_pool(r),
            min_free_mb=r.whole("store.min_free_mb", 0, 1_048_576),
            background_max_queued=r.whole("write.background_max_queued", 0, 1_000_000),
            drain_batch=r.whole("write.drain_batch", 1, 100_000),
            team_drain_batch=r.whole("write.team_drain_batch", 1, 100_000),
            reader_drain_seconds=r.number("write.reader_drain_seconds", 0, 86_400),
            reader_leave_backlog=r.whole("write.reader_leave_backlog", 0, 100_000_000),
            applier_nice=r.whole("write.applier_nice", 0, 19),
            kinds=r.strings("entries.kinds", empty=False, items="non-blank"),
            priorities=r.strings("entries.priorities", empty=False, items="non-blank"),
            statuses=r.strings("entries.statuses", empty=False, items="non-blank"),
            sources=r.strings("entries.sources", empty=False, items="non-blank"),
            categories=r.strings("entries.categories", empty=False, items="non-blank"),
            reproducible=r.strings("entries.reproducible", empty=False, items="non-blank"),
            complexity=r.strings("entries.complexity", empty=False, items="non-blank"),
            frequency=r.strings("entries.frequency", empty=False, items="non-blank"),
            entry_prefix=dict(r.get("entries.prefix")),
            default_priority=dict(r.get("entries.default_priority")),
            default_source=dict(r.get("entries.default_source")),
            default_category=dict(r.get("entries.default_category")),
            node_prefix=dict(r.get("nodes.prefix")),
            node_icon=dict(r.get("nodes.icon")),
            log_icon=dict(r.get("daily_log.icon")),
            log_label=dict(r.get("daily_log.label")),
            bulk_batch=r.whole("write.bulk_batch", 1, 100_000, default=64),
            compact_factor=r.number("store.compact_factor", 1.1, 1000, default=2.0),
            compact_floor_mb=r.whole("store.compact_floor_mb", 0, 1_048_576, default=64),
            full_pool_factor=r.number("store.full_pool_factor", 1, 64, default=2.0),
            full_pool_floor_mb=r.whole("store.full_pool_floor_mb", 0, 1_048_576, default=1024),
        )
        for kind in policy.kinds:
            for attr, key in (("entry_prefix", "prefix"), ("default_priority", "default_priority"),
                              ("default_source", "default_source"), ("default_category", "default_category")):
                if kind not in getattr(policy, attr):
                    raise r.fail(f"entries.{key}", f"has no value for {kind!r}; every kind in entries.kinds "
                                                   "needs one")
        return policy


POOL_MIN_MB = 256  # measured on the 100k bench graph: 16 MB cannot open it; 32-128 MB open it, yet apply no entry


def _buffer_pool(r: RuleReader) -> int:
    """`store.buffer_pool_mb`, with the reason for its floor when a value is below it."""
    value = r.whole("store.buffer_pool_mb", 1, 1_048_576)
    if value < POOL_MIN_MB:
        raise r.fail("store.buffer_pool_mb", f"must be at least {POOL_MIN_MB} (MB), not {value}: with less, "
                     "Kùzu 0.11.3 cannot apply an entry to a 100k-entry graph (\"the buffer pool is full\"), and a "
                     "CHECKPOINT that failed that way left a 1M graph that would not reopen; remove the line to "
                     "keep the default (1024)")
    return value
