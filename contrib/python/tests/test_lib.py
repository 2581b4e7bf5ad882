"""
test_lib.py - loaderx/_lib.py against real libraries: the error table it
declares is the library's whole table, the versions agree, and import
refuses, with an ImportError that says why, a library of another version,
one whose structs differ from the declarations, and one that is not
libzrecord at all (each a real shared object built here and loaded through
$LOADERX_LIB in a fresh interpreter).
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

import loaderx
from loaderx import _lib

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)


def test_error_table_is_the_librarys():
    lib, ffi = _lib.lib, _lib.ffi
    declared = {n: getattr(lib, n) for n in dir(lib) if n.startswith("ZR_E_")}
    assert len(declared) > 10
    for name, code in declared.items():
        assert ffi.string(lib.zr_errname(code)).decode() == name
    # Every library code (a block from -30800 down) is declared here.
    known = {}
    for code in range(-30800, -30900, -1):
        name = ffi.string(lib.zr_errname(code)).decode()
        if name.startswith("ZR_E_"):
            known[name] = code
    assert known == declared


def test_versions_agree():
    with open(os.path.join(PACKAGE, "pyproject.toml"), encoding="utf-8") as f:
        pyproject = re.search(r'^version = "([^"]+)"', f.read(), re.M)[1]
    assert loaderx.__version__ == pyproject
    assert loaderx.library_version() == loaderx.__version__
    if os.environ.get("PACKAGE_VERSION"):  # configure's, under make check
        assert loaderx.__version__ == os.environ["PACKAGE_VERSION"]


def _import(lib_path, package=PACKAGE, **env):
    """Imports loaderx from package in a fresh interpreter with
    LOADERX_LIB=lib_path (None: unset) and env; prints its versions and
    the library's path."""
    env = dict(os.environ, PYTHONPATH=package, PYTHONDONTWRITEBYTECODE="1",
               **env)
    env.pop("LOADERX_LIB", None)
    if lib_path is not None:
        env["LOADERX_LIB"] = lib_path
    return subprocess.run(
        [sys.executable, "-c",
         "import loaderx; print(loaderx.__version__, "
         "loaderx.library_version(), loaderx.LIB_PATH)"],
        capture_output=True, text=True, env=env, check=False, timeout=60)


# A stand-in libzrecord: the three functions import vets it with, linked
# to the real library for everything else.
_FAKE = r"""
#include <stddef.h>
#include <string.h>
unsigned zr_version(void) { return VERSION; }
const char *zr_version_string(void) { return TEXT; }
size_t zr_struct_size(const char *name)
{
	return strcmp(name, "zr_stats") ? REAL_SIZE(name) : STATS_SIZE;
}
"""


def _fake_library(tmp_path, version, stats_size):
    """Builds the stand-in reporting version (a number) and stats_size for
    zr_stats, and loaderx's sizes for every other struct."""
    sizes = " ".join('!strcmp(n, "%s") ? %d :' % (name, _lib.ffi.sizeof(name))
                     for name in _lib._struct_names())
    src = tmp_path / "fake.c"
    src.write_text(_FAKE)
    so = tmp_path / "libfake.so"
    text = "%d.%d.%d" % (version // 10000, version // 100 % 100, version % 100)
    cc = (os.environ.get("CC") or "cc").split()
    real = _lib.LIB_PATH
    subprocess.run(cc + [
        "-shared", "-fPIC", "-o", str(so), str(src),
        "-DVERSION=%du" % version, '-DTEXT="%s"' % text,
        "-DSTATS_SIZE=%d" % stats_size, "-DREAL_SIZE(n)=(%s 0)" % sizes,
        "-Wl,--no-as-needed", real, "-Wl,-rpath," + os.path.dirname(real)],
        check=True)
    return str(so)


def test_import_with_the_real_library():
    res = _import(_lib.LIB_PATH)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [loaderx.__version__,
                                  loaderx.library_version(), _lib.LIB_PATH]


def test_finds_an_install_through_pkg_config(tmp_path):
    """An install under a prefix the dynamic loader does not search is
    found through PKG_CONFIG_PATH (no build tree around a copy of the
    package, no $top_builddir)."""
    libdir = tmp_path / "prefix" / "lib"
    (libdir / "pkgconfig").mkdir(parents=True)
    shutil.copy(_lib.LIB_PATH, libdir / "libzrecord.so.0")
    (libdir / "pkgconfig" / "zrecord.pc").write_text(
        "libdir=%s\nName: zrecord\nDescription: test\nVersion: %s\n"
        "Libs: -L${libdir} -lzrecord\n" % (libdir, loaderx.__version__))
    package = tmp_path / "site"
    shutil.copytree(os.path.join(PACKAGE, "loaderx"), package / "loaderx")
    env = {"PKG_CONFIG_PATH": str(libdir / "pkgconfig"), "top_builddir": ""}
    res = _import(None, str(package), **env)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[2] == str(libdir / "libzrecord.so.0")


@pytest.mark.parametrize("version", [20000, 9])  # 2.0.0, 0.0.9
def test_import_refuses_another_version(tmp_path, version):
    stats = _lib.ffi.sizeof("zr_stats")
    res = _import(_fake_library(tmp_path, version, stats))
    assert res.returncode != 0
    text = "%d.%d.%d" % (version // 10000, version // 100 % 100,
                         version % 100)
    assert ("ImportError: loaderx %s: " % loaderx.__version__) in res.stderr
    assert ("is libzrecord %s; loaderx was written for libzrecord 0.1 or "
            "a later 0.x" % text) in res.stderr


def test_import_refuses_other_struct_sizes(tmp_path):
    res = _import(_fake_library(tmp_path, 100, 24))
    assert res.returncode != 0
    assert "ImportError" in res.stderr
    assert "zr_stats is 32 bytes in loaderx, 24 in the library" in res.stderr


def test_the_fake_passes_when_it_matches(tmp_path):
    """The refusals above are for the reasons given, not the stand-in."""
    fake = _fake_library(tmp_path, 100, _lib.ffi.sizeof("zr_stats"))
    res = _import(fake)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [loaderx.__version__, "0.1.0", fake]


def test_import_refuses_a_library_that_is_not_libzrecord():
    import ctypes.util
    libz = ctypes.util.find_library("z")
    assert libz, "zlib is a build dependency"
    res = _import(libz)
    assert res.returncode != 0
    assert "has no zr_version(): it is not libzrecord" in res.stderr
