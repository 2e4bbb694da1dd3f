"""A per-workspace read server (the pattern of language servers).

Opening Kùzu costs a fresh `kg search` ~0.2 s and ~140 MB before it asks anything, and a one-off read pays it
every time. The server opens the workspace once, keeps it open, and answers the agent's one-off reads (`kg
search`, `inject`, `recall`, `hook session-start`, `show`, `status`) over a Unix socket in memory/.kg/; the
command line stays a light client (`kg.serve.client`) that does not import Kùzu. It is started by the first
read (detached, like the journal applier) or by an agent's `kg log` (issue 20: warm for the reads that follow
while agents log; `client.prestart`), stops after `[serve] idle_seconds` of rest (rules/policy.toml),
and is never required: when it is off (`KG_SERVER=0`, `[rules.policy.serve] enabled = false` in kg.toml),
missing or dead, the command runs in its own process as before.

While it runs it holds the graph (Kùzu's one read-write process), so it is also the graph's only writer: it
applies the journal before every answer and when an applier tells it entries wait. A process that needs the
graph itself (kg cycle, import, doctor, `kg log --wait`, a reader with the server off) asks it to let go
(`kg.store.lock` calls `client.hand_over`), and it closes the graph and exits; the next read starts it again.

Between two changes of the graph it keeps the answers of the reads that depend on the graph alone (totals,
the newest pending entries, the live rules: `kg.serve.cache`), which is most of what `kg status` and the
session brief ask. It runs Kùzu with one query thread, as a one-off reader does: the full-text index breaks
score ties by thread timing, and the answers must match the command's own.
"""
