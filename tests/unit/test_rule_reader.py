"""`RuleReader`: the one place rule values are checked, and the one wording of what is wrong with them."""

import pytest

from kg.core.errors import RulesError
from kg.core.policy import RuleReader

DATA = {
    "limit": 5, "ratio": 0.5, "float_whole": 3.0, "fraction": 2.5, "on": True, "name": "auto", "blank": " ",
    "words": ["a", "b"], "empty_list": [], "with_empty": ["a", ""], "with_blank": ["a", " "], "mixed": ["a", 1],
    "search": {"limit": 0, "kind_weight": {"lesson": 0.8}}, "topics": {"node.js": ["node"]},
    "typing": [{"type": "supports"}], "broken": [{"type": "supports"}, 3], "nan": float("nan"),
}
R = RuleReader(DATA, "rules/x.toml")


@pytest.mark.parametrize("call, expected", [
    (lambda: R.get("limit"), 5),
    (lambda: R.get("search.kind_weight.lesson"), 0.8),
    (lambda: R.get("search.nothing", 7), 7),
    (lambda: R.get("nowhere.deep", None), None),
    (lambda: R.table("topics").get("node.js"), ["node"]),  # a whole name first: an open table's key may hold a dot
    (lambda: R.table("search").key("limit"), "search.limit"),
    (lambda: R.whole("limit", 1, 10), 5),
    (lambda: R.whole("float_whole"), 3),
    (lambda: R.whole("missing", 0, default=4, int_only=True), 4),
    (lambda: R.number("ratio", 0, 1), 0.5),
    (lambda: R.number("limit"), 5.0),
    (lambda: R.string("name", ("auto", "ask")), "auto"),
    (lambda: R.string("blank"), " "),
    (lambda: R.string("missing", default="either"), "either"),
    (lambda: R.strings("words", allowed=("a", "b")), ("a", "b")),
    (lambda: R.strings("empty_list"), ()),
    (lambda: R.strings("with_empty"), ("a", "")),
    (lambda: R.strings("with_blank", items="non-empty"), ("a", " ")),
    (lambda: R.strings("missing", ["x"]), ("x",)),
    (lambda: R.flag("on"), True),
    (lambda: R.flag("missing", False), False),
    (lambda: [t.key("type") for t in R.tables("typing")[:1]], ["typing[0].type"]),
    (lambda: R.tables("missing", []), []),
    (lambda: R.table("search").known(("limit", "kind_weight")).data["limit"], 0),
])
def test_accepts(call, expected):
    got = call()
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("call, message", [
    (lambda: R.get("nothing"), "nothing: missing"),
    (lambda: R.get("search.nothing.deeper"), "search.nothing: missing"),
    (lambda: R.get("limit.deeper"), "limit: must be a table, not 5"),
    (lambda: R.table("words"), "words: must be a table, not ['a', 'b']"),
    (lambda: RuleReader([1], "rules/x.toml"), "the top level: must be a table, not [1]"),
    (lambda: R.table("search").whole("limit", 1), "search.limit: must be a whole number of at least 1, not 0"),
    (lambda: R.whole("fraction", 1, 10), "fraction: must be a whole number from 1 to 10, not 2.5"),
    (lambda: R.whole("limit", hi=4), "limit: must be a whole number of at most 4, not 5"),
    (lambda: R.whole("on"), "on: must be a whole number, not True"),
    (lambda: R.whole("name"), "name: must be a whole number, not 'auto'"),
    (lambda: R.whole("float_whole", int_only=True),
     "float_whole: must be a whole number written without a decimal point, not 3.0"),
    (lambda: R.whole("missing", 5, default=4), "missing: must be a whole number of at least 5, not 4"),
    (lambda: R.number("limit", 0.0, 1.0), "limit: must be a number from 0.0 to 1.0, not 5"),
    (lambda: R.number("on"), "on: must be a number, not True"),
    (lambda: R.number("nan", 0), "nan: must be a number of at least 0, not nan"),
    (lambda: R.string("limit"), "limit: must be a string, not 5"),
    (lambda: R.string("name", ("", "ask")), "name: must be one of \"\", ask, not 'auto'"),
    (lambda: R.strings("name"), "name: must be a list of strings, not 'auto'"),
    (lambda: R.strings("mixed"), "mixed: must be a list of strings; item 2 is 1"),
    (lambda: R.strings("empty_list", empty=False), "empty_list: must be a non-empty list of strings, not []"),
    (lambda: R.strings("with_empty", items="non-empty"),
     "with_empty: must be a list of non-empty strings; item 2 is ''"),
    (lambda: R.strings("with_blank", items="non-blank"),
     "with_blank: must be a list of non-empty strings; item 2 is ' '"),
    (lambda: R.strings("words", allowed=("a",)), "words: must be a list of strings from a; item 2 is 'b'"),
    (lambda: R.flag("name"), "name: must be true or false, not 'auto'"),
    (lambda: R.tables("broken"), "broken[1]: must be a table, not 3"),
    (lambda: R.tables("name"), "name: must be a list of [[name]] tables, not 'auto'"),
    (lambda: R.tables("empty_list", empty=False),
     "empty_list: must be a non-empty list of [[empty_list]] tables, not []"),
    (lambda: R.table("search").known(("limit",)), "search.kind_weight: unknown key (known keys here: limit)"),
    (lambda: R.table("search").known(()), "search.kind_weight: unknown key (known keys here: none)"),
])
def test_refuses_naming_file_key_and_reason(call, message):
    with pytest.raises(RulesError) as err:
        call()
    assert str(err.value) == f"rules/x.toml: {message}"


def test_fail_words_a_check_of_the_caller_the_same_way():
    search = R.table("search")
    assert str(search.fail("", "needs a limit")) == "rules/x.toml: search: needs a limit"
    assert str(search.fail("limit", "must be below max")) == "rules/x.toml: search.limit: must be below max"


def test_the_error_class_can_be_a_subclass():
    class Special(RulesError, ValueError):
        pass

    with pytest.raises(Special, match=r"^s\.toml: errors\.kind: missing$"):
        RuleReader({"errors": {}}, "s.toml", error=Special).table("errors").string("kind")
