"""
cache.py - the host cache of S3 reads (zr_cache_set in zrecord.h): what
a process reads from s3:// stores is kept on local disk and shared by every
process on the host that uses the same folder (a mount, the zrecord
command, other trainers).  One cache per process: set_cache chooses it for
every store the process opens, before and after the call.
"""
import os

from ._lib import check, ffi, lib


def set_cache(folder=None, size=0):
    """Chooses the host cache: folder (made if missing), None for the
    default (ZR_CACHE, else /var/cache/zrecord for root, else
    $XDG_CACHE_HOME/zrecord), or "off" for none; size in bytes (0: the
    default, ZR_CACHE_SIZE or 8 GiB; at least 64 MiB).  OSError naming
    the folder if it cannot be made or written (the cache is off then)."""
    if folder is False:
        folder = "off"
    cdir = ffi.NULL if folder is None else os.fsencode(folder)
    if size < 0:
        raise ValueError("size must be >= 0 (0: the default)")
    check(lib.zr_cache_set(cdir, size),
          None if folder is None else cdir)


def cache_status():
    """The cache in use: {"folder" ("" when off), "max_bytes",
    "used_bytes" (every process's), "fetched_bytes" and "hit_bytes" (this
    process's), "why_off" (why the default is off, "" if it is not)}."""
    out = ffi.new("zr_cache_info *")
    check(lib.zr_cache_status(out))
    return {"folder": os.fsdecode(ffi.string(out.dir)),
            "max_bytes": out.max_bytes, "used_bytes": out.used_bytes,
            "fetched_bytes": out.fetched_bytes,
            "hit_bytes": out.hit_bytes,
            "why_off": ffi.string(out.why_off).decode(errors="replace")}
