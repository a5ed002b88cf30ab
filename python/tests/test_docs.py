"""The first example of docs/python.md, run as a doctest against the installed package, so that
the page says what the package does."""

import doctest
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_first_example_of_python_md(tmp_path, monkeypatch):
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"^```pycon\n(.*?)^```", text, re.S | re.M)
    assert found, f"{DOC} has no ```pycon example"
    # As a new user runs it: an empty home, so no database home and no ledgers of its own.
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("KALAH_DB", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    line = text[: found.start(1)].count("\n")
    test = doctest.DocTestParser().get_doctest(found.group(1), {}, "docs/python.md", str(DOC), line)
    report = []
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=report.append)
    assert test.examples, "the example has no `>>>` lines"
    assert runner.failures == 0, "".join(report)
