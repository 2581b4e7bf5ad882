"""
utils.py - train_dict, the explicit dictionary-training step for the
"zstd_dict" codec: train once on settled data, then pass the bytes to
DenseStore.create / RaggedStore.create as dict_bytes.
"""
import numpy as np

from ._lib import check, ffi, lib
from .zrecord import DICT_TIERS, _Store

__all__ = ["train_dict", "DICT_TIERS"]


def _tier(tier):
    out = ffi.new("zr_dict_tier *")
    if not isinstance(tier, str) or lib.zr_dict_tier_parse(tier.encode(),
                                                           out) < 0:
        raise ValueError("tier must be one of %s, got %r"
                         % (sorted(DICT_TIERS), tier))
    return out[0]


def _ragged_record(array):
    """array as a ragged store stores it: u64 ndim, u64 dims, payload."""
    a = np.require(array, requirements="C")
    prefix = np.array((a.ndim,) + a.shape, dtype="<u8")
    return prefix.tobytes() + a.tobytes()


def _train_samples(samples, sizes, tier):
    """Trains on n samples given as pointers and sizes."""
    n = len(sizes)
    if not n:
        raise ValueError("train_dict needs at least one record")
    cap = lib.zr_dict_tier_dict_size(tier)
    dst = ffi.new("char[]", cap)
    out = ffi.new("size_t *")
    check(lib.zr_dict_train(samples, ffi.from_buffer("size_t[]", sizes), n,
                            tier, dst, cap, out))
    return ffi.buffer(dst, out[0])[:]


def _train_array(array, tier):
    """Every slice along axis 0 is one sample; no copy when contiguous."""
    a = np.ascontiguousarray(array)
    if a.ndim < 1:
        raise ValueError("train_dict needs an array of records (ndim >= 1)")
    rows = len(a)
    width = a.nbytes // rows if rows else 0
    keep = ffi.from_buffer(a)
    base = int(ffi.cast("uintptr_t", keep))
    addrs = base + np.arange(rows, dtype=np.uintp) * np.uintp(width)
    sizes = np.full(rows, width, dtype=np.uintp)
    return _train_samples(ffi.from_buffer("void *[]", addrs), sizes, tier)


def _train_records(records, tier):
    blobs = [_ragged_record(r) for r in records]
    samples = ffi.new("void *[]", [ffi.from_buffer(b) for b in blobs])
    sizes = np.array([len(b) for b in blobs], dtype=np.uintp)
    return _train_samples(samples, sizes, tier)


def _train_store(store, tier):
    store._drain()
    cap = lib.zr_dict_tier_dict_size(tier)
    dst = ffi.new("char[]", cap)
    out = ffi.new("size_t *")
    with store._lock.shared():
        check(lib.zr_dict_train_store(store._handle(), tier, dst, cap, out),
              store.path)
    return ffi.buffer(dst, out[0])[:]


def train_dict(source, tier="balanced"):
    """Trains a zstd dictionary on source - an ndarray (one record per
    slice along axis 0), an iterable of arrays (ragged records), or an open
    DenseStore/RaggedStore - within the tier's sample budget
    (DICT_TIERS).  Returns the dictionary as bytes."""
    t = _tier(tier)
    if isinstance(source, _Store):
        return _train_store(source, t)
    if isinstance(source, np.ndarray):
        return _train_array(source, t)
    return _train_records(source, t)
