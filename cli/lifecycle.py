"""`kg cycle`, `kg propose`, `kg approve`, `kg skip`, `kg verify`, `kg conflicts`, `kg pin`, `kg reinforce`,
`kg why`, `kg export memory`: the learning lifecycle. Each command makes one call into `kg.lifecycle.api`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, fail, now_of, workspace

from kg.core import clock
from kg.core.errors import UsageError

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Say what would change; write nothing.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Rewrite kg blocks even where a human edited inside "
                                                         "them (text outside the blocks is never touched).")]

conflicts_app = typer.Typer(help="Conflicting rules: scores, winners, ties for review.", invoke_without_command=True)


def _api():
    from kg.lifecycle import api

    return api


# -- rendering ------------------------------------------------------------------------------------------------
def _render_cycle(d: dict[str, Any]) -> str:
    head = "🔄 kg cycle" + (" (dry run: nothing written)" if d["dry_run"] else "") + f" at {d['now']}"
    lines = [head, *_journal_line(d)]
    for v in d["verified"]:
        lines.append(f"  🔍 {v['change']} → {v['target']}: {v['summary']}")
    lines += _render_withdrawn(d)
    for r in d["reverted"]:
        lines.append(f"  ↩️  reverted {r['change']} ({r['status']}, {r['verdict']}): '{r['text'][:60]}' "
                     f"from {r['target']}")
    for r in d["reminders"]:
        lines.append(f"  ⏰ reminder: {r['change']} verification overdue ('{r['text'][:50]}')")
    for r in d["evidence_requested"]:
        lines.append(f"  📨 evidence requested for {r['change']}: proposal #{r['proposal']}")
    dec = d["decayed"]
    if any(dec[k] for k in ("demoted", "stale", "expired", "restored")):
        lines.append(f"  🍂 decay: {dec['demoted']} demoted, {dec['stale']} stale, {dec['expired']} expired "
                     f"(wont_fix), {dec['restored']} restored")
    if dec.get("proposals_skipped"):
        lines.append(f"  🍂 proposals skipped, their patterns expired: "
                     f"{', '.join(f'#{n}' for n in dec['proposals_skipped'])}")
    if dec.get("revived"):
        lines.append(f"  🌱 recurred after decay expired them, candidates again: {', '.join(dec['ids']['revived'])}"
                     + (f" (+{dec['revived'] - len(dec['ids']['revived'])} more)"
                        if dec["revived"] > len(dec["ids"]["revived"]) else ""))
    for c in d["conflicts"]:
        state = f"winner {c['winner']}" if c["status"] == "settled" else "TIE — review with `kg conflicts`"
        lines.append(f"  ⚖️  {c['id']}: {c['a']} ({c['score_a']}) vs {c['b']} ({c['score_b']}): {state}")
    for p in d["promoted"]:
        lines.append(_promoted_line(p))
    for p in d["proposed"]:
        lines.append(f"  📋 proposal #{p['number']} ({p['type']}) → {p['target']}: {p['text'][:60]}")
    for q in d.get("superseded", []):
        lines.append(f"  🗂️  {q.get('type', 'import')} proposal #{q['number']} superseded: '{q['pattern_key']}' was "
                     f"promoted here ({q['change']}, {q['target']}), " + ("its own rule stands" if q.get(
                         "type", "import") == "import" else "an imported rule stands"))
    lines += _render_waiting(d.get("waiting", []))
    for h in d["held"]:
        lines.append(f"  ✋ held '{h['pattern_key']}' for {h['target']}: {h['reason']}")
    for item in d["logged"]:
        lines.append(f"  📝 logged {item['id'] or '(dry run)'} [{item['priority']}]: {item['summary'][:70]}")
    for f in d["files"]:
        lines.append(f"  📄 {f['path']}: {f['action']}")
    for f in d["flags"]:
        lines.append(f"  ⚠️  {f['path']}: {f['flag']}")
    lines += _render_skipped(d)
    if not d["changed"]:
        lines.append("  nothing to do")
    done = d.get("compacted") or {}
    if done:  # (kg/store/compact.py) upkeep of the file, not a change of what kg knows
        lines.append(f"  🗜️  {done['text']}" if "text" in done else f"  ⚠️  graph file not compacted: {done['error']}")
    return "\n".join(lines)


def _promoted_line(p: dict[str, Any]) -> str:
    """A promotion, or one a conflict keeps out of its file (`set_aside`): made a rule, not written (QA4 #6)."""
    if not p.get("set_aside"):
        return (f"  ✅ promoted '{p['pattern_key']}' to {p['target']}: - {p['text']} (verify by "
                f"{p['next_check'][:10]})")
    return (f"  ⚖️  promoted '{p['pattern_key']}' ({p['change']}), not written to {p['target']}: "
            f"{_aside_text(p['set_aside'])}: - {p['text']}")


def _aside_text(a: dict[str, Any]) -> str:
    """Which decision keeps a new rule out of its file, and how."""
    d, vs = a["decision"], f"{a['score']} vs {a['rival_score']}"
    how = (f"it lost {d} to {a['rival']} ({vs}): kg leaves it out" if a["outcome"] == "lost" else
           f"it ties {d} with {a['rival']} ({vs}), which stays: kg leaves this one out" if a["kept"] else
           f"it ties {d} with {a['rival']} ({vs}): kg writes neither")
    return f"{how}, verification paused (`kg conflicts resolve {d} --winner ID` picks one)"


WAITING_SHOWN = 3  # patterns named on a line of those waiting for the same reason (the rest counted: `kg status`)


def _render_waiting(waiting: list[dict[str, Any]]) -> list[str]:
    """Patterns the budgets hold back, one line per target and reason: a cycle over an imported history printed one
    line for each of 159 patterns waiting behind "5 promotions into TOOLS.md this cycle already" (QA6 #7), every day
    in a scheduled job's log. `--json` keeps every one."""
    groups: dict[tuple[str, str], list[str]] = {}
    for w in waiting:
        groups.setdefault((w["target"] or "a later cycle", w["reason"]), []).append(w["pattern_key"])
    lines = []
    for (target, reason), keys in groups.items():
        if len(keys) == 1:
            lines.append(f"  ⏳ waiting '{keys[0]}' for {target}: {reason}")
            continue
        named = ", ".join(f"'{k}'" for k in keys[:WAITING_SHOWN])
        more = f" and {len(keys) - WAITING_SHOWN} more (`kg status` lists them)" if len(keys) > WAITING_SHOWN else ""
        lines.append(f"  ⏳ waiting for {target}, {len(keys)} patterns: {named}{more}: {reason}")
    return lines


def _render_withdrawn(d: dict[str, Any]) -> list[str]:
    """Changes a person took out of their file: verification paused, or resumed (kg/lifecycle/verify_withdrawn);
    rules kg took out for a check, put back or left out (kg/lifecycle/verify_check)."""
    out = [f"  🔬 {c['change']} → {c['target']}: " + (
        f"out for a check until {c['until'][:10]} ({c['why']})" if c["action"] == "out" else
        f"back after its check ({c['why']})" if c["action"] == "back" else
        f"left out after its check ({c['why']})") for c in d.get("checks", [])]
    told = {p["change"] for p in d.get("promoted", []) if p.get("set_aside")}  # (their promotion line says it)
    for w in d.get("withdrawn", []):
        if w["change"] in told and w.get("how") == "aside":
            continue
        if w["action"] == "resumed":
            how = ("let back: no conflict keeps it out now, kg wrote it back" if w.get("how") == "let back" else
                   "back in the file")
            out.append(f"  ▶️  {w['change']} → {w['target']}: {how}, verification resumed (next check "
                       f"{w['next_check'][:10]})")
        elif w["action"] == "not written":
            out.append(f"  ⏳ {w['change']} → {w['target']}: not written into this file: its kg block was edited by "
                       "hand before this rule came, and kg leaves a person's edit as it is; the rule is not in effect "
                       "here (add it yourself, or `kg export memory --force` rewrites the block with it)")
        elif w.get("how") == "damaged":
            out.append(f"  ⏸️  {w['change']} → {w['target']}: its kg block's markers are damaged since "
                       f"{w['since'][:10]}, verification paused until they are fixed (the flag below says how)")
        elif w.get("how") == "let back":  # kg wrote it back in this run: nobody edited anything
            out.append(f"  ⏸️  {w['change']} → {w['target']}: set aside by a conflict since {w['since'][:10]}, let "
                       "back now (no conflict keeps it out: `kg conflicts`) and written back as kg wrote it; "
                       "verification resumes at the next kg cycle (its days out are no evidence)")
        elif w.get("how") == "aside":
            out.append(f"  ⏸️  {w['change']} → {w['target']}: set aside by a conflict since {w['since'][:10]} (kg "
                       "leaves it out of the file: `kg conflicts`), verification paused (its days out are no evidence)")
        elif w.get("how") == "edited":
            out.append(f"  ⏸️  {w['change']} → {w['target']}: edited by hand inside its kg block since "
                       f"{w['since'][:10]} (the rule is not there in kg's words: reworded, or taken out of the block), "
                       "verification paused until the block holds it again (`kg export memory --force` rewrites it)")
        else:
            out.append(f"  ⏸️  {w['change']} → {w['target']}: withdrawn by hand since {w['since'][:10]}, "
                       "verification paused (its days out are no evidence)")
    return out


def _render_proposals(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "✅ No proposals at this time."
    lines = [f"\n📋 {len(rows)} Proposal(s) for Review:\n"]
    for q in rows:
        lines += [f"  [{q['number']}] {q['type'].upper()} → {q['target']}",
                  f"      Change: {q['change']}",
                  f"      Why: {q['motivation']}",
                  f"      Risk: {q['risk']} | Effort: {q['effort']} | Impact: {q['impact']}", ""]
    lines += ["  To approve: kg approve N", "  To reject: kg skip N --reason \"...\""]
    return "\n".join(lines)


def _render_files(d: dict[str, Any]) -> list[str]:
    return [f"  📄 {f['path']}: {f['action']}" + (f" — {f['flag']}" if f.get("flag") else "")
            for f in d.get("files", [])] + _render_skipped(d)


def _render_skipped(d: dict[str, Any]) -> list[str]:
    return [f"  ⛔ {f['path']}: skipped, left as it is: {f['reason']}" for f in d.get("skipped", [])]


def _exit_if_skipped(d: dict[str, Any]) -> None:
    """Exit 1 when a file was skipped: the rest was done, but a file waits for a person (as `kg doctor` exits 1
    on a problem it left), and a job's exit status is what a scheduler shows."""
    if d.get("skipped"):
        raise typer.Exit(1)


def _render_conflicts(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No conflicts between rules."
    lines = []
    for d in rows:
        if d["status"] == "tie":
            kept = f" (kept {d['winner']} for now)" if d["winner"] else " (neither rendered)"
            state = (f"TIE{kept} — pick one: kg conflicts resolve {d['id']} --winner ID, or keep both: "
                     "--compatible")
        elif d["status"] == "compatible":
            state = "no conflict, both written (human decision)"
        else:
            state = f"winner {d['winner']}" + (" (human override)" if d["override"] else "")
        lines += [f"⚖️  {d['id']}: {state}",
                  f"    {d['a']} [{d['score_a']}: {d['parts_a']}] {d['text_a'] or ''}",
                  f"    {d['b']} [{d['score_b']}: {d['parts_b']}] {d['text_b'] or ''}",
                  f"    reason: {d['reason']}"]
    return "\n".join(lines)


def _render_why(d: dict[str, Any]) -> str:
    where = ", ".join(d.get("files") or []) or d.get("file") or "?"  # a marker or a shared line: every file
    head = f"{where}: {d['line'].strip()}" if d["found"] else f"not found: {d['line'].strip()}"
    return "\n".join([head, *("  " + x for x in d["explanation"])])


def _journal_line(d: dict[str, Any]) -> list[str]:
    """A dry run still applies the agent's waiting entries (as every kg command does): said, not hidden."""
    n = d.get("journal_applied") or 0
    return [f"  📥 {n} acknowledged entr{'y' if n == 1 else 'ies'} waiting in the journal applied first (every kg "
            "command applies them; the dry run itself wrote nothing)"] if n and d["dry_run"] else []


def _render_verify(d: dict[str, Any]) -> str:
    due = len(d["verified"])
    lines = [f"🔍 Verifications: {due} due, {len(d['monitoring'])} monitoring", *_journal_line(d)]
    for v in d["verified"]:
        lines.append(f"  [{v['change']}] → {v['target']}: {v['summary']}")
    lines += _render_withdrawn(d)
    for r in d["reverted"]:
        lines.append(f"  ↩️  reverted {r['change']} ({r['status']})")
    for h in d.get("held", []):  # a revert kg could not write (kg/lifecycle/verifying.py `_hold_revert`)
        lines.append(f"  ✋ held '{h['pattern_key']}' for {h['target']}: {h['reason']}")
    for m in d["monitoring"]:
        state = (f"paused ({_HOW_OUT.get(m.get('how'), 'withdrawn by hand')}"
                 f" since {m['withdrawn_since'][:10]})" if m.get("withdrawn_since") else
                 f"out for a check until {m['check']['until'][:10]}" if m.get("check") else
                 f"next check {(m['next_check'] or '')[:10]}")
        lines.append(f"  · [{m['id']}] {m['status']} → {m['target']}: {state}")
    lines += _render_files(d)
    return "\n".join(lines)


_HOW_OUT = {"edited": "edited by hand inside its kg block", "aside": "set aside by a conflict"}


# -- commands -------------------------------------------------------------------------------------------------
CYCLE_HARM = ("a cycle then decays and expires everything not reinforced by that day, and a later cycle does not "
              "undo it. Check the date; `kg cycle --dry-run` shows what it would do")


def not_a_future_day(at: datetime, harm: str = CYCLE_HARM, *,
                     allow: str = "add --future to run at that day on purpose") -> None:
    """A command that writes lasting lifecycle state, at a time past the machine's clock, is refused (QA pass: a
    mistyped `--now 2099-01-01` marked every entry stale and won't-fix, and no later cycle at the real time gives
    that back; QA2 #4: `kg verify` confirmed a rule on 223 days that had not happened, `kg approve` applied a
    change not checked until a week after that day). `allow` says how to run at that day on purpose (`kg mcp`'s
    approve and skip: start the server with --future)."""
    wall = clock.wall()
    if at > wall + FUTURE_SLACK:
        raise UsageError(f"--now {at:%Y-%m-%d %H:%M} is {(at - wall).days} day(s) after this machine's clock "
                         f"({wall:%Y-%m-%d %H:%M}): {harm}; {allow}.")


def _guarded(ctx: typer.Context, now: str | None, future: bool, harm: str, *,
             dry_run: bool = False) -> tuple[Any, str | None]:
    """The workspace and the time a writing command runs at, a future one refused unless `--future` says so."""
    at = now_of(ctx, now)
    ws = workspace(ctx)  # first: a --now without an offset is read in the workspace's clock zone
    if at and not dry_run and not future:
        not_a_future_day(clock.now(at), harm)
    return ws, at


VERIFY_HARM = ("a verdict then counts every day until it as a day the mistake did not happen, and it stays. Check "
               "the date; `kg verify --dry-run` shows what it would do")
STATE_HARM = "what kg records is dated that day and stays. Check the date"
CONFLICT_HARM = ("the contradictions no decision covers yet are then decided as of that day (each rule's recency "
                 "counted to it) and the decisions stay. Check the date")


FutureOpt = Annotated[bool, typer.Option("--future", help="Run at a --now / KG_NOW more than a day after this "
                                                          "machine's clock (a future day replayed on purpose).")]
FUTURE_SLACK = timedelta(days=1)


def cycle(ctx: typer.Context, dry_run: DryRunOpt = False, force: ForceOpt = False, future: FutureOpt = False,
          now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Verify, revert, decay, settle conflicts, promote, export — the periodic job. Idempotent. A file kg may
    not use (a symlink out of the workspace, a folder) is reported and skipped, and the exit code is 1."""
    with errors():
        ws, at = _guarded(ctx, now, future, CYCLE_HARM, dry_run=dry_run)
        report = _api().cycle(ws, at, dry_run, force=force)
    emit(report.as_dict(), as_json, _render_cycle)
    _exit_if_skipped(report.as_dict())


def propose(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """List the pending proposals, numbered."""
    with errors():
        rows = _api().propose(workspace(ctx))
    emit(rows, as_json, _render_proposals)


def approve(ctx: typer.Context, number: Annotated[int, typer.Argument(metavar="N", help="Proposal number.")],
            future: FutureOpt = False, now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Carry out proposal N (apply the rule, confirm the verification, or take up the fix)."""
    with errors():
        ws, at = _guarded(ctx, now, future, STATE_HARM)
        d = _api().approve(ws, number, at)
    emit(d, as_json, lambda d: "\n".join([f"✅ #{d['number']} ({d['type']}): {d['action']}"
                                          + (f" {d.get('change') or d.get('entry') or ''}".rstrip())]
                                         + ([f"  ⚖️  not written to {d['target']}: {_aside_text(d['set_aside'])}"]
                                            if d.get("set_aside") else [])
                                         + _render_files(d)))


def skip(ctx: typer.Context, number: Annotated[int, typer.Argument(metavar="N", help="Proposal number.")],
         reason: Annotated[str, typer.Option("--reason", help="Why (kept with the proposal).")] = "",
         future: FutureOpt = False, now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Decline proposal N. A skipped promotion returns only if its pattern recurs."""
    with errors():
        ws, at = _guarded(ctx, now, future, STATE_HARM)
        d = _api().skip(ws, number, reason, at)
    emit(d, as_json, lambda d: f"⏭️  #{d['number']} skipped: {d['reason']}")


def verify(ctx: typer.Context, dry_run: DryRunOpt = False, future: FutureOpt = False, now: NowOpt = None,
           as_json: JsonOpt = False) -> None:
    """Judge the changes that are due: confirmed, ineffective, made worse or inconclusive (with numbers)."""
    with errors():
        d = _api().verify(*_guarded(ctx, now, future, VERIFY_HARM, dry_run=dry_run), dry_run)
    emit(d, as_json, _render_verify)


@conflicts_app.callback()
def conflicts_list(ctx: typer.Context, future: FutureOpt = False, now: NowOpt = None,
                   as_json: JsonOpt = False) -> None:
    """List conflict decisions (ties wait for you); contradictions added since the last cycle are decided first."""
    if ctx.invoked_subcommand is not None:
        return
    with errors():
        rows = _api().conflicts(*_guarded(ctx, now, future, CONFLICT_HARM))
    emit(rows, as_json, _render_conflicts)


@conflicts_app.command("resolve")
def conflicts_resolve(
    ctx: typer.Context,
    decision: Annotated[str, typer.Argument(metavar="ID", help="Decision id (dec-YYYYMMDD-NNN).")],
    winner: Annotated[str | None, typer.Option("--winner", help="The rule id that wins (or a / b).")] = None,
    compatible: Annotated[bool, typer.Option(
        "--compatible", help="The two rules do not conflict: both are written, and kg does not raise the pair "
                             "again.")] = False,
    future: FutureOpt = False,
    now: NowOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Override a decision: only the winner is rendered (--winner), or both, as not conflicting (--compatible)."""
    with errors():
        ws, at = _guarded(ctx, now, future, STATE_HARM)
        d = _api().resolve_conflict(ws, decision, winner, at, compatible=compatible)
    emit(d, as_json, lambda d: "\n".join(
        [f"⚖️  {d['id']}: {d['a']} and {d['b']} do not conflict: both are written (override)" if d["compatible"]
         else f"⚖️  {d['id']}: {d['winner']} wins over {d['loser']} (override)"] + _render_files(d)))


def pin(ctx: typer.Context, node_id: Annotated[str, typer.Argument(metavar="ID", help="Node or entry id.")],
        off: Annotated[bool, typer.Option("--off", help="Unpin.")] = False, future: FutureOpt = False,
        now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Pin a node: it never decays."""
    with errors():
        ws, at = _guarded(ctx, now, future, STATE_HARM)
        d = _api().pin(ws, node_id, at, pinned=not off)
    emit(d, as_json, lambda d: f"📌 {d['id']} {'pinned' if d['pinned'] else 'unpinned'}")


def reinforce(ctx: typer.Context, node_id: Annotated[str, typer.Argument(metavar="ID", help="Node or entry id.")],
              future: FutureOpt = False, now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Confirm a node still matters: resets its decay clock (and undoes decay)."""
    with errors():
        ws, at = _guarded(ctx, now, future, STATE_HARM)
        d = _api().reinforce(ws, node_id, at)
    emit(d, as_json, _render_reinforced)


def _render_reinforced(d: dict[str, Any]) -> str:
    """A node without a priority (a lesson; a principle or knowledge node made without one) says its status
    alone: the line read `(None, active)`. (--json keeps `"priority": null`, as `kg list --json` writes it.)"""
    how = ", ".join(str(v) for v in (d["priority"], d["status"]) if v is not None)
    return f"💪 {d['id']} reinforced at {d['reinforced_at']} ({how})"


def why(ctx: typer.Context, line: Annotated[str, typer.Argument(help="A line from an instruction file, or a "
                                                                      "fragment of one.")],
        now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Explain a line: the change that wrote it (live or past), its rule, pattern, events and verdicts; for a
    fragment, the candidate lines."""
    with errors():
        d = _api().why(workspace(ctx), line, now_of(ctx, now))
    emit(d, as_json, _render_why)
    # a line kg never wrote is bad input, as `kg show` answers an id nobody gave out: exit 2 with an Error line,
    # in text and in --json alike (whose `"found": false` document is still printed for a parser). The exit code
    # says what happened whatever the format (QA2 #11: --json exited 0 where the same question in text exited 2)
    if not d["found"]:
        fail("kg did not write this line: no kg block holds it and no change ever wrote it; give a line from "
             "a kg block of an instruction file", 2)


def export_memory(ctx: typer.Context, dry_run: DryRunOpt = False, force: ForceOpt = False,
                  future: FutureOpt = False, now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Render active principles (conflict winners) into MEMORY.md and every other kg block. Byte-stable."""
    with errors():
        ws, at = _guarded(ctx, now, future, CONFLICT_HARM, dry_run=dry_run)
        d = _api().export_memory(ws, at, dry_run, force=force)
    emit(d, as_json, _render_export)
    _exit_if_skipped(d)


def _render_export(d: dict[str, Any]) -> str:
    head = (f"📤 export{' (dry run)' if d['dry_run'] else ''}: "
            f"{sum(len(b['lines']) for b in d['blocks'])} rule(s) in {len(d['blocks'])} block(s)")
    return "\n".join([head, *(_render_files(d) or ["  files up to date"])])


def register(app: typer.Typer, export_app: typer.Typer | None = None) -> None:
    """Add the lifecycle commands; `kg export memory` joins the shared `export` group when given one."""
    app.command()(cycle)
    app.command()(propose)
    app.command()(approve)
    app.command()(skip)
    app.command()(verify)
    app.add_typer(conflicts_app, name="conflicts")
    app.command()(pin)
    app.command()(reinforce)
    # A line copied from a file starts with "- ": click would read it as bundled short options. With unknown
    # options ignored and no "-h" here (only --help), every character is unknown and click hands the line
    # back unchanged as the argument.
    app.command(context_settings={"ignore_unknown_options": True, "help_option_names": ["--help"]})(why)
    if export_app is None:
        export_app = typer.Typer(help="Render what kg learned into files.", no_args_is_help=True)
        app.add_typer(export_app, name="export")
    export_app.command("memory")(export_memory)
