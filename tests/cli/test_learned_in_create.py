"""An entry older than when kg learned it (a transcript's or an import's time) is created reinforced when kg
learned it, in its one `node_create` on either backend: a second statement (`node_learned`) set it after the
create, so every such record was two writes (on a team graph, a statement more in its batch). A journal record
written before keeps its `learned` time and is applied the same way (the field is the journal's, not a query's)."""

from __future__ import annotations

from datetime import datetime

LEARNED = datetime(2026, 3, 10, 9, 0)


def test_an_old_entry_is_created_reinforced_when_kg_learned_it_in_one_write(ws, monkeypatch):
    with ws.store() as st:
        cls = type(st)
    ran: list[tuple[str, dict]] = []
    real = cls.run

    def run(self, name, **params):
        ran.append((name, params))
        return real(self, name, **params)

    with monkeypatch.context() as m:
        m.setattr(cls, "run", run)
        out = ws.log("error", "the nightly backup script timed out", now="2026-03-01T08:00:00", learned=LEARNED,
                     session="s-old")
    assert out.applied
    touched = [name for name, params in ran if params.get("id") == out.id]
    assert touched.count("node_create") == 1 and "node_learned" not in touched, touched  # nothing set it after
    created = next(params for name, params in ran if name == "node_create" and params["id"] == out.id)
    assert created.get("reinforced_at") == LEARNED and created["created_at"] == datetime(2026, 3, 1, 8, 0)
    with ws.store() as st:
        node = st.run("node_get", id=out.id)[0]["n"]
    assert node["reinforced_at"].replace(tzinfo=None) == LEARNED, node["reinforced_at"]


def test_an_entry_of_now_is_reinforced_when_created(ws):
    out = ws.log("error", "the nightly backup script timed out", now="2026-03-01T08:00:00", session="s-now")
    with ws.store() as st:
        node = st.run("node_get", id=out.id)[0]["n"]
    assert node["reinforced_at"].replace(tzinfo=None) == datetime(2026, 3, 1, 8, 0)
