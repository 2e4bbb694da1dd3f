"""Where kg meets agent runtimes: hooks, installs into Claude Code / Codex / OpenClaw, the MCP server and
the periodic job."""
