"""The incremental trail reader: the same items as json.loads, whatever the window's size."""

from __future__ import annotations

import io
import json

import pytest

from kg.ingest.jsonstream import JsonStreamError, iter_trail

DOC = {
    "version": 3, "entries": [{"id": f"LRN-20260101-{i:03d}", "n": i * 1.5, "s": "x\u00e9\u4e2d" * (i % 40),
                               "nested": {"a": [1, {"b": None}], "q": "\"}]"}} for i in range(300)],
    "other": [1, 2, {"entries": ["not these"]}], "graph": {"nodes": [{"id": "les-20260101-001"}], "meta": {"x": 1},
                                                          "edges": [{"from": "a", "to": "b"}]},
    "tail": 123456789,
}


@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_same_items_as_json_loads(chunk, indent):
    out = list(iter_trail(io.StringIO(json.dumps(DOC, indent=indent, ensure_ascii=False)), chunk=chunk))
    assert [x for k, x in out if k == "entries"] == DOC["entries"]
    assert [x for k, x in out if k == "nodes"] == DOC["graph"]["nodes"]
    assert [x for k, x in out if k == "edges"] == DOC["graph"]["edges"]


@pytest.mark.parametrize("text, where", [
    ("[1, 2]", "expected a JSON object"),
    ('{"entries": [1, 2', "expected ',' or ']'"),
    ('{"entries": [1,]}', "Expecting value"),
    ('{"a": 1} extra', "text after the end"),
    ('{"entries": [{"a": "open}]}', "Unterminated string"),
    ('{"a" 1}', "expected ':'"),
])
def test_invalid_json_names_the_problem(text, where):
    with pytest.raises(JsonStreamError, match=where):
        list(iter_trail(io.StringIO(text), chunk=3))


def test_a_graph_that_is_not_an_object_is_handed_back():
    assert list(iter_trail(io.StringIO('{"graph": [1], "entries": []}'))) == [("graph", [1])]


def test_memory_stays_at_the_window():
    """The window never holds much more than one chunk plus one item, however long the array."""
    from kg.ingest import jsonstream

    text = json.dumps({"entries": [{"id": i, "pad": "p" * 50} for i in range(20000)]})
    window = jsonstream._Window(io.StringIO(text), 4096)
    seen = 0
    for key in jsonstream._object_items(window):
        assert key == "entries"
        for _ in jsonstream._array_items(window):
            seen += 1
            assert len(window.buf) < 3 * 4096
    assert seen == 20000
