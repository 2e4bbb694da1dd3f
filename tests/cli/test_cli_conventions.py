"""kg behaves as users of Typer tools expect: `--version`, shell completion installed and answering in bash,
zsh and fish, usage lines as the README writes them, help wrapped at words, extras shown literally."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kg

KG = str(Path(sys.executable).with_name("kg"))
REPO = Path(__file__).resolve().parents[2]


def _kg(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KG, *args], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "COLUMNS": "80", **(env or {})})


def test_version():
    for flag in ("--version", "-V"):
        done = _kg(flag)
        assert (done.returncode, done.stdout, done.stderr) == (0, f"kg (kaizen-kg) {kg.__version__}\n", "")


@pytest.mark.parametrize(("argv", "usage"), [
    (["log"], "kg log [OPTIONS] KIND SUMMARY"),
    (["edge", "add"], "kg edge add [OPTIONS] FROM TO TYPE"),
    (["node", "add"], "kg node add [OPTIONS] TYPE TEXT"),
    (["graph", "show"], "kg graph show [OPTIONS] [ID]"),
    (["show"], "kg show [OPTIONS] ID"),
])
def test_usage_lines_read_like_the_readme(argv, usage):
    done = _kg(*argv, "--help")
    assert done.returncode == 0
    assert f" Usage: {usage} " in done.stdout.splitlines()[1] + " "
    assert usage.split(" [OPTIONS]")[0] in (REPO / "README.md").read_text(encoding="utf-8")


def _description(help_text: str) -> list[list[str]]:
    """The paragraphs of a help page's description (between the usage line and the first panel)."""
    lines = help_text.splitlines()[3:]
    body = lines[: next(i for i, ln in enumerate(lines) if ln.startswith("╭"))]
    paragraphs, current = [], []
    for ln in body:
        if ln.strip():
            current.append(ln.strip())
        elif current:
            paragraphs.append(current)
            current = []
    return paragraphs + ([current] if current else [])


@pytest.mark.parametrize("argv", [["log"], ["mcp"], ["export", "graph"], ["graph", "report"], ["schedule", "install"]])
def test_help_wraps_at_words(argv):
    """Each line of a paragraph is as full as the terminal allows: the next line's first word did not fit."""
    done = _kg(*argv, "--help")
    width = 80 - 2  # rich keeps one column of margin on each side
    paragraphs = _description(done.stdout)
    assert paragraphs
    for para in paragraphs:
        for line, following in zip(para, para[1:], strict=False):
            assert len(line) + 1 + len(following.split()[0]) > width, (line, following)


def test_mcp_help_shows_the_extra_to_install():
    text = " ".join(_kg("mcp", "--help").stdout.split())
    assert "pip install 'kaizen-kg[mcp]'" in text


def test_readme_describes_the_demo_that_kg_demo_builds(tmp_path):
    # kg off PATH, as `./dev demo` leaves it: the commands the demo ends with name it by its full path (a bare `kg`
    # there was "command not found")
    done = _kg("demo", str(tmp_path / "demo"), env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    explore = done.stdout[done.stdout.index("Explore it:"):]
    assert f"{KG} -w {tmp_path / 'demo'} why " in explore and " kg -w" not in explore, explore
    assert "Warning" not in done.stderr, done.stderr  # (a new user's first command warned that ids.json was rebuilt)
    m = re.search(r"entries over (\d+) days in (\d+) sessions", done.stderr)
    assert m, done.stderr
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.count(f"scripted {m[1]}-day, {m[2]}-session history") == 2
    assert not re.search(r"scripted \d+-day(?!, " + m[2] + ")", readme)


# -- completion: installed by `kg --install-completion` in each shell, then asked to complete ------------------
def _shell_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "PATH": f"{Path(KG).parent}:/usr/bin:/bin"}


def _in_shell(shell: str, script: str, home: Path) -> str:
    done = subprocess.run([shell, "-c", script], capture_output=True, text=True, timeout=120, check=False,
                          env=_shell_env(home))
    assert done.returncode == 0, done.stderr
    return done.stdout


def _install(shell: str, home: Path) -> None:
    # `; true` keeps the shell alive as kg's parent, so kg sees which shell it was run from
    out = _in_shell(shell, "kg --install-completion; true", home)
    assert out.startswith(f"{shell} completion installed in ")


def test_bash_completion(tmp_path):
    _install("bash", tmp_path)
    assert "source '" in (tmp_path / ".bashrc").read_text()
    script = ('source ~/.bash_completions/kg.sh; COMP_WORDS=(kg {words}); COMP_CWORD={cword}; _kg_completion kg; '
              'printf "%s\\n" "${{COMPREPLY[@]}}"')
    assert _in_shell("bash", script.format(words="exp", cword=1), tmp_path) == "export\n"
    assert _in_shell("bash", script.format(words='log ""', cword=2), tmp_path).split() == \
        ["learning", "error", "feature"]
    assert "--dialect" in _in_shell("bash", script.format(words="export graph --di", cword=3), tmp_path)


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion(tmp_path):
    _install("fish", tmp_path)
    assert (tmp_path / ".config/fish/completions/kg.fish").exists()
    out = _in_shell("fish", 'complete -C "kg export gr"', tmp_path)
    assert out.startswith("graph\t")


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion(tmp_path):
    """zsh's `_arguments` runs only inside a completion widget, so here it prints what kg's function hands it."""
    _install("zsh", tmp_path)
    assert "fpath+=~/.zfunc" in (tmp_path / ".zshrc").read_text()
    out = _in_shell("zsh", "autoload -Uz compinit; compinit -u; source ~/.zfunc/_kg; "
                           "_arguments() { print -r -- \"$@\"; }; words=(kg exp); CURRENT=2; _kg_completion",
                    tmp_path)
    assert out.startswith('*: :(("export":')


def test_a_missing_extra_is_a_usage_error_for_every_command(tmp_path):
    """A missing optional extra is fixed by the user (a pip install), as `kg graph show` and the FalkorDB commands
    say with exit 2: `kg mcp` said the same with exit 1, an operational failure."""
    code = ("import sys; sys.modules['mcp'] = None; sys.argv = ['kg', '--workspace', sys.argv[1], 'mcp'];"
            "from kg.cli.entry import main; main()")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "pip install 'kaizen-kg[mcp]'" in done.stderr and "Traceback" not in done.stderr
