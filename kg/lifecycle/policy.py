"""The lifecycle's rules as frozen, validated objects, built from `rules/lifecycle.toml` (plus overrides).

Every pure decision in `kg.lifecycle` takes one of these; no number lives in code. A malformed rule file fails
here with a `RulesError` naming the file, the key and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kg.errors import RulesError

SOURCE = "rules/lifecycle.toml"
APPLY_MODES = ("auto", "propose", "ask")
FORMATS = ("list", "document")
NODE_KINDS = ("principle", "knowledge")
CLASSIFY_FIELDS = ("category", "area", "entry_type", "tags")


@dataclass(frozen=True)
class Promotion:
    min_recurrence: int
    min_sessions: int
    window_days: int
    ignore_event_statuses: tuple[str, ...]
    prefer_action: bool
    max_text_chars: int
    hypothesis: str


@dataclass(frozen=True)
class Proposals:
    high_impact_recurrence: int
    high_impact_priorities: tuple[str, ...]
    critical_priorities: tuple[str, ...]
    max_pending_critical: int


@dataclass(frozen=True)
class ClassifyRule:
    target: str
    category: tuple[str, ...] | None = None
    area: tuple[str, ...] | None = None
    entry_type: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Target:
    name: str
    file: str
    block: str
    section: str
    format: str
    apply: str
    node: str
    change: str
    risk: str
    effort: str


@dataclass(frozen=True)
class MemoryExport:
    file: str
    block: str
    section: str
    preferences_file: str
    preferences_key: str


@dataclass(frozen=True)
class Verification:
    first_check_days: int
    monitor_days: int
    extend_days: int
    baseline_days: int
    min_baseline_days: int
    confirm_max_ratio: float
    ineffective_min_ratio: float
    worse_min_ratio: float
    min_after_events: int
    critical_priority: str


@dataclass(frozen=True)
class Overdue:
    grace_days: int
    extend_days: int
    revert_days: int


@dataclass(frozen=True)
class Decay:
    demote_days: int
    stale_days: int
    expire_days: int
    kinds: tuple[str, ...]
    statuses: tuple[str, ...]
    expired_status: str


@dataclass(frozen=True)
class Conflicts:
    recurrence_weight: int
    recency_max: int
    default_priority: str
    kinds: tuple[str, ...]
    on_tie: str
    max_detect: int
    opposite_pairs: tuple[tuple[str, str], ...]
    negations: tuple[str, ...]
    min_shared_words: int
    base_priority: dict[str, int]
    area_weight: dict[str, int]


@dataclass(frozen=True)
class LifecyclePolicy:
    promotion: Promotion
    proposals: Proposals
    classify: tuple[ClassifyRule, ...]
    targets: dict[str, Target]
    memory: MemoryExport
    verification: Verification
    overdue: Overdue
    decay: Decay
    conflicts: Conflicts
    priorities: tuple[str, ...] = ("critical", "high", "medium", "low")

    @classmethod
    def from_mapping(cls, data: dict[str, Any], *, priorities: tuple[str, ...] | None = None,
                     source: str = SOURCE) -> LifecyclePolicy:
        return _build(data, priorities or ("critical", "high", "medium", "low"), source)


def _fail(source: str, key: str, reason: str) -> RulesError:
    return RulesError(f"{source}: {key}: {reason}")


def _get(data: dict[str, Any], dotted: str, source: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise _fail(source, dotted, "missing")
        node = node[part]
    return node


def _int(data: dict[str, Any], dotted: str, source: str, minimum: int = 0) -> int:
    value = _get(data, dotted, source)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise _fail(source, dotted, f"must be a whole number, not {value!r}")
    if value < minimum:
        raise _fail(source, dotted, f"must be at least {minimum}, not {value}")
    return int(value)


def _float(data: dict[str, Any], dotted: str, source: str) -> float:
    value = _get(data, dotted, source)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise _fail(source, dotted, f"must be a number ≥ 0, not {value!r}")
    return float(value)


def _str(data: dict[str, Any], dotted: str, source: str, allowed: tuple[str, ...] | None = None) -> str:
    value = _get(data, dotted, source)
    if not isinstance(value, str):
        raise _fail(source, dotted, f"must be a string, not {value!r}")
    if allowed is not None and value not in allowed:
        raise _fail(source, dotted, f"must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _strs(data: dict[str, Any], dotted: str, source: str) -> tuple[str, ...]:
    value = _get(data, dotted, source)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(source, dotted, "must be a list of strings")
    return tuple(value)


def _build(data: dict[str, Any], priorities: tuple[str, ...], source: str) -> LifecyclePolicy:
    s = source
    promotion = Promotion(
        min_recurrence=_int(data, "promotion.min_recurrence", s, 1),
        min_sessions=_int(data, "promotion.min_sessions", s, 1),
        window_days=_int(data, "promotion.window_days", s, 1),
        ignore_event_statuses=_strs(data, "promotion.ignore_event_statuses", s),
        prefer_action=bool(_get(data, "promotion.prefer_action", s)),
        max_text_chars=_int(data, "promotion.max_text_chars", s, 20),
        hypothesis=_str(data, "promotion.hypothesis", s),
    )
    proposals = Proposals(
        high_impact_recurrence=_int(data, "proposals.high_impact_recurrence", s, 1),
        high_impact_priorities=_strs(data, "proposals.high_impact_priorities", s),
        critical_priorities=_strs(data, "proposals.critical_priorities", s),
        max_pending_critical=_int(data, "proposals.max_pending_critical", s, 1),
    )
    targets: dict[str, Target] = {}
    raw_targets = _get(data, "targets", s)
    if not isinstance(raw_targets, dict) or not raw_targets:
        raise _fail(s, "targets", "must be a table of targets")
    for name, t in raw_targets.items():
        if not isinstance(t, dict):
            raise _fail(s, f"targets.{name}", "must be a table")
        key = f"targets.{name}"
        fields = {k: _str(data, f"{key}.{k}", s) for k in
                  ("file", "block", "section", "format", "apply", "node", "change", "risk", "effort")}
        unknown = set(t) - set(fields)
        if unknown:
            raise _fail(s, f"{key}.{min(unknown)}", "unknown key")
        _str(data, f"{key}.format", s, FORMATS)
        _str(data, f"{key}.apply", s, APPLY_MODES)
        _str(data, f"{key}.node", s, NODE_KINDS)
        if not fields["file"] or fields["file"].startswith("/") or ".." in fields["file"].split("/"):
            raise _fail(s, f"{key}.file", "must be a path inside the workspace")
        if not fields["block"].replace("-", "").replace("_", "").isalnum():
            raise _fail(s, f"{key}.block", "must be letters, digits, '-' or '_'")
        targets[name] = Target(name=name, **fields)
    rules = _get(data, "classify", s)
    if not isinstance(rules, list) or not rules:
        raise _fail(s, "classify", "must be a list of [[classify]] rules")
    classify = []
    for i, rule in enumerate(rules):
        key = f"classify[{i}]"
        if not isinstance(rule, dict) or "target" not in rule:
            raise _fail(s, key, "needs a target")
        unknown = set(rule) - {"target", *CLASSIFY_FIELDS}
        if unknown:
            raise _fail(s, f"{key}.{min(unknown)}", f"unknown condition (use {', '.join(CLASSIFY_FIELDS)})")
        if rule["target"] not in targets:
            raise _fail(s, f"{key}.target", f"unknown target {rule['target']!r} (targets: {', '.join(targets)})")
        conds = {}
        for f in CLASSIFY_FIELDS:
            if f in rule:
                if not isinstance(rule[f], list) or not all(isinstance(v, str) for v in rule[f]):
                    raise _fail(s, f"{key}.{f}", "must be a list of strings")
                conds[f] = tuple(v.lower() for v in rule[f])
        classify.append(ClassifyRule(target=rule["target"], **conds))
    if any(getattr(classify[-1], f) is not None for f in CLASSIFY_FIELDS):
        raise _fail(s, f"classify[{len(classify) - 1}]", "the last rule must have no conditions (the default)")
    memory = MemoryExport(
        file=_str(data, "memory.file", s), block=_str(data, "memory.block", s),
        section=_str(data, "memory.section", s), preferences_file=_str(data, "memory.preferences_file", s),
        preferences_key=_str(data, "memory.preferences_key", s),
    )
    v = Verification(
        first_check_days=_int(data, "verification.first_check_days", s, 1),
        monitor_days=_int(data, "verification.monitor_days", s, 1),
        extend_days=_int(data, "verification.extend_days", s, 1),
        baseline_days=_int(data, "verification.baseline_days", s, 1),
        min_baseline_days=_int(data, "verification.min_baseline_days", s, 1),
        confirm_max_ratio=_float(data, "verification.confirm_max_ratio", s),
        ineffective_min_ratio=_float(data, "verification.ineffective_min_ratio", s),
        worse_min_ratio=_float(data, "verification.worse_min_ratio", s),
        min_after_events=_int(data, "verification.min_after_events", s, 1),
        critical_priority=_str(data, "verification.critical_priority", s, priorities),
    )
    if not v.confirm_max_ratio < v.ineffective_min_ratio <= v.worse_min_ratio:
        raise _fail(s, "verification", "needs confirm_max_ratio < ineffective_min_ratio ≤ worse_min_ratio")
    if v.min_baseline_days > v.baseline_days:
        raise _fail(s, "verification.min_baseline_days", "must not exceed baseline_days")
    o = Overdue(grace_days=_int(data, "overdue.grace_days", s, 0),
                extend_days=_int(data, "overdue.extend_days", s, 0),
                revert_days=_int(data, "overdue.revert_days", s, 1))
    if not o.grace_days <= o.extend_days <= o.revert_days:
        raise _fail(s, "overdue", "needs grace_days ≤ extend_days ≤ revert_days")
    d = Decay(demote_days=_int(data, "decay.demote_days", s, 1), stale_days=_int(data, "decay.stale_days", s, 1),
              expire_days=_int(data, "decay.expire_days", s, 1), kinds=_strs(data, "decay.kinds", s),
              statuses=_strs(data, "decay.statuses", s), expired_status=_str(data, "decay.expired_status", s))
    if not d.demote_days <= d.stale_days <= d.expire_days:
        raise _fail(s, "decay", "needs demote_days ≤ stale_days ≤ expire_days")
    pairs = _get(data, "conflicts.opposite_pairs", s)
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 and
                                              all(isinstance(x, str) for x in p) for p in pairs):
        raise _fail(s, "conflicts.opposite_pairs", "must be a list of [word, opposite] pairs")
    base = _get(data, "conflicts.base_priority", s)
    for p in priorities:
        _int(data, f"conflicts.base_priority.{p}", s)
    areas = _get(data, "conflicts.area_weight", s)
    if not isinstance(areas, dict):
        raise _fail(s, "conflicts.area_weight", "must be a table of area = weight")
    for a in areas:
        _int(data, f"conflicts.area_weight.{a}", s)
    c = Conflicts(
        recurrence_weight=_int(data, "conflicts.recurrence_weight", s),
        recency_max=_int(data, "conflicts.recency_max", s),
        default_priority=_str(data, "conflicts.default_priority", s, priorities),
        kinds=_strs(data, "conflicts.kinds", s),
        on_tie=_str(data, "conflicts.on_tie", s, ("hold_both", "keep_both")),
        max_detect=_int(data, "conflicts.max_detect", s, 2),
        opposite_pairs=tuple((a.lower(), b.lower()) for a, b in pairs),
        negations=tuple(n.lower() for n in _strs(data, "conflicts.negations", s)),
        min_shared_words=_int(data, "conflicts.min_shared_words", s, 1),
        base_priority={k: int(base[k]) for k in priorities},
        area_weight={k.lower(): int(w) for k, w in areas.items()},
    )
    return LifecyclePolicy(promotion=promotion, proposals=proposals, classify=tuple(classify), targets=targets,
                           memory=memory, verification=v, overdue=o, decay=d, conflicts=c,
                           priorities=priorities)


def load(ws: Any) -> LifecyclePolicy:
    """The lifecycle policy of a workspace (packaged rules + its overrides)."""
    cache = ws.__dict__.setdefault("_lifecycle_policy", None)
    if cache is None:
        cache = LifecyclePolicy.from_mapping(ws.rules.raw("lifecycle"), priorities=tuple(ws.policy.priorities))
        ws.__dict__["_lifecycle_policy"] = cache
    return cache
