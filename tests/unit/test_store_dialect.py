"""Pure parts of the FalkorDB backend (issue 18): dialect variants, the Kùzu-to-FalkorDB rewrites, store URLs."""

from __future__ import annotations

from datetime import datetime

import pytest

from kg.core.errors import RulesError, UsageError
from kg.store import falkor_dialect as dialect
from kg.store.backend import parse_url, resolve
from kg.store.queries import parse


def test_a_dialect_variant_sits_beside_its_query():
    found = parse("// name: q\nMATCH (n) RETURN n\n\n// name: q\n// dialect: falkordb\n// why\nRETURN $x\n", "t")
    assert set(found) == {"q", "q@falkordb"}
    assert found["q@falkordb"].params == {"x"} and found["q@falkordb"].doc == "why"
    with pytest.raises(RulesError, match="defined twice"):
        parse("// name: q\nRETURN 1\n// name: q\nRETURN 2\n", "t")


@pytest.mark.parametrize("kuzu, falkor", [
    ("RETURN CAST(sum(n) AS INT64) AS r", "RETURN toInteger(sum(n)) AS r"),
    ("RETURN label(r) AS type", "RETURN type(r) AS type"),
    ("WHERE list_contains(n.tags, $tag)", "WHERE ($tag IN n.tags)"),
    ("SET c.evidence = list_append(c.evidence, $line)", "SET c.evidence = (c.evidence + [$line])"),
    ("RETURN rels(p) AS rels", "RETURN relationships(p) AS rels"),
    ("AND NOT EXISTS { MATCH (q:Proposal)-[:proposal_about]->(n) }", "AND NOT (:Proposal)-[:proposal_about]->(n)"),
    ("CREATE (n:Node {id: $id})", "CREATE (n:Node {decay_stage: 0, id: $id})"),
    ("CREATE (n:Node {id: $id, decay_stage: 2})", "CREATE (n:Node {id: $id, decay_stage: 2})"),
])
def test_spelling_differences_are_translated(kuzu, falkor):
    assert dialect.translate(kuzu) == falkor


def test_datetimes_travel_as_fixed_width_text():
    at = datetime(2026, 3, 1, 9, 30)
    assert dialect.to_server({"at": at, "list": [at]}) == {"at": "2026-03-01T09:30:00.000000",
                                                           "list": ["2026-03-01T09:30:00.000000"]}
    assert dialect.from_server("2026-03-01T09:30:00.000000") == at
    assert dialect.from_server("2026-03-01 is a date in a text") == "2026-03-01 is a date in a text"


def test_store_urls(monkeypatch):
    url = parse_url("falkordb://agent@db.internal:6380/team")
    assert (url.host, url.port, url.graph, url.username, url.tls) == ("db.internal", 6380, "team", "agent", False)
    assert parse_url("falkordbs://h/g").tls and parse_url("falkordb://h").graph == "kg"
    secret = parse_url("falkordb://u:s3cret@h:1/g")
    assert secret.password == "s3cret" and "s3cret" not in repr(secret) and "s3cret" not in secret.public
    with pytest.raises(UsageError, match="KG_STORE_PASSWORD"):
        parse_url("falkordb://u:s3cret@h:1/g", allow_password=False)
    with pytest.raises(UsageError, match="must start with falkordb://"):
        parse_url("redis://h:1/g")
    with pytest.raises(UsageError, match="graph name"):
        parse_url("falkordb://h:1/a b")
    monkeypatch.setenv("KG_STORE_PASSWORD", "from-env")
    assert parse_url("falkordb://h:1/g").password == "from-env"
    monkeypatch.setenv("KG_STORE", "kuzu")
    assert resolve("falkordb://h:1/g") is None
    monkeypatch.setenv("KG_STORE", "falkordb://other:2/x")
    assert resolve("falkordb://h:1/g").host == "other"


def test_a_workspace_slot_in_kg_store_gives_each_workspace_its_own_graph(monkeypatch, tmp_path):
    monkeypatch.setenv("KG_STORE", "falkordb://h:1/ci.{workspace}")
    a, b = resolve(None, tmp_path / "alpha ws"), resolve(None, tmp_path / "beta")
    assert a.graph.startswith("ci.alpha_ws-") and b.graph.startswith("ci.beta-") and a.graph != b.graph
    assert resolve(None, tmp_path / "alpha ws") == a  # the same folder, the same graph, in every process


@pytest.mark.parametrize("kuzu, falkor", [
    ("CREATE (:S {at: timestamp('2026-11-20 10:00:00')})", "CREATE (:S {at: '2026-11-20T10:00:00.000000'})"),
    ("CREATE (:S {at: timestamp($at)})", "CREATE (:S {at: left(replace($at, ' ', 'T') + '.000000', 26)})"),
])
def test_timestamps_from_text_are_stored_as_text(kuzu, falkor):
    assert dialect.translate(kuzu) == falkor


def test_bulk_rows_are_written_as_json_and_the_rest_as_the_client_does():
    """kg/store/falkor_params.py: a chunk of rows in one json.dumps; text JSON would escape as \\uXXXX (which
    FalkorDB does not read) and maps go the slow way; both forms hold the same values."""
    from datetime import datetime

    from kg.store import falkor_params

    at = datetime(2026, 3, 1, 9, 30)
    fast = falkor_params.header({"rows": [["a \"q\" \\ b", at, ["x", None], 1.5, True, None]]})
    assert fast == ('CYPHER `rows`=[["a \\"q\\" \\\\ b","2026-03-01T09:30:00.000000",'
                    '["x","\u2400kg:null\u2400"],1.5,true,null]] ')
    assert falkor_params.header({"rows": [["bell\x07"]]}) == 'CYPHER `rows`=[["bell\x07"]] '  # not \u0007
    assert falkor_params.header({"m": {"k": "v"}, "n": None}) == 'CYPHER `m`={`k`:"v"} `n`=null '
