#!/usr/bin/python3
"""
doc_links.py - the user documentation's links hold: every relative link
of README.md, CONTRIBUTING.md and docs/*.md names a file of the tree, and
every #anchor a heading of its page (GitHub's heading ids), and README.md
stays a page a user reads (at most 600 lines; the rest lives in docs/ and
the man pages).  Usage: doc_links.py SRCDIR [FILE.md ...]; exit 1 with one
line per broken link.
"""
import os
import re
import sys

README_MAX_LINES = 600
CHECKED = []  # every relative link looked at, for the summary
LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+).*?\1")


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, line


def slug(heading):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces
    to hyphens."""
    s = CODE_SPAN.sub(lambda m: m.group(0).strip("`"), heading.strip())
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)
    s = s.lower()
    s = "".join(c for c in s if c.isalnum() or c in " -_")
    return s.replace(" ", "-")


def anchors(path):
    ids, seen = set(), {}
    with open(path, encoding="utf-8") as f:
        for _, line in prose_lines(f.read()):
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(1))
            k = seen.get(base, 0)
            seen[base] = k + 1
            ids.add(base if k == 0 else "%s-%d" % (base, k))
    return ids


def broken_links(srcdir, rel):
    path = os.path.join(srcdir, rel)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        for m in LINK.finditer(CODE_SPAN.sub("", line)):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = (os.path.normpath(os.path.join(os.path.dirname(path),
                                                  file_part))
                    if file_part else path)
            where = "%s:%d: %s" % (rel, n, target)
            CHECKED.append(where)
            if not os.path.exists(dest):
                yield where + ": no such file"
            elif anchor and not dest.endswith(".md"):
                yield where + ": an anchor into a file that is not Markdown"
            elif anchor and anchor not in anchors(dest):
                yield where + ": no heading #" + anchor + " in " + \
                    os.path.relpath(dest, srcdir)


def main(argv):
    srcdir = argv[1]
    files = argv[2:] or (["README.md", "CONTRIBUTING.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(srcdir, "docs"))
        if f.endswith(".md")))
    problems = []
    for rel in files:
        problems += broken_links(srcdir, rel)
    with open(os.path.join(srcdir, "README.md"), encoding="utf-8") as f:
        lines = f.read().count("\n")
    if lines > README_MAX_LINES:
        problems.append("README.md: %d lines, more than %d: move detail to "
                        "docs/ or the man pages" % (lines, README_MAX_LINES))
    for p in problems:
        print("doc_links: " + p)
    print("doc_links: %d relative links in %d files, %d problems"
          % (len(CHECKED), len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
