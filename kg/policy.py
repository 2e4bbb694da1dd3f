"""Rules are data: this module loads `rules/*.toml`, applies a workspace's overrides, validates them, and
hands out frozen policy objects. Pure decisions elsewhere take these objects as arguments.

Overrides come from the workspace's `kg.toml` (`[rules.NAME]` tables) and from `--rules DIR` (a `NAME.toml`
there). An override may only set keys that the packaged file has, with a value of the same type, except inside
tables the packaged file lists in its top-level `open_tables` (for example user-defined topics).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from kg.errors import RulesError

_META_KEYS = {"open_tables"}


def _read_toml(path: Path | None, text: str | None, source: str) -> dict[str, Any]:
    try:
        if text is None:
            assert path is not None
            text = path.read_text(encoding="utf-8")
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise RulesError(f"{source}: not UTF-8 text") from None
    except OSError as exc:
        raise RulesError(f"{source}: cannot read: {exc.strerror}") from None


def packaged(name: str) -> dict[str, Any]:
    entry = resources.files("kg.rules") / f"{name}.toml"
    return _read_toml(None, entry.read_text(encoding="utf-8"), f"rules/{name}.toml")


def merge(default: dict[str, Any], override: dict[str, Any], source: str, *, path: str = "",
          open_tables: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Deep-merge `override` onto `default`, refusing unknown keys and type changes."""
    out = dict(default)
    for key, value in override.items():
        dotted = f"{path}.{key}" if path else key
        if key in _META_KEYS and not path:
            continue
        if key not in default:
            if path in open_tables:
                out[key] = value
                continue
            known = ", ".join(sorted(k for k in default if k not in _META_KEYS)) or "none"
            raise RulesError(f"{source}: unknown key {dotted!r} (known keys here: {known})")
        base = default[key]
        if isinstance(base, dict):
            if not isinstance(value, dict):
                raise RulesError(f"{source}: key {dotted!r} must be a table")
            out[key] = merge(base, value, source, path=dotted, open_tables=open_tables)
        else:
            if not _same_type(base, value):
                raise RulesError(f"{source}: key {dotted!r} must be {_type_name(base)}, "
                                 f"not {_type_name(value)}")
            out[key] = value
    return out


def _same_type(base: Any, value: Any) -> bool:
    if isinstance(base, bool) or isinstance(value, bool):
        return isinstance(base, bool) and isinstance(value, bool)
    if isinstance(base, (int, float)):
        return isinstance(value, (int, float))
    return isinstance(value, type(base))


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list",
            dict: "a table"}.get(type(value), type(value).__name__)


@dataclass(frozen=True)
class RuleSet:
    """All rule files for one workspace, loaded lazily by name."""

    rules_dir: Path | None = None
    workspace_overrides: dict[str, Any] = field(default_factory=dict)
    workspace_source: str = "kg.toml"

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
            section = self.workspace_overrides.get(name)
            if section is not None:
                if not isinstance(section, dict):
                    raise RulesError(f"{self.workspace_source}: [rules.{name}] must be a table")
                data = merge(data, section, f"{self.workspace_source} [rules.{name}]", open_tables=open_tables)
            cache[name] = data
        return cache[name]

    @cached_property
    def policy(self) -> Policy:
        return Policy.from_mapping(self.raw("policy"))

    @cached_property
    def redactor(self):  # -> kg.redact.Redactor
        from kg.redact import Redactor

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
    background_max_queued: int
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

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Policy:
        source = "rules/policy.toml"
        try:
            entries = data["entries"]
            policy = cls(
                summary_max_chars=int(data["limits"]["summary_max_chars"]),
                field_max_chars=int(data["limits"]["field_max_chars"]),
                list_max_items=int(data["limits"]["list_max_items"]),
                lock_timeout=float(data["lock"]["timeout_seconds"]),
                buffer_pool_mb=int(data["store"]["buffer_pool_mb"]),
                background_max_queued=int(data["write"]["background_max_queued"]),
                kinds=tuple(entries["kinds"]),
                priorities=tuple(entries["priorities"]),
                statuses=tuple(entries["statuses"]),
                sources=tuple(entries["sources"]),
                categories=tuple(entries["categories"]),
                reproducible=tuple(entries["reproducible"]),
                complexity=tuple(entries["complexity"]),
                frequency=tuple(entries["frequency"]),
                entry_prefix=dict(entries["prefix"]),
                default_priority=dict(entries["default_priority"]),
                default_source=dict(entries["default_source"]),
                default_category=dict(entries["default_category"]),
                node_prefix=dict(data["nodes"]["prefix"]),
                node_icon=dict(data["nodes"]["icon"]),
                log_icon=dict(data["daily_log"]["icon"]),
                log_label=dict(data["daily_log"]["label"]),
            )
        except KeyError as exc:
            raise RulesError(f"{source}: missing key {exc.args[0]!r}") from None
        for kind in policy.kinds:
            for attr, key in (("entry_prefix", "prefix"), ("default_priority", "default_priority"),
                              ("default_source", "default_source"), ("default_category", "default_category")):
                if kind not in getattr(policy, attr):
                    raise RulesError(f"{source}: entries.{key} has no value for {kind!r}")
        if (policy.summary_max_chars < 1 or policy.lock_timeout < 0 or policy.buffer_pool_mb < 16
                or policy.background_max_queued < 0):
            raise RulesError(f"{source}: limits must be positive")
        return policy
