"""
test_cffi.py - loaderx's hand-written cffi declarations (loaderx/_lib.py
CDEF) agree with zrecord.h: every function it declares is in the header
with the same text (normalized), and a C compiler, given the header,
accepts cffi's values of every constant, struct size, member offset and
member size, and its function declarations (a conflicting redeclaration is
an error).
"""
import re

from cffi import FFI

import zrheader
from loaderx import _lib


def _probe(cdef):
    """C source asserting cdef's view of the ABI against zrecord.h."""
    ffi = FFI()
    ffi.cdef(cdef)
    lines = ['#include <stddef.h>', '#include "zrecord.h"',
             "_Static_assert(ZR_MAX_NDIM == %d, \"MAX_NDIM\");"
             % _lib.MAX_NDIM]
    for name in re.findall(r"\b(ZR_\w+)\s*=", cdef):
        lines.append("_Static_assert(%s == %d, \"%s\");"
                     % (name, getattr(_lib.lib, name), name))
    for name in ffi.list_types()[0]:
        t = ffi.typeof(name)
        if t.kind != "struct" or t.fields is None:
            continue
        lines.append("_Static_assert(sizeof(%s) == %d, \"sizeof %s\");"
                     % (name, ffi.sizeof(name), name))
        for field, f in t.fields:
            where = "%s.%s" % (name, field)
            lines.append("_Static_assert(offsetof(%s, %s) == %d, "
                         "\"offset of %s\");" % (name, field, f.offset, where))
            lines.append("_Static_assert(sizeof(((%s *)0)->%s) == %d, "
                         "\"size of %s\");"
                         % (name, field, ffi.sizeof(f.type), where))
    body = re.sub(r"\{[^{}]*\}", " ", cdef)
    for stmt in body.split(";"):
        stmt = stmt.strip()
        if "(" in stmt and not stmt.startswith("typedef"):
            lines.append(stmt + ";")
    return "\n".join(lines) + "\n"


def test_functions_match_header_text():
    header = zrheader.api_functions()
    declared = zrheader.cdef_functions(_lib.CDEF)
    assert len(declared) > 40
    missing = sorted(set(declared) - set(header))
    assert missing == [], "declared in loaderx, not in zrecord.h"
    differ = {n: (d, header[n]) for n, d in declared.items()
              if d != header[n]}
    assert differ == {}, "loaderx text vs zrecord.h text"


def test_layouts_and_declarations_compile(tmp_path):
    res = zrheader.compile_c(_probe(_lib.CDEF), tmp_path)
    assert res.returncode == 0, res.stderr


def test_probe_catches_drift(tmp_path):
    """The drift this check was written for (char str[4] put kind and
    order one byte off; zr_dtype's size stayed 12) and a changed
    signature both fail to compile."""
    drifted = _lib.CDEF.replace("char str[5];", "char str[4];")
    assert drifted != _lib.CDEF
    res = zrheader.compile_c(_probe(drifted), tmp_path)
    assert res.returncode != 0
    assert "offset of zr_dtype.kind" in res.stderr
    changed = _lib.CDEF.replace("int zr_store_sync(zr_store *s);",
                                "int zr_store_sync(zr_store *s, int x);")
    assert changed != _lib.CDEF
    res = zrheader.compile_c(_probe(changed), tmp_path)
    assert res.returncode != 0 and "zr_store_sync" in res.stderr
