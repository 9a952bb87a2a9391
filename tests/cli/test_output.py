from __future__ import annotations

import io
import json

from memdir.cli.output import Output, cols, table


def test_wide_characters_take_two_columns() -> None:
    assert cols("abc") == 3
    assert cols("数据库") == 6
    assert cols("e\u0301") == 1  # e + combining acute accent


def test_table_aligns_cjk_rows() -> None:
    """Regression: a Chinese file name pushed its row's later columns out of line."""
    rows = [
        {"path": "数据库.md", "type": "feedback"},
        {"path": "deploy_rule.md", "type": "project"},
    ]
    header, *body = table(rows, ["path", "type"]).splitlines()
    kinds = ("feedback", "project")
    starts = {cols(line[: line.index(kind)]) for line, kind in zip(body, kinds, strict=True)}
    assert starts == {cols(header[: header.index("TYPE")])}


def test_a_lone_surrogate_never_breaks_the_output() -> None:
    """Issue #22.2: data holding a lone surrogate is still written, as valid JSON or text."""
    for json_mode in (True, False):
        raw = io.BytesIO()
        stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
        Output(stdout=stream, json_mode=json_mode).data({"text": "bad \ud800 char"})
        stream.flush()
        written = raw.getvalue().decode("utf-8")
        if json_mode:
            assert json.loads(written) == {"text": "bad \ud800 char"}
        else:
            assert written == "text: bad \\ud800 char\n"
