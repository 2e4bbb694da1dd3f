"""`kg serve start|stop|status|run`: the per-workspace read server (kg/serve/). Reads start it on their own;
these commands are for looking at it, stopping it, or running it in the foreground."""

from __future__ import annotations

import time
from typing import Any

import typer
from kg.cli.common import JsonOpt, emit, errors, fail, workspace

serve_app = typer.Typer(help="The workspace's read server: it keeps the graph open and answers search, inject, "
                             "recall, show, status and the session brief; started by the first read, stopped "
                             "when idle (rules/policy.toml [serve]; KG_SERVER=0 turns it off).",
                        no_args_is_help=True)


def _status(ws: Any) -> dict[str, Any]:
    from kg.serve import client, protocol

    try:
        answer = protocol.ask(ws.kg_dir, {"op": "status"}, 5.0)
    except (OSError, ValueError, protocol.Closed):
        return {"running": False, "starting": client.alive(ws.kg_dir)}
    return {"running": True, **{k: v for k, v in answer.items() if k != "ok"}}


def _render(d: dict[str, Any]) -> str:
    if not d["running"]:
        return ("The read server is starting." if d.get("starting") else
                "No read server runs for this workspace (the next read starts one, or `kg serve start`).")
    idle = time.time() - d["since"]
    return (f"The read server runs (pid {d['pid']}) for {d['workspace']}: {d['requests']} read(s) answered in "
            f"{idle:.0f} s; it stops after {d['idle_seconds']:g} s without one.")


@serve_app.command("status")
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Whether the read server runs for this workspace, its pid and how many reads it answered."""
    with errors():
        data = _status(workspace(ctx))
    emit(data, as_json, _render)


@serve_app.command("start")
def start(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Start the read server now (detached) and wait until it answers; reads would start it anyway."""
    from kg.serve import client, server

    with errors():
        ws = workspace(ctx)
        if not client.enabled():
            fail("the read server is off in this environment (KG_SERVER=0); unset KG_SERVER to use it", 1)
        if not server.settings(ws).enabled or ws.store_url is not None:
            fail("the read server is off for this workspace ([rules.policy.serve] enabled = false in kg.toml, "
                 "or a team graph, which is not served)", 1)
        data = _status(ws)
        started = False
        if not data["running"]:
            started = not data["starting"]
            client.spawn(ws.root, force=True)
            deadline = time.monotonic() + ws.lock_timeout + 30.0
            while not data["running"] and time.monotonic() < deadline:
                time.sleep(0.02)
                data = _status(ws)
                if not data["running"] and not data["starting"]:  # it gave up (the graph is busy): again
                    client.spawn(ws.root, force=True)
            if not data["running"]:
                fail("the read server did not start: another process holds the graph; try again when it is done",
                     1)
    emit({**data, "started": started}, as_json, _render)


@serve_app.command("stop")
def stop(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Stop the read server (it closes the graph; the next read or log starts it again unless KG_SERVER=0; a log's
    applier left before the stop does not). A server that is still starting is waited for until it listens (or
    gives up), then stopped; one that is writing its log into the graph as it closes (minutes at a million entries)
    is waited for as long as it says it is, saying so (at most KG_MIGRATION_WAIT seconds when set)."""
    from kg.serve import client
    from kg.serve.stop import StopFailed
    from kg.serve.stop import stop as stop_server

    with errors():
        ws = workspace(ctx)
        client.mark_stopped(ws.kg_dir)  # first: a log's applier left before this starts no server after it
        try:
            stopped = stop_server(ws.kg_dir, ws.lock_timeout + 30.0)
        except StopFailed as exc:
            fail(str(exc), 1)
    emit({"stopped": stopped}, as_json,
         lambda d: "Stopped the read server." if d["stopped"] else "No read server was running.")


@serve_app.command("run")
def run(ctx: typer.Context) -> None:
    """Run the read server in the foreground until it is idle or stopped (what a read starts detached)."""
    from kg.serve import server

    with errors():
        root = workspace(ctx).root
        why = server.serve(root)
    if server.never_served(why):  # a failure to say, as `kg serve start` says it (exit 1)
        hint = ": `kg serve status` names it, `kg serve stop` stops it" if why == server.ANOTHER else ""
        typer.echo(f"Error: {why}{hint}", err=True)
        raise typer.Exit(1)
    typer.echo(f"kg serve: stopped: {why}", err=True)


def register(app: typer.Typer) -> None:
    app.add_typer(serve_app, name="serve")
