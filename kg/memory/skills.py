"""Skills: reusable procedures in `memory/skills/<slug>.md`, in the seed's format.

    ---
    name: deploy-docs
    description: Publish the docs site
    created: 2026-05-05 10:30
    updated: 2026-05-06 09:00
    source: kg skill new
    triggers: ["deploy docs", "发布文档"]
    tools: ["bash", "git"]
    ---

    # Deploy Docs

    ## Procedure
    1. ...

    ## Pitfalls
    - ...

    ## Verification
    - ...

Before a skill is created, existing ones are fuzzy-matched on name, description and triggers; a close match
is updated instead of duplicated. The file may be edited by hand: kg re-reads it, keeps sections it does not
know, and only appends to the three it owns. The graph keeps a `Skill` row per file (revisions, session).

A skill the lifecycle promoted is a marked block (`<!-- kaizen-kg:begin kaizen-kg -->`, the rule and why). That
block belongs to the lifecycle (verified, reverted, rendered by the one block editor, `kg/lifecycle/blocks.py`):
`kg skill update` keeps it byte for byte, puts the frontmatter before it and its own sections after it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from kg.core import clock, paths
from kg.core.errors import NotFound, UsageError
from kg.core.files import make_folder, retried, write_atomic
from kg.core.text import CJK, clean, simplified, slugify, words
from kg.lifecycle import blocks
from kg.memory.rules import SkillRules, memory_rules

BOM = "\ufeff"
SLUG = re.compile(rf"^[a-z0-9{CJK}]+(?:-[a-z0-9{CJK}]+)*$")
OWN = ("Procedure", "Pitfalls", "Verification")
FIELDS = ("name", "description", "created", "updated", "source", "triggers", "tools")


@dataclass
class Skill:
    slug: str
    name: str
    description: str = ""
    created: str = ""
    updated: str = ""
    source: str = ""
    triggers: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    title: str = ""
    sections: dict[str, list[str]] = field(default_factory=dict)  # heading -> body lines, in file order
    extra: dict[str, str] = field(default_factory=dict)           # frontmatter keys kg does not own
    block: str = ""                                               # the lifecycle's marked block, as in the file
    head: str = ""          # the body before its first `## ` section (title, a person's notes), as in the file
    kept: list[str] = field(default_factory=list)                 # frontmatter lines that are not `key: value`
    newline: str = "\n"                                           # the file's line ending, kept on rewrite
    bom: str = ""                                                 # a UTF-8 byte order mark, kept on rewrite

    def items(self, section: str) -> list[str]:
        """The list items of a section, without their `1.` / `-` markers."""
        out = []
        for line in self.sections.get(section, []):
            m = re.match(r"^\s*(?:\d+[.)]|[-*])\s+(.*)$", line)
            if m and m.group(1).strip() and m.group(1).strip() != "(none yet)":
                out.append(m.group(1).strip())
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "name": self.name, "description": self.description, "created": self.created,
                "updated": self.updated, "source": self.source, "triggers": self.triggers, "tools": self.tools,
                "procedure": self.items("Procedure"), "pitfalls": self.items("Pitfalls"),
                "verification": self.items("Verification"), "file": f"memory/skills/{self.slug}.md"}


# -- the file format (pure) ---------------------------------------------------------------------------------
def _split(text: str) -> tuple[str, str, str]:
    """(before, block, after): the lifecycle's marked block in a skill file, kept as its raw text."""
    found = blocks.names(text)
    if not found:
        return text, "", ""
    try:
        span = blocks.find(text, found[0])
    except blocks.BlockError as exc:
        raise UsageError(f"{exc}; restore one begin and one end marker in the skill file, then run the command "
                         "again") from None
    assert span is not None
    return text[:span.start], text[span.start:span.end], text[span.end:]


def _parse_list(value: str) -> list[str]:
    value = value.strip()
    if value.startswith("["):
        try:
            parsed = json.loads(value)
            if isinstance(parsed, list):
                return [str(x).strip() for x in parsed if str(x).strip()]
        except ValueError:
            value = value.strip("[]")
    return [x.strip().strip("'\"") for x in value.split(",") if x.strip().strip("'\"")]


def parse(slug: str, text: str) -> Skill:
    """Read a skill file. Lenient: a file without frontmatter is a skill named after its slug. A lifecycle
    block is kept aside, untouched (its heading gives the title when the file has none of its own). A file
    whose every line ends in CRLF is read as LF and written back with CRLF (`render_file`); one that opens
    with a byte order mark (an editor on Windows) is read after it and written back with it: read with it,
    its frontmatter was body text, and an update stacked a new, empty one on top (a QA pass)."""
    bom = BOM if text.startswith(BOM) else ""
    text = text[len(bom):]
    newline = "\r\n" if "\r\n" in text and "\n" not in text.replace("\r\n", "") else "\n"
    if newline != "\n":
        text = text.replace("\r\n", "\n")
    before, block, after = _split(text)
    skill = _parse_own(slug, before + after)
    skill.block, skill.newline, skill.bom = block, newline, bom
    if block and not skill.title:
        skill.title = next((line[2:].strip() for line in block.splitlines() if line.startswith("# ")), "")
    return skill


def frontmatter_problem(text: str) -> str:
    """Why a skill file's frontmatter cannot be read ('' when it can, or when there is none): it opens with
    `---` and no `---` line closes it. Read leniently that is body text, and `kg skill update` stacked a second,
    empty frontmatter on top of it (a QA pass); so an update is refused, saying where to close it. Pure."""
    text = text.removeprefix(BOM)
    if not text.startswith("---") or text.find("\n---", 3) != -1:
        return ""
    lines = text.replace("\r\n", "\n").split("\n")
    last = 1
    while last < len(lines) and re.match(r"^\s*[A-Za-z_][\w.-]*\s*:", lines[last]):
        last += 1
    return (f"its frontmatter opens with `---` on line 1 and no `---` line closes it: add a line `---` after "
            f"line {last} (the last `key: value` line), then run the command again")


def _parse_own(slug: str, text: str) -> Skill:
    meta: dict[str, str] = {}
    kept: list[str] = []
    body = text
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            for line in text[3:end].splitlines():
                if ":" in line and not line.lstrip().startswith("#"):
                    k, v = line.split(":", 1)
                    meta[k.strip()] = v.strip()
                elif line.strip():
                    kept.append(line)  # a comment a person wrote there: kept as it is
            body = text[end + 4 :]
    skill = Skill(slug=slug, name=meta.get("name", slug).strip("'\""),
                  description=meta.get("description", "").strip("'\""), created=meta.get("created", ""),
                  updated=meta.get("updated", ""), source=meta.get("source", ""),
                  triggers=_parse_list(meta.get("triggers", "")), tools=_parse_list(meta.get("tools", "")),
                  extra={k: v for k, v in meta.items() if k not in FIELDS}, kept=kept)
    first = re.search(r"^## ", body, re.M)
    skill.head = body[:first.start()] if first else body  # kept byte for byte: only sections are appended to
    current: str | None = None
    for line in body.splitlines():
        if line.startswith("# ") and not skill.title:
            skill.title = line[2:].strip()
        elif line.startswith("## "):
            current = line[3:].strip()
            skill.sections.setdefault(current, [])
        elif current is not None:
            skill.sections[current].append(line)
    for name in skill.sections:
        while skill.sections[name] and not skill.sections[name][-1].strip():
            skill.sections[name].pop()
        while skill.sections[name] and not skill.sections[name][0].strip():
            skill.sections[name].pop(0)
    return skill


def render(skill: Skill) -> str:
    def q(v: object) -> str:
        return json.dumps(v, ensure_ascii=False)

    lines = ["---", f"name: {skill.name}", f"description: {skill.description}", f"created: {skill.created}",
             f"updated: {skill.updated}", f"source: {skill.source}", f"triggers: {q(skill.triggers)}",
             f"tools: {q(skill.tools)}"]
    lines += [f"{k}: {v}" for k, v in skill.extra.items()] + skill.kept
    notes = skill.head.strip("\n")
    if skill.block:  # the lifecycle's block, byte for byte, holds the heading; kg's own sections follow it
        lines += ["---", ""]
        head = "\n".join(lines) + "\n"
        return head + skill.block + "\n" + (notes + "\n\n" if notes else "") + _sections(skill)
    if skill.head.strip():  # the file's own title and a person's notes under it, as they were
        return "\n".join([*lines, "---"]) + ("" if skill.head.startswith("\n") else "\n") + skill.head + \
            _sections(skill)
    lines += ["---", "", f"# {skill.title or skill.name.replace('-', ' ').title()}", ""]
    return "\n".join(lines) + "\n" + _sections(skill)


def render_file(skill: Skill) -> bytes:
    """The file's bytes: `render` with the line ending and the byte order mark the file had."""
    return (skill.bom + render(skill).replace("\n", skill.newline)).encode("utf-8")


def _sections(skill: Skill) -> str:
    lines: list[str] = []
    names = list(OWN) + [s for s in skill.sections if s not in OWN]
    for name in names:
        lines.append(f"## {name}")
        lines.append("")
        body = skill.sections.get(name, [])
        lines += body if body else ["- (none yet)"]
        lines.append("")
    return "\n".join(lines)


def _add_items(skill: Skill, section: str, new: list[str], numbered: bool) -> list[str]:
    have = {i.lower() for i in skill.items(section)}
    added = []
    body = [line for line in skill.sections.get(section, []) if line.strip() not in ("- (none yet)",)]
    count = len(skill.items(section))
    for item in new:
        item = clean(item, one_line=True)
        if item and item.lower() not in have:
            count += 1
            body.append(f"{count}. {item}" if numbered else f"- {item}")
            have.add(item.lower())
            added.append(item)
    skill.sections[section] = body
    return added


def similarity(a: Skill | dict[str, Any], name: str, description: str, triggers: list[str]) -> float:
    """How alike an existing skill and a proposed one are (0-100), on name, description and triggers.
    Token-set ratio on `kg.core.text.words` so Chinese compares by bigrams. Pure."""
    get = (lambda k: a[k]) if isinstance(a, dict) else (lambda k: getattr(a, k))

    def norm(text: str) -> str:
        return " ".join(words(text.replace("-", " ")))

    def pair(x: str, y: str) -> float:  # set ratio alone calls any subset identical ("git" vs "git push")
        return (fuzz.token_set_ratio(x, y) + fuzz.token_sort_ratio(x, y)) / 2

    scores = [pair(norm(get("name")), norm(name))]
    if description and get("description"):
        scores.append(pair(norm(get("description")), norm(description)))
    theirs = [norm(t) for t in get("triggers")]
    for t in triggers:
        scores += [pair(norm(t), x) for x in theirs]
    return float(max(scores))


def match_score(skill: Skill, task: str) -> float:
    """How well a skill fits a task description (0-100). Pure."""
    t = " ".join(words(task))
    if not t:
        return 0.0
    fields = [skill.name.replace("-", " "), skill.description, *skill.triggers]
    best = max(fuzz.token_set_ratio(t, " ".join(words(f))) for f in fields if f) if any(fields) else 0.0
    partial = max((fuzz.partial_ratio(" ".join(words(tr)), t) for tr in skill.triggers if words(tr)), default=0.0)
    return float(max(best, partial * 0.95))


@dataclass(frozen=True)
class Generation:
    generate: bool
    reasons: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"generate": self.generate, "reasons": list(self.reasons)}


def should_generate(rules: SkillRules, *, tool_calls: int = 0, message: str = "", repeats: int = 0,
                    new_workflow: bool = False) -> Generation:
    """The seed's generation condition, any one of: enough tool calls in the task, the user said 记住 /
    "remember this", the task was done before `min_repeats` times, or a new workflow was found. Pure."""
    for name, value in (("--tool-calls", tool_calls), ("--repeats", repeats)):
        if value < 0:
            raise UsageError(f"{name} must be a count, 0 or more, not {value}")
    reasons = []
    if tool_calls >= rules.min_tool_calls:
        reasons.append(f"{tool_calls} tool calls (≥ {rules.min_tool_calls})")
    low = simplified(message or "").lower()  # 請記住 is 请记住
    said = next((p for p in rules.remember_phrases if simplified(p) in low), None)
    if said:
        reasons.append(f"the user said {said!r}")
    if repeats >= rules.min_repeats:
        reasons.append(f"done {repeats} times (≥ {rules.min_repeats})")
    if new_workflow:
        reasons.append("a new workflow or best practice")
    return Generation(bool(reasons), tuple(reasons))


# -- the workspace ------------------------------------------------------------------------------------------
def _dir(ws: Any) -> Path:
    return ws.memory / "skills"


def is_skill_file(rel: str) -> bool:
    """Whether a workspace-relative path is a skill file (`memory/skills/SLUG.md`)."""
    parts = Path(rel).parts
    return len(parts) == 3 and parts[:2] == ("memory", "skills") and parts[2].endswith(".md")


def apply_plan(path: Path, plan: blocks.SyncPlan) -> None:
    """Carry out the lifecycle's plan for its block in a skill file (a promotion, a verdict, a revert): skill
    files have one writer, this module, which keeps that block byte for byte on `kg skill update`."""
    blocks.apply(path, plan)


def all_skills(ws: Any) -> list[Skill]:
    out = []
    for path in sorted(_dir(ws).glob("*.md")):
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        try:
            out.append(parse(path.stem, text))
        except UsageError:  # damaged block markers: listed as plain text; `kg skill update` says what to fix
            out.append(_parse_own(path.stem, text))
    return out


def load(ws: Any, slug: str) -> Skill:
    return _read(ws, slug)[0]


def _read(ws: Any, slug: str) -> tuple[Skill, bytes]:
    """The skill and the file's bytes it was read from: the `base` its rewrite is checked against (`_save`)."""
    slug = _check_slug(slug, ws.rules.redactor)  # kebab-case letters, digits and CJK only: no '/', '.' or '..'
    path = paths.inside(ws.root, _dir(ws) / f"{slug}.md", "the skill file")
    if not path.is_file():
        raise NotFound(f"no skill {slug!r}: `kg skill list` shows them")
    raw = path.read_bytes()
    text = raw.decode("utf-8")  # not read_text: its newline translation hides CRLF
    broken = frontmatter_problem(text)
    if broken:
        raise UsageError(f"{(_dir(ws) / path.name).relative_to(ws.root)}: {broken}")
    return parse(slug, text), raw


def _check_slug(slug: str, redactor: Any) -> str:
    """The slug as a file name, or a usage error. A slug that holds a secret is refused, neither echoed nor
    suggested: it would be the file's name, its title and a graph key, which no redaction reaches."""
    found = redactor.redact(slug or "").kinds
    if found:
        raise UsageError(f"the skill name holds what looks like a secret ({', '.join(found)}): a skill's name is its "
                         "file name and title; choose a name without it, such as deploy-docs")
    s = clean(slug or "", one_line=True).lower()
    if not SLUG.match(s) or len(s) > 60:
        raise UsageError(f"invalid skill slug {slug!r}: use kebab-case such as deploy-docs "
                         f"(suggestion: {slugify(slug) or 'my-skill'})")
    return s


def _save(ws: Any, skill: Skill, at: datetime, session: str | None, sources: list[str], *,
          base: bytes | None) -> None:
    """Write the skill's file, only over `base` (what it was made from; None: no file), else FileChanged and
    the file as its writer left it; then its graph row."""
    red = ws.rules.redactor

    def own(text: str) -> str:  # redacted, kg's marker text inert (`blocks.neutral`): else a step holding
        return blocks.neutral(red.redact(text).text)  # `<!-- kaizen-kg:begin …` reads as a lifecycle block

    skill.description = own(skill.description)
    for name in OWN:
        skill.sections[name] = [own(line) for line in skill.sections.get(name, [])]
    skill.triggers = [own(t) for t in skill.triggers]
    skill.tools = [own(t) for t in skill.tools]
    skill.name, skill.title = own(skill.name), own(skill.title)
    skill.source = red.redact(skill.source).text  # stored in the graph too
    # frontmatter a person added: the key is context for its value (`deploy_token: X`), as in `kg pref set`
    pairs = [red.redact_pair(key, value) for key, value in skill.extra.items()]
    skill.extra = {key.text: value.text for key, value in pairs}
    path = _dir(ws) / f"{skill.slug}.md"
    make_folder(path.parent, root=ws.root)  # a `memory/skills` linked out of the workspace is refused
    write_atomic(path, render_file(skill), base=base)
    from kg.store.schema import meta_key

    with ws.store() as st:
        st.run("memory_skill_upsert", key=meta_key("Skill", skill.slug), slug=skill.slug, skill_name=skill.name,
               description=skill.description,
               created=at, updated=at, source=skill.source, triggers=skill.triggers, tools=skill.tools,
               path=str(path.relative_to(ws.root)), session=session)
        if sources:
            found = {r["id"] for r in st.run("nodes_existing", ids=sources)}
            missing = [s for s in sources if s not in found]
            if missing:
                raise NotFound(f"no node {missing[0]!r} to learn the skill from: `kg list` shows the ids")
            st.run("memory_skill_link", key=meta_key("Skill", skill.slug), ids=sources, at=at)


def _clean_list(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for v in values or []:
        v = clean(v, one_line=True)
        if v and v.lower() not in {o.lower() for o in out}:
            out.append(v)
    return out


def new(ws: Any, slug: str, *, description: str = "", triggers: list[str] | None = None,
        tools: list[str] | None = None, steps: list[str] | None = None, pitfalls: list[str] | None = None,
        checks: list[str] | None = None, source: str = "kg skill new", from_ids: list[str] | None = None,
        force: bool = False, now: datetime | str | None = None, session: str | None = None) -> dict[str, Any]:
    """Create a skill, unless a similar one exists: then that one is updated (unless `force`)."""
    rules = memory_rules(ws).skills
    slug = _check_slug(slug, ws.rules.redactor)
    # the gate, before anything is cleaned, compared or cut
    description, triggers, tools, steps, pitfalls, checks = ws.rules.redactor.redact_value(
        [description, triggers, tools, steps, pitfalls, checks])
    triggers, tools = _clean_list(triggers), _clean_list(tools)
    description = clean(description or "", one_line=True)
    existing = all_skills(ws)
    if any(s.slug == slug for s in existing):
        result = update(ws, slug, description=description or None, triggers=triggers, tools=tools, steps=steps,
                        pitfalls=pitfalls, checks=checks, from_ids=from_ids, now=now, session=session)
        return {**result, "reason": f"a skill named {slug} exists"}
    if not force:
        scored = sorted(((similarity(s, slug, description, triggers), s.slug) for s in existing), reverse=True)
        if scored and scored[0][0] >= rules.similar_threshold:
            score, match = scored[0]
            result = update(ws, match, description=None, triggers=triggers, tools=tools, steps=steps,
                            pitfalls=pitfalls, checks=checks, from_ids=from_ids, now=now, session=session)
            return {**result, "similarity": round(score, 1),
                    "reason": f"similar to the existing skill {match} ({score:.0f}/100); "
                              "use --force to create a separate one"}
    at = clock.now(now)
    stamp = f"{at:%Y-%m-%d %H:%M}"
    skill = Skill(slug=slug, name=slug, description=description, created=stamp, updated=stamp, source=source,
                  triggers=triggers, tools=tools, title=slug.replace("-", " ").title())
    _add_items(skill, "Procedure", list(steps or []), True)
    _add_items(skill, "Pitfalls", list(pitfalls or []), False)
    _add_items(skill, "Verification", list(checks or []), False)
    _save(ws, skill, at, session or ws.current_session(), list(from_ids or []), base=None)
    return {**skill.as_dict(), "action": "created"}


def update(ws: Any, slug: str, *, description: str | None = None, triggers: list[str] | None = None,
           tools: list[str] | None = None, steps: list[str] | None = None, pitfalls: list[str] | None = None,
           checks: list[str] | None = None, from_ids: list[str] | None = None,
           now: datetime | str | None = None, session: str | None = None) -> dict[str, Any]:
    """Add to a skill: new triggers, tools and section items are appended; nothing is removed. A file written
    by someone else between kg's read and its replace is read again and added to (`retried`), never lost."""
    slug = _check_slug(slug, ws.rules.redactor)
    description, triggers, tools, steps, pitfalls, checks = ws.rules.redactor.redact_value(
        [description, triggers, tools, steps, pitfalls, checks])  # the gate, before anything is cleaned or cut
    return retried(lambda: _update(ws, slug, description, triggers, tools, steps, pitfalls, checks, from_ids,
                                   now, session))


def _update(ws: Any, slug: str, description: str | None, triggers: list[str] | None, tools: list[str] | None,
            steps: list[str] | None, pitfalls: list[str] | None, checks: list[str] | None,
            from_ids: list[str] | None, now: datetime | str | None, session: str | None) -> dict[str, Any]:
    skill, base = _read(ws, slug)
    at = clock.now(now)
    was = (skill.description, skill.triggers, skill.tools)
    if description:
        skill.description = clean(description, one_line=True)
    skill.triggers = _clean_list(skill.triggers + list(triggers or []))
    skill.tools = _clean_list(skill.tools + list(tools or []))
    added = {"procedure": _add_items(skill, "Procedure", list(steps or []), True),
             "pitfalls": _add_items(skill, "Pitfalls", list(pitfalls or []), False),
             "verification": _add_items(skill, "Verification", list(checks or []), False)}
    if not any(added.values()) and was == (skill.description, skill.triggers, skill.tools) and not from_ids:
        return {**load(ws, slug).as_dict(), "action": "unchanged", "added": added}  # the file stays as it is
    skill.updated = f"{at:%Y-%m-%d %H:%M}"
    skill.created = skill.created or skill.updated  # a promoted skill starts without frontmatter
    _save(ws, skill, at, session or ws.current_session(), list(from_ids or []), base=base)
    return {**skill.as_dict(), "action": "updated", "added": added}


def find(ws: Any, task: str, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The skills that best fit a task, best first."""
    rules = memory_rules(ws).skills
    if not clean(task or ""):
        raise UsageError("describe the task to find a skill for")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")
    scored = [(match_score(s, task), s) for s in all_skills(ws)]
    scored = [(sc, s) for sc, s in scored if sc >= rules.find_min]
    scored.sort(key=lambda x: (-x[0], x[1].slug))
    return [{**s.as_dict(), "score": round(sc, 1)} for sc, s in scored[: rules.find_limit if limit is None else limit]]


def list_(ws: Any) -> list[dict[str, Any]]:
    return [s.as_dict() for s in all_skills(ws)]
