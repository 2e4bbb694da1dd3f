"""kg.graph.linking's pure decisions: keywords, cues, stances, similarity, edge typing, dedup. No database."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path

import pytest

from kg.core.errors import RulesError
from kg.core.policy import packaged
from kg.graph import linking
from kg.graph.linking import Doc

R = linking.default_rules()
DATA = Path(__file__).resolve().parent.parent / "data" / "link_pairs.jsonl"


@pytest.mark.parametrize("word, stem", [
    ("failed", "fail"), ("fails", "fail"), ("failing", "fail"), ("fail", "fail"), ("pushing", "push"),
    ("pushes", "push"), ("branches", "branch"), ("stopped", "stop"), ("committing", "commit"),
    ("committed", "commit"), ("created", "creat"), ("create", "creat"), ("policies", "policy"),
    ("uses", "use"), ("status", "status"), ("git", "git"), ("推送", "推送"), ("v2", "v2"),
])
def test_stem(word, stem):
    assert linking.stem(word) == stem


@pytest.mark.parametrize("text, expected", [
    ("git push failed: no upstream branch", ["git", "push", "fail", "upstream", "branch"]),
    ("Use the read tool, not exec", ["read", "tool", "exec"]),
    ("推送失败：当前分支没有上游分支", ["推送", "送失", "失败", "当前", "前分", "分支", "上游", "游分", "分支"]),
    ("git push 失败了", ["git", "push", "失败"]),
    ("the and of", []),
])
def test_terms_drop_stopwords_and_keep_cjk_bigrams(text, expected):
    assert linking.terms(text, R) == expected


@pytest.mark.parametrize("text, cue_list, found", [
    ("git push failed", "error", ["fail"]),
    ("The build FAILS on CI", "error", ["fail"]),
    ("推送失败", "error", ["失败"]),
    ("You should prefer pnpm", "support", ["should", "prefer"]),
    ("应该优先使用 pnpm", "support", ["应该", "优先", "使用"]),
    ("Use exec instead", "contradiction", ["instead"]),
    ("不要解释", "contradiction", ["不要"]),
    ("a plain note", "error", []),
    ("notation is fine", "contradiction", []),  # "not" is a word, not a prefix
])
def test_cues_in(text, cue_list, found):
    assert linking.cues_in(text, R.cues[cue_list]) == found


@pytest.mark.parametrize("text, wants, refuses", [
    ("Use pnpm instead of npm", {"pnpm"}, [{"npm"}]),
    ("Use npm, not pnpm", {"npm"}, [{"pnpm"}]),
    ("Prefer read over exec for viewing files", {"prefer", "read", "view", "file"}, [{"exec"}]),
    ("直接回答，不要解释", {"直接", "回答"}, [{"解释"}]),
    ("用 npm 安装依赖，而不是 pnpm", {"npm", "安装", "依赖"}, [{"pnpm"}]),
    ("no, that's too much. instead, update the doc", {"updat", "doc", "much"}, []),
])
def test_stance(text, wants, refuses):
    s = linking.stance(text, R)
    assert set(s.wants) >= wants
    assert [set(x) for x in s.refuses] == refuses
    assert s.marked


def _p(text: str, kind: str = "principle", i: str = "x") -> Doc:
    return Doc(i, kind, text)


@pytest.mark.parametrize("a, b", [
    ("Use pnpm instead of npm to install packages", "Use npm, not pnpm, to install packages"),
    ("Prefer read over exec for viewing files", "Use exec instead of read for viewing files"),
    ("Always run the tests before committing", "Don't run the tests before committing, CI runs them"),
    ("Run the browser headless in CI", "Run the browser with the GUI in CI, not headless"),
    ("直接回答，不要解释", "回答时要详细解释，而不是直接给结论"),
    ("用 pnpm 安装依赖，不要用 npm", "用 npm 安装依赖，而不是 pnpm"),
    ("Use the session repo, 不要在 main workspace 里改文件", "在 main workspace 里修改文件，not the session repo"),
    # texts that name the other's preferred option too, but still want what it refuses
    ("This repo uses pnpm, not npm", "npm is required in this repo"),
    ("Use pnpm instead of npm", "Use npm for installs"),
    ("Prefer pnpm over npm", "npm is faster than pnpm here"),
    ("Do not use mocks in tests; use a real Kuzu store", "Use mocks for the store in unit tests"),
    ("Never push to main; open a pull request", "Push to main after the review, never force-push"),
])
def test_contradiction_found(a, b):
    assert linking.contradiction(_p(a, i="a"), _p(b, i="b"), R)
    assert linking.contradiction(_p(b, i="b"), _p(a, i="a"), R)


@pytest.mark.parametrize("a, b", [
    ("Use pnpm instead of npm to install packages", "Install packages with pnpm rather than npm"),
    ("Prefer read over exec for viewing files", "Use the read tool, not exec, to view files"),
    ("直接回答，不要解释", "不要解释，直接回答问题"),
    ("Always run the tests before committing", "Run the test suite before every commit"),
])
def test_no_contradiction_between_agreeing_texts(a, b):
    assert linking.contradiction(_p(a, i="a"), _p(b, i="b"), R) is None


@pytest.mark.parametrize("a, b", [
    # the user-view pass: agreement on pnpm was taken for a contradiction on npm
    ("This repo uses pnpm, not npm", "Uses pnpm workspaces; npm breaks the lock file"),
    ("Use pnpm instead of npm", "The project is on pnpm; npm install corrupts the lock file"),
    ("Don't mock the database in tests; use a real Kuzu file", "Tests run on a real Kuzu file; mocks hid a bug"),
    ("Never push to main; open a pull request", "Open a pull request; pushing to main skips the review"),
    ("Prefer rg over grep for searching", "Search with rg; grep is slow on node_modules"),
    ("用 pnpm，不要用 npm", "项目使用 pnpm；npm 会破坏锁文件"),
])
def test_texts_that_agree_on_the_preferred_option_do_not_contradict(a, b):
    for x, y in ((a, b), (b, a)):
        for kind in ("principle", "lesson"):
            assert linking.contradiction(_p(x, kind, "x"), _p(y, kind, "y"), R) is None, (x, y)


@pytest.mark.parametrize("a, b", [
    # review: the preferred option named only to speak against it is no agreement
    ("Use pnpm, not npm", "Use npm; pnpm is deprecated"),
    ("Use pnpm, not npm", "Use npm, pnpm breaks the lock file"),
    ("Prefer rg over grep for searching", "Search with grep; rg is buggy on symlinks"),
    ("用 pnpm，不要用 npm", "用 npm；pnpm 会破坏锁文件"),
    # a negated cue does not speak against ("never breaks")
    ("Don't use npm in this repo", "npm never breaks the lock file here, use it"),
    ("Avoid mocks in the store tests", "Mocks are not flaky in the store tests, use them"),
    # a clause that wants something itself does not only speak against it
    ("Never use npm here", "Use npm because yarn corrupts the lock file"),
])
def test_speaking_against_the_preferred_option_still_contradicts(a, b):
    for x, y in ((a, b), (b, a)):
        for kind in ("principle", "lesson"):
            assert linking.contradiction(_p(x, kind, "x"), _p(y, kind, "y"), R), (x, y)


def test_error_messages_negation_is_not_a_stance():
    a = Doc("a", "event", "git push failed: no upstream branch", entry_type="error")
    b = Doc("b", "event", "Pushing failed because the upstream branch was not set", entry_type="error")
    assert linking.opposed(a, b, R) is None
    # the same texts as learnings: "not set" refuses what the other states
    la = Doc("a", "event", "The upstream branch is set", entry_type="learning")
    lb = Doc("b", "event", "The upstream branch is not set", entry_type="learning")
    assert linking.opposed(la, lb, R)


def test_bare_instead_blocks_a_merge_without_a_contradiction():
    a = Doc("a", "event", "Use exec to view files", entry_type="learning")
    b = Doc("b", "event", "Use exec to view files instead", entry_type="learning")
    assert linking.contradiction(a, b, R) is None
    assert linking.opposed(a, b, R)


def test_similarity_is_symmetric_and_bounded():
    a, b = linking.terms("git push failed: no upstream", R), linking.terms("push failed, upstream missing", R)
    s1, s2 = linking.similarity(a, b, R), linking.similarity(b, a, R)
    assert s1.score == s2.score and 0 < s1.score <= 1
    assert set(s1.shared) == {"push", "fail", "upstream"}
    assert linking.similarity(a, a, R).score == 1.0
    assert linking.similarity(a, [], R).score == 0.0


def test_rare_terms_weigh_more():
    a = linking.terms("npm install failed permission denied", R)
    b = linking.terms("git push failed permission denied", R)
    c = linking.terms("npm install failed network timeout", R)
    weights = {"fail": 1.0, "permission": 1.2, "denied": 1.2, "npm": 3.0, "install": 3.0, "git": 3.0,
               "push": 3.0, "network": 3.0, "timeout": 3.0}
    assert (linking.similarity(a, c, R, weights).score > linking.similarity(a, b, R, weights).score)


EV = "2026-05-01T10:00:00"


@pytest.mark.parametrize("new, old, etype, src", [
    # a lesson is caused by the error it was learned from, whichever was recorded first
    (("les", "lesson", None, "Set the upstream when pushing a new branch with git push"),
     ("ERR", "event", "error", "git push failed: the branch has no upstream"), "caused_by", "les"),
    (("ERR", "event", "error", "git push failed: the branch has no upstream"),
     ("les", "lesson", None, "Set the upstream when pushing a new branch with git push"), "caused_by", "les"),
    # and led to the principle
    (("pri", "principle", None, "Always set the upstream when pushing a new branch"),
     ("les", "lesson", None, "Set the upstream when pushing a new branch with git push"), "led_to", "les"),
    # a contradicting principle
    (("pri2", "principle", None, "Never set the upstream when pushing a new branch"),
     ("pri", "principle", None, "Always set the upstream when pushing a new branch"), "contradicts", "pri2"),
    # support cue: knowledge supports a principle
    (("kno", "knowledge", None, "pnpm should be used: its store saves disk space on installs"),
     ("pri", "principle", None, "Use pnpm for installs to save disk space"), "supports", "kno"),
    # Chinese: a lesson caused by an error
    (("les", "lesson", None, "推送新分支时要设置上游分支"),
     ("ERR", "event", "error", "推送失败：当前分支没有上游分支"), "caused_by", "les"),
    # two errors: related
    (("E2", "event", "error", "mix test failed in the transcript annotation view"),
     ("E1", "event", "error", "ExUnit test failed: transcript annotation renders"), "related_to", "E2"),
])
def test_decide_link_type_and_direction(new, old, etype, src):
    a = Doc(new[0], new[1], new[3], entry_type=new[2])
    b = Doc(old[0], old[1], old[3], entry_type=old[2])
    d = linking.decide_link(a, b, R)
    assert d is not None
    assert (d.type, d.src) == (etype, src)
    assert d.other == old[0]
    assert f"score {d.score:.2f}" in d.reason and "shared:" in d.reason


@pytest.mark.parametrize("a, b", [
    ("Bash eval failed with exit code 1: permission denied", "git push failed: no upstream branch"),
    ("Run the browser headless in CI", "Install dependencies with mix deps.get first"),
    ("推送失败：当前分支没有上游分支", "测试失败：找不到文件"),
])
def test_unrelated_texts_are_not_linked(a, b):
    assert linking.decide_link(_p(a, "lesson", "a"), _p(b, "lesson", "b"), R) is None


def test_no_self_link():
    a = _p("git push failed: no upstream", "lesson", "same")
    assert linking.decide_link(a, a, R) is None


def _ev(i: str, text: str, entry_type: str = "error", area: str | None = "tooling", day: int = 1,
        key: str | None = None) -> Doc:
    return Doc(i, "event", text, entry_type=entry_type, area=area, created_at=datetime(2026, 5, day),
               pattern_key=key)


@pytest.mark.parametrize("a, b, dup", [
    (_ev("a", "git push failed: no upstream branch"), _ev("b", "git push error - no upstream branch set"), True),
    (_ev("a", "git push failed: no upstream branch"),
     _ev("b", "git push error - no upstream branch set", area="backend"), False),  # other area
    (_ev("a", "git push failed: no upstream branch"),
     _ev("b", "git push error - no upstream branch set", entry_type="learning"), False),  # other kind
    (_ev("a", "推送失败：当前分支没有上游分支"), _ev("b", "git push 失败，因为当前分支没有设置上游分支"), True),
    (_ev("a", "Use pnpm instead of npm to install packages", "learning"),
     _ev("b", "Use npm, not pnpm, to install packages", "learning"), False),  # contradiction: never merged
])
def test_duplicate(a, b, dup):
    assert (linking.duplicate(b, a, R) is not None) is dup


def _found(*docs: Doc) -> linking.Candidates:
    return linking.Candidates(list(docs), {})


def test_match_pattern_makes_a_stable_key_from_the_first_event():
    first = _ev("E1", "git push failed: the current branch has no upstream branch", day=1)
    second = _ev("E2", "Pushing the branch failed because no upstream branch was set", day=2)
    new = _ev("E3", "git push error - no upstream branch, need --set-upstream", day=3)
    m = linking.match_pattern(new, _found(first, second), R)
    assert m is not None and m.new
    assert m.members == ("E1", "E2")
    assert m.key == linking.derived_key(R, "error", "tooling", first.text)
    assert m.key.startswith("auto.tooling.") and len(m.key.split(".")[-1]) == 8
    assert m.text == first.text


def test_match_pattern_prefers_an_existing_pattern_and_ignores_later_events():
    keyed = _ev("E1", "git push failed: no upstream branch", day=1, key="git.push")
    later = _ev("E9", "git push failed: no upstream branch", day=9)
    new = _ev("E5", "git push error: the branch has no upstream", day=5)
    m = linking.match_pattern(new, _found(keyed, later), R)
    assert m is not None and not m.new
    assert (m.key, m.via) == ("git.push", "E1")


def test_plan_links_one_edge_per_pattern_and_none_inside_own_pattern():
    les = Doc("les", "lesson", "Set the upstream branch when git push fails")
    e1 = _ev("E1", "git push failed: no upstream branch", key="k")
    e2 = _ev("E2", "git push error: upstream branch missing", key="k")
    plan = linking.plan_links(les, _found(e1, e2), set(), R)
    assert len(plan) == 1
    ev = _ev("E3", "git push failed again: no upstream branch", key="k")
    assert linking.plan_links(ev, _found(e1, e2), set(), R) == []
    assert linking.plan_links(les, _found(e1, e2), {"E1", "E2"}, R) == []


@pytest.mark.parametrize("df, n, expected", [
    ({"git": 5, "push": 3, "fail": 150, "upstream": 1}, 1000, ["upstream", "push", "git", "fail"]),
    ({"git": 5, "push": 3, "fail": 900, "upstream": 1}, 1000, ["upstream", "push", "git"]),  # too common
    ({"git": 5, "push": 3, "fail": 9000, "upstream": 1}, 10000, ["upstream", "push", "git"]),
    ({"git": 9000, "push": 8000, "fail": 9500}, 10000, ["push", "git"]),  # all common: the rarest two
    ({}, 0, []),
])
def test_pick_query_terms(df, n, expected):
    keys = ["git", "push", "fail", "upstream"]
    assert linking.pick_query_terms(keys, {}, df, n, R) == expected


def _rules_with(**changes):
    data = copy.deepcopy(packaged("linking"))
    for path, value in changes.items():
        node = data
        *head, last = path.split("__")
        for part in head:
            node = node[part]
        node[last] = value
    return data


@pytest.mark.parametrize("changes, message", [
    ({"link__min_score": 1.5}, "link.min_score: must be a number from 0.0 to 1.0, not 1.5"),
    ({"candidates__top": 2.5}, "candidates.top: must be a whole number from 1 to 1000, not 2.5"),
    ({"cues__error": "fail"}, "cues.error: must be a list of non-empty strings, not 'fail'"),
    ({"cues__error": ["fail", " "]}, "cues.error: must be a list of non-empty strings; item 2 is ' '"),
    ({"dedup__key_prefix": "Auto Key"},
     "dedup.key_prefix: must be lower-case letters, digits, '-' or '_', not 'Auto Key'"),
])
def test_rules_are_validated(changes, message):
    with pytest.raises(RulesError) as err:
        linking.LinkRules.from_mapping(_rules_with(**changes))
    assert str(err.value) == f"rules/linking.toml: {message}"


@pytest.mark.parametrize("rule, message", [
    ({"type": "likes", "from": ["*"], "to": ["*"]},
     "typing[0].type: must be one of caused_by, led_to, supports, contradicts, related_to, not 'likes'"),
    ({"type": "related_to", "from": ["*"], "to": ["*"], "when": "x"},
     "typing[0].when: unknown key (known keys here: type, from, to, cue, cue_in)"),
    ({"type": "related_to", "from": [], "to": ["*"]}, "typing[0].from: must be a non-empty list of strings, not []"),
    ({"type": "related_to", "from": ["*"], "to": ["*"], "cue": "maybe"},
     "typing[0].cue: must be one of \"\", error, support, contradiction, not 'maybe'"),
])
def test_typing_rules_are_validated(rule, message):
    data = _rules_with()
    data["typing"] = [rule]
    with pytest.raises(RulesError) as err:
        linking.LinkRules.from_mapping(data)
    assert str(err.value) == f"rules/linking.toml: {message}"


def test_labelled_pairs_never_merge_contradictions():
    """The quality bench's hard target, kept as a test: no contradicting pair is ever merged."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("link_quality", DATA.parent.parent.parent / "bench" /
                                                  "link_quality.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    pairs = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(pairs) >= 70 and sum(p["contradicts"] for p in pairs) >= 10
    assert any(linking.has_cjk(p["a"]) for p in pairs)
    result = mod.evaluate(pairs)
    assert result["wrong_merges"] == 0


@pytest.mark.parametrize("text, first, then", [
    # an ordering word ends a refusal's scope: the text refuses an order, not the action
    ("Don't run the tests before committing", {"commit"}, {"run", "test"}),
    ("Never commit before running the tests", {"run", "test"}, {"commit"}),
    ("Always run the tests before committing", {"run", "test"}, {"commit"}),
    ("Commit only after running the tests", {"run", "test"}, {"commit"}),
    ("Run the tests first, then commit", {"run", "test"}, {"commit"}),
    ("Don't deploy until the review is approved", {"review", "approv"}, {"deploy"}),
])
def test_an_ordering_statement_orders_instead_of_refusing(text, first, then):
    s = linking.stance(text, R)
    assert s.refuses == ()
    assert [(set(a) - {"alway", "first", "onli"}, set(b)) for a, b in s.orders] == [(first, then)]


@pytest.mark.parametrize("a, b", [
    ("Never commit before running the tests", "Always run the tests before committing"),
    ("Never commit before running the tests", "Commit only after running the tests"),
    ("Run the tests first, then commit", "Never commit before running the tests"),
    ("Don't push until CI is green", "Wait for CI to be green before pushing"),
])
def test_ordering_statements_that_agree_do_not_contradict(a, b):
    for x, y in ((a, b), (b, a)):
        for kind in ("principle", "lesson"):
            assert linking.contradiction(_p(x, kind, "x"), _p(y, kind, "y"), R) is None, (x, y)


@pytest.mark.parametrize("a, b", [
    # opposite orders, in either wording
    ("Never commit before running the tests", "Commit before running the tests"),
    ("Always run the tests before committing", "Run the tests after committing"),
    ("Never commit before running the tests", "Never run the tests before committing"),
    ("Run the tests first, then commit", "Commit, then run the tests"),
    ("Never deploy until the review is approved", "Deploy before the review is approved"),
    # an order against a refusal of one of its steps, and a substitution that an ordering word follows
    ("Never commit before running the tests", "Commit without running the tests"),
    ("Use pnpm instead of npm before installing", "Use npm before installing"),
])
def test_ordering_statements_that_disagree_contradict(a, b):
    for x, y in ((a, b), (b, a)):
        for kind in ("principle", "lesson"):
            assert linking.contradiction(_p(x, kind, "x"), _p(y, kind, "y"), R), (x, y)


@pytest.mark.parametrize("text, kept, dropped", [
    ("Write `/path/to/Demo/todo-app/src/hooks/useTodos.ts` failed: File has not been read yet",
     {"usetodo", "ts", "read"}, {"demo", "todo", "app", "src", "hook"}),
    ("Edit `…lib/spotter_web/controllers/otel.ex` failed", {"otel", "ex"}, {"lib", "spotter", "controller"}),
    ("`cat > types/README.md` failed", {"readm", "md"}, {"type"}),
    ("use read/write and pass/fail tests", {"read", "writ", "pass", "fail"}, set()),  # no paths
])
def test_a_path_is_compared_by_its_file_name(text, kept, dropped):
    got = set(linking.link_terms(text, R))
    assert kept <= got and not dropped & got, got


def test_two_failures_in_one_project_are_not_related_by_its_folders():
    a = Doc("a", "event", "Write `/home/ann/shop-app/src/hooks/useCart.ts` failed: File has not been read yet",
            entry_type="error")
    b = Doc("b", "event", "Read `/home/ann/shop-app/src/components` failed: EISDIR: illegal operation on a directory",
            entry_type="error")
    c = Doc("c", "event", "Edit `/srv/other/useCart.ts` failed: File has not been read yet", entry_type="error")
    assert linking.decide_link(a, b, R) is None
    assert linking.decide_link(a, c, R) is not None
