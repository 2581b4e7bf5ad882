"""
conftest.py - shared setup of the loaderx suites: import the package from
this source tree (it finds libzrecord through $top_builddir), run each test
in its own temporary folder, and make a sanitizer build of the library
loadable by re-running pytest with the ASan runtime preloaded.
"""
import ctypes.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def _asan_runtime():
    """The libasan a sanitizer build of libzrecord needs, or None."""
    top = os.environ.get("top_builddir")
    if not top:
        return None
    so = os.path.join(top, "src", "lib", ".libs", "libzrecord.so")
    try:
        out = subprocess.run(["ldd", so], capture_output=True, text=True,
                             check=False).stdout
    except OSError:
        return None
    for line in out.splitlines():
        if "libasan" in line and "=>" in line:
            return line.split("=>")[1].split()[0]
    return None


def _preload():
    """The LD_PRELOAD this process needs, or None if it has it: a
    sanitizer build of libzrecord needs the ASan runtime loaded first
    (CPython is not built with it), and then libstdc++ as well, or ASan's
    __cxa_throw interceptor aborts at the first C++ exception (torch)."""
    have = os.environ.get("LD_PRELOAD", "")
    asan = _asan_runtime()
    if not asan and "libasan" not in have:
        return None
    libs = have.split()
    if "libasan" not in have:
        libs.insert(0, asan)
    if "libstdc++" not in have:
        libs.append(ctypes.util.find_library("stdc++") or "libstdc++.so.6")
    return None if libs == have.split() else " ".join(libs)


def pytest_configure(config):
    """Re-runs pytest with the preload a sanitizer build needs, before any
    test imports loaderx, with pytest's output capture undone so the new
    process writes to the real stdout."""
    preload = _preload()
    if preload is None:
        return
    env = dict(os.environ, LD_PRELOAD=preload,
               ASAN_OPTIONS="detect_leaks=0:" +
               os.environ.get("ASAN_OPTIONS", ""))
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "pytest"] +
              sys.argv[1:], env)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    yield tmp_path
