"""The learning lifecycle: promote, apply, verify, revert, decay, settle conflicts, export.

Each step selects its candidates with a named Cypher query (`rules/queries/lifecycle.cypher`), decides with a
pure function (`promote`, `verify`, `decay`, `conflicts`, `blocks`), and writes through one path (`cycle`).
Every threshold comes from `rules/lifecycle.toml`. The public functions are in `kg.lifecycle.api`
(`api.cycle(ws, now=...)`, `api.propose(ws)`, `api.why(ws, line)` ...); the submodules keep their plain names
(`kg.lifecycle.verify` is the pure verdict module, `api.verify` the command).
"""
