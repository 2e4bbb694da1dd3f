"""Validating and normalising a structured entry before anything is written. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kg.core.errors import UsageError
from kg.core.policy import Policy
from kg.core.text import clean, index_tokens, split_list

TEXT_FIELDS = ("details", "action", "error_text", "context", "user_context")
LIST_FIELDS = ("files", "tags")
CHOICE_FIELDS = {
    "priority": "priorities",
    "source": "sources",
    "category": "categories",
    "reproducible": "reproducible",
    "complexity": "complexity",
    "frequency": "frequency",
}


FLAGS = {"error_text": "--error"}  # kg log's flag of a field, where it is not the field's name with dashes


class TooLong(UsageError):
    """A text field over `limits.field_max_chars`. Said as `kg log` names it (its flag); a caller that takes the
    field by another name (`kg ingest`'s JSON key, the MCP tool's argument) says it by that name (`said`)."""

    def __init__(self, field: str, size: int, limit: int):
        self.field, self.size, self.limit = field, size, limit
        super().__init__(self.said(FLAGS.get(field, f"--{field.replace('_', '-')}")))

    def said(self, name: str) -> str:
        return (f"{name} is {self.size:,} characters; the limit is {self.limit:,} (rules: limits.field_max_chars): "
                "keep the part that says what happened (the first and last lines of a long output)")


@dataclass(frozen=True)
class Prepared:
    """An entry ready for the journal: every field cleaned, checked and redacted."""

    fields: dict[str, Any]
    redactions: tuple[str, ...]


def choice(value: str | None, allowed: Iterable[str], what: str) -> str | None:
    if value is None:
        return None
    normal = value.strip().lower().replace("-", "_")
    allowed = tuple(allowed)
    if normal not in allowed:
        raise UsageError(f"unknown {what} {value!r}: use one of {', '.join(allowed)}")
    return normal


def _json_type(value: Any) -> str:
    """What a JSON value is, in JSON's words: `kg ingest` and `kg import` read entries from JSON."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    return "null" if value is None else type(value).__name__


def list_field(value: Any, what: str) -> str | list[str] | None:
    """A list field (files, tags) as given: a list of texts, or one text of comma-separated items as `kg log
    --tags a,b` takes it (split by `prepare` after redaction, so a secret is matched whole). Anything else is
    refused naming the field: iterating a string stored "alpha,beta" as ten one-letter tags, and an object as
    its keys (QA3 #3)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        bad = [v for v in value if not isinstance(v, str)]
        if not bad:
            return list(value)
        raise UsageError(f"{what} holds {_json_type(bad[0])}: give a list of texts such as [\"a\", \"b\"], or one "
                         "text \"a,b\"")
    raise UsageError(f"{what} is {_json_type(value)}: give a list of texts such as [\"a\", \"b\"], or one text "
                     "\"a,b\"")


def slug_field(value: str | None, what: str) -> str | None:
    if value is None:
        return None
    text = clean(value, one_line=True).lower()
    if not text:
        return None
    if len(text) > 200:
        raise UsageError(f"{what} is too long ({len(text)} characters, at most 200)")
    return text


def prepare(policy: Policy, redactor: Any, kind: str, summary: str, *, now: datetime,
            session: str | None = None, **fields: Any) -> Prepared:
    """Check an entry against the rules and redact it. Raises UsageError saying what to fix.

    Redaction comes first, on the raw values: a secret cut at a length limit, lowercased into a slug or split
    into index tokens would no longer be recognised."""
    for name in LIST_FIELDS:
        if name in fields:
            fields[name] = list_field(fields[name], name)
    gated, kinds = redactor.redact_many({"summary": summary, "session": session,
                                         **{k: v for k, v in fields.items() if k not in CHOICE_FIELDS}})
    summary, session = gated.pop("summary"), gated.pop("session")
    fields.update(gated)
    kind = choice(kind, policy.kinds, "entry kind") or ""
    summary_clean = clean(summary or "", one_line=True)
    if not summary_clean:
        raise UsageError("the summary is empty: say in one line what happened")
    if len(summary_clean) > policy.summary_max_chars:
        raise UsageError(
            f"the summary is {len(summary_clean):,} characters; the limit is {policy.summary_max_chars:,} "
            "(rules: limits.summary_max_chars). Keep it to one line and put the rest in --details"
        )
    out: dict[str, Any] = {"entry_type": kind, "text": summary_clean}
    for name in TEXT_FIELDS:
        value = fields.pop(name, None)
        if value is not None:
            value = clean(value)
            if len(value) > policy.field_max_chars:
                raise TooLong(name, len(value), policy.field_max_chars)
        out[name] = value or None
    for name, table in CHOICE_FIELDS.items():
        out[name] = choice(fields.pop(name, None), getattr(policy, table), name)
    out["priority"] = out["priority"] or policy.default_priority[kind]
    out["source"] = out["source"] or policy.default_source[kind]
    out["category"] = out["category"] or policy.default_category[kind]
    out["area"] = slug_field(fields.pop("area", None), "area")
    out["pattern_key"] = slug_field(fields.pop("pattern_key", None), "pattern key")
    out["session"] = clean(session, one_line=True) if session else None
    for name in LIST_FIELDS:
        given = fields.pop(name, None) or ()
        given = split_list(given) if isinstance(given, str) else given
        items = [clean(v, one_line=True) for v in given]
        items = [v for v in items if v]
        if len(items) > policy.list_max_items:
            raise UsageError(f"too many {name} ({len(items)}, at most {policy.list_max_items})")
        out[name] = items
    status = choice(fields.pop("status", None), policy.statuses, "status")
    out["status"] = status or "pending"
    if fields:
        known = [*TEXT_FIELDS, *CHOICE_FIELDS, "area", "pattern_key", *LIST_FIELDS, "status"]
        raise UsageError(f"unknown field(s): {', '.join(sorted(fields))}; an entry takes kind, summary, "
                         f"{', '.join(known)} (error_text is `kg log --error`)")
    # Closed vocabularies (kind, priority, status, ...) were checked against the rules and cannot hold a
    # secret; every free-text field was redacted above, before it was cleaned, cut or lowercased.
    redacted = out
    # every free-text field is searchable (a QA pass: --context and --user-context were stored, never found)
    redacted["tokens"] = index_tokens(redacted["text"], *(redacted.get(f) for f in TEXT_FIELDS),
                                      " ".join(redacted.get("tags") or ()))
    redacted["created_at"] = now.isoformat(timespec="seconds")
    return Prepared(redacted, tuple(kinds))


def problems(policy: Policy, redactor: Any, kind: Any, summary: Any, *, now: datetime, **fields: Any) -> list[str]:
    """Every reason `prepare` would refuse this entry, one message each, where `prepare` names the first: for a
    caller that names all its bad arguments at once (the MCP `log` tool). Empty when `prepare` takes it. A field
    that is no text of the kind asked for is left to the caller's own schema check."""

    def refused(k: Any, s: Any, **f: Any) -> str | None:
        try:
            prepare(policy, redactor, k, s, now=now, **f)
        except TooLong as exc:  # the MCP tool's argument is the field's own name (error_text)
            return exc.said(exc.field)
        except UsageError as exc:
            return str(exc)
        except (TypeError, AttributeError, ValueError):
            return None
        return None

    if refused(kind, summary, **fields) is None:
        return []
    found = []
    try:
        choice(kind if isinstance(kind, str) else None, policy.kinds, "entry kind")
    except UsageError as exc:
        found.append(str(exc))
    good = kind if not found and isinstance(kind, str) else next(iter(policy.kinds))
    parts: list[tuple[Any, dict[str, Any]]] = [(summary, {})] + [("x", {k: v}) for k, v in fields.items()]
    found += [why for s, f in parts if (why := refused(good, s, **f)) is not None]
    return list(dict.fromkeys(found))
