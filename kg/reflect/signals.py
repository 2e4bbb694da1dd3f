"""What a user turn shows: the named signals that fire on it, and the model's score per class.

A signal is a yes/no fact any transcript can show (rules/reflect.toml [signals]): the shape of the
user's own words, the agent's turn before them, the agent's reply after them. A class's score is a
logistic function of the weights (rules/reflect_model.toml) of the signals that fired, so every
finding can say which signals made it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from rapidfuzz import fuzz

from kg.core.text import CJK, folded, has_cjk

from . import reply_language
from .language import fold
from .lesson import linking_rules, terms
from .parse import Transcript, Turn
from .restate import constraint_clauses, restates
from .rules import WORK_SCOPES, ClassModel, ReflectRules

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
# A word: a run of letters outside the CJK range, or one CJK character (kg's one CJK range, kg.core.text). Without
# the CJK range taken out of the first part a whole Chinese sentence was one word: every Chinese turn was "short".
_WORD = re.compile(rf"(?:[^\W{CJK}]|['-])+|[{CJK}]")


@dataclass(frozen=True)
class TurnView:
    """One user turn with the context the signals read."""

    own: str  # the user's own words (pasted and quoted lines removed), straightened quotes
    quoted: str  # the lines the user quoted ("> ...")
    prev: str  # the tail of the agent's turn before
    next: str  # the head of the agent's reply
    first_turn: bool
    pasted: bool
    prior_tool_error: bool
    next_tools: str = ""  # the commands and paths the agent's tool calls used after the user spoke
    retries_tool: bool = False  # the agent's first tool call after the user spoke re-runs its last one before,
    # with changed input
    before: str = ""  # the head and tail of whatever came right before the user spoke (any role, harness notes too)
    repeats: bool = False  # the user's words say again what one of their recent turns said
    commands: str = ""  # the commands the user gave the runtime since they last spoke ("/undo", "/rewind")
    prev_tools: str = ""  # the commands and paths of the agent's tool calls since the user last spoke
    resumed: bool = False  # the first turn after a fresh start (a new session in the same file, "/clear") that
    # follows earlier agent work: nothing before it is answered, but it may be about what that work left behind
    reedits: bool = False  # after the user spoke the agent changes again a file it had changed since they last spoke
    work: str = ""  # the tail of the agent's answer since the user last spoke (work_chars): what it just wrote, by name
    follows_question: bool = False  # the user's own turn before this one asked a question (an answer was due, not work)
    restates_constraint: bool = False  # a constraint clause of one of the user's earlier turns is said again
    language_broken: bool = False  # a reply language the user asked for before is asked again after a reply not in it


def straighten(text: str) -> str:
    return text.translate(_QUOTES)


def as_written(text: str, original: str) -> str:
    """`text`, made from `straighten(original)` (the rules match ASCII quotes), with each quote it straightened given
    back as the user wrote it (“修复：订单导出分页”, ‘x’) in a CJK text: found by the characters around it, the widest
    stretch first; a quote a template added, or one not found, stays as it is. Pure."""
    if original.translate(_QUOTES) == original or not has_cjk(original):  # (review M5: an English lesson stays as
        return text  # every earlier one of it was stored, straightened, so identical lessons still fold)
    straight = straighten(original)
    out = list(text)
    for j, ch in enumerate(text):
        if ch not in "\"'":
            continue
        for k in (8, 4, 2):
            lo, hi = max(0, j - k), min(len(text), j + k + 1)
            at = straight.find(text[lo:hi])
            if at >= 0:
                out[j] = original[at + j - lo]
                break
    return "".join(out)


def words(text: str) -> int:
    """Words, counting each CJK character as one."""
    return len(_WORD.findall(text))


# What an agent's turn holds besides its words to the user: its reasoning (aider keeps it between
# <thinking-content-...> tags) and lines of bare markup (a published chat's <div> wrappers).
_THINKING = re.compile(r"<(think[\w-]*)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_MARKUP = re.compile(r"^\s*(</?[A-Za-z][\w:-]*(\s[^<>]*)?/?>\s*)+$")


def _agent_text(turn: Turn) -> str:
    return _agent_text_of(turn.text)


def _agent_text_of(text: str) -> str:
    text = _THINKING.sub("", text) if "<think" in text else text
    lines = [ln for ln in text.splitlines() if ln.strip() not in ("", "---") and not _MARKUP.match(ln)]
    return "\n".join(lines).strip()


def views(transcript: Transcript, rules: ReflectRules, users: list[int],
          own: dict[int, list[tuple[int, str]]]) -> dict[int, TurnView]:
    """A view of each user turn in `users` (turn indexes), from one pass over the transcript.

    An agent turn's text is only cleaned when it is the one before or after a user turn."""
    sig = rules.signals
    turns = transcript.turns
    has_agent = any(t.role == "assistant" for t in turns)
    # A runtime's session read as it grows, before the agent's first answer, holds the user's opening words: they
    # answer nothing, as when the whole file is read. So does a session export whose agent turns held no words
    # (a SpecStory file of one request the agent answered with tool calls only). Only plain text has no opening:
    # its lines may be cut from anywhere. (Later user turns of a file without agent turns are still read as
    # answering something: plain text of user lines, a runtime's transcript cut short.)
    opening = not has_agent and transcript.format != "text"
    wanted = set(users)
    out: dict[int, TurnView] = {}
    last_agent: Turn | None = None  # the agent's last turn with words
    seen_agent = False
    worked_before = False  # the agent spoke or acted before the last fresh start
    error_since_user = False
    pending: int | None = None  # the user turn waiting for the agent's reply
    replies: dict[int, Turn] = {}
    tools: dict[int, list[str]] = {}  # what the agent ran after each user turn, until the next one
    last_call: Turn | None = None  # the agent's last tool call
    before: dict[int, Turn] = {}  # the agent's last tool call before each user turn
    retried: set[int] = set()
    current: int | None = None
    last_any: Turn | None = None  # the turn right before, whatever its role
    said: list[str] = []  # the user's recent own words, newest last
    bound: list[list[str]] = []  # the constraint clauses of each of those turns (kg.reflect.restate)
    wrote = ""  # the tail of the texts of the agent's turns since the user last spoke (its edits, its words)
    commands: list[str] = []  # the user's commands to the runtime since they last spoke
    ran: list[str] = []  # the agent's tool inputs since the user last spoke
    edited: set[str] = set()  # the files the agent changed since the user last spoke
    edited_before: dict[int, set[str]] = {}  # ... as it stood when each user turn was said
    edited_after: dict[int, set[str]] = {}  # the files the agent changed after each user turn, until the next one
    answered = False  # the agent spoke or acted since the user last spoke
    # What the user asked, kept across a fresh start: asked since their last undo, and asked before it (the work the
    # undo threw away). The first words after "/undo", "/clear" asking again for what was undone redirect that undo.
    undo = tuple(p for s in sig.matched if s.name == "undid" for p in s.patterns)
    asked: list[str] = []
    undone: list[tuple[str, str]] = []  # (what was asked, the undo command that threw its work away)
    # The reply languages the user asked for so far, and the agent's last words: kept across a fresh start (a rule
    # the user set stands; the agent's answer in another language is what they saw last).
    langs = sig.reply_language
    set_langs: frozenset[str] = frozenset()
    last_words = ""
    for t in turns:
        prior, last_any = last_any, t
        if t.role in ("user", "system") and t.index not in wanted and _resets(t.text, sig.resets):
            # a fresh context ("/clear", a new session in the same file): nothing before it is answered after it
            worked_before = worked_before or seen_agent
            last_agent, seen_agent, error_since_user, pending, last_call, current = None, False, False, None, None, None
            said, commands, ran, edited, wrote, bound = [], [], [], set(), "", []
            continue
        if t.role == "assistant":
            seen_agent = answered = True  # it spoke or acted since the user last spoke
            if sig.work_chars > sig.prev_chars and t.text:
                wrote = f"{wrote}\n{t.text[-sig.work_chars:]}"[-sig.work_chars:]
            if t.tool_name and current is not None:
                calls = tools.setdefault(current, [])
                if not calls and current in before:
                    retried.update([current] if _retry(before[current], t) else [])
                if len(calls) < _MAX_TOOLS:
                    calls.append((t.tool_input or "")[:300])
            if t.tool_name:
                last_call = t
                if len(ran) < _MAX_TOOLS and t.tool_input:
                    ran.append(t.tool_input[:300])
                if sig.edit_tools and t.tool_name.lower() in sig.edit_tools:
                    files = _edited_files(t.tool_input or "")
                    edited.update(files)
                    if current is not None:
                        edited_after.setdefault(current, set()).update(files)
            if not _has_words(t.text) or (t.text.lstrip()[:1] == "<" and not _has_words(_agent_text(t))):
                continue  # no words to the user (a published chat's bare <div> wrappers are none either)
            if t.sidechain:
                continue  # a sub-agent's words go to the agent that started it ("Perfect! I found ..."), not the user
            # A reply answers the user's last turn: earlier turns that got no reply of their own (a message
            # sent while the agent worked, then another) are not answered by it.
            if pending is not None:
                replies[pending] = t
            pending = None
            last_agent = t
            last_words = t.text
        elif t.role == "tool":
            error_since_user = error_since_user or bool(t.is_error)
        elif t.role == "user" and t.index not in wanted:
            if any(p.search(t.text) for p in undo):
                undone = [*undone, *((a, t.text.strip()[:200]) for a in asked)][-sig.repeat_recent:]
                asked = []
            if len(commands) < _MAX_TOOLS:
                commands.append(t.text.strip()[:200])
        elif t.index in wanted:
            lines = own[t.index]
            kept = straighten("\n".join(ln for _, ln in lines))
            raw = [ln for ln in t.text.splitlines() if ln.strip()]
            quoted = "\n".join(ln.lstrip()[1:].strip() for ln in raw if ln.lstrip().startswith(">"))
            prev = _agent_text(last_agent)[-sig.prev_chars:] if last_agent else ""
            clauses = constraint_clauses(kept[: sig.user_chars], sig.constraint_words) if sig.constraint_words else []
            redo = [u for a, u in undone if _similar(kept, a, sig.redo_similar)]
            if redo and not seen_agent and worked_before:  # asked again after an undo and a fresh start
                commands = [redo[-1], *commands][:_MAX_TOOLS]
            undone = [(a, u) for a, u in undone if not _similar(kept, a, sig.redo_similar)]  # asked again: answered
            asked = [*asked[-(sig.repeat_recent - 1):], kept]
            folded_own, n_words = fold(kept[: sig.user_chars]), words(kept)
            broke = bool(set_langs) and bool(last_words) and reply_language.broken(
                folded_own, n_words, set_langs, _agent_text_of(last_words), langs)
            if langs.languages:
                set_langs = set_langs | reply_language.asked(folded_own, n_words, langs)
            out[t.index] = TurnView(
                own=kept,
                quoted=straighten(quoted),
                prev=straighten(prev),
                next="",
                first_turn=(has_agent and not seen_agent) or (opening and not out),
                resumed=has_agent and not seen_agent and worked_before,
                pasted=len(lines) < len(raw),
                prior_tool_error=error_since_user,
                before=straighten(_ends(prior.text)) if prior is not None else "",
                # Said again to the agent, after it answered or acted: a message sent again before that is the
                # user re-sending it, not telling the agent twice.
                repeats=answered and _repeats(kept, said, sig.repeat_similar),
                commands="\n".join(commands),
                prev_tools=straighten("\n".join(ran)),
                work=straighten(wrote),
                follows_question=bool(said) and ("?" in said[-1] or "？" in said[-1]),
                restates_constraint=answered and restates(clauses, [c for b in bound for c in b], sig.restate_similar),
                language_broken=broke,
            )
            edited_before[t.index] = edited
            commands, ran, edited, wrote = [], [], set(), ""
            said = [*said[-(sig.repeat_recent - 1):], kept]
            bound = [*bound[-(sig.repeat_recent - 1):], clauses]
            answered = False
            pending = t.index
            current = t.index
            if last_call is not None:
                before[t.index] = last_call
            error_since_user = False
    for u, v in out.items():
        nxt = straighten(_agent_text(replies[u])[: sig.next_chars]) if u in replies else ""
        out[u] = replace(v, next=nxt, next_tools=straighten("\n".join(x for x in tools.get(u, []) if x)),
                         retries_tool=u in retried,
                         reedits=bool(edited_before.get(u, set()) & edited_after.get(u, set())))
    return out


def _edited_files(tool_input: str) -> set[str]:
    """The files one call of an edit tool changed: its input is the path, or (Codex's apply_patch) names them."""
    text = tool_input.strip()
    if text.startswith("apply_patch"):
        return set(text.split()[1:])
    return {text} if text and "\n" not in text and len(text) <= 300 else set()


def _resets(text: str, patterns: tuple[re.Pattern[str], ...]) -> bool:
    return bool(patterns) and any(p.search(text[:200]) for p in patterns)


def _ends(text: str, n: int = 200) -> str:
    text = text.strip()
    return text if len(text) <= 2 * n else f"{text[:n]}\n{text[-n:]}"


def _repeats(own: str, said: list[str], at_least: int) -> bool:
    """The user says again what one of their last few turns said (the agent did not do it, or not right)."""
    return any(_similar(own, b, at_least) for b in said)


def _similar(a: str, b: str, at_least: float) -> bool:
    a = folded(a)
    if len(a) < _REPEAT_MIN_CHARS or len(a.split()) < 2:
        return False
    return fuzz.ratio(a, folded(b)) >= at_least


# A request shorter than this (or of one word) is never "said again": "ok", "yes" and "continue" recur by themselves.
# (How alike and how far back: [signals] repeat_similar, redo_similar, repeat_recent in rules/reflect.toml.)
_REPEAT_MIN_CHARS = 10


def _retry(last: Turn, first: Turn) -> bool:
    """The same tool run again with changed but similar input: the agent redoes what the user just objected to
    (reading another file is not a retry: the inputs must share most of their text)."""
    a, b = last.tool_input or "", first.tool_input or ""
    return (last.tool_name == first.tool_name and bool(a) and bool(b) and a != b
            and fuzz.ratio(a[:300], b[:300]) >= _RETRY_SIMILAR)


_RETRY_SIMILAR = 60


_MAX_TOOLS = 10
_WORDS = re.compile(r"\w")


def _has_words(text: str) -> bool:
    return bool(_WORDS.search(text))


def fired(view: TurnView, rules: ReflectRules) -> tuple[str, ...]:
    """The names of the signals that fire on one user turn, in the rules' order."""
    sig = rules.signals
    n = words(view.own)
    own = fold(view.own[: sig.user_chars])  # read as the patterns are written: kg.reflect.language
    computed = {
        "first_turn": view.first_turn and not view.resumed,
        "resumed": view.resumed,
        "short": 0 < n <= sig.short_words,
        "long": n > sig.long_words,
        "question": "?" in view.own or "？" in view.own,
        "pasted": view.pasted,
        "only_pasted": view.pasted and not view.own.strip(),
        "prior_tool_error": view.prior_tool_error,
        "quotes_agent": bool(view.quoted) and _quotes(view.quoted, view.prev),
        "negates_agent": bool(view.prev) and _negates(own, fold(view.prev)),
        "retries_tool": view.retries_tool,
        "repeats_request": view.repeats,
        "worked": bool(view.prev_tools),
        "reedits": view.reedits,
        "names_agent_work": bool(view.prev or view.prev_tools) and _names_agent_work(view.own[: sig.user_chars], view),
        "follows_question": view.follows_question,
        "restates_constraint": view.restates_constraint,
        "language_broken": view.language_broken,
    }
    names = [name for name, on in computed.items() if on]
    scopes = {"user": own, "prev": fold(view.prev), "next": fold(view.next), "answer": fold(view.work or view.prev),
              "next_tools": view.next_tools, "before": fold(view.before), "commands": view.commands,
              "about_agent": own, "reply_about_work": fold(view.next), "beyond_agent": own, "about_work": own}
    agent: dict[str, set[str]] = {}  # the words of the agent's work, per scope, read once if needed
    for s in sig.matched:
        text = scopes[s.scope]
        if not text:
            continue
        if s.scope not in WORK_SCOPES:
            if any(p.search(text) for p in s.patterns):
                names.append(s.name)
            continue
        objs = [m.group("obj") for p in s.patterns for m in p.finditer(text) if m.group("obj")]
        if objs and (view.prev or view.prev_tools):
            if s.scope not in agent:
                agent[s.scope] = _agent_terms(view, whole=s.scope in ("reply_about_work", "about_work"))
            named = [t in agent[s.scope] for o in objs for t in terms(o, linking_rules()) if _telling(t)]
            if any(named) if s.scope != "beyond_agent" else (named and not any(named)):
                names.append(s.name)
    on = set(names)
    for c in sig.combined:
        if any(need <= on and not (without & on) for need, without in c.groups):
            names.append(c.name)
            on.add(c.name)
    return tuple(names)


def _quotes(quoted: str, prev: str) -> bool:
    # The agent's words come back quoted: compare a normalised prefix of each quoted line.
    flat = folded(prev)
    return any(len(q) >= 12 and folded(q)[:40] in flat for q in quoted.splitlines())


# A negation and the few words after it ("that's not the system prompt", "it isn't in src"); Italian "non", French
# "pas", German "nicht" / "kein", Czech "není" (folded "neni": kg.reflect.language), Korean "아니" / "않" the same way.
_NEGATED = re.compile(
    r"\b(?:not|isn't|isnt|aren't|arent|wasn't|wasnt|doesn't|doesnt|don't|dont|didn't|didnt|no|never|nothing|"
    r"neither|nor|non(?!-)|pas|nicht|kein\w*|neni|nie)\b((?:\W+[\w'./-]+){1,4})|(?:不是|没有|不)(\w{2,8})|"
    r"(?<!\w)(?:не|нет)((?:\W+\w+){1,4})|(?:아니|않)(\w*(?:\W+\w+){1,3})",
    re.IGNORECASE)


def _agent_terms(view: TurnView, whole: bool = False) -> set[str]:
    """The words of the agent's turn before the user spoke (with `whole`, its answer since the user last spoke,
    `work`, when the rules ask for one) and of the tool calls it made since then (paths split into their parts)."""
    return set(terms(fold(f"{view.work if whole and view.work else view.prev}\n{view.prev_tools}"), linking_rules()))


# A name in code: a path or file name, a dotted or snake_case identifier, a camelCase one, a --flag.
_CODE_NAME = re.compile(r"(?<![\w./-])(?:[\w-]+(?:[./][\w-]+)+|[A-Za-z]+_\w+|[a-z]+(?:[A-Z][a-z0-9]+)+|--?[a-z][\w-]+)")
_MIN_NAME = 5


def _code_names(text: str) -> set[str]:
    out = set()
    for m in _CODE_NAME.finditer(text):
        name = m.group(0).strip("./-").lower()
        if len(name) >= _MIN_NAME and not name.replace(".", "").isdigit():
            out.add(name)
            if "/" in name:
                out.add(name.rsplit("/", 1)[1])  # a path is named by its file name too
    return {n for n in out if len(n) >= _MIN_NAME}


def _names_agent_work(own: str, view: TurnView) -> bool:
    """The user's words name a file, identifier or flag that the agent's last turn or its tool calls since the user
    last spoke named: the user speaks about what the agent just did, not about something new."""
    said = _code_names(own)
    return bool(said) and bool(said & _code_names(f"{view.prev}\n{view.prev_tools}"))


def _negates(own: str, prev: str) -> bool:
    """The user negates something the agent just said: a word the agent used follows one of the user's
    negations closely ("not the README", "it's not in src" after the agent spoke of the README / src)."""
    hits = [m.group(m.lastindex or 0) for m in _NEGATED.finditer(own) if not _asks_either(own, m.start())]
    if not hits:
        return False
    agent = set(terms(prev, linking_rules()))
    return any(t in agent for h in hits for t in terms(h, linking_rules()) if _telling(t))


def _asks_either(text: str, at: int) -> bool:
    """A Chinese A-not-A question ("是不是应该...", "能不能", "有没有"): its 不 / 没 asks, it negates nothing."""
    return 0 < at < len(text) - 1 and text[at] in "不没" and text[at - 1] == text[at + 1]


def _telling(term: str) -> bool:
    """A term long enough to say the user speaks of the agent's words: three letters, or a CJK bigram (the terms of
    Chinese text are character pairs: "缓存" in "问题不在缓存" after the agent spoke of "缓存" was never compared)."""
    return len(term) >= 3 or (len(term) == 2 and has_cjk(term))


def score(model: ClassModel, signals: tuple[str, ...]) -> float:
    z = model.bias + sum(model.weights.get(s, 0.0) for s in signals)
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def reasons(model: ClassModel, signals: tuple[str, ...]) -> tuple[str, ...]:
    """The signals that pushed the score up, strongest first."""
    up = [(model.weights.get(s, 0.0), s) for s in signals if model.weights.get(s, 0.0) > 0]
    return tuple(s for _, s in sorted(up, key=lambda x: (-x[0], x[1])))


def has_reason(why: tuple[str, ...], rules: ReflectRules, allowed: frozenset[str] | None = None) -> bool:
    """A finding needs a reason in the user's own words, not only the turn's shape or the agent's reply: agents
    agree with, and apologise for, suggestions as readily as corrections. `allowed` (a class's `reasons`) narrows
    them: words common in new instructions ("should", "just") do not say that the agent was wrong."""
    user = rules.signals.user_side if allowed is None else allowed
    return any(s in user for s in why)
