"""
zrheader.py - reads include/zrecord.h the way the ABI checks need it: the
ZR_API function declarations (normalized text), the public structs, the
version macros; and compiles a C snippet against it.  Shared by the suites
of tests/abi.
"""
import os
import re
import subprocess

TOP = os.environ.get("top_srcdir") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("top_builddir") or TOP
HEADER = os.path.join(TOP, "include", "zrecord.h")
LIBRARY = os.path.join(BUILD, "src", "lib", ".libs", "libzrecord.so")
# Macros a declaration may use where a binding writes the number.
_MACROS = {"ZR_MAX_NDIM": "32"}


def header_text():
    with open(HEADER, encoding="utf-8") as f:
        return f.read()


def _code(text):
    """text without comments and preprocessor lines (with continuations)."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)


def normalize(decl):
    """One spelling of a declaration: no ZR_API, one space between words,
    none around punctuation, macros replaced by their values."""
    decl = re.sub(r"\bZR_API\b", " ", decl)
    for name, value in _MACROS.items():
        decl = re.sub(r"\b%s\b" % name, value, decl)
    decl = re.sub(r"\s+", " ", decl).strip()
    return re.sub(r"\s*([*(),\[\]])\s*", r"\1", decl)


def function_name(decl):
    m = re.search(r"\b(zr_\w+)\s*\(", decl)
    return m.group(1) if m else None


def api_functions(text=None):
    """{name: normalized declaration} of every ZR_API function."""
    out = {}
    for stmt in _code(text or header_text()).split(";"):
        stmt = re.split(r"[{}]", stmt)[-1]  # after extern "C" {, a body
        if re.match(r"\s*ZR_API\b", stmt):
            out[function_name(stmt)] = normalize(stmt)
    return out


def cdef_functions(cdef):
    """{name: normalized declaration} of the functions a cffi cdef
    declares (struct and enum bodies and typedefs skipped)."""
    out = {}
    body = re.sub(r"\{[^{}]*\}", " ", _code(cdef))
    for stmt in body.split(";"):
        stmt = stmt.strip()
        if "(" in stmt and not stmt.startswith("typedef"):
            out[function_name(stmt)] = normalize(stmt)
    return out


def public_structs(text=None):
    """Names of the header's typedef structs that have members."""
    return sorted(set(re.findall(r"typedef struct (zr_\w+) \{",
                                 _code(text or header_text()))))


def version_macros(text=None):
    text = text or header_text()
    return tuple(int(re.search(r"#define ZR_VERSION_%s (\d+)" % part,
                               text).group(1))
                 for part in ("MAJOR", "MINOR", "PATCH"))


def compile_c(source, tmp_path, name="probe.c"):
    """Compiles source against the header (syntax and semantics only);
    the CompletedProcess tells whether the compiler accepted it."""
    path = os.path.join(str(tmp_path), name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(source)
    cc = os.environ.get("CC") or "cc"
    return subprocess.run(
        cc.split() + ["-std=c11", "-fsyntax-only", "-Werror",
                      "-I" + os.path.join(TOP, "include"), path],
        capture_output=True, text=True, check=False)
