"""
_lib.py - the one place loaderx touches libzrecord: the cffi (ABI mode)
declarations, finding, loading and vetting the shared library, and turning
its return codes into Python exceptions.

The declarations (CDEF) mirror include/zrecord.h by hand: ABI mode needs no
compiler, but nothing checks them at build time either.  So at import the
library must be a version these declarations were written for, and the
sizes of the structs declared here must equal the library's own
(zr_struct_size); either failing is an ImportError that says which.
tests/abi/test_cffi.py compiles CDEF's constants, struct layouts and
function declarations against zrecord.h; contrib/python/tests/test_lib.py
checks the error table and the import checks against real libraries.
cffi releases the GIL around every call it makes in ABI mode, so a long
gather lets other Python threads run.
"""
import ctypes.util
import errno
import os
import shutil
import subprocess

from cffi import FFI

from ._version import __version__

CDEF = """
enum {
    ZR_E_BUSY = -30800, ZR_E_EXISTS = -30801, ZR_E_NOSTORE = -30802,
    ZR_E_CORRUPT = -30803, ZR_E_SCHEMA = -30804, ZR_E_DTYPE = -30805,
    ZR_E_SHAPE = -30806, ZR_E_RANGE = -30807, ZR_E_EMPTY = -30808,
    ZR_E_TOOBIG = -30809, ZR_E_CODEC = -30810, ZR_E_NODICT = -30811,
    ZR_E_NPY = -30812, ZR_E_TRUNCATED = -30813, ZR_E_CHANGED = -30814,
    ZR_E_IMAGE = -30815
};
unsigned zr_version(void);
const char *zr_version_string(void);
size_t zr_struct_size(const char *name);

const char *zr_strerror(int err);
const char *zr_errname(int err);
int zr_errno(int err);
const char *zr_errmsg(void);

typedef struct zr_dtype {
    char str[5];
    char kind;
    char order;
    uint32_t itemsize;
} zr_dtype;
int zr_dtype_parse(const char *s, zr_dtype *out);

typedef struct zr_schema {
    zr_dtype dtype;
    int ragged;
    uint32_t ndim;
    uint64_t shape[32];
} zr_schema;
int zr_schema_row_bytes(const zr_schema *schema, size_t *out);

typedef struct zr_store zr_store;
typedef struct zr_append zr_append;
typedef enum zr_codec {
    ZR_CODEC_RAW = 0, ZR_CODEC_ZSTD = 1, ZR_CODEC_ZSTD_DICT = 2
} zr_codec;
int zr_codec_parse(const char *s, zr_codec *out);
const char *zr_codec_name(zr_codec codec);
enum { ZR_OPEN_RDONLY = 1, ZR_OPEN_FOLLOW = 2 };

int zr_store_create(const char *path, const zr_schema *schema,
            zr_codec codec, const void *dict, size_t dict_len,
            zr_store **out);
int zr_store_open(const char *path, unsigned flags, zr_store **out);
int zr_path_is_url(const char *path);
int zr_cache_set(const char *dir, uint64_t max_bytes);
typedef struct zr_cache_info {
    char dir[4096];
    uint64_t max_bytes;
    uint64_t used_bytes;
    uint64_t fetched_bytes;
    uint64_t hit_bytes;
    char why_off[256];
} zr_cache_info;
int zr_cache_status(zr_cache_info *out);
int zr_store_close(zr_store *s);
uint64_t zr_store_length(const zr_store *s);
const zr_schema *zr_store_schema(const zr_store *s);
zr_codec zr_store_codec(const zr_store *s);
int zr_store_readonly(const zr_store *s);
int zr_store_refresh(zr_store *s);
const char *zr_store_lock_warning(const zr_store *s);
const char *zr_store_recovered(const zr_store *s);
int zr_sigbus_guard(void);
size_t zr_store_row_bytes(const zr_store *s);

typedef struct zr_ragged_in {
    const void *data;
    uint32_t ndim;
    const uint64_t *shape;
} zr_ragged_in;
int zr_append_begin(zr_store *s, zr_append **out);
int zr_append_dense(zr_append *a, const void *rows, uint64_t count);
int zr_append_ragged(zr_append *a, const zr_ragged_in *recs, uint64_t count);
uint64_t zr_append_count(const zr_append *a);
int zr_append_commit(zr_append *a);
void zr_append_abort(zr_append *a);
int zr_store_append_dense(zr_store *s, const void *rows, uint64_t count);

int zr_store_gather(zr_store *s, const uint64_t *idx, size_t count,
            void *dst, size_t dst_cap, uint64_t *offsets);
int zr_store_gather_size(zr_store *s, const uint64_t *idx, size_t count,
             uint64_t *out);
typedef struct zr_view zr_view;
enum { ZR_VIEW_WAIT = 1 };
int zr_view_begin(zr_store *s, unsigned flags, zr_view **out);
void zr_view_end(zr_view *v);
uint64_t zr_view_length(const zr_view *v);
int zr_view_gather(zr_view *v, const uint64_t *idx, size_t count,
            void *dst, size_t dst_cap, uint64_t *offsets);
int zr_view_gather_size(zr_view *v, const uint64_t *idx, size_t count,
            uint64_t *out);
int zr_ragged_parse(const void *rec, size_t len, size_t itemsize,
            uint32_t *ndim, uint64_t shape[32],
            size_t *payload_offset);
int zr_ragged_pack(void *buf, const uint64_t *offsets, size_t count,
            size_t itemsize, uint32_t ndim, uint64_t *shapes,
            uint64_t *packed);
int zr_ragged_pad_shape(const uint64_t *shapes, size_t count,
            uint32_t ndim, uint64_t padded[32]);
int zr_ragged_pad(const void *src, const uint64_t *packed,
            size_t count, size_t itemsize, uint32_t ndim,
            const uint64_t *shapes, const uint64_t *padded,
            const void *pad, void *dst, size_t dst_cap);

enum { ZR_IMAGE_RRC = 1, ZR_IMAGE_FLIP = 2 };
typedef struct zr_image_opts {
    uint32_t size;
    uint32_t flags;
    double scale_min;
    double scale_max;
    uint64_t seed;
    uint64_t position;
} zr_image_opts;
int zr_image_opts_parse(const char *decode, const char *augment,
            zr_image_opts *out);
int zr_image_decode(const void *buf, size_t len, const zr_image_opts *opts,
            void *dst, size_t dst_cap);
int zr_image_shape(const void *buf, size_t len, const zr_image_opts *opts,
            uint32_t *h, uint32_t *w);
int zr_store_mark_images(zr_store *s);
int zr_store_images(const zr_store *s);
int zr_view_gather_images(zr_view *v, const uint64_t *idx, size_t count,
            const zr_image_opts *opts, void *dst, size_t dst_cap,
            const uint64_t *offsets);
int zr_view_image_shape(zr_view *v, uint64_t idx, const zr_image_opts *opts,
            uint32_t *h, uint32_t *w);

int zr_store_delete(zr_store *s, const uint64_t *idx, size_t count);
typedef void (*zr_progress_fn)(void *ctx, uint64_t done, uint64_t total);
int zr_store_compact(zr_store *s, zr_progress_fn progress, void *ctx);
typedef struct zr_stats {
    uint64_t records;
    uint64_t live_bytes;
    uint64_t data_bytes;
    uint64_t reclaimable;
} zr_stats;
int zr_store_stats(zr_store *s, zr_stats *out);
int zr_store_sync(zr_store *s);

typedef enum zr_dict_tier {
    ZR_DICT_FAST = 0, ZR_DICT_BALANCED = 1, ZR_DICT_MAX = 2
} zr_dict_tier;
int zr_dict_tier_parse(const char *s, zr_dict_tier *out);
const char *zr_dict_tier_name(zr_dict_tier tier);
size_t zr_dict_tier_dict_size(zr_dict_tier tier);
size_t zr_dict_tier_sample_size(zr_dict_tier tier);
int zr_dict_train(const void *const *samples, const size_t *sizes,
          size_t n, zr_dict_tier tier, void *dst, size_t dst_cap,
          size_t *dict_len);
int zr_dict_train_store(zr_store *s, zr_dict_tier tier, void *dst,
            size_t dst_cap, size_t *dict_len);

typedef enum zr_sampler_mode {
    ZR_SAMPLER_SEQUENTIAL = 0, ZR_SAMPLER_IID = 1, ZR_SAMPLER_CYCLIC = 2
} zr_sampler_mode;
typedef struct zr_sampler {
    zr_sampler_mode mode;
    uint64_t seed;
    uint64_t length;
    uint64_t batch_size;
    uint32_t rank;
    uint32_t world;
} zr_sampler;
int zr_sampler_check(const zr_sampler *cfg);
int zr_sampler_batch(const zr_sampler *cfg, uint64_t step, uint64_t *out);

typedef struct zr_stream zr_stream;
int zr_stream_new(zr_sampler_mode mode, uint64_t seed, uint64_t length,
          uint64_t granule, zr_stream **out);
int zr_stream_new_mixture(uint64_t seed, uint32_t sources,
          const uint64_t *lengths, const uint64_t *weights,
          zr_stream **out);
void zr_stream_free(zr_stream *st);
int zr_stream_weights(zr_stream *st, uint64_t from, const uint64_t *weights);
int zr_stream_skip(zr_stream *st, uint64_t from, uint64_t until);
int zr_stream_grow(zr_stream *st, uint64_t at, uint32_t source,
          uint64_t length);
int zr_stream_map(const zr_stream *st, uint64_t pos, uint64_t count,
          uint32_t *source, uint64_t *index);
int zr_stream_batch(const zr_stream *st, uint64_t start, uint64_t step,
          uint32_t rank, uint32_t world, uint64_t batch, uint32_t *source,
          uint64_t *index);
int zr_stream_position(const zr_stream *st, uint64_t start, uint64_t served,
          uint64_t *pos);

unsigned zr_pool_lanes(void);
"""
ffi = FFI()
ffi.cdef(CDEF)

MAX_NDIM = 32
_SONAME = "libzrecord.so.0"
# The libzrecord API CDEF declares: a library of this major version and at
# least this minor (zrecord.h: minors only add) serves it.
API_MAJOR, API_MINOR = 0, 1


def _candidates():
    """Where to look for libzrecord, most explicit first: $LOADERX_LIB
    alone if set; else $top_builddir's and an in-tree build's library,
    the one in pkg-config's libdir (a prefix the dynamic loader may not
    search, found through PKG_CONFIG_PATH), then the dynamic loader's own
    search (ldconfig's cache, LD_LIBRARY_PATH).  A generator: pkg-config
    runs only when no build tree has the library."""
    explicit = os.environ.get("LOADERX_LIB")
    if explicit:
        yield explicit
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for top in (os.environ.get("top_builddir"),
                os.path.join(here, "..", "..", "..")):
        if top:
            path = os.path.join(top, "src", "lib", ".libs", "libzrecord.so")
            if os.path.exists(path):
                yield os.path.normpath(path)
    libdir = _pkg_config_libdir()
    if libdir and os.path.exists(os.path.join(libdir, _SONAME)):
        yield os.path.join(libdir, _SONAME)
    yield ctypes.util.find_library("zrecord") or _SONAME


def _pkg_config_libdir():
    """libdir of an installed zrecord.pc, or None."""
    if not shutil.which("pkg-config"):
        return None
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "zrecord"],
                             capture_output=True, text=True, check=False,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _struct_names():
    """The structs CDEF declares with their members (not opaque ones)."""
    names = []
    for name in ffi.list_types()[0]:
        t = ffi.typeof(name)
        if t.kind == "struct" and t.fields is not None:
            names.append(name)
    return sorted(names)


def _vet(lib, path):
    """Raises ImportError unless lib is a libzrecord CDEF matches."""
    want = "%d.%d or a later %d.x" % (API_MAJOR, API_MINOR, API_MAJOR)
    try:
        number = lib.zr_version()
        text = ffi.string(lib.zr_version_string()).decode()
    except AttributeError:
        raise ImportError(
            "loaderx %s: %s has no zr_version(): it is not libzrecord, or "
            "one older than 0.1.0; loaderx needs libzrecord %s (set "
            "LOADERX_LIB to its path)" % (__version__, path, want)) from None
    major, minor = number // 10000, number // 100 % 100
    if major != API_MAJOR or minor < API_MINOR:
        raise ImportError(
            "loaderx %s: %s is libzrecord %s; loaderx was written for "
            "libzrecord %s (set LOADERX_LIB to a matching library)"
            % (__version__, path, text, want))
    wrong = []
    for name in _struct_names():
        theirs = lib.zr_struct_size(name.encode())
        if theirs != ffi.sizeof(name):
            wrong.append("%s is %d bytes in loaderx, %d in the library"
                         % (name, ffi.sizeof(name), theirs))
    if wrong:
        raise ImportError(
            "loaderx %s: its declarations do not match %s (libzrecord %s): "
            "%s; loaderx/_lib.py has drifted from zrecord.h"
            % (__version__, path, text, "; ".join(wrong)))


def _load():
    tried = []
    for path in _candidates():
        try:
            lib = ffi.dlopen(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _vet(lib, path)
        return lib, path
    raise ImportError("loaderx: cannot load libzrecord; set LOADERX_LIB "
                      "to its path. Tried: " + "; ".join(tried))


lib, LIB_PATH = _load()
# Records and the table are read from mappings: without the guard a page
# the kernel cannot fill (a media error, a file truncated behind the
# library, a network client whose view is behind) would kill the Python
# process with SIGBUS; with it that read raises OSError(EIO).  Any SIGBUS
# elsewhere goes to the handler installed before (faulthandler's, say).
if lib.zr_sigbus_guard() != 0:
    raise ImportError("loaderx: cannot install the SIGBUS guard: "
                      + ffi.string(lib.zr_errmsg()).decode(errors="replace"))


def library_version():
    """The loaded libzrecord's version, "MAJOR.MINOR.PATCH"."""
    return ffi.string(lib.zr_version_string()).decode()


class StoreBusy(OSError):
    """Another handle (in this or another process) holds the store's
    lock: a writer excludes every other handle, readers only a writer."""


class LockScopeWarning(UserWarning):
    """The store is on a filesystem whose lock stays on this host (sshfs,
    NFS with local locks): a writer on another host is not kept out."""


class RecoveredWarning(UserWarning):
    """This open recovered a delete or compact that was cut short (even a
    read-only one does, when it may write the files); the message says
    what is left to do, such as compacting again."""


def _message(code):
    detail = ffi.string(lib.zr_errmsg()).decode("utf-8", "replace")
    text = ffi.string(lib.zr_strerror(code)).decode("utf-8", "replace")
    return "%s: %s" % (text, detail) if detail else text


# Library codes whose meaning is a Python builtin exception rather than an
# OSError; everything else reports as OSError with the mapped errno.
_VALUE_ERRORS = {lib.ZR_E_SCHEMA, lib.ZR_E_SHAPE, lib.ZR_E_EMPTY,
         lib.ZR_E_NODICT, -errno.EINVAL}


def error(code, path=None):
    """The exception for a failed call's code.  Must run on the calling
    thread right after the call, because zr_errmsg() is thread-local."""
    msg = _message(code)
    if path is not None:
        path = os.fsdecode(path)
    if code == lib.ZR_E_EXISTS:
        return FileExistsError(errno.EEXIST, msg, path)
    if code == lib.ZR_E_NOSTORE:
        return FileNotFoundError(errno.ENOENT, msg, path)
    if code == lib.ZR_E_BUSY:
        return StoreBusy(errno.EBUSY, msg + " (a store has one writer or "
                         "any number of readers: open it with readonly=True"
                         ", the default, to read)", path)
    if code == lib.ZR_E_RANGE:
        return IndexError(msg)
    if code == lib.ZR_E_DTYPE:
        return TypeError(msg)
    if code in _VALUE_ERRORS:
        return ValueError(msg)
    return OSError(lib.zr_errno(code), msg, path)


def check(code, path=None):
    """Raises the mapped exception when a call failed (code < 0)."""
    if code < 0:
        raise error(code, path)
    return code


def u64_ptr(array):
    """A uint64_t * into a C-contiguous uint64/int64 array (no copy)."""
    return ffi.cast("uint64_t *", ffi.from_buffer(array))
