"""
_index.py - turns what a user writes between brackets (or passes to
delete) into the uint64 index array the library takes.  A store is a set
of records, not an ndarray: ds[0, 5, 2] selects three records, and every
index must lie in 0..len-1 (no negative indices; slices keep Python's
meaning).
"""
import operator

import numpy as np


def _scalar(key):
    """key as a Python int if it is an integer scalar, else None."""
    if isinstance(key, (bool, np.bool_)):
        raise TypeError("a bool is not a record index")
    if isinstance(key, np.ndarray):
        return None
    try:
        return operator.index(key)
    except TypeError:
        return None


def _check_range(idx, n):
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = idx[(idx < 0) | (idx >= n)][0]
        raise IndexError("record index %d out of range 0..%d"
                         % (bad, n - 1))


def normalize(key, n):
    """Returns (indices, scalar): a C-contiguous uint64 array and whether
    key named a single record."""
    i = _scalar(key)
    if i is not None:
        if not 0 <= i < n:
            raise IndexError("record index %d out of range 0..%d"
                             % (i, n - 1))
        return np.array([i], dtype=np.uint64), True
    if isinstance(key, slice):
        return np.arange(*key.indices(n)).astype(np.uint64), False
    if isinstance(key, (str, bytes, dict, set, float)):
        raise TypeError("cannot index records with %s"
                        % type(key).__name__)
    arr = np.asarray(key)
    if arr.dtype == np.bool_:
        if arr.shape != (n,):
            raise IndexError("a bool mask needs shape (%d,), got %s"
                             % (n, arr.shape))
        return np.flatnonzero(arr).astype(np.uint64), False
    if arr.size == 0 and arr.ndim == 1:
        return np.empty(0, dtype=np.uint64), False
    if arr.dtype.kind not in "iu":
        raise TypeError("record indices must be integers, not %s"
                        % arr.dtype)
    if arr.ndim == 0:
        return normalize(int(arr), n)
    if arr.ndim != 1:
        raise IndexError("record indices must be one-dimensional, got "
                         "shape %s" % (arr.shape,))
    _check_range(arr, n)
    return np.ascontiguousarray(arr, dtype=np.uint64), False
