"""What a text takes a stance on, and whether two texts contradict: the stance half of the pure link decisions
(`kg.graph.decisions`; callers use `kg.graph.linking`, which re-exports these names).

A text wants the keywords it names and refuses the few after a scope cue ("use pnpm instead of npm" wants pnpm,
refuses npm); an ordering statement ("never commit before running the tests") refuses an order, not an action.
Two texts contradict when most of what one refuses the other wants, or when they ask for opposite orders.
Everything it needs comes from `rules/linking.toml` ([contradiction]) as a frozen `LinkRules`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kg.graph.decisions import Doc, LinkRules, _find, _memo, _norm, cues_in, terms

_CLAUSE = re.compile(r"[,.;:!?()\[\]\n，。；：！？、（）]+|\s+(?:but|however|although)\s+|但是|但|不过|然而")


@dataclass(frozen=True)
class Stance:
    """What a text wants (keywords outside any refusal) and refuses (each refusal's scope of keywords)."""

    wants: frozenset[str]
    refuses: tuple[frozenset[str], ...]
    marked: bool  # the text takes a stance (a scope cue or a bare cue)
    prefers: tuple[frozenset[str], ...] = ()  # per refusal, the option it names in its place ("pnpm, not npm")
    against: frozenset[str] = frozenset()  # keywords of clauses that speak against something ("npm breaks ...")
    clauses: tuple[frozenset[str], ...] = ()  # the keywords of each clause
    backed: frozenset[str] = frozenset()  # wants said outside the clauses that speak against something
    # what must come first and what after ("never commit before running the tests": run, test | commit)
    orders: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()


def stance(text: str, rules: LinkRules, *, negation: bool = True) -> Stance:
    """`negation`: whether plain negation ("not") counts as a stance for this text's kind."""
    return _memo(rules, ("stance", text, negation), lambda: _stance(text, rules, negation))


def _stance(text: str, rules: LinkRules, negation: bool) -> Stance:
    normal = _norm(text)
    cues = rules.stance_cues + (rules.negation_cues if negation else ())
    wants: set[str] = set()
    refuses: list[frozenset[str]] = []
    prefers: list[frozenset[str]] = []
    against: set[str] = set()
    marked = any(_find(c, normal) for c in rules.bare_cues)
    # The option a refusal prefers: the keyword just before its cue ("uses pnpm, not npm"), else the first one
    # said after it ("don't mock the store; use a real one").
    last: list[str] = []
    open_: list[int] = []  # refusals still without a preferred option

    def said(found: list[str], context: bool) -> None:
        """`context`: the words after a refusal's scope in its clause ("never push | to main"): wanted, but
        not the option preferred in its place."""
        nonlocal last
        wants.update(found)
        said_here.extend(found)
        if found and not context:
            for i in open_:
                prefers[i] = frozenset(found[:1])
            open_.clear()
            last = found

    clauses: list[frozenset[str]] = []
    backed: set[str] = set()
    orders: list[tuple[frozenset[str], frozenset[str]]] = []
    for clause in _CLAUSE.split(normal):
        order = _order(clause, clauses[-1] if clauses else frozenset(), rules, cues)
        if order:
            orders.append(order)
        clauses.append(frozenset(terms(clause, rules)))
        said_here: list[str] = []
        # A clause speaks against what it names only when its cue is not negated ("npm never breaks ...") and
        # it wants nothing itself ("use npm because pnpm breaks ...").
        is_against = bool(rules.against_cues and cues_in(clause, rules.against_cues)
                          and _scope_start(clause, rules.stance_cues + rules.negation_cues) is None
                          and not cues_in(clause, rules.cues.get("support", ())))
        if is_against:
            against.update(clauses[-1])
        rest, context = clause, False
        while rest.strip():
            cut = _scope_start(rest, cues)
            if cut is None:
                said(terms(rest, rules), context)
                break
            said(terms(rest[: cut[0]], rules), context)
            opener = rest[cut[0]:cut[1]]
            scope, rest = _scope(rest[cut[1]:], rules)
            context = True
            if order and opener in rules.order_refusals and _order_cue(rest, rules, at_start=True):
                continue  # "never commit | before running the tests": it refuses an order, not committing
            marked = True
            if scope:
                refuses.append(frozenset(scope))
                prefers.append(frozenset(last[-1:]))
                if not last:
                    open_.append(len(prefers) - 1)
        if not is_against:
            backed.update(said_here)
    return Stance(frozenset(wants), tuple(refuses), marked, tuple(prefers), frozenset(against), tuple(clauses),
                  frozenset(backed), tuple(orders))


def _order_cue(text: str, rules: LinkRules, *, at_start: bool = False) -> tuple[int, int, bool] | None:
    """The earliest ordering word of a text: (start, end, True when what it names comes later: "before",
    "until", "then"; False for "after"). With `at_start`, only one that opens the text."""
    best: tuple[int, int, bool] | None = None
    for cues, later in ((rules.order_before, True), (rules.order_after, False)):
        for cue in cues:
            m = _find(cue, text)
            if m and (best is None or m.start() < best[0]) and (not at_start or not text[:m.start()].strip()):
                best = (m.start(), m.end(), later)
    return best


def _order(clause: str, previous: frozenset[str], rules: LinkRules,
           cues: Sequence[str]) -> tuple[frozenset[str], frozenset[str]] | None:
    """What a clause says comes first and what after: "run the tests before committing" (run, test | commit),
    "commit after running the tests" the same, ", then commit" after the clause before it; a refusal turns it
    round ("never commit before running the tests": run, test | commit). None when the clause orders nothing."""
    cue = _order_cue(clause, rules)
    if cue is None:
        return None
    left, right = clause[: cue[0]], clause[cue[1]:]
    one, two = frozenset(terms(left, rules)) or (previous if not left.strip() else frozenset()), \
        frozenset(terms(right, rules))
    if not one or not two:
        return None
    first, then = (one, two) if cue[2] else (two, one)
    if _scope_start(left, cues) is not None and _scope_start(left, rules.order_refusals) is not None:
        first, then = then, first
    return (first - then, then - first) if first - then and then - first else None


_WORD = re.compile(r"[\w'-]+|[^\w\s]", re.UNICODE)


def _scope(text: str, rules: LinkRules) -> tuple[list[str], str]:
    """The keywords a cue refuses (up to a break word or `scope_terms` keywords) and the text after them."""
    found: list[str] = []
    for m in _WORD.finditer(text):
        token = m.group(0)
        if token in rules.scope_breaks and found:
            return found, text[m.start():]
        found.extend(t for t in terms(token, rules) if t not in found)
        if len(found) >= rules.scope_terms:
            return found[: rules.scope_terms], text[m.end():]
    return found, ""


def _scope_start(clause: str, cues: Sequence[str]) -> tuple[int, int] | None:
    """Where the earliest scope cue of a clause starts and ends."""
    best: tuple[int, int] | None = None
    for cue in cues:
        if "..." in cue:  # "prefer…over" (NFKC turns the ellipsis into three dots)
            opener, closer = cue.split("...", 1)
            m = _find(opener, clause)
            if m is None:
                continue
            m = _find(closer, clause, m.end())
        else:
            m = _find(cue, clause)
        if m is not None and (best is None or m.start() < best[0]):
            best = (m.start(), m.end())
    return best



def _negation_counts(doc: Doc, rules: LinkRules) -> bool:
    return not (doc.kind == "event" and doc.entry_type in rules.descriptive_types)


def contradiction(a: Doc, b: Doc, rules: LinkRules) -> str | None:
    """Why two texts contradict (most of what one refuses, the other wants), or None. They agree, whatever
    else the other names, when it wants the option the refusing one prefers in its place ("uses pnpm, not npm"
    and "uses pnpm workspaces; npm breaks the lock file") or speaks against what was refused."""
    sa = stance(a.text, rules, negation=_negation_counts(a, rules))
    sb = stance(b.text, rules, negation=_negation_counts(b, rules))
    for first, then in sa.orders:
        for first_b, then_b in sb.orders:
            if first & then_b and then & first_b:
                return "they ask for opposite orders: " + ", ".join(sorted(first & then_b)) + " / " + \
                    ", ".join(sorted(then & first_b))
    for one, other in ((sa, sb), (sb, sa)):
        refused_by_other = frozenset().union(*other.refuses)
        for i, scope in enumerate(one.refuses):
            clash = scope & other.wants
            if not clash or len(clash) / len(scope) <= rules.min_cover:
                continue
            preferred = one.prefers[i] if i < len(one.prefers) else frozenset()
            if (preferred and preferred <= other.backed and not preferred & refused_by_other
                    and not any(preferred <= c and clash & c for c in other.clauses)):
                continue  # both want the same option (the other names both apart: "uses pnpm; npm breaks ...")
            if clash <= other.against:
                continue  # the other names what was refused only to speak against it
            return "one refuses what the other wants: " + ", ".join(sorted(clash))
    return None


def opposed(a: Doc, b: Doc, rules: LinkRules) -> str | None:
    """Why two texts must never be merged: they contradict, or only one of them takes a stance
    ("use exec instead" against "use exec")."""
    why = contradiction(a, b, rules)
    if why:
        return why
    sa = stance(a.text, rules, negation=_negation_counts(a, rules))
    sb = stance(b.text, rules, negation=_negation_counts(b, rules))
    if sa.marked != sb.marked:
        return "only one of them refuses something or says 'instead'"
    return None
