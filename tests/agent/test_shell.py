"""The read-only shell parser against an adversarial table: what it must accept and refuse."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memdir.agent.shell import ALLOWED_PROGRAMS, ShellRejected, parse, parse_read_only
from memdir.errors import ToolDenied

ACCEPTED: list[tuple[str, list[list[list[str]]]]] = [
    ("ls -la /tmp", [[["ls", "-la", "/tmp"]]]),
    ("cat MEMORY.md", [[["cat", "MEMORY.md"]]]),
    ("head -n 20 'user role.md'", [[["head", "-n", "20", "user role.md"]]]),
    ('grep -rn "TODO" .', [[["grep", "-rn", "TODO", "."]]]),
    ("grep -c x a.md | sort -n | uniq", [[["grep", "-c", "x", "a.md"], ["sort", "-n"], ["uniq"]]]),
    ("find . -name '*.md' -type f", [[["find", ".", "-name", "*.md", "-type", "f"]]]),
    ("wc -l a.md b.md", [[["wc", "-l", "a.md", "b.md"]]]),
    ("ls && cat a.md", [[["ls"]], [["cat", "a.md"]]]),
    ("ls missing || echo none", [[["ls", "missing"]], [["echo", "none"]]]),
    ("pwd; date", [[["pwd"]], [["date"]]]),
    ("echo 'a|b' \"c;d\"", [[["echo", "a|b", "c;d"]]]),
    ("grep '$HOME' a.md", [[["grep", "$HOME", "a.md"]]]),
    ("grep 'a\\|b' x", [[["grep", "a\\|b", "x"]]]),
    ("echo a\\ b", [[["echo", "a b"]]]),
    ("sort -k2,2 -t: file", [[["sort", "-k2,2", "-t:", "file"]]]),
    ("uniq -c input", [[["uniq", "-c", "input"]]]),
    ("uniq -f 2 input", [[["uniq", "-f", "2", "input"]]]),
    ("cut -d, -f1 data.csv", [[["cut", "-d,", "-f1", "data.csv"]]]),
    ("diff a.md b.md", [[["diff", "a.md", "b.md"]]]),
    ("tail -n 5 log.txt", [[["tail", "-n", "5", "log.txt"]]]),
    ("rg --files-with-matches foo", [[["rg", "--files-with-matches", "foo"]]]),
    ("stat -c %s a.md", [[["stat", "-c", "%s", "a.md"]]]),
    ("date -u +%Y-%m-%d", [[["date", "-u", "+%Y-%m-%d"]]]),
    ("file -b a.md", [[["file", "-b", "a.md"]]]),
    ("echo a~b x#y", [[["echo", "a~b", "x#y"]]]),
]

REFUSED: list[tuple[str, str]] = [
    ("rm -rf /", "not a read-only command"),
    ("rm MEMORY.md", "not a read-only command"),
    ("ls > out.txt", "redirection"),
    ("ls >> out.txt", "redirection"),
    ("cat < /etc/passwd", "redirection"),
    ("ls 2> err", "redirection"),
    ("ls &> all", "background"),
    ("cat <<EOF", "redirection"),
    ("echo $(rm -rf ~)", "expansion"),
    ("echo `rm x`", "backticks"),
    ('echo "$(id)"', "double quotes"),
    ('echo "`id`"', "double quotes"),
    ("echo $HOME", "expansion"),
    ("echo ${PATH}", "expansion"),
    ("echo $'\\x41'", "expansion"),
    ("ls *.md", "glob"),
    ("cat memo?.md", "glob"),
    ("ls [ab].md", "glob"),
    ("echo {a,b}", "brace"),
    ("ls; rm x", "not a read-only command"),
    ("ls && rm x", "not a read-only command"),
    ("ls || rm x", "not a read-only command"),
    ("ls | xargs rm", "not a read-only command"),
    ("cat a | sh", "not a read-only command"),
    ("cat a | tee b", "not a read-only command"),
    ("sleep 100 &", "background"),
    ("(rm x)", "subshell"),
    ("cat <(ls)", "redirection"),
    ("FOO=bar ls", "environment assignment"),
    ("LD_PRELOAD=/tmp/x.so cat a", "environment assignment"),
    ("find . -delete", "find -delete"),
    ("find . -exec rm {} ;", "brace"),
    ("find . -exec rm '{}' ';'", "find -exec"),
    ("find . -execdir rm '{}' +", "find -execdir"),
    ("find . -ok rm '{}' ';'", "find -ok"),
    ("find . -okdir rm '{}' ';'", "find -okdir"),
    ("find . -fprint /tmp/out", "find -fprint"),
    ("find . -fprintf /tmp/out x", "find -fprintf"),
    ("find . -fls /tmp/out", "find -fls"),
    ("sort -o out.txt in.txt", "sort -o"),
    ("sort -uo out.txt in.txt", "sort -o"),
    ("sort --output=out.txt in.txt", "sort --output"),
    ("sort --compress-program=sh in.txt", "sort --compress-program"),
    ("uniq in.txt out.txt", "OUTPUT file"),
    ("rg --pre sh foo", "rg --pre"),
    ("rg --pre=sh foo", "rg --pre"),
    ("date -s 2020-01-01", "date -s"),
    ("date -us 2020-01-01", "date -s"),
    ("date --set=2020-01-01", "date --set"),
    ("file -bC -m magic", "file -C"),
    ("tail -f log.txt", "never finishes"),
    ("tail -n5 -F log.txt", "never finishes"),
    ("tail --follow=name log.txt", "never finishes"),
    ("file -C -m magic", "file -C"),
    ("/bin/rm x", "program paths"),
    ("./script.sh", "program paths"),
    ("ls ~", "tilde"),
    ("ls # ; rm x", "comment"),
    ("ls\nrm x", "newline"),
    ("echo 'unterminated", "unterminated quote"),
    ('echo "unterminated', "unterminated quote"),
    ("ls |& cat", "not allowed"),
    ("ls | ", "empty command"),
    ("| ls", "empty command"),
    ("", "empty command"),
    ("   ", "empty command"),
    ("! ls", "history expansion"),
    ("ls \\", "trailing backslash"),
    ("cat a\x00b", "NUL"),
    ("python -c 'import os'", "not a read-only command"),
    ("sed -i s/a/b/ f", "not a read-only command"),
    ("awk 'BEGIN{system(\"rm x\")}'", "not a read-only command"),
    ("env rm x", "not a read-only command"),
    ("git log", "not a read-only command"),
]


def _shape(command: str) -> list[list[list[str]]]:
    line = parse_read_only(command)
    return [[list(argv) for argv in p.commands] for p in line.pipelines]


@pytest.mark.parametrize(("command", "expected"), ACCEPTED, ids=[c for c, _ in ACCEPTED])
def test_accepts_read_only_commands(command: str, expected: list[list[list[str]]]) -> None:
    assert _shape(command) == expected


@pytest.mark.parametrize(("command", "reason"), REFUSED, ids=[repr(c) for c, _ in REFUSED])
def test_refuses_unsafe_commands(command: str, reason: str) -> None:
    with pytest.raises(ShellRejected) as info:
        parse_read_only(command)
    assert reason.lower() in str(info.value).lower()


def test_refusal_is_a_tool_denial() -> None:
    with pytest.raises(ToolDenied):
        parse_read_only("rm x")


def test_connectors_are_kept_in_order() -> None:
    line = parse("ls && cat a; pwd || echo x")
    assert line.connectors == ("&&", ";", "||")
    assert line.programs() == ["ls", "cat", "pwd", "echo"]


@given(st.text(alphabet=st.sampled_from(list("ab '\"\\|&;$`<>()*?[]{}~#!\n=-")), max_size=30))
def test_accepted_words_never_carry_shell_syntax_unquoted(command: str) -> None:
    """Whatever random text gets through, it parses only into allow-listed programs."""
    try:
        line = parse_read_only("echo " + command)
    except ShellRejected:
        return
    assert all(program in ALLOWED_PROGRAMS for program in line.programs())
