"""Issue 14: questions and polite requests that read as faults, and a promise that was not read as one.

Fresh held-out sets p31 and p32 (bench/reflect_heldout.py) showed a Chinese A-not-A question ("是不是应该 ...", is it
that I should ...) read as the user negating the agent's words, "why or why not?" read as a pointed why, "能不能帮我
写 ..." (can you help me write ...) read as asking for a capability the agent lacks, and "现在 ... 应该能够正确地 ..."
(it should now work correctly) not read as the agent's claim. Every sentence here is written for this test; none is a
labelled turn."""

from __future__ import annotations

import pytest

from kg.reflect import signals as reflect_signals
from tests.unit.test_reflect_unseen_users import corrections, signals


@pytest.mark.parametrize(("text", "at", "asks"), [
    ("是不是应该先跑测试", 1, True),
    ("能不能快一点", 1, True),
    ("有没有日志", 1, True),
    ("不是缓存的问题", 0, False),
    ("这不是缓存的问题", 1, False),
    ("没有日志", 0, False),
])
def test_a_not_a_is_a_question(text, at, asks):
    assert reflect_signals._asks_either(text, at) is asks


def test_a_chinese_a_not_a_question_does_not_negate_the_agents_words():
    """"我是不是应该先创建虚拟环境" (should I create a virtual environment first?) asks; "不应该创建虚拟环境" denies."""
    agent = "已完成。建议创建虚拟环境再安装依赖。"
    assert "negates_agent" not in signals(agent, "对，我是不是应该先创建虚拟环境再运行？")
    assert "negates_agent" in signals(agent, "不，不应该创建虚拟环境，直接用系统的 Python")


def test_why_or_why_not_asks_for_reasons_after_the_agent_worked():
    agent = "I've set up a second database for the staging environment."
    said = "could we use one database with two schemas instead? why or why not?"
    assert "why_did" not in signals(agent, said)
    assert "why_after_work" not in signals(agent, said)
    assert "why_did" in signals(agent, "why not one database with two schemas?")


@pytest.mark.parametrize(("said", "capability"), [
    ("能不能帮我写一个脚本画出每天的价格", False),
    ("你能不能把日志也输出到文件", False),
    ("可不可以麻烦你看一下这个报错", False),
    ("这个工具能不能支持导出成 PDF", True),
    ("希望能自动保存草稿", True),
])
def test_can_you_help_me_is_a_request_not_a_missing_capability(said, capability):
    assert ("capability" in signals("数据已经整理好了。", said)) is capability


def test_should_now_work_correctly_in_chinese_is_a_claim_and_no_effect_after_it_a_correction():
    agent = "我把图标的颜色改成了 currentColor。现在图标应该能够正确地随主题切换颜色了。"
    assert "claims_done" in signals(agent, "好")
    reply = "我明白了问题所在。img 标签不会继承文字颜色，我来改成内联 SVG。"
    assert corrections(agent, "暗色主题下图标的颜色没有生效。", reply) == ["correction"]


def test_a_bare_fix_that_picks_one_of_the_offered_options_sends_no_work_back():
    """"fix" after the agent listed ways out and asked which one to take answers the offer; after it handed the work
    back ("You can run the migration yourself.") it sends the work back."""
    options = ("1. **Reset the branch**: `git reset --hard origin/main`\n2. **Rebase it**: `git rebase main`\n"
               "Please let me know which option you'd like to proceed with, or if you need further help!")
    assert not {"redirect_after_handback", "redo_after_advice"} & set(signals(options, "fix"))
    assert corrections(options, "fix") == []
    assert "redirect_after_handback" in signals("You can now run the migration to finish.", "fix")


@pytest.mark.parametrize(("said", "still"), [
    ("暗色主题下图标还是显示黑色", True),
    ("还是显示旧的数据，应该显示新的", True),
    ("还是用表格吧", False),
])
def test_chinese_still_shows_is_a_fault_that_persists(said, still):
    assert ("still_again" in signals("我已经把图标改成 currentColor 了。", said)) is still


@pytest.mark.parametrize(("said", "lasting"), [
    ("every time it rebuilds, the sidebar scrolls back to the top", False),
    ("à chaque fois, il remonte la page tout en haut", False),
    ("every time you change the schema, run the migrations", True),
    ("à chaque fois que tu modifies le code, lance les tests", True),
    # a condition told of "it"/"this" with an order in the main clause is a rule (the reviewer's e1, e3, f1)
    ("Every time it times out, rerun it with --retries 3 before you report a failure.", True),
    ("Every time this happens, clear the cache and deploy again.", True),
    ("À chaque fois, il faut relancer le serveur de test avant de lancer les tests.", True),
    ("every time it fails, you must restart the worker", True),
    # a statement in the main clause tells what keeps happening
    ("every time it rebuilds, the sidebar scrolls to the top", False),
    ("every time this happens, I have to log in again", False),
])
def test_every_time_it_happens_is_a_description_not_a_lasting_rule(said, lasting):
    assert ("lasting" in signals("Voilà, c'est fait. / Done.", said)) is lasting


def test_a_status_question_the_agent_answers_yes_is_a_check_not_a_correction(shared_data):
    """A real Claude Code session: the agent said "everything is committed and pushed", the user asked "did you
    push?", the agent answered "Yes - everything is pushed and clean". kg wrote "Make sure you push before handing
    work back" at high priority. The same question answered "no" (or "yes, but" naming what is not done) stays a
    correction."""
    from kg.reflect import default_rules, read_transcript
    from kg.reflect.detect import learnings

    t = read_transcript(shared_data / "transcripts" / "claude_code" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl.gz")
    assert not [f.summary for f in learnings(t, default_rules()) if "push" in f.summary.lower()]
    agent = "I refactored the exporter and committed the change."
    assert "status_confirmed" in signals(agent, "did you run the tests?", "Yes, all 212 tests pass.")
    assert corrections(agent, "did you run the tests?", "Yes, all 212 tests pass.") == []
    assert corrections(agent, "did you run the tests?", "No, I didn't run them. Let me run them now.") == ["correction"]
    assert "status_confirmed" not in signals(agent, "did you run the tests?",
                                             "Yes, though two of them fail: let me look at why.")
    assert "status_confirmed" not in signals(agent, "did you run the tests? the exporter is broken",
                                             "Yes, I ran them.")
    assert "status_confirmed" not in signals(agent, "did you run the tests?",  # a "yes" further down is not the answer
                                             "I ran the fast ones only.\nYes, the slow ones are still to run.")
    agent = "I refactored the exporter, committed the change and pushed it."
    for said, reply in (  # the reply's yes undone further on, or the turn says what is wrong: still corrections
            ("did you push?", "Yes, I committed it; the push itself failed with permission denied."),
            ("did you run the tests?", "Yes, I ran them: 3 of them fail."),
            ("did you run the migration?", "Yes.\nActually no, I only generated it; let me run it now."),
            ("did you add tests?", "Yes, I'll add them now."),
            ("did you even test this? it crashes on startup", "Yes, I ran it locally. Let me look at the crash."),
            ("did you push to production? I told you to use staging only", "Yes, I deployed to production."),
            ("did you check the logs? the error is in the auth module, not the db", "Yes, I checked them."),
            ("ты запушил?", "Да, закоммитил, а запушить не получилось, нет доступа."),
            ("푸시했어?", "네트워크 오류로 푸시하지 못했습니다."),
            ("测试都通过了吗？", "有的测试失败了。")):
        assert "status_confirmed" not in signals(agent, said, reply), (said, reply)
    assert "status_confirmed" in signals("Я обновил конфиг.", "ты запустил тесты?", "Да, все тесты прошли.")
    assert "status_confirmed" in signals(agent, "已经推送了吗？", "是的，已经推送到 main 分支。")
    assert "status_confirmed" not in signals("Я обновил конфиг.", "ты запустил тесты?", "Да, но один тест упал.")


def test_a_crash_said_never_to_happen_is_a_fault_not_a_lasting_rule(shared_data):
    """Pi's large session: "i selected the theme while you were working and got a crash, that should never happen"
    was logged as a preference (a rule for the agent) at 0.64; it reports what the agent's work did. A rule said as
    one ("invalid themes must NEVER explode", twenty lines later) stays a preference."""
    from kg.reflect import default_rules, read_transcript, reflect

    t = read_transcript(shared_data / "runtimes" / "openclaw" / "transcripts" / "pi-coding-agent" /
                        "large-session.jsonl")
    found = {f.position: f.category for f in reflect(t, default_rules()).findings}
    assert found.get("line 836") != "preference"
    assert found.get("line 856") == "preference"
