"""
zrecord.py - DenseStore and RaggedStore, the seed's typed record stores,
over libzrecord's store handle.  Python validates every user input
(dtype, shapes, indices) before calling into the library, so a rejected
call writes nothing; the library validates everything read from disk.
"""
import contextlib
import errno
import operator
import os
import threading
import warnings

import numpy as np

from . import _index
from .cache import set_cache
from ._lib import (MAX_NDIM, LockScopeWarning, RecoveredWarning, StoreBusy,
                   check, error, ffi, lib, u64_ptr)
from ._sync import RWLock, Writer
from ._closable import Closable

__all__ = ["DenseStore", "RaggedStore", "StoreBusy", "DICT_TIERS"]


def _tiers():
    out = {}
    for tier in (lib.ZR_DICT_FAST, lib.ZR_DICT_BALANCED, lib.ZR_DICT_MAX):
        name = ffi.string(lib.zr_dict_tier_name(tier)).decode()
        out[name] = {"dict_bytes": lib.zr_dict_tier_dict_size(tier),
                     "sample_bytes": lib.zr_dict_tier_sample_size(tier)}
    return out


# name -> {"dict_bytes": dictionary size, "sample_bytes": training budget}
DICT_TIERS = _tiers()

# Ragged appends reach the library in chunks of at most this many records
# or bytes, so a generator of any length stays within bounded memory.
_CHUNK_RECORDS = 4096
_CHUNK_BYTES = 64 << 20


def _check_dtype(dtype):
    """np.dtype(dtype) if the store format can hold it, else TypeError."""
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise TypeError("not a dtype: %r (%s)" % (dtype, e)) from None
    if dt.fields is not None or dt.subdtype is not None or dt.metadata:
        raise TypeError("structured, subarray and metadata dtypes are not "
                        "supported: %s" % (dt,))
    if dt.kind not in "biufc":
        raise TypeError("unsupported dtype %s: only bool, integer, float "
                        "and complex" % (dt,))
    out = ffi.new("zr_dtype *")
    if lib.zr_dtype_parse(dt.str.encode(), out) < 0:
        raise TypeError("unsupported dtype %s" % (dt,))
    return dt, out


def _check_shape(item_shape):
    if isinstance(item_shape, (int, np.integer)):
        item_shape = (item_shape,)   # as NumPy takes a shape
    try:
        shape = tuple(operator.index(d) for d in item_shape)
    except TypeError:
        raise TypeError("item_shape must be a tuple of ints, got %r"
                        % (item_shape,)) from None
    if len(shape) > MAX_NDIM:
        raise ValueError("item_shape has more than %d dimensions"
                         % MAX_NDIM)
    if any(d < 1 for d in shape):
        raise ValueError("item_shape dimensions must be >= 1, got %s"
                         % (shape,))
    return shape


def _codec(codec, dict_bytes):
    """(codec enum, dictionary buffer or NULL, its length)."""
    out = ffi.new("zr_codec *")
    if not isinstance(codec, str) or lib.zr_codec_parse(codec.encode(),
                                                        out) < 0:
        raise ValueError("codec must be 'raw', 'zstd' or 'zstd_dict', "
                         "got %r" % (codec,))
    if out[0] != lib.ZR_CODEC_ZSTD_DICT:
        if dict_bytes is not None:
            raise ValueError("dict_bytes is only for codec='zstd_dict'")
        return out[0], ffi.NULL, 0
    if dict_bytes is None or not len(dict_bytes):
        raise ValueError("codec='zstd_dict' needs dict_bytes (see "
                         "loaderx.utils.train_dict)")
    buf = ffi.from_buffer(dict_bytes)
    return out[0], buf, len(buf)


def image_opts(decode=None, augment=None, seed=0, position=0):
    """The zr_image_opts of decode= (True: whole images; SIZE) and
    augment= ("rrc[:SMIN:SMAX],flip"), as the CLI and the mount parse
    them (zr_image_opts_parse); ValueError for bad ones."""
    if decode is True or decode is None:
        dtext = b""
    elif isinstance(decode, (bool, float)) or not isinstance(
            decode, (int, np.integer, str)):
        raise ValueError("decode must be True or an output size")
    else:
        dtext = str(int(decode) if not isinstance(decode, str)
                    else decode).encode()
    atext = (augment or "").encode()
    opts = ffi.new("zr_image_opts *")
    check(lib.zr_image_opts_parse(dtext, atext, opts))
    opts.seed = int(seed) & (2 ** 64 - 1)
    opts.position = int(position) & (2 ** 64 - 1)
    return opts


class _Store(Closable):
    """What both contracts share: the handle, its lifetime, locking, and
    the maintenance pass-throughs."""

    _RAGGED = None  # 0 dense, 1 ragged: set by the subclasses

    def __init__(self, handle, path):
        self._h = handle
        self.path = os.fsdecode(path)
        why = lib.zr_store_lock_warning(handle)
        if why != ffi.NULL:
            warnings.warn(ffi.string(why).decode(errors="replace"),
                          LockScopeWarning, stacklevel=3)
        note = lib.zr_store_recovered(handle)
        if note != ffi.NULL:
            warnings.warn(ffi.string(note).decode(errors="replace"),
                          RecoveredWarning, stacklevel=3)
        self._lock = RWLock()
        # The writer's: a synchronous append, or a delete, which resolves
        # its indices against the length it then deletes from and must
        # not meet an append session (EBUSY).  Gathers run beside both,
        # each through a library view of its own.
        self._append_lock = threading.Lock()
        schema = lib.zr_store_schema(handle)
        self.dtype = np.dtype(ffi.string(schema.dtype.str).decode())
        self.item_shape = tuple(schema.shape[i] for i in range(schema.ndim))
        self.codec = ffi.string(
            lib.zr_codec_name(lib.zr_store_codec(handle))).decode()
        self.readonly = bool(lib.zr_store_readonly(handle))

    @classmethod
    def _create(cls, path, dtype, item_shape, codec, dict_bytes):
        dt, zdt = _check_dtype(dtype)
        schema = ffi.new("zr_schema *")
        schema.dtype = zdt[0]
        schema.ragged = cls._RAGGED
        if not cls._RAGGED:
            shape = _check_shape(item_shape)
            schema.ndim = len(shape)
            for i, d in enumerate(shape):
                schema.shape[i] = d
            if lib.zr_schema_row_bytes(schema, ffi.new("size_t *")) < 0:
                raise ValueError("a record of %s x %s exceeds 2 GiB"
                                 % (shape, dt))
        zcodec, dbuf, dlen = _codec(codec, dict_bytes)
        cpath = os.fsencode(path)
        out = ffi.new("zr_store **")
        check(lib.zr_store_create(cpath, schema, zcodec, dbuf, dlen, out),
              cpath)
        return cls(out[0], cpath)

    @classmethod
    def open(cls, path, readonly=True, follow=False, cache=None):
        """Opens an existing store of this contract (FileNotFoundError if
        there is none, StoreBusy if a handle holds it the other way).
        Read-only by default: any number of readers, in any number of
        processes, share a store; readonly=False opens its one writer
        (append, delete, compact), which needs the store to itself.
        follow=True (read-only) shares the store with one writer, possibly
        on another host, and takes up its synced records at refresh().
        cache: for an s3:// store, the host cache's folder ("off": none),
        as set_cache(cache) for the whole process; None leaves it as it
        is (the default: ZR_CACHE, else the XDG cache folder)."""
        if cache is not None:
            set_cache(cache)
        cpath = os.fsencode(path)
        out = ffi.new("zr_store **")
        flags = lib.ZR_OPEN_RDONLY if readonly or follow else 0
        if follow:
            flags |= lib.ZR_OPEN_FOLLOW
        check(lib.zr_store_open(cpath, flags, out), cpath)
        if lib.zr_store_schema(out[0]).ragged != cls._RAGGED:
            lib.zr_store_close(out[0])
            other = "RaggedStore" if cls._RAGGED else "DenseStore"
            raise TypeError("%s is not a %s store; open it with %s.open"
                            % (os.fsdecode(cpath), cls.__name__, other))
        return cls(out[0], cpath)

    def _handle(self):
        if self._h is None:
            raise ValueError("operation on a closed store")
        return self._h

    def _drain(self):
        """Finishes queued writes first; overridden by RaggedStore."""

    def _writable(self):
        self._handle()
        if self.readonly:
            raise OSError(errno.EROFS, "store opened read-only (the "
                          "default): open(path, readonly=False) to write",
                          self.path)

    def refresh(self):
        """A follower (open(..., follow=True)) takes up the records its
        writer has synced since and returns the new length; other stores
        return their length.  OSError (ZR_E_CHANGED) if the store shrank."""
        self._drain()
        with self._lock.shared():
            h = self._handle()
            check(lib.zr_store_refresh(h), self.path)
            return lib.zr_store_length(h)

    def __len__(self):
        self._drain()
        with self._lock.shared():
            return lib.zr_store_length(self._handle())

    @contextlib.contextmanager
    def _view(self):
        """A library view (zr_view_begin) for one read: its sizes,
        shapes and records all come from the store as it was at begin,
        whatever another thread deletes meanwhile.  Begins after a
        running delete or compact."""
        out = ffi.new("zr_view **")
        check(lib.zr_view_begin(self._handle(), lib.ZR_VIEW_WAIT, out),
              self.path)
        try:
            yield out[0]
        finally:
            lib.zr_view_end(out[0])

    def __getitem__(self, key):
        self._drain()
        with self._lock.shared(), self._view() as v:
            idx, scalar = _index.normalize(key, lib.zr_view_length(v))
            out = self._gather(v, idx)
        return out[0] if scalar else out

    def gather(self, indices, **form):
        """Records at indices (any uint64/int64 array in range) without
        index normalization: the DataLoader's path.  DenseStore takes
        out=, RaggedStore form= (see their gather).  One gather reads
        one state of the store: a delete in another thread is wholly
        before or wholly after it."""
        self._drain()
        with self._lock.shared(), self._view() as v:
            idx = np.ascontiguousarray(indices, dtype=np.uint64)
            return self._gather(v, idx, **form)

    def _exclusive(self, fn, *args):
        self._drain()
        with self._lock.exclusive():
            return check(fn(self._handle(), *args), self.path)

    def delete(self, key):
        """Deletes records (scalar, slice, index array or bool mask) by
        swapping the last live record into each hole.  Gathers in other
        threads go on meanwhile, each seeing the store before or after."""
        self._drain()
        with self._append_lock, self._lock.shared():
            h = self._handle()
            idx, _ = _index.normalize(key, lib.zr_store_length(h))
            check(lib.zr_store_delete(h, ffi.from_buffer("uint64_t[]", idx),
                                      len(idx)), self.path)

    def compact(self):
        """Reclaims deleted records' bytes in place (offline: no other
        handle may be reading)."""
        self._exclusive(lib.zr_store_compact, ffi.NULL, ffi.NULL)

    def sync(self):
        """Makes every append durable (the explicit barrier)."""
        self._exclusive(lib.zr_store_sync)

    def stats(self):
        """{'records', 'live_bytes', 'data_bytes', 'reclaimable'}."""
        self._drain()
        out = ffi.new("zr_stats *")
        with self._lock.shared():
            check(lib.zr_store_stats(self._handle(), out), self.path)
        return {k: getattr(out, k) for k in
                ("records", "live_bytes", "data_bytes", "reclaimable")}

    def close(self):
        """Drains the writer, syncs and releases the store; idempotent."""
        if self._h is None:
            return
        try:
            self._drain()
        finally:
            self._stop_writer()
            with self._lock.exclusive():
                h, self._h = self._h, None
                if h is not None:
                    check(lib.zr_store_close(h), self.path)

    def _stop_writer(self):
        """Ends the writer thread; overridden by RaggedStore."""

    @property
    def closed(self):
        return self._h is None

    def __repr__(self):
        state = "closed" if self._h is None else "open"
        return "<%s %r dtype=%s codec=%s %s>" % (
            type(self).__name__, self.path, self.dtype, self.codec, state)


class DenseStore(_Store):
    """Fixed-shape records: every record is one row of item_shape; a
    batch comes back as one (B, *item_shape) array."""

    _RAGGED = 0

    @classmethod
    def create(cls, path, dtype, item_shape, codec="zstd", dict_bytes=None):
        """Creates a new store (FileExistsError if path exists)."""
        return cls._create(path, dtype, item_shape, codec, dict_bytes)

    def gather(self, indices, out=None):
        """A (B, *item_shape) array of the records at indices.  With out
        (a C-contiguous, writeable array of that shape and the store's
        dtype, say one of a ring the caller reuses), the records land in
        it and it is returned: no allocation, no page faults."""
        return super().gather(indices, out=out)

    def _gather(self, v, idx, out=None):
        shape = (len(idx),) + self.item_shape
        if out is None:
            out = np.empty(shape, dtype=self.dtype)
        elif (not isinstance(out, np.ndarray) or out.shape != shape or
              out.dtype != self.dtype or not out.flags.c_contiguous or
              not out.flags.writeable):
            raise ValueError("out must be a writeable C-contiguous %s "
                             "array of shape %s" % (self.dtype, shape))
        if len(idx):
            check(lib.zr_view_gather(
                v, ffi.from_buffer("uint64_t[]", idx), len(idx),
                ffi.from_buffer(out), out.nbytes, ffi.NULL), self.path)
        return out

    def append(self, array):
        """Appends one record per slice along axis 0, synchronously.  A
        C-contiguous array of the store's dtype is borrowed, not copied."""
        self._writable()
        if not isinstance(array, np.ndarray):
            raise TypeError("append takes an ndarray of dtype %s, got %s"
                            % (self.dtype, type(array).__name__))
        if array.dtype != self.dtype:
            raise TypeError("dtype mismatch: store holds %s, got %s"
                            % (self.dtype, array.dtype))
        if array.shape[1:] != self.item_shape or array.ndim < 1:
            raise ValueError("shape mismatch: store records are %s, so "
                             "append takes (n, *%s); got %s"
                             % (self.item_shape, self.item_shape,
                                array.shape))
        if not len(array):
            return
        array = np.ascontiguousarray(array)
        with self._append_lock, self._lock.shared():
            check(lib.zr_store_append_dense(
                self._handle(), ffi.from_buffer(array), len(array)),
                self.path)


class _Chunk:
    """A packed batch of ragged records: zr_ragged_in entries pointing
    into the caller's arrays, which this object keeps alive."""

    def __init__(self):
        self.arrays = []
        self.nbytes = 0

    def add(self, array):
        self.arrays.append(array)
        self.nbytes += array.nbytes

    def full(self):
        return (len(self.arrays) >= _CHUNK_RECORDS
                or self.nbytes >= _CHUNK_BYTES)

    def pack(self):
        n = len(self.arrays)
        self.recs = ffi.new("zr_ragged_in[]", n)
        dims = [d for a in self.arrays for d in a.shape]
        self.shapes = np.array(dims, dtype=np.uint64)
        self.bufs = [ffi.from_buffer(a) for a in self.arrays]
        base = ffi.from_buffer("uint64_t[]", self.shapes)
        at = 0
        for rec, a, buf in zip(self.recs, self.arrays, self.bufs):
            rec.data = buf
            rec.ndim = a.ndim
            rec.shape = base + at
            at += a.ndim
        return self.recs, n


class RaggedStore(_Store):
    """Variable-shape records: each keeps its own shape; a batch comes back
    as a list of arrays.  Appends run on a background writer thread."""

    _RAGGED = 1

    def __init__(self, handle, path):
        super().__init__(handle, path)
        self._session = None  # the writer thread's open zr_append *
        self._writer = Writer("loaderx-ragged-writer")

    @classmethod
    def create(cls, path, dtype, codec="zstd", dict_bytes=None,
               images=False):
        """Creates a new store (FileExistsError if path exists).
        images=True (dtype uint8) marks it as encoded images: each record
        one JPEG, PNG or WebP file's bytes, which gather(decode=...)
        decodes (zrecord(5))."""
        store = cls._create(path, dtype, None, codec, dict_bytes)
        if images:
            try:
                store.mark_images()
            except BaseException:
                store.close()
                raise
        return store

    @property
    def images(self):
        """True if the records are encoded images (zrecord(5))."""
        return bool(lib.zr_store_images(self._handle()))

    def mark_images(self):
        """Marks a uint8 store's records as encoded images (durable)."""
        self._writable()
        check(lib.zr_store_mark_images(self._handle()), self.path)

    def _drain(self):
        if self._h is not None:
            self._writer.drain()

    def _stop_writer(self):
        self._writer.stop()

    def gather(self, indices, form="list", pad=0, decode=None,
               augment=None, seed=0, position=0):
        """The records at indices, in one of three forms:

        - "list": a list of arrays, each with its own shape;
        - "packed": (data, offsets, shapes): every record's elements
          flattened and concatenated into one 1-d array, offsets the
          B+1 element boundaries (for 1-d records, the cu_seqlens of
          variable-length attention) and shapes a (B, ndim) int64 array
          (records of one ndim; ValueError otherwise);
        - "padded": (data, lengths): a (B, max_len, *rest) array, record
          k in data[k, :lengths[k]] and pad elsewhere (records whose
          shapes differ only along axis 0; ValueError otherwise).

        Either of the last two is what torch.from_numpy takes.

        An encoded-image store (images) decodes in the library's gather
        instead, on its lanes, into the array returned: decode=True gives
        a list of whole (H, W, 3) uint8 RGB images, decode=SIZE one (B,
        SIZE, SIZE, 3) array of the evaluation transform (shorter side to
        SIZE, centre crop), augment="rrc[:SMIN:SMAX],flip" the training
        one (SIZE 224 unless decode says), its crops and flips a pure
        function of (seed, position + k) for record k (zrecord.h)."""
        if decode is not None or augment is not None:
            opts = image_opts(decode, augment, seed, position)
            return super().gather(indices, opts=opts)
        return super().gather(indices, form=form, pad=pad)

    def _gather(self, v, idx, form="list", pad=0, opts=None):
        if opts is not None:
            return self._gather_images(v, idx, opts)
        if form not in ("list", "packed", "padded"):
            raise ValueError("form must be 'list', 'packed' or 'padded'")
        if form == "list":
            return self._gather_list(v, idx)
        if form == "packed":
            return self._gather_packed(v, idx)
        return self._gather_padded(v, idx, pad)

    def _gather_images(self, v, idx, opts):
        n = len(idx)
        cidx = ffi.from_buffer("uint64_t[]", idx)
        side = opts.size or (224 if opts.flags & lib.ZR_IMAGE_RRC else 0)
        if side:
            out = np.empty((n, side, side, 3), dtype=np.uint8)
            check(lib.zr_view_gather_images(v, cidx, n, opts,
                                            ffi.from_buffer(out),
                                            out.nbytes, ffi.NULL),
                  self.path)
            return out
        h, w = ffi.new("uint32_t *"), ffi.new("uint32_t *")
        shapes = []
        for i in idx.tolist():
            check(lib.zr_view_image_shape(v, i, opts, h, w), self.path)
            shapes.append((h[0], w[0], 3))
        sizes = [a * b * c for a, b, c in shapes]
        offsets = np.zeros(n + 1, dtype=np.uint64)
        offsets[1:] = np.cumsum(sizes, dtype=np.uint64)
        buf = np.empty(int(offsets[-1]), dtype=np.uint8)
        check(lib.zr_view_gather_images(
            v, cidx, n, opts, ffi.from_buffer(buf), buf.nbytes,
            ffi.from_buffer("uint64_t[]", offsets)), self.path)
        return [buf[int(offsets[k]):int(offsets[k + 1])].reshape(shapes[k])
                for k in range(n)]

    def _gather_raw(self, v, idx):
        """The records as stored (shape prefix, then elements), back to
        back in one buffer, and their byte offsets."""
        n = len(idx)
        cidx = ffi.from_buffer("uint64_t[]", idx)
        size = ffi.new("uint64_t *")
        check(lib.zr_view_gather_size(v, cidx, n, size), self.path)
        buf = np.empty(size[0], dtype=np.uint8)
        offsets = np.empty(n + 1, dtype=np.uint64)
        check(lib.zr_view_gather(v, cidx, n, ffi.from_buffer(buf),
                                  buf.nbytes,
                                  ffi.from_buffer("uint64_t[]", offsets)),
              self.path)
        return buf, offsets

    def _gather_list(self, v, idx):
        if not len(idx):
            return []
        buf, offsets = self._gather_raw(v, idx)
        return self._split(buf, offsets.tolist())

    def _pack(self, v, idx):
        """The gathered records packed in the gather's own buffer by
        zr_ragged_pack: (buffer, byte boundaries, shapes); every record
        must have record 0's ndim (ValueError otherwise)."""
        n = len(idx)
        buf, offsets = self._gather_raw(v, idx)
        base, itemsize = ffi.from_buffer(buf), self.dtype.itemsize
        ndim, at = ffi.new("uint32_t *"), ffi.new("size_t *")
        check(lib.zr_ragged_parse(base, int(offsets[1]), itemsize, ndim,
                                  ffi.NULL, at), self.path)
        shapes = np.empty((n, ndim[0]), dtype=np.int64)
        packed = np.empty(n + 1, dtype=np.uint64)
        check(lib.zr_ragged_pack(base, u64_ptr(offsets), n, itemsize,
                                 ndim[0], u64_ptr(shapes), u64_ptr(packed)),
              self.path)
        return buf, packed, shapes

    def _gather_packed(self, v, idx):
        """(data, element offsets, shapes): the members of the mount's
        .packed.npz, from the same C code (zr_ragged_pack)."""
        if not len(idx):
            return (np.empty(0, dtype=self.dtype),
                    np.zeros(1, dtype=np.int64), np.empty((0, 1), np.int64))
        buf, packed, shapes = self._pack(v, idx)
        data = buf[:int(packed[-1])].view(self.dtype)
        return data, (packed // self.dtype.itemsize).astype(np.int64), shapes

    def _gather_padded(self, v, idx, pad):
        """(data, lengths): the members of the mount's .padded.npz (with
        pad 0), from the same C code: zr_ragged_pad_shape checks that the
        records differ only along axis 0 (ValueError otherwise) and
        zr_ragged_pad places them, pad elsewhere."""
        n = len(idx)
        if not n:
            return (np.empty((0, 0), dtype=self.dtype),
                    np.zeros(0, dtype=np.int64))
        buf, packed, shapes = self._pack(v, idx)
        ndim = shapes.shape[1]
        padded = ffi.new("uint64_t[]", MAX_NDIM)
        check(lib.zr_ragged_pad_shape(u64_ptr(shapes), n, ndim, padded),
              self.path)
        out = np.empty((n,) + tuple(padded[0:ndim]), dtype=self.dtype)
        value = np.empty((), dtype=self.dtype)
        np.copyto(value, pad, casting="unsafe")  # as np.full casts it
        check(lib.zr_ragged_pad(ffi.from_buffer(buf), u64_ptr(packed), n,
                                self.dtype.itemsize, ndim, u64_ptr(shapes),
                                padded, ffi.from_buffer(value),
                                ffi.from_buffer(out), out.nbytes), self.path)
        return out, shapes[:, 0].copy()

    def _split(self, buf, offsets):
        """One array per gathered record, each a view into buf when its
        payload is aligned for the dtype (a copy otherwise)."""
        ndim = ffi.new("uint32_t *")
        shape = ffi.new("uint64_t[]", MAX_NDIM)
        at = ffi.new("size_t *")
        base = ffi.from_buffer(buf)
        itemsize = self.dtype.itemsize
        out = []
        for lo, hi in zip(offsets, offsets[1:]):
            check(lib.zr_ragged_parse(base + lo, hi - lo, itemsize, ndim,
                                      shape, at), self.path)
            dims = tuple(shape[0:ndim[0]])
            start = lo + at[0]
            rec = buf[start:hi].view(self.dtype) if start % itemsize == 0 \
                else buf[start:hi].copy().view(self.dtype)
            out.append(rec.reshape(dims))
        return out

    def _records(self, records):
        """Validated, C-contiguous arrays from any iterable of arrays."""
        if isinstance(records, np.ndarray):
            raise TypeError("RaggedStore.append takes an iterable of "
                            "arrays (one per record), not one ndarray; "
                            "use list(array) to split its first axis")
        for i, rec in enumerate(records):
            if not isinstance(rec, np.ndarray):
                rec = np.asarray(rec)
            if rec.dtype != self.dtype:
                raise TypeError("record %d: dtype mismatch: store holds "
                                "%s, got %s" % (i, self.dtype, rec.dtype))
            if rec.size == 0:
                raise ValueError("record %d has no elements (shape %s): "
                                 "records are never empty" % (i, rec.shape))
            if rec.ndim > MAX_NDIM:
                raise ValueError("record %d has more than %d dimensions"
                                 % (i, MAX_NDIM))
            yield np.require(rec, requirements="C")  # keeps 0-d

    def append(self, records):
        """Appends every record of an iterable of arrays as one commit, on
        the writer thread.  Returns once the last chunk is queued; a
        failure surfaces at the next append or draining call.  The arrays
        are borrowed: do not modify them before the next draining call."""
        self._writable()
        self._writer.raise_pending()
        chunk = _Chunk()
        try:
            for rec in self._records(records):
                chunk.add(rec)
                if chunk.full():
                    self._writer.put(self._stage_job(chunk))
                    chunk = _Chunk()
        except BaseException:
            self._writer.put(self._abort)
            raise
        if chunk.arrays:
            self._writer.put(self._stage_job(chunk))
        self._writer.put(self._commit)

    # The jobs below run on the writer thread, one at a time, in order.
    # A failed chunk aborts its session; the append's later chunks and its
    # commit then find no session and do nothing.

    def _stage_job(self, chunk):
        recs, n = chunk.pack()
        return lambda: self._stage(chunk, recs, n)

    def _stage(self, chunk, recs, n):
        if self._session is False:
            return
        if self._session is None:
            out = ffi.new("zr_append **")
            with self._lock.shared():
                rc = lib.zr_append_begin(self._h, out)
            if rc < 0:
                self._session = False
                raise error(rc, self.path)
            self._session = out[0]
        rc = lib.zr_append_ragged(self._session, recs, n)
        if rc < 0:
            err = error(rc, self.path)
            lib.zr_append_abort(self._session)
            self._session = False
            raise err

    def _commit(self):
        session, self._session = self._session, None
        if session:
            check(lib.zr_append_commit(session), self.path)

    def _abort(self):
        session, self._session = self._session, None
        if session:
            lib.zr_append_abort(session)
