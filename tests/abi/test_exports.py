"""
test_exports.py - libzrecord.so exports exactly the ZR_API functions of
zrecord.h, each in a version node of src/lib/zrecord.map; the version is
the same in the header, configure, scripts/version.sh and the running
library; zr_struct_size() reports the compiler's size of every public
struct.
"""
import ctypes
import os
import re
import subprocess

import zrheader


def _exports():
    """{symbol: version node} of the library's defined dynamic symbols."""
    out = subprocess.run(["nm", "-D", "--defined-only", zrheader.LIBRARY],
                         capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] != "A":  # "A": the node itself
            name, _, node = fields[2].partition("@")
            syms[name] = node.lstrip("@")
    return syms


def _map_symbols():
    path = os.path.join(zrheader.TOP, "src", "lib", "zrecord.map")
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    return set(re.findall(r"^\s*(zr_\w+);", text, flags=re.M))


def _lib():
    lib = ctypes.CDLL(zrheader.LIBRARY)
    lib.zr_version_string.restype = ctypes.c_char_p
    lib.zr_struct_size.restype = ctypes.c_size_t
    lib.zr_struct_size.argtypes = [ctypes.c_char_p]
    return lib


def test_exports_equal_header():
    exported = set(_exports())
    declared = set(zrheader.api_functions())
    assert declared, "no ZR_API declarations found in zrecord.h"
    assert exported - declared == set(), "exported but not in zrecord.h"
    assert declared - exported == set(), "in zrecord.h but not exported"


def test_version_script_equals_header():
    assert _map_symbols() == set(zrheader.api_functions())


def test_every_export_is_versioned():
    unversioned = {s: n for s, n in _exports().items()
                   if not n.startswith("ZRECORD_")}
    assert unversioned == {}


def test_versions_agree():
    major, minor, patch = zrheader.version_macros()
    text = "%d.%d.%d" % (major, minor, patch)
    script = subprocess.run(
        ["sh", os.path.join(zrheader.TOP, "scripts", "version.sh"),
         zrheader.HEADER], capture_output=True, text=True, check=True)
    assert script.stdout == text
    if os.environ.get("PACKAGE_VERSION"):  # set by make check
        assert os.environ["PACKAGE_VERSION"] == text
    lib = _lib()
    assert lib.zr_version() == major * 10000 + minor * 100 + patch
    assert lib.zr_version_string().decode() == text


def test_struct_sizes_equal_compiler(tmp_path):
    lib = _lib()
    structs = zrheader.public_structs()
    assert "zr_schema" in structs and "zr_npy_header" in structs
    asserts = ["_Static_assert(sizeof(%s) == %d, \"zr_struct_size(%s)\");"
               % (s, lib.zr_struct_size(s.encode()), s) for s in structs]
    res = zrheader.compile_c('#include "zrecord.h"\n' + "\n".join(asserts)
                             + "\n", tmp_path)
    assert res.returncode == 0, res.stderr
    assert lib.zr_struct_size(b"zr_store") == 0  # opaque
    assert lib.zr_struct_size(b"no_such_struct") == 0
