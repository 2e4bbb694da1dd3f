"""Table-driven tests for the lifecycle's pure decisions (no database)."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta

import pytest

from kg.core.errors import RulesError
from kg.core.policy import packaged
from kg.lifecycle import conflicts, decay, promote, verify
from kg.lifecycle.policy import LifecyclePolicy

RAW = packaged("lifecycle")
LP = LifecyclePolicy.from_mapping(RAW)
T0 = datetime(2026, 3, 1, 9, 0)
D = timedelta(days=1)


# -- promotion -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("recurrence,sessions,expected", [
    (3, 2, True), (2, 2, False), (3, 1, False), (10, 5, True), (0, 0, False),
])
def test_eligible(recurrence, sessions, expected):
    assert promote.eligible(recurrence, sessions, LP) is expected


@pytest.mark.parametrize("fields,target", [
    ({"category": "preference", "area": "tooling", "entry_type": "learning"}, "preference"),
    ({"category": "insight", "tags": ["procedure"], "entry_type": "learning"}, "skill"),
    ({"category": "tool_gotcha", "entry_type": "learning"}, "tool_gotcha"),
    ({"category": "best_practice", "entry_type": "learning"}, "tool_gotcha"),
    ({"category": "workflow", "entry_type": "learning"}, "workflow"),
    ({"category": "correction", "area": "tooling", "entry_type": "learning"}, "behaviour"),
    ({"category": "principle", "entry_type": "learning"}, "principle"),
    ({"category": "insight", "area": "behavior", "entry_type": "learning"}, "behaviour"),
    ({"category": "insight", "area": "infra", "entry_type": "learning"}, "tool_gotcha"),
    ({"category": "insight", "area": "backend", "entry_type": "learning"}, "workflow"),
    ({"category": "error", "area": "frontend", "entry_type": "error"}, "workflow"),
    ({"category": "error", "area": None, "entry_type": "error"}, "tool_gotcha"),
    ({"category": "insight", "area": "docs", "entry_type": "learning"}, "principle"),
    ({"category": None, "area": None, "entry_type": None}, "principle"),
])
def test_classify(fields, target):
    fields = {"tags": (), "area": None, **fields}
    assert promote.classify(LP, **fields) == target


@pytest.mark.parametrize("target,file,mode", [
    ("behaviour", "SOUL.md", "propose"), ("workflow", "AGENTS.md", "propose"), ("tool_gotcha", "TOOLS.md", "auto"),
    ("preference", "USER.md", "auto"), ("principle", "MEMORY.md", "auto"),
    ("skill", "memory/skills/{slug}.md", "ask"),
])
def test_target_table_follows_the_seed(target, file, mode):
    t = LP.targets[target]
    assert (t.file, t.apply) == (file, mode)


@pytest.mark.parametrize("summary,action,expected", [
    ("git push failed", "Use SSH remotes", "Use SSH remotes"),
    ("git push failed", None, "git push failed"),
    ("git push failed", "   ", "git push failed"),
    ("a  b\n c", None, "a b c"),
])
def test_rule_text(summary, action, expected):
    assert promote.rule_text(summary, action, LP) == expected


def test_rule_text_is_cut_at_a_word():
    text = promote.rule_text("word " * 100, None, LP)
    assert len(text) <= LP.promotion.max_text_chars and text.endswith("…") and "wor…" not in text


@pytest.mark.parametrize("recurrence,priority,expected", [
    (3, "medium", "medium"), (5, "low", "high"), (3, "high", "high"), (4, "critical", "high"), (3, None, "medium"),
])
def test_impact_is_not_backwards(recurrence, priority, expected):
    assert promote.impact(recurrence, priority, LP) == expected


@pytest.mark.parametrize("key,slug", [
    ("git.push.auth", "git-push-auth"), ("  Deploy / Rollback  ", "deploy-rollback"), ("部署.回滚", "部署-回滚"),
    ("...", "skill"),
])
def test_slugify(key, slug):
    assert promote.slugify(key) == slug


def test_plan_wording():
    c = promote.Candidate("pat-1", "git.push", "git push failed", 4, 2, priority="high", area="tooling",
                          category="error", entry_type="error", action="Use SSH", sources=("error", "error"),
                          event_ids=("E1", "E2", "E3", "E4"))
    p = promote.plan(c, LP)
    assert (p.target, p.file, p.mode, p.node_kind) == ("tool_gotcha", "TOOLS.md", "auto", "knowledge")
    assert p.change == "Add to Known Gotchas: 'Use SSH'"
    assert p.motivation.startswith("Pattern 'git.push' occurred 4x across 2 sessions in the last 30 days")
    assert "E1, E2, E3, E4" in p.motivation and p.impact == "high"
    assert "TOOLS.md" in p.hypothesis and "4x in 2 sessions" in p.hypothesis


# -- verification (the verdicts themselves: test_lifecycle_verdicts.py) -------------------------------------
@pytest.mark.parametrize("days,stage", [
    (0, "none"), (6, "none"), (7, "remind"), (13, "remind"), (14, "request_evidence"), (20, "request_evidence"),
    (21, "revert"), (90, "revert"),
])
def test_overdue_stage(days, stage):
    assert verify.overdue_stage(T0, T0 + days * D, LP) == stage


@pytest.mark.parametrize("status,stage", [("applied", "revert"), ("confirmed", "none"), ("checking", "none")])
def test_only_a_first_verification_runs_to_a_deadline(status, stage):
    assert verify.due_stage(status, None, T0, T0 + 90 * D, LP) == stage


# -- decay -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("days,stage", [(0, 0), (29, 0), (30, 1), (59, 1), (60, 2), (89, 2), (90, 3), (400, 3)])
def test_stage_for(days, stage):
    assert decay.stage_for(days, LP) == stage


def _node(**kw):
    base = {"id": "n", "status": "pending", "priority": "high", "base_priority": None, "stage": 0, "pinned": False,
                "last_reinforced": T0}
    base.update(kw)
    return decay.DecayState(**base)


@pytest.mark.parametrize("node,days,expected", [
    (_node(), 29, None),
    (_node(), 30, (1, "medium", False, "pending")),
    (_node(stage=1, priority="medium", base_priority="high"), 45, None),
    (_node(stage=1, priority="medium", base_priority="high"), 60, (2, "low", True, "pending")),
    (_node(), 60, (2, "low", True, "pending")),
    (_node(), 90, (3, "low", True, "wont_fix")),
    (_node(priority="low"), 30, (1, "low", False, "pending")),
    (_node(priority="critical"), 30, (1, "high", False, "pending")),
    (_node(pinned=True), 200, None),
    (_node(stage=3, status="wont_fix"), 200, None),
    (_node(stage=2, priority="low", base_priority="high"), 5, (0, "high", False, "pending")),   # reinforced
    (_node(stage=2, priority="low", base_priority="high"), 35, (1, "medium", False, "pending")),
    (_node(status="active"), 90, (3, "low", True, "wont_fix")),
])
def test_decay_decide(node, days, expected):
    u = decay.decide(node, T0 + days * D, LP)
    if expected is None:
        assert u is None
    else:
        assert (u.stage, u.priority, u.stale, u.status) == expected
        assert u.base_priority == (node.base_priority or node.priority)


@pytest.mark.parametrize("days,expected", [
    (3, (0, "high", False, "active")),      # an expired pattern that recurred: active again, at its new age
    (40, (1, "medium", False, "active")),
    (95, None),                             # its newest occurrence is itself past expire_days: stays expired
])
def test_decay_revives_an_expired_node_that_recurred(days, expected):
    node = _node(stage=3, status="wont_fix", priority="low", base_priority="high")
    assert decay.decide(node, T0 + days * D, LP) is None  # not without `revive` (lc_decay_revive chose it)
    u = decay.decide(node, T0 + days * D, LP, revive=True)
    assert (u and (u.stage, u.priority, u.stale, u.status)) == expected or (u is None and expected is None)
    assert u is None or u.reason.startswith("recurred after it expired: active again")


def test_decay_is_idempotent():
    u = decay.decide(_node(), T0 + 61 * D, LP)
    again = _node(stage=u.stage, priority=u.priority, base_priority=u.base_priority, status=u.status)
    assert decay.decide(again, T0 + 61 * D, LP) is None


# -- conflicts -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("priority,recurrence,days,area,total", [
    ("critical", 0, 100, None, 100),
    ("high", 3, 0, "security", 60 + 30 + 30 + 50),
    ("medium", 1, 10, "tooling", 30 + 10 + 20 + 30),
    ("low", 0, 30, "frontend", 10),
    (None, 2, 29, "docs", 30 + 20 + 1 + 10),
    ("bogus", 0, 40, "TESTS", 30 + 20),
])
def test_score(priority, recurrence, days, area, total):
    assert conflicts.score(priority, recurrence, days, area, LP).total == total


@pytest.mark.parametrize("a,sa,b,sb,w", [("x", 10, "y", 5, "x"), ("x", 5, "y", 10, "y"), ("x", 7, "y", 7, "")])
def test_winner(a, sa, b, sb, w):
    assert conflicts.winner(a, sa, b, sb) == w


@pytest.mark.parametrize("a,b,hit", [
    ("Run the browser headless in CI", "Use the GUI to debug the browser", "opposite"),
    ("Keep answers verbose with examples", "Keep answers concise", "opposite"),
    ("Always run tests before pushing", "Never push without review", "opposite"),
    ("Don't force push the main branch", "Force push the main branch after rebase", "direct"),
    ("Don't force push", "Don't rebase", None),
    ("Use SSH remotes for git push", "Pin numpy below 2 in CI", None),
    ("不要 在 周末 部署 生产环境", "在 周末 部署 生产环境 没问题", "direct"),
    ("回答要详细", "回答要简洁", "opposite"),
    # opposite directions about different subjects are no contradiction (QA qa2: a tie took both rules out)
    ("always run pytest before git push", "never commit the .env file; add it to .gitignore", None),
    ("Never indent with tabs", "always use pnpm in this repository", None),
    ("Always run tests", "Never skip the linter", None),
    ("always use pnpm", "never use pnpm", "opposite"),
    ("Use tabs", "Indent Python with spaces", "opposite"),  # the pair is the subject itself
    # one generic word in common is no subject: [conflicts] topic_stoplist (a review of 73d39f08)
    ("Always run pytest before git push", "Never run migrations against production", None),
    ("Always commit the lockfile", "Never commit the .env file", None),
    ("Always use pnpm in this repo", "Never use sudo in this repo", None),
    # ... unless it is all one rule is about
    ("Always commit", "Never commit", "opposite"),
    ("Always run tests", "Never run tests", "opposite"),
    ("Always commit the lockfile", "Never commit the lockfile", "opposite"),
    ("Always commit the lock file", "Never commit the .env file", None),  # a negated rule: "commit, file"
    ("Don't commit to the repo", "Commit to the repo", "direct"),
    # Chinese: the direction word's bigrams ("要详") are no topic; detail and headless say their own subject
    ("要详细", "要简洁", "opposite"),
    ("请详细说明", "请简洁一点", "opposite"),
    ("Give verbose answers", "Keep replies concise", "opposite"),
    ("Run the tests headless", "Debug layouts in the GUI", "opposite"),
    # a rule that forbids contradicts one that does what it forbids ([conflicts] negation_skip, negation_adverb_suffix,
    # negation_cjk_window), not one that only shares its words: checking a file is no editing of it
    ("Always check the config file", "Don't edit the config file by hand", None),
    ("Always check the config file", "Never edit the config file by hand", None),
    ("Don't ever force push the branch", "Force push the branch after a rebase", "direct"),
    ("Don't rebase the main branch", "Merge the main branch into yours", None),
    ("Stop using print for logging", "Use print for logging in scripts", "direct"),
    ("Avoid mocking the database client", "Mock the database client in unit tests", "direct"),
    # an adverb between the negation and its verb (rev12)
    ("Don't manually edit the lockfile", "Edit the lockfile to fix merge conflicts", "direct"),
    ("Never blindly trust user input", "Trust user input from the admin panel", "direct"),
    ("Never actually delete user records", "Delete user records on request", "direct"),
    ("Don't even try to cache tokens", "Cache tokens for an hour", "direct"),
    # one shared word and a common verb are no contradiction (rev12: these were flagged on one word)
    ("Don't use Python 2", "Use Python 3.12 for new scripts", None),
    ("Never use Docker for the tests", "Use Docker Compose to start the database", None),
    ("Never run pytest with coverage in CI", "Run pytest before every push", None),
    # Chinese: the verb behind a preposition or an adverb (rev12), and a different place is another subject
    ("不要在生产环境运行迁移", "生产环境运行迁移前先备份", "direct"),
    ("不要在生产环境运行迁移", "在测试环境运行迁移", None),
    ("不要直接修改数据库", "修改数据库来修复问题", "direct"),
    ("不要随意删除日志", "删除旧日志以节省空间", "direct"),
    ("不要手动编辑配置文件", "编辑配置文件以修复错误", "direct"),
    # Chinese always / never ([conflicts] opposite_groups), in Chinese and mixed, as the English pair (QA qa10 F2)
    ("缩进总是用 tab。", "缩进不要用 tab。", "opposite"),
    ("以后都用 npm。", "不要用 npm，用 pnpm。", "opposite"),
    ("日期处理一律用 moment。", "禁止使用 moment，改用 dayjs。", "opposite"),
    ("总是用分号结尾。", "从不用分号结尾。", "opposite"),
    ("永远用 yarn 安装依赖。", "别再用 yarn 了，用 pnpm。", "opposite"),
    ("提交信息总是用英文写。", "提交信息不要用英文写。", "opposite"),
    ("部署总是先跑 docker compose。", "部署不要跑 docker compose。", "opposite"),
    ("Always use npm.", "Never use npm; use pnpm.", "opposite"),
    # ... and not between unrelated rules: 以后, 都用, 每次 say when and how often, not about what (QA qa10 F1)
    ("以后提交信息都用中文写。", "以后都用 pnpm 安装依赖，不要用 npm。", None),
    ("以后写测试都用 vitest。", "以后注释都用中文写，不要用英文。", None),
    ("以后都用 dayjs 处理日期。", "以后都用 fetch，不要引入 axios。", None),
    ("每次提交前都要跑 pnpm lint。", "不要用 any 类型。", None),
    ("总是先写测试再写代码。", "不要在 controller 里写 SQL。", None),
    ("以后回复请用中文。", "不要用 console.log 调试，用 logger。", None),
    ("总是用 pnpm 安装依赖。", "不要用 tab 缩进。", None),
    ("缩进总是用 tab。", "不要用 npm。", None),
    ("总是用 TypeScript 写新文件。", "不要提交 .env 文件。", None),
    ("永远用 git rebase 合并。", "不要用 git push --force。", None),
    ("每次都用 vue 写组件。", "别再用 jquery 了。", None),
    ("Always write commit messages in Chinese.", "Never use npm; use pnpm to install dependencies.", None),
])
def test_detect(a, b, hit):
    reason = conflicts.detect(a, b, LP)
    if hit is None:
        assert reason is None
    else:
        assert reason is not None and (("opposite" in reason) if hit == "opposite" else ("direct" in reason))


@pytest.mark.parametrize("decisions,active,on_tie,hidden", [
    ([("a", "b", "a")], {"a", "b"}, "hold_both", {"b"}),
    ([("a", "b", "b")], {"a", "b"}, "hold_both", {"a"}),
    ([("a", "b", "")], {"a", "b"}, "hold_both", {"a", "b"}),
    ([("a", "b", "")], {"a", "b"}, "keep_both", set()),
    ([("a", "b", "a")], {"b"}, "hold_both", set()),          # the winner was reverted: the loser returns
])
def test_suppressed(decisions, active, on_tie, hidden):
    views = [conflicts.DecisionView(a, b, w, False) for a, b, w in decisions]
    assert conflicts.suppressed(views, active, on_tie) == hidden


# -- policy ----------------------------------------------------------------------------------------------------
def _broken(path, value):
    raw = copy.deepcopy(RAW)
    node = raw
    parts = path.split(".")
    for p in parts[:-1]:
        node = node[p]
    if value is KeyError:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return raw


@pytest.mark.parametrize("path,value,message", [
    ("promotion.min_recurrence", 0, "promotion.min_recurrence: must be a whole number of at least 1, not 0"),
    ("promotion.window_days", "30", "promotion.window_days: must be a whole number of at least 1, not '30'"),
    ("verification.confirm_max_ratio", 0.9,
     "verification: needs confirm_max_ratio < ineffective_min_ratio ≤ worse_min_ratio"),
    ("overdue.revert_days", 10, "overdue: needs grace_days ≤ extend_days ≤ revert_days"),
    ("decay.stale_days", 10, "decay: needs demote_days ≤ stale_days ≤ expire_days"),
    ("decay.revived_status", "wont_fix",
     "decay.revived_status: must be one of decay.statuses (pending, in_progress, active), so a revived node decays "
     "again"),
    ("targets.principle.apply", "sometimes",
     "targets.principle.apply: must be one of auto, propose, ask, not 'sometimes'"),
    ("targets.principle.file", "../x.md", "targets.principle.file: must be a path inside the workspace, not '../x.md'"),
    ("conflicts.on_tie", "coin", "conflicts.on_tie: must be one of hold_both, keep_both, not 'coin'"),
    ("conflicts.base_priority.high", KeyError, "conflicts.base_priority.high: missing"),
    ("conflicts.own_subject_pairs", [["verbose", "short"]],
     "conflicts.own_subject_pairs: must be a list of pairs from opposite_pairs, not [['verbose', 'short']]"),
    ("conflicts.opposite_groups", [["总是", "不要"]],
     "conflicts.opposite_groups: must be a list of [[words], [opposite words]] pairs of non-empty lists, not "
     "[['总是', '不要']]"),
])
def test_policy_errors_name_the_key(path, value, message):
    with pytest.raises(RulesError) as err:
        LifecyclePolicy.from_mapping(_broken(path, value))
    assert str(err.value) == f"rules/lifecycle.toml: {message}"


def test_classify_rule_must_name_a_known_target():
    raw = copy.deepcopy(RAW)
    raw["classify"][0]["target"] = "nowhere"
    with pytest.raises(RulesError) as err:
        LifecyclePolicy.from_mapping(raw)
    assert str(err.value) == ("rules/lifecycle.toml: classify[0].target: must be one of behaviour, workflow, "
                              "tool_gotcha, preference, principle, skill, not 'nowhere'")


def test_find_all_agrees_with_pairwise_detect():
    texts = ["Run the browser headless in CI", "Use the GUI to debug the browser", "Keep answers concise",
             "Keep answers verbose with examples", "Don't force push the main branch",
             "Force push the main branch after rebase", "Use SSH remotes for git push", "不要 在 周末 部署 生产环境",
             "在 周末 部署 生产环境 没问题", "Always run tests", "Never skip the linter", "Never run the tests twice",
             "要详细", "要简洁", "请详细说明", "请简洁一点", "Give verbose answers", "Keep replies concise",
             "Always commit the lockfile", "Never commit the .env file", "Always run pytest before git push",
             "Never run migrations against production", "以后提交信息都用中文写。",
             "以后都用 pnpm 安装依赖，不要用 npm。", "缩进总是用 tab。", "缩进不要用 tab。"]
    rules = [(f"r{i:02d}", t) for i, t in enumerate(texts)]
    pairwise = [(a, b, r) for k, (a, ta) in enumerate(rules) for b, tb in rules[k + 1:]
                if (r := conflicts.detect(ta, tb, LP))]
    assert conflicts.find_all(rules, LP) == pairwise and len(pairwise) >= 5
    found = {frozenset((texts[int(a[1:])], texts[int(b[1:])])) for a, b, _ in pairwise}
    assert {frozenset(p) for p in (("要详细", "要简洁"), ("请详细说明", "请简洁一点"),
                                   ("Give verbose answers", "Keep replies concise"),
                                   ("缩进总是用 tab。", "缩进不要用 tab。"))} <= found
    unrelated = (("Always commit the lockfile", "Never commit the .env file"),
                 ("Always run pytest before git push", "Never run migrations against production"),
                 ("以后提交信息都用中文写。", "以后都用 pnpm 安装依赖，不要用 npm。"))
    assert not {frozenset(p) for p in unrelated} & found


@pytest.mark.parametrize(("summary", "expected"), [
    ("`python /tmp/xyz123/file.py` failed: ModuleNotFoundError: No module named 'yaml'",
     "`python file.py` failed: ModuleNotFoundError: No module named 'yaml'"),
    ("Edit `/repo/src/app/page.tsx` failed: File has not been read yet. Read it first.",
     "Edit failed: File has not been read yet. Read it first."),
    ("`cd /repo/app && npx tsc --noEmit` failed: src/a.test.ts(6,33): error TS2307: Cannot find module 'x'",
     "`npx tsc --noEmit` failed: a.test.ts: error TS2307: Cannot find module 'x'"),
    ("Rebase onto main before pushing (PR #1234, commit 3f2a9c1d4e)", "Rebase onto main before pushing"),
    ("ls: cannot access /home/ann/proj/memory/: No such file or directory",
     "ls: cannot access <dir>: No such file or directory"),
    ("Read the guide at https://example.org/docs/setup first",
     "Read the guide at https://example.org/docs/setup first"),
    ("Use pnpm, not npm, in this repo", "Use pnpm, not npm, in this repo"),
    # review: a file without an extension is no folder; ids after a space went unremoved, leaving a dangling word
    ("Don't edit /etc/hosts by hand", "Don't edit hosts by hand"),
    ("cat /home/ann/proj/Makefile failed", "cat Makefile failed"),
    ("rm -rf /tmp/abc/build failed", "rm -rf <dir> failed"),
    ("Prefer rg over grep in src/ and tests/", "Prefer rg over grep in src/ and tests/"),
    ("Set the env var in ~/.bashrc, then reload", "Set the env var in ~/.bashrc, then reload"),
    ("Commit with git commit -am, e.g. fix for #123 in PR #45", "Commit with git commit -am, e.g. fix"),
    ("Squash the commits before merging PR#45", "Squash the commits before merging"),
    ("issue #7: the build breaks on node 16", "the build breaks on node 16"),
    # the speaker is no part of the lesson (README's quick start logs "User: ...")
    ("User: this repo uses pnpm, not npm", "this repo uses pnpm, not npm"),
    ("Fix the user: prompt in login.py", "Fix the user: prompt in login.py"),
])
def test_the_rule_text_states_the_lesson_not_the_instance(summary, expected):
    assert promote.rule_text(summary, None, LP) == expected
    assert promote.rule_text("x", summary, LP) == expected


def test_generalising_rules_are_checked():
    raw = copy.deepcopy(RAW)
    raw["promotion"]["generalise"] = [["(", "x"]]
    with pytest.raises(RulesError, match="generalise"):
        LifecyclePolicy.from_mapping(raw)


@pytest.mark.parametrize(("a", "b"), [
    ("Don't use the München mirror", "Use the München mirror"),
    ("Never run prisma migrate on the Société database", "Run prisma migrate on the Société database"),
])
def test_rules_sharing_an_accented_word_still_contradict(a, b):
    """(review H2) The Chinese function-word change kept only ASCII words of a Latin rule: a contradiction about
    'München' or 'Société' was no longer found, and both rules were written."""
    assert conflicts.detect(a, b, LP) is not None
