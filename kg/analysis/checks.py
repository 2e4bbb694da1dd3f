"""The analyst's arguments, checked at the call: a wrong one is refused naming it and what it accepts
(`ArgumentError`: kg's usage error, and a ValueError to Python), instead of a TypeError from deep inside networkx,
or an empty answer that reads as "nothing found" (`central(kinds="principal")`, `error_timeline(by="areas")`)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import networkx as nx

from kg.core.errors import ArgumentError


def whole(name: str, value: Any, *, minimum: int = 0, optional: bool = False, flag: str | None = None) -> Any:
    """A whole number of at least `minimum` (None too when `optional`). `flag` is the command's option that
    passes it (`--top`): the CLI says the command's own words, `--top must be at least 1`."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        also = " or None" if optional else ""
        raise ArgumentError(f"{name} must be a whole number, at least {minimum}{also} (got {value!r})",
                            cli=f"{flag} must be at least {minimum}" if flag else None)
    return value


def names(name: str, value: Any, allowed: Iterable[str], *, what: str = "kind") -> tuple[str, ...]:
    """One name or several (text, comma-separated, or a list), each one of `allowed`; a plural is taken for its
    singular (`principles`). Text is one argument, never its letters: `kinds="principle"` is one kind."""
    choices = tuple(allowed)
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        raise ArgumentError(f"{name} must be a {what} name or a list of them, one or more of {', '.join(choices)} "
                            f"(got {value!r})")
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ArgumentError(f"{name} holds {item!r}: give {what} names, one or more of {', '.join(choices)}")
        word = item.strip().lower()
        if not word:
            continue
        if word not in choices and word.endswith("s") and word[:-1] in choices:
            word = word[:-1]
        if word not in choices:
            raise ArgumentError(f"{name}: unknown {what} {item!r}: use one or more of {', '.join(choices)}")
        out.append(word)
    if not out:
        raise ArgumentError(f"{name} names no {what}: use one or more of {', '.join(choices)}")
    return tuple(dict.fromkeys(out))


def one_name(name: str, value: Any, allowed: Iterable[str], *, what: str = "kind", optional: bool = False) -> Any:
    """One of `allowed` (a plural taken for its singular; None too when `optional`)."""
    if value is None and optional:
        return None
    choices = tuple(allowed)
    found = names(name, value, choices, what=what) if isinstance(value, str) else ()
    if len(found) != 1:
        also = ", or None for all" if optional else ""
        raise ArgumentError(f"{name} must be one {what}: one of {', '.join(choices)}{also} (got {value!r})")
    return found[0]


def when(name: str, value: Any) -> Any:
    """A time to judge at: None (KG_NOW, else the clock), a datetime, or ISO text; given back as it came. kg's
    clock says what is wrong with it (a UsageError, which is no ValueError: QA #10 `load(now="2026-13-01")`), and
    a number reached `.strip()` (a bare AttributeError)."""
    from kg.core import clock
    from kg.core.errors import UsageError

    if value is not None and not isinstance(value, (str, datetime)):
        raise ArgumentError(f"{name} must be a datetime or an ISO 8601 date or time such as 2026-11-30T10:35:00, "
                            f"or None for now (got {value!r})")
    try:
        clock.now(value)
    except UsageError as exc:
        raise ArgumentError(str(exc)) from None  # ("invalid --now '...'": kg's words for it everywhere)
    return value


def graph_of(value: Any, name: str = "graph") -> nx.Graph:
    """The networkx graph to work on: a graph, or an Analysis (its `.graph`)."""
    if isinstance(value, nx.Graph):
        return value
    inner = getattr(value, "graph", None)
    if isinstance(inner, nx.Graph):
        return inner
    raise ArgumentError(f"{name} must be a networkx graph: an Analysis (kg.analysis.load(...)), its .graph, or "
                        f"kg.analysis.to_networkx(...) (got {type(value).__name__})")


def column(name: str, value: Any, graph: nx.Graph, kind: str) -> str:
    """A node attribute that the graph's nodes of `kind` have (any, when there are none yet)."""
    held = sorted({k for _, a in graph.nodes(data=True) if a.get("kind") == kind for k in a})
    if not isinstance(value, str) or (held and value not in held):
        raise ArgumentError(f"{name} must name a field of the {kind} nodes: one of {', '.join(held)} (got {value!r})")
    return value


def table_of(value: Any, name: str = "table") -> Any:
    """A `Table` to draw (what `error_timeline` and `recurrence` return)."""
    from kg.analysis.timelines import Table

    if not isinstance(value, Table):
        raise ArgumentError(f"{name} must be a Table, as a.error_timeline(...) or a.recurrence(...) returns "
                            f"(got {type(value).__name__})")
    return value


def rows_of(value: Any, name: str, made_by: str, *, keys: Iterable[str] = (),
            one_of: Iterable[str] = ()) -> list[dict[str, Any]]:
    """A list of rows (dicts), as `made_by` returns them, each with every one of `keys` and one of `one_of`
    (the fields the drawing reads: a row without one was a bare KeyError from inside it, QA8 #2)."""
    if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
        raise ArgumentError(f"{name} must be the list of rows {made_by} returns (got {type(value).__name__})")
    needed, either = tuple(keys), tuple(one_of)
    for i, row in enumerate(value):
        missing = [k for k in needed if k not in row]
        if either and not any(k in row for k in either):
            missing.append(" or ".join(either))
        if missing:
            raise ArgumentError(f"{name}[{i}] has no {', '.join(missing)}: give the rows {made_by} returns "
                                f"(it has {', '.join(map(str, row)) or 'no fields'})")
    return value
