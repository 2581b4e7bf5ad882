#!/usr/bin/python3
"""man_check.py - checks the manual pages in man/ (run by tests/man.test).

1. `mandoc -Tlint -W warning` accepts every page without a message.
2. Every option the programs' --help prints is documented as a list entry
   in the right place of its page:
   - zrecord(1): every command of `zrecord --help` has a subsection of
     COMMANDS; every option of `zrecord CMD --help` (its usage line and its
     option lines) and of the overview's line for CMD is a list entry of
     that subsection or of the subsection "Common options" (options several
     commands take, documented once); the overview's other options
     (--help, --version) are list entries somewhere in the page.
   - zrecordfs(8): every flag and -o option of `zrecordfs --help` (our own,
     libfuse's, and the list of libfuse and mount options passed on) is a
     list entry under OPTIONS.
   "A list entry" is the term of a tagged list (.It of .Bl -tag), found in
   mandoc's HTML rendering as <dt> elements.
3. Claims that once contradicted the code (each shown wrong by the named
   test) are not made again by the pages or the README.

Usage: man_check.py SRCDIR BUILDDIR [MANDOC]
"""
import html.parser
import os
import re
import subprocess
import sys

PAGES = ["zrecord.1", "zrecord.5", "zrecordfs.8", "mount.zrecordfs.8"]
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.exit("man_check: %s exited %d: %s" % (" ".join(argv),
                                                   p.returncode, p.stderr))
    return p.stdout


# -- 1. lint -----------------------------------------------------------------

def lint(mandoc, page):
    p = subprocess.run([mandoc, "-Tlint", "-W", "warning", page],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode != 0 or p.stdout.strip():
        fail("mandoc -Tlint -W warning %s (exit %d):\n%s"
             % (page, p.returncode, p.stdout.rstrip()))
    else:
        print("ok: lint %s" % os.path.basename(page))


# -- 2. what the pages document ------------------------------------------------

class Terms(html.parser.HTMLParser):
    """Collects, per section and subsection heading, the text of every <dt>
    (tagged-list term) under it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sh = self.ss = None
        self.terms = {}          # (sh, ss) -> [term text]
        self.heads = set()       # (sh, ss) of every subsection
        self._head = None        # 'h1' or 'h2' while inside a heading
        self._dt = None          # text of the <dt> being read
        self._text = ""

    def handle_starttag(self, tag, attrs):
        if tag in ("h1", "h2"):
            self._head, self._text = tag, ""
        elif tag == "dt":
            self._dt = ""

    def handle_endtag(self, tag):
        if tag == self._head:
            name = " ".join(self._text.split())
            if tag == "h1":
                self.sh, self.ss = name, None
            else:
                self.ss = name
                self.heads.add((self.sh, name))
            self._head = None
        elif tag == "dt" and self._dt is not None:
            self.terms.setdefault((self.sh, self.ss), []).append(self._dt)
            self.terms.setdefault((self.sh, None), []).append(self._dt)
            self._dt = None

    def handle_data(self, data):
        if self._head:
            self._text += data
        if self._dt is not None:
            self._dt += data


def page_terms(mandoc, page):
    t = Terms()
    t.feed(run([mandoc, "-Thtml", "-Ofragment", page]))
    return t


def tokens(text):
    """Words of a term: flags (-o, --batch-size) and names (batch_size)."""
    return set(t.rstrip("=") for t in
               re.findall(r"--?[A-Za-z][\w-]*=?|[A-Za-z_]\w*", text))


def documented(terms):
    out = set()
    for t in terms:
        out |= tokens(t)
    return out


def check(what, wanted, have, where):
    missing = sorted(wanted - have)
    if missing:
        fail("%s: not documented in %s: %s" % (what, where,
                                               ", ".join(missing)))
    else:
        print("ok: %s: %d options documented in %s"
              % (what, len(wanted), where))


# -- 2a. zrecord ---------------------------------------------------------------

FLAG = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
COMMON = "Common options"   # zrecord(1)'s subsection of shared options


def usage_block(text):
    """The usage lines: from "Usage:" up to the first blank line."""
    lines = text.splitlines()
    out = []
    for ln in lines:
        if not out and not ln.startswith("Usage:"):
            continue
        if out and not ln.strip():
            break
        out.append(ln)
    return "\n".join(out)


def option_lines(text):
    """Leading flags of indented lines that start with '-' ("  -o, --output
    OUT   ..." gives -o and --output)."""
    out = set()
    for ln in text.splitlines():
        if not re.match(r"\s+-", ln):
            continue
        for word in ln.split():
            m = FLAG.match(word)     # "--wait[=SECONDS]" gives --wait
            if not m:
                break
            out.add(m.group(1))
    return out


def check_zrecord(mandoc, srcdir, zrecord):
    page = os.path.join(srcdir, "man", "zrecord.1")
    terms = page_terms(mandoc, page)
    overview = run([zrecord, "--help"])
    commands = {}            # name -> options on its overview lines
    current = None
    general = set()
    for ln in overview.splitlines():
        m = re.match(r"  zrecord ([a-z][\w-]*)\s", ln + " ")
        if m and m.group(1) != "help":
            current = m.group(1)
            commands[current] = set(FLAG.findall(ln))
        elif ln.startswith("           ") and current:
            commands[current] |= set(FLAG.findall(ln))
        else:
            current = None
            general |= set(FLAG.findall(ln))
    if len(commands) < 5:
        sys.exit("man_check: could not read the commands of zrecord --help")
    common = [t for (sh, ss), v in terms.terms.items()
              if ss == COMMON for t in v]
    if not common:
        fail("%s: no subsection \"%s\" with a list of options"
             % (page, COMMON))
    for name in sorted(commands):
        if ("COMMANDS", name) not in terms.heads:
            fail("zrecord %s: no subsection \"%s\" in COMMANDS of %s"
                 % (name, name, page))
            continue
        helptext = run([zrecord, name, "--help"])
        wanted = (commands[name] | set(FLAG.findall(usage_block(helptext)))
                  | option_lines(helptext))
        wanted = set(w.rstrip("=") for w in wanted)
        have = documented(terms.terms.get(("COMMANDS", name), []) +
                          common)
        if wanted:
            check("zrecord %s --help" % name, wanted, have,
                  "%s, COMMANDS, %s" % (os.path.basename(page), name))
        else:
            print("ok: zrecord %s: documented in %s, COMMANDS, %s"
                  % (name, os.path.basename(page), name))
    check("zrecord --help", general, documented(
        t for (sh, ss), v in terms.terms.items() if ss is None for t in v),
        os.path.basename(page))


# -- 2b. zrecordfs -------------------------------------------------------------

def fs_option_lines(text):
    """Flags and -o names at the start of indented option lines:
    "    -o rank=R,world=W   ..." gives -o, rank, world, and
    "    -o follow[=SECONDS] ..." gives -o, follow."""
    out = set()
    for ln in text.splitlines():
        if not re.match(r"\s+-", ln):
            continue
        after_o = False
        for word in ln.split():
            if word.startswith("-"):
                out.add(word)
                after_o = word == "-o"
            elif after_o:
                # name=V and name[=V] both give name
                out |= {re.split(r"[[=]", part)[0]
                        for part in word.split(",")}
                after_o = False
            else:
                break
    return out


def passed_on(text):
    """The names of "Other -o options must be libfuse or mount options:
    a, b, [no]c, d=, ...; anything else is refused."."""
    m = re.search(r"options must be libfuse or mount options:(.*?);",
                  text, re.S)
    if not m:
        sys.exit("man_check: zrecordfs --help no longer lists the options "
                 "it passes on; update tests/man_check.py")
    out = set()
    for item in m.group(1).split(","):
        item = re.sub(r"\(.*?\)", "", item).strip().rstrip("=")
        if item.startswith("[no]"):
            out |= {item[4:], "no" + item[4:]}
        elif item:
            out.add(item)
    return out


def check_zrecordfs(mandoc, srcdir, zrecordfs):
    page = os.path.join(srcdir, "man", "zrecordfs.8")
    terms = page_terms(mandoc, page)
    text = run([zrecordfs, "--help"])
    wanted = (set(FLAG.findall(text.splitlines()[0])) | fs_option_lines(text)
              | passed_on(text))
    if len(wanted) < 20:
        sys.exit("man_check: could not read the options of zrecordfs --help")
    check("zrecordfs --help", wanted,
          documented(terms.terms.get(("OPTIONS", None), [])),
          "%s, OPTIONS" % os.path.basename(page))


# -- 3. claims the tests disprove -------------------------------------------

WRONG_CLAIMS = [
    # tests/fs/test_control.py::test_compact_while_files_are_open
    (r"compact[^.]*EBUSY[^.]*while a record or batch file",
     "compact fails with EBUSY while a record or batch file is open"),
    (r"EBUSY\s+while a record or batch file",
     "compact fails with EBUSY while a record or batch file is open"),
    # tests/check_store_crash.c, tests/cli/test_recover.py
    (r"rebuilt\s+from(\s+the)?\s+source",
     "an interrupted delete or compact needs a rebuild"),
    (r"open the store read-write once",
     "a read-only open cannot recover a journal"),
]


def plain(mandoc, path):
    if path.endswith(".md"):
        with open(path, encoding="utf-8") as f:
            return f.read()
    return run([mandoc, "-Tutf8", path])


def check_claims(mandoc, srcdir):
    for name in PAGES + ["../README.md"]:
        path = os.path.normpath(os.path.join(srcdir, "man", name))
        text = re.sub(r".\x08", "", plain(mandoc, path))
        text = re.sub(r"\s+", " ", text.replace("\u2010\n", ""))
        for pattern, claim in WRONG_CLAIMS:
            if re.search(pattern, text):
                fail("%s says %s; the tests show otherwise"
                     % (os.path.basename(path), claim))
    print("ok: no claim the tests disprove")


def main():
    srcdir, builddir = sys.argv[1], sys.argv[2]
    mandoc = sys.argv[3] if len(sys.argv) > 3 else "mandoc"
    for p in PAGES:
        lint(mandoc, os.path.join(srcdir, "man", p))
    check_zrecord(mandoc, srcdir, os.path.join(builddir, "src/cli/zrecord"))
    check_zrecordfs(mandoc, srcdir,
                    os.path.join(builddir, "src/fs/zrecordfs"))
    check_claims(mandoc, srcdir)
    if failures:
        print("man_check: %d problem(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
