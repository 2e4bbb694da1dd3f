"""The memory layer's commands: sessions, preferences, skills, search, topics, injection and scores."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, NowOpt, emit, errors, note, now_of, pending_note, workspace

from kg.core.errors import UsageError

ListOpt = list[str] | None


def register(app: typer.Typer) -> None:
    session_app = typer.Typer(help="Sessions: start one (later logs default to it), end it with a summary.",
                              no_args_is_help=True)
    pref_app = typer.Typer(help="The user's preferences (memory/preferences.json, rendered into USER.md).",
                           no_args_is_help=True)
    skill_app = typer.Typer(help="Reusable procedures in memory/skills/SLUG.md.", no_args_is_help=True)
    index_app = typer.Typer(help="The topic index (memory/.memory-index.json and topic links in the graph).",
                            no_args_is_help=True)
    app.add_typer(session_app, name="session")
    app.add_typer(pref_app, name="pref")
    app.add_typer(skill_app, name="skill")
    app.add_typer(index_app, name="index")

    # -- sessions -----------------------------------------------------------------------------------------
    @session_app.command("start")
    def session_start(ctx: typer.Context, now: NowOpt = None, as_json: JsonOpt = False) -> None:
        """Start a session (id YYYY-MM-DD-NNN); later `kg log` calls default to it."""
        from kg.memory import sessions

        with errors():
            data = sessions.start_or_journal(workspace(ctx), now_of(ctx, now))
        if data.get("journaled"):
            note("The graph is busy: the session start is journaled (it is the current session now) and the next "
                 "kg command that reaches the graph makes it")
        if data["previous_open"]:
            note(f"Session {data['previous']} was not ended: `kg session end --session {data['previous']}` "
                 "writes its summary")
        emit(data, as_json, lambda d: f"🟢 Session {d['id']} started")

    @session_app.command("end")
    def session_end(
        ctx: typer.Context,
        summary: Annotated[str, typer.Option("--summary", "-s", help="What the session did, in one line.")] = "",
        session: Annotated[str | None, typer.Option(help="Session id (default: the current one).")] = None,
        task: Annotated[ListOpt, typer.Option("--task", help="A task completed (repeat).")] = None,
        learning: Annotated[ListOpt, typer.Option("--learning", help="Something learned (repeat).")] = None,
        feedback: Annotated[ListOpt, typer.Option("--feedback", help="User feedback (repeat).")] = None,
        open_item: Annotated[ListOpt, typer.Option("--open", help="An open item (repeat).")] = None,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """End a session: write memory/sessions/ID.md from its events and append the summary to the daily log."""
        from kg.memory import sessions

        at = now_of(ctx, now)
        with errors():  # an end time given (--now, KG_NOW) before the start is refused; the clock's own, after
            # local time went back (a daylight-saving fall-back, a clock set back), ends it at its start instead
            data = sessions.end(workspace(ctx), summary, at, session=session, tasks=task, learnings=learning,
                                feedback=feedback, open_items=open_item, at_least_start=at is None)
        emit(data, as_json, lambda d: f"📝 Session {d['id']} ended: {d['file']} ({d['events']} event(s))")

    # -- preferences --------------------------------------------------------------------------------------
    def _history_note(data: dict) -> None:
        if data.get("history_pending"):  # saved and acknowledged, as a journaled `kg log` is
            note("The graph is busy: the preference is saved in memory/preferences.json; its history row waits in "
                 "memory/.kg/preferences.pending.jsonl for the next `kg pref` command or `kg cycle`")

    @pref_app.command("set")
    def pref_set(
        ctx: typer.Context,
        key: Annotated[str, typer.Argument(help="For example answer_style.")],
        value: Annotated[str, typer.Argument(help="The preference, in the user's words.")],
        source: Annotated[str, typer.Option(help="Who said so: user, agent, import ...")] = "user",
        force: Annotated[bool, typer.Option("--force", help="Rewrite USER.md's preferences block even if a "
                                            "person edited inside it.")] = False,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Set a preference (kept in memory/preferences.json, its history in the graph, shown in USER.md)."""
        from kg.memory import preferences

        with errors():
            data = preferences.set_(workspace(ctx), key, value, now=now_of(ctx, now), source=source, force=force)
        if data["redacted"]:
            note(f"Redacted before storing: {', '.join(data['redacted'])}")
        _history_note(data)
        emit(data, as_json, lambda d: f"📌 {d['key']} = {d['value']}" + ("" if d["changed"] else " (unchanged)"))

    @pref_app.command("get")
    def pref_get(ctx: typer.Context, key: Annotated[str, typer.Argument()], as_json: JsonOpt = False) -> None:
        """Print one preference's value."""
        from kg.memory import preferences

        with errors():
            data = preferences.get(workspace(ctx), key)
        from kg.memory.readable import preference_text

        emit(data, as_json, lambda d: preference_text(d["value"]))

    @pref_app.command("list")
    def pref_list(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Every preference."""
        from kg.memory import preferences

        with errors():
            data = preferences.list_(workspace(ctx))
        from kg.memory.readable import preference_text

        emit(data, as_json, lambda rows: "\n".join(f"{r['key']}: {preference_text(r['value'])}" for r in rows)
             or "No preferences yet: kg pref set KEY VALUE")

    @pref_app.command("unset")
    def pref_unset(ctx: typer.Context, key: Annotated[str, typer.Argument()], now: NowOpt = None,
                   as_json: JsonOpt = False) -> None:
        """Remove a preference (its history stays)."""
        from kg.memory import preferences

        with errors():
            data = preferences.unset(workspace(ctx), key, now=now_of(ctx, now))
        _history_note(data)
        emit(data, as_json, lambda d: f"🗑️  {d['key']} removed (was {d['previous']})")

    @pref_app.command("history")
    def pref_history(ctx: typer.Context, key: Annotated[str | None, typer.Argument()] = None,
                     as_json: JsonOpt = False) -> None:
        """Every change to the preferences (or to one key), oldest first: how they drifted."""
        from kg.memory import preferences

        with errors():
            data = preferences.history(workspace(ctx), key)
        emit(data, as_json, _render_pref_history)

    # -- skills -------------------------------------------------------------------------------------------

    @skill_app.command("new")
    def skill_new(
        ctx: typer.Context,
        slug: Annotated[str, typer.Argument(help="kebab-case name, e.g. deploy-docs.")],
        description: Annotated[str, typer.Option("--description", "-d", help="What the skill does.")] = "",
        trigger: Annotated[ListOpt, typer.Option("--trigger", help="A phrase that calls for it (repeat).")] = None,
        tool: Annotated[ListOpt, typer.Option("--tool", help="A tool it uses (repeat).")] = None,
        step: Annotated[ListOpt, typer.Option("--step", help="A Procedure step (repeat, in order).")] = None,
        pitfall: Annotated[ListOpt, typer.Option("--pitfall", help="A pitfall (repeat).")] = None,
        check: Annotated[ListOpt, typer.Option("--check", help="A Verification check (repeat).")] = None,
        from_id: Annotated[ListOpt, typer.Option("--from", help="Node id it was learned from (repeat).")] = None,
        source: Annotated[str, typer.Option(help="Where it came from.")] = "kg skill new",
        force: Annotated[bool, typer.Option("--force", help="Create even if a similar skill exists.")] = False,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Create a skill; if a similar one exists, update that one instead (unless --force)."""
        from kg.memory import skills

        with errors():
            data = skills.new(workspace(ctx), slug, description=description, triggers=trigger, tools=tool,
                              steps=step, pitfalls=pitfall, checks=check, source=source, from_ids=from_id,
                              force=force, now=now_of(ctx, now))
        if data.get("reason") and not as_json:
            note(data["reason"])
        emit(data, as_json, lambda d: f"🛠️  {d['action']} {d['file']}")

    @skill_app.command("update")
    def skill_update(
        ctx: typer.Context,
        slug: Annotated[str, typer.Argument()],
        description: Annotated[str | None, typer.Option("--description", "-d")] = None,
        trigger: Annotated[ListOpt, typer.Option("--trigger")] = None,
        tool: Annotated[ListOpt, typer.Option("--tool")] = None,
        step: Annotated[ListOpt, typer.Option("--step")] = None,
        pitfall: Annotated[ListOpt, typer.Option("--pitfall")] = None,
        check: Annotated[ListOpt, typer.Option("--check")] = None,
        from_id: Annotated[ListOpt, typer.Option("--from")] = None,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Add triggers, tools, steps, pitfalls or checks to a skill (nothing is removed)."""
        from kg.memory import skills

        with errors():
            data = skills.update(workspace(ctx), slug, description=description, triggers=trigger, tools=tool,
                                 steps=step, pitfalls=pitfall, checks=check, from_ids=from_id,
                                 now=now_of(ctx, now))
        emit(data, as_json, lambda d: f"🛠️  {d['action']} {d['file']}")

    @skill_app.command("find")
    def skill_find(ctx: typer.Context, task: Annotated[str, typer.Argument(help="The task at hand.")],
                   limit: Annotated[int | None, typer.Option()] = None, as_json: JsonOpt = False) -> None:
        """The skills that best fit a task: read the file and start from its Procedure."""
        from kg.memory import skills

        with errors():
            data = skills.find(workspace(ctx), task, limit=limit)
        emit(data, as_json, lambda rows: "\n".join(
            f"[{r['score']:.0f}] {r['file']} — {r['description'] or r['name']}" for r in rows)
            or f"No skill fits '{task}'")

    @skill_app.command("list")
    def skill_list(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Every skill."""
        from kg.memory import skills

        with errors():
            data = skills.list_(workspace(ctx))
        emit(data, as_json, lambda rows: "\n".join(
            f"{r['slug']:<30} {r['updated']:<16} {r['description']}" for r in rows) or "No skills yet.")

    @skill_app.command("check")
    def skill_check(
        ctx: typer.Context,
        tool_calls: Annotated[int, typer.Option("--tool-calls", help="Tool calls the task took.")] = 0,
        message: Annotated[str, typer.Option("--message", help="What the user said.")] = "",
        repeats: Annotated[int, typer.Option("--repeats", help="Times this task was done before.")] = 0,
        new_workflow: Annotated[bool, typer.Option("--new-workflow", help="A new workflow was found.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Should this task become a skill? The seed's generation condition (exit 0 either way)."""
        from kg.memory import skills
        from kg.memory.rules import memory_rules

        with errors():
            data = skills.should_generate(memory_rules(workspace(ctx)).skills, tool_calls=tool_calls,
                                          message=message, repeats=repeats, new_workflow=new_workflow).as_dict()
        emit(data, as_json, lambda d: ("yes: " + "; ".join(d["reasons"])) if d["generate"] else "no")

    # -- search, topics, injection ------------------------------------------------------------------------
    @app.command("search")
    def search_(
        ctx: typer.Context,
        query: Annotated[str, typer.Argument(help="Words to look for (English, Chinese or mixed).")],
        type_: Annotated[str | None, typer.Option("--type", "-t", help="Only these node types: event, lesson, "
                                                   "principle, knowledge, pattern, learning, error, feature.")] = None,
        since: Annotated[str | None, typer.Option(help="ISO date/time, or a span such as 7d, 2w.")] = None,
        session: Annotated[str | None, typer.Option(help="Only this session.")] = None,
        source: Annotated[ListOpt, typer.Option("--source", help="graph, MEMORY.md, USER.md, daily, sessions, "
                                                 "skills, trail (repeat; default all).")] = None,
        limit: Annotated[int | None, typer.Option(help="At most this many hits.")] = None,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Search the graph and the memory files; each hit shows a snippet and where it lives.

        Each hit's score is 0 to 1: text match, word coverage, the graph, recency and importance weighed by
        rules/memory.toml (and the time the query names, when it names one; the weights are then scaled to sum
        to 1). An id or a pattern key in the query returns that entry or pattern first."""
        from kg.memory import search

        with errors():
            ws = workspace(ctx)
            hits = [h.as_dict() for h in search.search(ws, query, type=type_, since=since,
                                                       session=session, limit=limit, now=now_of(ctx, now),
                                                       sources=source)]
            why = None if hits else search.common_words_only(ws, query, now=now_of(ctx, now))
        pending_note(ws)
        if why and as_json:  # the JSON is a list of hits: the reason goes beside it, on stderr
            note(f"No results: {why}")
        emit(hits, as_json, lambda rows: search.render(rows, query, why))

    @index_app.command("build")
    def index_build(ctx: typer.Context, days: Annotated[int | None, typer.Option(help="Files changed within "
                    "this many days (default from rules/topics.toml).")] = None,
                    now: NowOpt = None, as_json: JsonOpt = False) -> None:
        """Build the topic index of memory files and link graph nodes to their topics."""
        from kg.memory import topics

        with errors():
            if days is not None and days < 1:
                raise UsageError(f"--days must be at least 1, not {days}")
            data = topics.build(workspace(ctx), now=now_of(ctx, now), days=days)
        emit(data, as_json, lambda d: f"📚 Built memory index: {len(d['topics'])} topics "
             f"({', '.join(d['topics'])}); {d['nodes_linked']} graph node(s) linked")

    @app.command("recall")
    def recall(
        ctx: typer.Context,
        topic: Annotated[str | None, typer.Argument(help="A topic from rules/topics.toml.")] = None,
        message: Annotated[str | None, typer.Option("--message", "-m", help="Detect the topic from this.")] = None,
        limit: Annotated[int | None, typer.Option(help="Files shown (default 3).")] = None,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """What memory holds on a topic (the seed's query-memory), files then graph nodes."""
        from kg.memory import topics

        with errors():
            data = topics.recall(workspace(ctx), topic, message=message, now=now_of(ctx, now), limit=limit)
        emit(data, as_json, topics.render_recall)

    @app.command("inject")
    def inject_(
        ctx: typer.Context,
        message: Annotated[str, typer.Option("--message", "-m", help="The user's message.")] = "",
        budget: Annotated[int | None, typer.Option(help="Characters available (default from rules).")] = None,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """The memory block to put in context for a message: preferences, principles, lessons, watch list."""
        from kg.memory import inject

        with errors():
            data = inject.inject(workspace(ctx), message, budget=budget, now=now_of(ctx, now))
        for w in data["warnings"]:
            note(f"Warning: {w}")
        emit(data, as_json, lambda d: d["block"])

    # -- scores -------------------------------------------------------------------------------------------
    @app.command("score")
    def score(
        ctx: typer.Context,
        values: Annotated[list[str], typer.Argument(metavar="A U E T P", help="Accuracy, usefulness, "
                                                     "efficiency, tone, proactiveness: 0-10 each.")],
        notes: Annotated[str | None, typer.Option(help="Why (at most 200 characters).")] = None,
        now: NowOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Record a self-assessment of the last task."""
        from kg.memory import scores

        with errors():
            data = scores.record(workspace(ctx), values, notes=notes, now=now_of(ctx, now))
        s = data["scores"]
        emit(data, as_json, lambda d: f"📊 Scored: avg={d['average']}/10 (acc={s['accuracy']} "
             f"use={s['usefulness']} eff={s['efficiency']} ton={s['tone']} pro={s['proactiveness']})")

    @app.command("trends")
    def trends(ctx: typer.Context, days: Annotated[int, typer.Argument(help="How many days back.")] = 7,
               now: NowOpt = None, as_json: JsonOpt = False) -> None:
        """Per-day score averages with the trend arrow."""
        from kg.memory import scores

        with errors():
            data = scores.trends(workspace(ctx), days, now=now_of(ctx, now)).as_dict()
        emit(data, as_json, scores.render_trends)

    _register_retention(app)


def _register_retention(app: typer.Typer) -> None:
    @app.command("retention")
    def retention(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """How long each kind of memory is kept (decay itself runs in `kg cycle`)."""
        from kg.memory import retention as ret

        with errors():
            data = ret.describe(workspace(ctx))
        emit(data, as_json, ret.render)


def _render_pref_history(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "No preference changes yet."
    out = []
    for r in rows:
        change = f"{r['previous']!r} → {r['value']!r}" if r["action"] in ("set", "hand-edit") else \
            f"removed (was {r['previous']!r})"
        out.append(f"{r['at'][:16]}  {r['key']:<20} {r['action']:<10} {change}")
    return "\n".join(out)
