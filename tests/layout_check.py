#!/usr/bin/python3
"""
layout_check.py - the documentation's map of the code holds: the table
under "Source layout" in docs/architecture.md has one row for every
folder of src/ and every folder at the top of the tree, and every row
names a folder that exists; and the prefix list of CONTRIBUTING.md's
"Code style" names every prefix the headers of src/ and include/
declare functions with, and no prefix no header uses.  The folders are git's (tracked, or
new and not ignored), so build folders do not count; outside a git
checkout (a release tarball, which leaves some folders out) the check is
skipped.  Usage: layout_check.py SRCDIR; exit 1 with one line per
problem.
"""
import os
import re
import subprocess
import sys

ROW = re.compile(r"^\|\s*(.*?)\s*\|")
FOLDER = re.compile(r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*)/`")
# a function declared in a header: "type name(" at the start of a line,
# or a static inline's definition
DECL = re.compile(r"^(?:[A-Za-z_][\w\s\*]*?[\s\*])?(zr\w+)\(", re.M)
LISTED = re.compile(r"`(zr[a-z_]*_)`")


def git_files(srcdir):
    """The tree's files as git sees them, or None outside a checkout."""
    if not os.path.exists(os.path.join(srcdir, ".git")):
        return None
    try:
        out = subprocess.run(
            ["git", "-C", srcdir, "ls-files", "--cached", "--others",
             "--exclude-standard"], check=True, capture_output=True,
            text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [f for f in out.split("\n")
            if f and os.path.exists(os.path.join(srcdir, f))]


def folders(files):
    """Every folder at the top but hidden ones and src/, and every folder
    of src/."""
    found = set()
    for f in files:
        parts = f.split("/")
        if len(parts) > 1 and not parts[0].startswith(".") and \
                parts[0] != "src":  # src/ has a row a folder instead
            found.add(parts[0])
        if len(parts) > 2 and parts[0] == "src":
            found.add("src/" + parts[1])
    return found


def table_rows(srcdir):
    """The folders the Source layout table names, row by row."""
    path = os.path.join(srcdir, "docs", "architecture.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Source layout\n(.*?)(?=^## )", text, re.M | re.S)
    if not m:
        return None
    rows = []
    for line in m.group(1).split("\n"):
        cell = ROW.match(line)
        if cell and cell.group(1) not in ("folder", "---"):
            rows += FOLDER.findall(cell.group(1))
    return rows


def layout_problems(srcdir, files):
    rows = table_rows(srcdir)
    if rows is None:
        return ["docs/architecture.md: no \"## Source layout\" section"]
    have = folders(files)
    problems = []
    for r in sorted(have - set(rows)):
        problems.append("docs/architecture.md: Source layout: no row for "
                        "%s/ (add one saying what it holds)" % r)
    for r in rows:
        if r not in have:
            problems.append("docs/architecture.md: Source layout: row %s/ "
                            "names no folder of the tree" % r)
    return problems


def prefix_of(name):
    """zr__x: zr__; zr_cli_x, zr_imp_x: those; zr_x: zr_; zrfs_x: zrfs_."""
    if name.startswith("zr__"):
        return "zr__"
    m = re.match(r"zr_(cli|imp)_", name)
    if m:
        return m.group(0)
    if name.startswith("zr_"):
        return "zr_"
    m = re.match(r"zr[a-z]+_", name)
    return m.group(0) if m else None


def prefix_problems(srcdir, files):
    with open(os.path.join(srcdir, "CONTRIBUTING.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^1\. \*\*One prefix.*?(?=^2\. )", text, re.M | re.S)
    if not m:
        return ["CONTRIBUTING.md: no \"1. **One prefix\" item in Code style"]
    listed = set(LISTED.findall(m.group(0)))
    used = {}
    for f in files:
        if f.startswith(("src/", "include/")) and f.endswith(".h"):
            with open(os.path.join(srcdir, f), encoding="utf-8") as h:
                for name in DECL.findall(h.read()):
                    p = prefix_of(name)
                    if p:
                        used.setdefault(p, f)
    problems = []
    for p in sorted(set(used) - listed):
        problems.append("CONTRIBUTING.md: Code style: prefix %s (%s) is not "
                        "in the prefix list" % (p, used[p]))
    for p in sorted(listed - set(used)):
        problems.append("CONTRIBUTING.md: Code style: prefix %s is listed "
                        "but no header of src/ or include/ uses it" % p)
    return problems


def main(argv):
    srcdir = argv[1]
    files = git_files(srcdir)
    if files is None:
        print("layout_check: not a git checkout: skipped")
        return 0
    problems = layout_problems(srcdir, files) + prefix_problems(srcdir, files)
    for p in problems:
        print("layout_check: " + p)
    print("layout_check: %d folders, %d problems"
          % (len(folders(files)), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
