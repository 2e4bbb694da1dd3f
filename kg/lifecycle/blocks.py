"""kg's marked blocks in plain files. Pure text functions plus one file writer.

A block looks like

    <!-- kaizen-kg:begin NAME -->
    - a rule kg wrote
    <!-- kaizen-kg:end NAME -->

kg writes only between its markers; every byte outside them stays as it was (files are read and written as
bytes decoded with `surrogateescape`, so even non-UTF-8 bytes survive). When kg adds a block it records the
exact "glue" it inserted before it (a separating newline, a heading), so removing the block restores the file
byte for byte. The hash of what kg last wrote inside a block is kept (the lifecycle's blocks in the graph, every
other writer's in `memory/.kg/blocks.json` through `write_block`): a block whose content no longer has that hash
was edited by a human, and kg flags it instead of overwriting it.

This is the one editor of marked blocks: the lifecycle's targets, the USER.md preferences, the AGENTS.md block
and the `.codex/config.toml` blocks `kg install codex` adds (there with '#' comment markers, `TOML`), the
crontab job of `kg schedule install` and the `[store]` table `kg init --store` writes into kg.toml (both `TOML`
too), and skills the lifecycle promoted (whose block `kg skill update` keeps byte for byte).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kg.core.errors import FileChanged, UnusableFile
from kg.core.files import ANY, check_target, target_problem, write_atomic

BEGIN = "<!-- kaizen-kg:begin {name} -->"
END = "<!-- kaizen-kg:end {name} -->"
HTML = (BEGIN, END)  # Markdown files: the default markers
TOML = ("# kaizen-kg:begin {name}", "# kaizen-kg:end {name}")  # files whose comments are '#' lines (.codex/config.toml)


# A marker of kg's held by a value kg renders (a preference, a rule's action, a principle): as written it would be a
# second begin or end line (or a `.learnings` entry's mark), and kg would read its own block as damaged. The colon
# after the name gets a backslash (`kaizen-kg\:end`): still readable, and no marker pattern of kg's matches it.
_FORGED = re.compile(r"(?<=kaizen-kg):(?=(?:begin|end|entry)\b)|(?<=kg:preferences):(?=(?:begin|end)\b)")


def neutral(text: str) -> str:
    """`text` with every marker of kg's in it made inert (`kaizen-kg:end` → `kaizen-kg\\:end`). Pure; a text that
    holds none is returned as it is, and so is one already made inert."""
    return _FORGED.sub(r"\\:", text) if "kg:" in text else text


class BlockError(ValueError):
    """The file's markers are damaged (unbalanced or repeated)."""


@dataclass(frozen=True)
class Span:
    start: int        # first char of the begin marker line
    inner_start: int  # first char after the begin marker line
    inner_end: int    # first char of the end marker line
    end: int          # first char after the end marker line (after its newline, if any)
    begun: int        # first char of the begin marker itself (after a person's text on its line, if any)
    opened: int       # first char after the begin marker itself
    closed: int       # first char after the end marker itself


def digest(inner: str) -> str:
    """The hash of a block's content on normalised line endings: a file converted to CRLF (a Windows editor,
    git's autocrlf) still holds what kg wrote."""
    return _raw_digest(inner.replace("\r\n", "\n"))


def _raw_digest(inner: str) -> str:
    return hashlib.sha256(inner.encode("utf-8", "surrogateescape")).hexdigest()[:16]


_TRAILING = re.compile(r"[ \t]+(?=\r?\n|$)")


def unpadded(text: str) -> str:
    """`text` without the spaces and tabs at its lines' ends."""
    return _TRAILING.sub("", text)


def same(inner: str, expected_hash: str) -> bool:
    """Whether `inner` is what kg last wrote (hashes kept before line endings were normalised count too).
    Spaces and tabs at a line's end do not count: an editor adds or strips them on save, they change no rule,
    and counting them made kg treat the block as a person's (QA2 #3: two trailing spaces kept a reverted rule
    in TOOLS.md, the revert reported as done)."""
    return (digest(inner) == expected_hash or _raw_digest(inner) == expected_hash
            or digest(unpadded(inner)) == expected_hash)


def newline_of(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _marker(fmt: str, name: str) -> re.Pattern[str]:
    """A marker line's pattern; a marker that ends with the name must end there (`a` is not `a-b`)."""
    return re.compile(re.escape(fmt.format(name=name)) + (r"(?=\s|$)" if fmt.endswith("{name}") else ""))


def find(text: str, name: str, markers: tuple[str, str] = HTML) -> Span | None:
    starts = [m.start() for m in _marker(markers[0], name).finditer(text)]
    ends = [m.start() for m in _marker(markers[1], name).finditer(text)]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise BlockError(f"the kg block markers for {name!r} are damaged ({len(starts)} begin, {len(ends)} end)")
    s, e = starts[0], ends[0]
    line_start = text.rfind("\n", 0, s) + 1
    inner_start = text.find("\n", s)
    inner_start = len(text) if inner_start < 0 else inner_start + 1
    after = text.find("\n", e)
    after = len(text) if after < 0 else after + 1
    return Span(line_start, inner_start, e, after, s, s + len(markers[0].format(name=name)),
                e + len(markers[1].format(name=name)))


def _kept_line(left: str, right: str) -> str:
    """What stays of a marker's line when kg removes its block: a person's text beside the marker (`left` before
    it, `right` after it with the line's ending), without the marker and the blanks next to it; "" when the
    line held nothing else (the whole line goes, as kg wrote it)."""
    bare = right.rstrip("\r\n")
    ending = right[len(bare):]
    left, bare = left.rstrip(" \t"), bare.lstrip(" \t")
    if not left.strip() and not bare.strip():
        return ""
    return (left + " " + bare if left and bare else left + bare) + ending


def _removed(current: str, span: Span, glue: str) -> str:
    """`current` without the block at `span`: its markers and what lies between them. A person's text on a
    marker's line stays on that line (QA1 #3: `<!-- kaizen-kg:end x --> ask Bob` lost 'ask Bob' on uninstall);
    the glue kg put before the block goes with it unless the begin line holds such text, which it then leads to."""
    head = _kept_line(current[span.start:span.begun], current[span.opened:span.inner_start])
    tail = _kept_line("", current[span.closed:span.end])  # text before the end marker is the block's: it goes
    before = current[:span.start]
    cut = len(glue) if glue and not head and before.endswith(glue) else 0
    return before[:len(before) - cut] + head + tail + current[span.end:]


def without(text: str, span: Span) -> str:
    """`text` without the block at `span`, as a removal leaves it: a person's text on a marker's line stays."""
    return _removed(text, span, "")


def inner_of(text: str | None, name: str, markers: tuple[str, str] = HTML) -> str | None:
    """The content between the markers, or None when the file or the block is absent."""
    if text is None:
        return None
    span = find(text, name, markers)
    return None if span is None else text[span.inner_start:span.inner_end]


def block_text(name: str, inner: str, nl: str = "\n", markers: tuple[str, str] = HTML) -> str:
    return f"{markers[0].format(name=name)}{nl}{inner}{markers[1].format(name=name)}{nl}"


def list_inner(lines: list[str], nl: str = "\n") -> str:
    return "".join(f"- {line}{nl}" for line in lines)


@dataclass(frozen=True)
class SyncPlan:
    """What syncing one block does. action: none, create (file), insert, update, remove, delete (file),
    flag (not written: a human edited inside the block, removed it, or damaged its markers). `base` is the file
    text the plan was made from (None: no file; ANY: not known): `apply` writes only over that text."""

    action: str
    text: str | None
    hash: str | None
    glue: str
    reason: str = ""
    base: Any = ANY


EXPORT_FIX = "run `kg export memory --force` to let kg rewrite the block"
DAMAGED_FIX = ("kg leaves the block alone until it has one begin line and one end line after it, or none (delete "
               "its markers and the lines between them)")
_ANY_BEGIN = re.compile(r"<!-- kaizen-kg:begin (\S+) -->")


def names(text: str, markers: tuple[str, str] = HTML) -> list[str]:
    """The names of the kg blocks in a text, in order. Pure."""
    pattern = _ANY_BEGIN if markers == HTML else re.compile(re.escape(markers[0]).replace(r"\{name\}", r"(\S+)"))
    return list(dict.fromkeys(pattern.findall(text)))


def block_of_line(text: str, offset: int, markers: tuple[str, str] = HTML) -> str | None:
    """The name of the kg block holding the character at `offset`, or None when it is outside every block."""
    for name in names(text, markers):
        try:
            span = find(text, name, markers)
        except BlockError:
            continue
        if span is not None and span.start <= offset < span.end:
            return name
    return None


def plan_sync(current: str | None, name: str, desired: str | None, *, expected_hash: str | None,
              glue: str, created_file: bool, section: str = "", force: bool = False,
              fix: str = EXPORT_FIX, markers: tuple[str, str] = HTML) -> SyncPlan:
    """Decide how to bring `current` (file text, None if missing) to hold `desired` inside block `name`
    (None: no block at all). `expected_hash` is the hash of what kg last wrote there (None: never wrote).
    `markers` are the begin and end lines' formats (HTML comments by default; `TOML` for '#' comments).
    The plan's `base` is left unknown: a caller whose `current` is the file's text as read sets it
    (`replace(plan, base=current)`), and `apply` then refuses to write over a file that changed since.
    In a Markdown block (`HTML` markers) a marker held by `desired` is made inert first (`neutral`): the values
    kg renders are other people's text, and one holding kg's end marker would otherwise end the block early."""
    if desired is not None and markers == HTML:
        desired = neutral(desired)
    try:
        span = find(current, name, markers) if current is not None else None
    except BlockError as exc:
        return SyncPlan("flag", None, expected_hash, glue, f"{exc}; {DAMAGED_FIX}")
    inner = None if span is None or current is None else current[span.inner_start:span.inner_end]
    if desired is not None and current is not None and newline_of(current) == "\r\n":
        desired = desired.replace("\r\n", "\n").replace("\n", "\r\n")  # a CRLF file gets CRLF lines
    if not force and expected_hash is not None:
        if inner is None and desired is not None:
            return SyncPlan("flag", None, expected_hash, glue,
                            f"the kg block was removed by hand; restore it, or {fix}")
        if inner is not None and not same(inner, expected_hash) and inner != desired:
            return SyncPlan("flag", None, expected_hash, glue,
                            f"a human edited inside the kg block; move the text outside the markers, or {fix}")
    if desired is None:
        if span is None or current is None:
            return SyncPlan("none", current, None, "")
        text = _removed(current, span, glue)
        if created_file and text == "":
            return SyncPlan("delete", None, None, "")
        return SyncPlan("remove", text, None, "")
    if current is None:
        nl = "\n"
        head = f"{section}{nl}{nl}" if section else ""
        return SyncPlan("create", head + block_text(name, desired, nl, markers), digest(desired), head)
    nl = newline_of(current)
    if span is not None:
        if inner is not None and unpadded(inner) == unpadded(desired):  # as kg wrote it, maybe padded by an editor
            return SyncPlan("none", current, digest(desired), glue)
        text = current[:span.inner_start] + desired + current[span.inner_end:]
        return SyncPlan("update", text, digest(desired), glue)
    block = block_text(name, desired, nl, markers)
    at = _section_end(current, section) if section else None
    if at is not None:
        lead = "" if current[:at].endswith("\n") else nl  # the heading is the file's last line, with no ending
        return SyncPlan("insert", current[:at] + lead + block + current[at:], digest(desired), lead)
    if current == "" or current.endswith(nl + nl):
        sep = ""
    elif current.endswith(nl):
        sep = nl
    else:
        sep = nl + nl
    new_glue = sep + (f"{section}{nl}{nl}" if section else "")
    return SyncPlan("insert", current + new_glue + block, digest(desired), new_glue)


def _section_end(text: str, section: str) -> int | None:
    """Offset just after the first line equal (stripped) to `section`, or None. The file's last line counts
    without a line ending (the offset is then the file's end), and its first line after a UTF-8 BOM: a heading
    missed there got a second one appended under it (QA1 #6)."""
    pos, wanted = 0, section.strip()
    for line in text.splitlines(keepends=True):
        if (line.lstrip("\ufeff") if pos == 0 else line).strip() == wanted:
            return pos + len(line)
        pos += len(line)
    return None


def read(path: Path) -> str | None:
    """The file's text, None when there is none; a folder or an unreadable file where it belongs is an
    UnusableFile naming it (a job that reads many files skips that one, see `Lifecycle.problem`)."""
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UnusableFile(target_problem(path, confined=False) or
                           f"{path} cannot be read: {exc.strerror}; let kg read it (chmod u+r) or move it away",
                           str(path)) from None


def apply(path: Path, plan: SyncPlan, *, confined: bool = True) -> None:
    """Carry out a plan on disk (atomic replace; a file kg created and emptied is removed). `confined`: see
    `kg.core.files.target_problem`. A plan whose `base` is known is written only over that text: a file written
    since it was read raises FileChanged and stays as it is."""
    if plan.action in ("none", "flag"):
        return
    if plan.action == "delete":
        try:
            if plan.base is not ANY and path.read_bytes() != (plan.base or "").encode("utf-8", "surrogateescape"):
                raise FileChanged(f"{path.name} changed while kg was removing it; kg left it as it is: run the "
                                  "command again", str(path))
            os.unlink(path)
        except FileNotFoundError:
            pass
        return
    assert plan.text is not None
    if confined:
        check_target(path)  # before its folder is made: a linked folder on the way may lead out
    path.parent.mkdir(parents=True, exist_ok=True)
    base = plan.base if plan.base is ANY or plan.base is None else plan.base.encode("utf-8", "surrogateescape")
    write_atomic(path, plan.text.encode("utf-8", "surrogateescape"), confined=confined, base=base)


# -- blocks whose hash lives in a file (every writer but the lifecycle, which keeps it in the graph) -------------
STATE_FILE = "blocks.json"


def load_states(state_dir: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads((state_dir / STATE_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def write_block(path: Path, name: str, desired: str | None, *, state_dir: Path, key: str, section: str = "",
                force: bool = False, fix: str = EXPORT_FIX, dry_run: bool = False,
                markers: tuple[str, str] = HTML) -> SyncPlan:
    """Sync one block in one file and remember what kg wrote there (`state_dir/blocks.json`, under `key`).
    A block a human edited, removed or damaged is left as it is: the plan says `flag`, with the reason."""
    current = read(path)  # the plan is written only over this text (`apply`, `SyncPlan.base`)
    return sync_block(current, name, desired, write=lambda plan: apply(path, replace(plan, base=current)),
                      state_dir=state_dir,
                      key=key, section=section, force=force, fix=fix, dry_run=dry_run, markers=markers)


def sync_block(current: str | None, name: str, desired: str | None, *, write: Callable[[SyncPlan], None],
               state_dir: Path, key: str, section: str = "", force: bool = False, fix: str = EXPORT_FIX,
               dry_run: bool = False, markers: tuple[str, str] = HTML) -> SyncPlan:
    """`write_block` for a text that is not simply a file (the user's crontab, read and written through the
    `crontab` command): `current` is its text (None: there is none) and `write` carries out the plan."""
    states = load_states(state_dir)
    state = states.get(key) or {}
    plan = plan_sync(current, name, desired, expected_hash=str(state.get("hash") or "") or None,
                     glue=str(state.get("glue") or ""), created_file=bool(state.get("created_file")),
                     section=section, force=force, fix=fix, markers=markers)
    if dry_run or plan.action == "flag":
        return plan
    if plan.action != "none":
        write(plan)
    created = plan.action == "create" or (bool(state.get("created_file")) and plan.action not in ("remove", "delete"))
    new = {"hash": plan.hash or "", "glue": plan.glue, "created_file": created} if plan.hash else None
    if new != (state or None):
        save_state(state_dir, key, new)
    return plan


def save_state(state_dir: Path, key: str, state: dict[str, object] | None) -> None:
    """Remember (or, with None, forget) what kg wrote in one block."""
    try:
        data = json.loads((state_dir / STATE_FILE).read_bytes())
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    if state is None:
        data.pop(key, None)
    else:
        data[key] = state
    state_dir.mkdir(parents=True, exist_ok=True)
    write_atomic(state_dir / STATE_FILE, json.dumps(data, ensure_ascii=False, sort_keys=True).encode("utf-8"))
