"""The lifecycle's rules as frozen, validated objects, built from `rules/lifecycle.toml` (plus overrides).

Every pure decision in `kg.lifecycle` takes one of these; no number lives in code. A malformed rule file fails
here with a `RulesError` naming the file, the key and the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kg.core.policy import RuleReader
from kg.core.text import stem

SOURCE = "rules/lifecycle.toml"
APPLY_MODES = ("auto", "propose", "ask")
FORMATS = ("list", "document")
NODE_KINDS = ("principle", "knowledge")
CLASSIFY_FIELDS = ("category", "area", "entry_type", "tags")
SCOPES = ("team", "workspace")  # on a team graph: every workspace renders the rule, or only the one that made it
TARGET_FIELDS = ("file", "block", "section", "format", "apply", "node", "change", "risk", "effort", "scope")
TARGET_CHOICES = {"format": FORMATS, "apply": APPLY_MODES, "node": NODE_KINDS, "scope": SCOPES}


@dataclass(frozen=True)
class Promotion:
    min_recurrence: int
    min_sessions: int
    window_days: int
    ignore_event_statuses: tuple[str, ...]
    prefer_action: bool
    max_text_chars: int
    hypothesis: str
    # [pattern, replacement] pairs that turn one occurrence's wording into the recurring lesson's (paths to
    # their file name, ids dropped), applied in order to the rule text; the evidence keeps the instances
    generalise: tuple[tuple[re.Pattern[str], str], ...] = ()
    # a pattern whose events carry one of these tags (tool failures) becomes a rule only when its text says what
    # to do (matches one of `instruction`); otherwise it waits for a logged fix
    needs_instruction_tags: tuple[str, ...] = ()
    instruction: tuple[re.Pattern[str], ...] = ()


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
    scope: str = "team"


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
    confirm_max_ratio: float
    ineffective_min_ratio: float
    worse_min_ratio: float
    worse_min_posterior: float
    error_rate: float
    baseline_half_life_days: float
    max_per_day: int
    monitor_error_rate: float
    prior_min_changes: int
    prior_max_events: float
    critical_priority: str
    revert_min_ratio: float = 0.5
    revert_error_rate: float = 0.05
    boundary_ratio: float = 0.6325
    min_expected: float = 0.0
    min_baseline_events: float = 0.0
    min_baseline_days: float = 0.0
    unobserved_gap_days: float = 0.0
    deadline_revert_posterior: float = 0.5
    effect_prior: bool = False
    effect_prior_min_changes: int = 8
    effect_prior_strength: float = 2.0
    burst_quantile: float = 0.0
    mix_strength: float = 0.0
    mix_reference: float = 0.6
    leave_out_trigger: bool = True
    check_max_before: float = 0.0
    check_after_days: int = 56
    check_max_out: int = 0
    check_days: int = 14
    check_at_deadline: bool = True
    check_revert_posterior: float = 0.5
    check_revert_ratio: float = 0.6325
    check_max_per_change: int = 1
    check_back_level: float = 0.0
    check_look_days: int = 1
    check_doubtful: bool = False
    check_lopsided: float = 0.0
    check_lopsided_posterior: float = 0.5
    thin_deadline_events: float = 0.0
    mix_source: str = "verdicts"
    relapse_reference: float = 0.1
    prior_source: str = "changes"
    pool_retries: bool = False
    trigger_window: str = "counted"
    dispersion_strength: float = 0.0
    dispersion_max: float = 4.0


@dataclass(frozen=True)
class Recovery:
    cooldown_days: int
    min_recurrence: int
    min_sessions: int
    min_posterior: float
    max_ratio: float = 0.6325
    max_tries: int = 1
    retry_below: float = 0.95
    max_returns: int = 0
    max_per_day: int = 0   # a relapse's day cap (0: verification.max_per_day)


@dataclass(frozen=True)
class Budget:
    per_file_per_cycle: int
    max_block_lines: int
    max_block_chars: int
    max_examined: int


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
    keep_categories: tuple[str, ...] = ()
    revive_kinds: tuple[str, ...] = ()
    revive_recurrence: int = 1
    revived_status: str = "active"


@dataclass(frozen=True)
class Conflicts:
    recurrence_weight: int
    recency_max: int
    default_priority: str
    kinds: tuple[str, ...]
    on_tie: str
    tie_keeps_confirmed: bool
    max_detect: int
    opposite_pairs: tuple[tuple[str, str], ...]
    negations: tuple[str, ...]
    negation_skip: frozenset[str]
    negation_adverb_suffix: str
    negation_cjk_window: int
    negation_cjk_skip: tuple[str, ...]
    cjk_function_words: tuple[str, ...]
    cjk_latin_min_chars: int
    min_shared_words: int
    opposite_min_shared: int
    topic_stoplist: frozenset[str]
    own_subject_pairs: frozenset[tuple[str, str]]
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
    recovery: Recovery
    budget: Budget
    priorities: tuple[str, ...] = ("critical", "high", "medium", "low")

    @classmethod
    def from_mapping(cls, data: dict[str, Any], *, priorities: tuple[str, ...] | None = None,
                     source: str = SOURCE) -> LifecyclePolicy:
        return _build(data, priorities or ("critical", "high", "medium", "low"), source)


def _pairs(r: RuleReader, key: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    out = []
    for i, pair in enumerate(r.get(key, [])):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise r.fail(f"{key}[{i}]", "must be [pattern, replacement]")
        pattern = r.regex(f"{key}[{i}]", pair[0])
        out.append((pattern, r.replacement(f"{key}[{i}]", pattern, pair[1])))
    return tuple(out)


def _regexes(r: RuleReader, key: str) -> tuple[re.Pattern[str], ...]:
    out = []
    for i, p in enumerate(r.strings(key) if r.get(key) is not None else ()):
        try:
            out.append(re.compile(p))
        except re.error as exc:
            raise r.fail(f"{key}[{i}]", f"is not a valid regex ({exc})") from None
    return tuple(out)


def _build(data: dict[str, Any], priorities: tuple[str, ...], source: str) -> LifecyclePolicy:
    r = RuleReader(data, source)
    promotion = Promotion(
        min_recurrence=r.whole("promotion.min_recurrence", 1),
        min_sessions=r.whole("promotion.min_sessions", 1),
        window_days=r.whole("promotion.window_days", 1),
        ignore_event_statuses=r.strings("promotion.ignore_event_statuses"),
        prefer_action=bool(r.get("promotion.prefer_action")),
        max_text_chars=r.whole("promotion.max_text_chars", 20),
        hypothesis=r.string("promotion.hypothesis"),
        generalise=_pairs(r, "promotion.generalise"),
        needs_instruction_tags=r.strings("promotion.needs_instruction_tags")
        if r.get("promotion.needs_instruction_tags") is not None else (),
        instruction=_regexes(r, "promotion.instruction"),
    )
    proposals = Proposals(
        high_impact_recurrence=r.whole("proposals.high_impact_recurrence", 1),
        high_impact_priorities=r.strings("proposals.high_impact_priorities"),
        critical_priorities=r.strings("proposals.critical_priorities"),
        max_pending_critical=r.whole("proposals.max_pending_critical", 1),
    )
    targets: dict[str, Target] = {}
    raw_targets = r.table("targets").data
    if not raw_targets:
        raise r.fail("targets", "must be a table of targets, not empty")
    for name in raw_targets:
        key = f"targets.{name}"
        fields = {k: r.string(f"{key}.{k}", TARGET_CHOICES.get(k)) for k in TARGET_FIELDS}
        r.table(key).known(TARGET_FIELDS)
        if not fields["file"] or fields["file"].startswith("/") or ".." in fields["file"].split("/"):
            raise r.fail(f"{key}.file", f"must be a path inside the workspace, not {fields['file']!r}")
        if not fields["block"].replace("-", "").replace("_", "").isalnum():
            raise r.fail(f"{key}.block", f"must be letters, digits, '-' or '_', not {fields['block']!r}")
        targets[name] = Target(name=name, **fields)
    classify = []
    for rule in r.tables("classify", empty=False):
        rule.known(("target", *CLASSIFY_FIELDS))
        conds = {f: tuple(v.lower() for v in rule.strings(f)) for f in CLASSIFY_FIELDS if f in rule.data}
        classify.append(ClassifyRule(target=rule.string("target", tuple(targets)), **conds))
    if any(getattr(classify[-1], f) is not None for f in CLASSIFY_FIELDS):
        raise r.fail(f"classify[{len(classify) - 1}]", "the last rule must have no conditions (the default)")
    memory = MemoryExport(
        file=r.string("memory.file"), block=r.string("memory.block"), section=r.string("memory.section"),
        preferences_file=r.string("memory.preferences_file"), preferences_key=r.string("memory.preferences_key"),
    )
    v = Verification(
        first_check_days=r.whole("verification.first_check_days", 1),
        monitor_days=r.whole("verification.monitor_days", 1),
        extend_days=r.whole("verification.extend_days", 1),
        confirm_max_ratio=r.number("verification.confirm_max_ratio", 0),
        ineffective_min_ratio=r.number("verification.ineffective_min_ratio", 0),
        worse_min_ratio=r.number("verification.worse_min_ratio", 0),
        worse_min_posterior=r.number("verification.worse_min_posterior", 0.5, 0.9999),
        error_rate=r.number("verification.error_rate", 0.0001, 0.5),
        baseline_half_life_days=r.number("verification.baseline_half_life_days", 1),
        max_per_day=r.whole("verification.max_per_day", 1),
        monitor_error_rate=r.number("verification.monitor_error_rate", 0.0001, 0.5),
        prior_min_changes=r.whole("verification.prior_min_changes", 1),
        prior_max_events=r.number("verification.prior_max_events", 0),
        critical_priority=r.string("verification.critical_priority", priorities),
        revert_min_ratio=r.number("verification.revert_min_ratio", 0, default=0.5),
        revert_error_rate=r.number("verification.revert_error_rate", 0.0001, 0.5, default=0.05),
        boundary_ratio=r.number("verification.boundary_ratio", 0, default=0.6325),
        min_expected=r.number("verification.min_expected", 0, default=0.0),
        min_baseline_events=r.number("verification.min_baseline_events", 0, default=0.0),
        min_baseline_days=r.number("verification.min_baseline_days", 0, default=0.0),
        unobserved_gap_days=r.number("verification.unobserved_gap_days", 0, default=0.0),
        deadline_revert_posterior=r.number("verification.deadline_revert_posterior", 0.5, 0.9999, default=0.5),
        effect_prior=r.flag("verification.effect_prior", default=False),
        effect_prior_min_changes=r.whole("verification.effect_prior_min_changes", 1, default=8),
        effect_prior_strength=r.number("verification.effect_prior_strength", 0.01, default=2.0),
        burst_quantile=r.number("verification.burst_quantile", 0, 0.9999, default=0.0),
        mix_strength=r.number("verification.mix_strength", 0, default=0.0),
        mix_reference=r.number("verification.mix_reference", 0.01, 0.99, default=0.6),
        leave_out_trigger=r.flag("verification.leave_out_trigger", default=True),
        check_max_before=r.number("verification.check_max_before", 0, default=0.0),
        check_after_days=r.whole("verification.check_after_days", 1, default=56),
        check_max_out=r.whole("verification.check_max_out", 0, default=0),
        check_days=r.whole("verification.check_days", 1, default=14),
        check_at_deadline=r.flag("verification.check_at_deadline", default=True),
        check_revert_posterior=r.number("verification.check_revert_posterior", 0.05, 0.9999, default=0.5),
        check_revert_ratio=r.number("verification.check_revert_ratio", 0, default=0.6325),
        check_max_per_change=r.whole("verification.check_max_per_change", 1, default=1),
        check_back_level=r.number("verification.check_back_level", 0, 0.9999, default=0.0),
        check_look_days=r.whole("verification.check_look_days", 1, default=1),
        check_doubtful=r.flag("verification.check_doubtful", default=False),
        check_lopsided=r.number("verification.check_lopsided", 0, default=0.0),
        check_lopsided_posterior=r.number("verification.check_lopsided_posterior", 0.05, 0.9999, default=0.5),
        thin_deadline_events=r.number("verification.thin_deadline_events", 0, default=0.0),
        mix_source=r.string("verification.mix_source", ("verdicts", "relapse"), default="verdicts"),
        prior_source=r.string("verification.prior_source", ("changes", "patterns"), default="changes"),
        pool_retries=r.flag("verification.pool_retries", default=False),
        trigger_window=r.string("verification.trigger_window", ("counted", "left_out"), default="counted"),
        relapse_reference=r.number("verification.relapse_reference", 0.01, 0.99, default=0.1),
        dispersion_strength=r.number("verification.dispersion_strength", 0, default=0.0),
        dispersion_max=r.number("verification.dispersion_max", 1, default=4.0),
    )
    if not v.confirm_max_ratio < v.ineffective_min_ratio <= v.worse_min_ratio:
        raise r.fail("verification", "needs confirm_max_ratio < ineffective_min_ratio ≤ worse_min_ratio")
    if not v.confirm_max_ratio <= v.revert_min_ratio < v.ineffective_min_ratio:
        raise r.fail("verification", "needs confirm_max_ratio ≤ revert_min_ratio < ineffective_min_ratio")
    if not v.confirm_max_ratio <= v.boundary_ratio <= v.ineffective_min_ratio:
        raise r.fail("verification", "needs confirm_max_ratio ≤ boundary_ratio ≤ ineffective_min_ratio")
    o = Overdue(grace_days=r.whole("overdue.grace_days", 0), extend_days=r.whole("overdue.extend_days", 0),
                revert_days=r.whole("overdue.revert_days", 1))
    if not o.grace_days <= o.extend_days <= o.revert_days:
        raise r.fail("overdue", "needs grace_days ≤ extend_days ≤ revert_days")
    d = Decay(demote_days=r.whole("decay.demote_days", 1), stale_days=r.whole("decay.stale_days", 1),
              expire_days=r.whole("decay.expire_days", 1), kinds=r.strings("decay.kinds"),
              statuses=r.strings("decay.statuses"), expired_status=r.string("decay.expired_status"),
              keep_categories=r.strings("decay.keep_categories", []),
              revive_kinds=r.strings("decay.revive_kinds", []),
              revive_recurrence=r.whole("decay.revive_recurrence", 1, default=1),
              revived_status=r.string("decay.revived_status", default="active"))
    if not d.demote_days <= d.stale_days <= d.expire_days:
        raise r.fail("decay", "needs demote_days ≤ stale_days ≤ expire_days")
    if d.revive_kinds and d.revived_status not in d.statuses:
        raise r.fail("decay.revived_status", f"must be one of decay.statuses ({', '.join(d.statuses)}), so a revived "
                     "node decays again")
    pairs = r.get("conflicts.opposite_pairs")
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 and
                                              all(isinstance(x, str) for x in p) for p in pairs):
        raise r.fail("conflicts.opposite_pairs", f"must be a list of [word, opposite] pairs, not {pairs!r}")
    opposite = tuple((a.lower(), b.lower()) for a, b in pairs)
    groups = r.get("conflicts.opposite_groups", [])
    if not isinstance(groups, list) or not all(
            isinstance(g, list) and len(g) == 2 and all(isinstance(side, list) and side and
                                                        all(isinstance(x, str) and x.strip() for x in side)
                                                        for side in g) for g in groups):
        raise r.fail("conflicts.opposite_groups",
                     f"must be a list of [[words], [opposite words]] pairs of non-empty lists, not {groups!r}")
    opposite += tuple(pair for one, other in groups for pair in ((a.lower(), b.lower()) for a in one for b in other)
                      if pair not in opposite)
    own = r.get("conflicts.own_subject_pairs")
    if not isinstance(own, list) or not all(isinstance(p, list) and tuple(str(x).lower() for x in p) in opposite
                                            for p in own):
        raise r.fail("conflicts.own_subject_pairs", f"must be a list of pairs from opposite_pairs, not {own!r}")
    base_priority = {p: r.whole(f"conflicts.base_priority.{p}", 0) for p in priorities}
    area_weight = {a.lower(): r.whole(f"conflicts.area_weight.{a}", 0) for a in r.table("conflicts.area_weight").data}
    c = Conflicts(
        recurrence_weight=r.whole("conflicts.recurrence_weight", 0),
        recency_max=r.whole("conflicts.recency_max", 0),
        default_priority=r.string("conflicts.default_priority", priorities),
        kinds=r.strings("conflicts.kinds"),
        on_tie=r.string("conflicts.on_tie", ("hold_both", "keep_both")),
        tie_keeps_confirmed=r.flag("conflicts.tie_keeps_confirmed"),
        max_detect=r.whole("conflicts.max_detect", 2),
        opposite_pairs=opposite,
        negations=tuple(n.lower() for n in r.strings("conflicts.negations")),
        negation_skip=frozenset(w.lower() for w in r.strings("conflicts.negation_skip")),
        negation_adverb_suffix=r.string("conflicts.negation_adverb_suffix").lower(),
        negation_cjk_window=r.whole("conflicts.negation_cjk_window", 1),
        negation_cjk_skip=tuple(sorted(r.strings("conflicts.negation_cjk_skip", [], items="non-blank"), key=len,
                                       reverse=True)),
        cjk_function_words=tuple(sorted(r.strings("conflicts.cjk_function_words", [], items="non-blank"), key=len,
                                        reverse=True)),
        cjk_latin_min_chars=r.whole("conflicts.cjk_latin_min_chars", 1, default=4),
        min_shared_words=r.whole("conflicts.min_shared_words", 1),
        opposite_min_shared=r.whole("conflicts.opposite_min_shared", 1),
        topic_stoplist=frozenset(stem(w.lower()) for w in r.strings("conflicts.topic_stoplist")),
        own_subject_pairs=frozenset((a.lower(), b.lower()) for a, b in own),
        base_priority=base_priority,
        area_weight=area_weight,
    )
    rec = Recovery(cooldown_days=r.whole("recovery.cooldown_days", 0),
                   min_recurrence=r.whole("recovery.min_recurrence", 1),
                   min_sessions=r.whole("recovery.min_sessions", 1),
                   min_posterior=r.number("recovery.min_posterior", 0.5, 0.9999),
                   max_ratio=r.number("recovery.max_ratio", 0, default=0.6325),
                   max_tries=r.whole("recovery.max_tries", 1, default=1),
                   retry_below=r.number("recovery.retry_below", 0, 1, default=0.95),
                   max_returns=r.whole("recovery.max_returns", 0, default=0),
                   max_per_day=r.whole("recovery.max_per_day", 0, default=0))
    b = Budget(per_file_per_cycle=r.whole("budget.per_file_per_cycle", 1),
               max_block_lines=r.whole("budget.max_block_lines", 1),
               max_block_chars=r.whole("budget.max_block_chars", 80),
               max_examined=r.whole("budget.max_examined", 1))
    return LifecyclePolicy(promotion=promotion, proposals=proposals, classify=tuple(classify), targets=targets,
                           memory=memory, verification=v, overdue=o, decay=d, conflicts=c, recovery=rec,
                           budget=b, priorities=priorities)


def load(ws: Any) -> LifecyclePolicy:
    """The lifecycle policy of a workspace (packaged rules + its overrides)."""
    cache = ws.__dict__.setdefault("_lifecycle_policy", None)
    if cache is None:
        cache = LifecyclePolicy.from_mapping(ws.rules.raw("lifecycle"), priorities=tuple(ws.policy.priorities))
        ws.__dict__["_lifecycle_policy"] = cache
    return cache
