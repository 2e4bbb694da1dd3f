"""`kg server start|stop|status`: a local FalkorDB for trying a team graph (kg/store/falkor_server.py)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from kg.cli.common import JsonOpt, emit, errors, workspace

server_app = typer.Typer(help="Run a local FalkorDB server (the falkordb extra) on loopback, with its data in "
                              "this workspace (memory/.kg/falkordb), for a team graph to try.",
                         no_args_is_help=True)

PortOpt = Annotated[int | None, typer.Option("--port", min=1, max=65535,
                                             help="Loopback port (default: the last one it ran on when free, "
                                                  "else a free one).")]


def _folder(ctx: typer.Context):
    return workspace(ctx).kg_dir / "falkordb"


def _shown(server: Any, running: bool, silent: str | None = None) -> dict[str, Any]:
    if server is None:
        return {"running": False}
    from kg.store import falkor_server

    # the graph its members use (the advice named graph kg whatever theirs was: QA2 #9); a new server: kg
    graphs = falkor_server.graphs(server.port) if silent is None else []
    return {"running": running, "answering": silent is None, **({"why": silent} if silent else {}),
            "url": f"{server.url}/{graphs[0] if graphs else 'kg'}", "graphs": graphs, "port": server.port,
            "pid": server.pid, "data": str(server.folder)}


def _render(d: dict[str, Any]) -> str:
    if not d["running"]:
        return "No kg FalkorDB server runs for this workspace (`kg server start` starts one)."
    if not d["answering"]:
        return (f"FalkorDB runs (pid {d['pid']}, port {d['port']}) but does not answer: {d['why']}. Wait, or "
                "`kg server stop` it.")
    graphs = d.get("graphs") or []
    base = d["url"].rsplit("/", 1)[0]
    if len(graphs) > 1:
        return (f"FalkorDB runs at {base} (pid {d['pid']}, data in {d['data']}), holding the graphs "
                f"{', '.join(graphs)}.\nPoint a workspace at one: kg init --store {base}/GRAPH")
    return (f"FalkorDB runs at {d['url']} (pid {d['pid']}, data in {d['data']}).\n"
            f"Point a workspace at it: kg init --store {d['url']}")


@server_app.command("start")
def start(ctx: typer.Context, port: PortOpt = None, as_json: JsonOpt = False) -> None:
    """Start the server (or report the one running): loopback only, every write fsynced to its append-only
    file in memory/.kg/falkordb, so a restart keeps what it acknowledged; on the port it last ran on (its
    members' URLs name it) unless --port says another."""
    from kg.store import falkor_server

    with errors():  # a server still replaying its data after a minute is left running, and said
        server = falkor_server.start(_folder(ctx), port=port, loading_s=60.0)
    emit(_shown(server, True), as_json, _render)


@server_app.command("stop")
def stop(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Stop the server this workspace started (its data stays for the next start)."""
    from kg.store import falkor_server

    with errors():
        stopped = falkor_server.stop(_folder(ctx))
    emit({"stopped": stopped}, as_json,
         lambda d: "Stopped the FalkorDB server." if d["stopped"] else "No FalkorDB server was running.")


@server_app.command("status")
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Whether the server this workspace started runs, and its URL."""
    from kg.store import falkor_server

    with errors():
        folder = _folder(ctx)
        server = falkor_server.recorded(folder)  # its process runs; answering or not
        silent = None if server is None or falkor_server.ping(server.port) else falkor_server.state(folder)
    emit(_shown(server, server is not None, silent), as_json, _render)


def register(app: typer.Typer) -> None:
    app.add_typer(server_app, name="server")
