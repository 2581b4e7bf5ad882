"""
test_docs.py - the Python examples of docs/loaderx.md from "Positions and
resuming" on (the sections written as runnable examples: they make their
own stores and assert what the text says), each run verbatim in a fresh
folder, so that the manual cannot drift from the code.
"""
import os
import re

import pytest

DOC = os.path.join(os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(__file__), "..", "..", ".."), "docs", "loaderx.md")
FIRST = "## Positions and resuming"


def examples():
    with open(DOC, encoding="utf-8") as f:
        text = f.read()
    assert FIRST in text, DOC
    text = text[text.index(FIRST):]
    text = text[:text.index("\n## Tests")]
    blocks = re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)
    assert blocks, "no examples in " + DOC
    return blocks


@pytest.mark.parametrize("code", examples())
def test_example_runs(code):
    exec(compile(code, DOC, "exec"), {"__name__": "__doc_example__"})
