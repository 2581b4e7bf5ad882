"""
zstream.py - Schedule, the whole definition of a sample stream (what a
run's state holds besides its seed and position): the mode and granule
of a plain stream or the weights of a mixture, the sources' lengths and
their growth, skipped ranges.  It builds libzrecord's zr_stream
(zrecord.h, "Streams"), which maps positions to (source, record).
"""
import numpy as np

from ._lib import check, ffi, lib

__all__ = ["Schedule"]

_MODES = ("sequential", "iid", "cyclic")
_U64 = 1 << 64


def _u64(name, v):
    try:
        v = int(v)
    except (TypeError, ValueError):
        raise ValueError("%s must be an integer, got %r" % (name, v)) \
            from None
    if not 0 <= v < _U64:
        raise ValueError("%s must be in 0..2**64-1, got %d" % (name, v))
    return v


def _mode_name(mode):
    if isinstance(mode, str) and mode.lower() in _MODES:
        return mode.lower()
    try:
        return _MODES[int(mode)]
    except (ValueError, TypeError, IndexError):
        raise ValueError("mode must be one of %s, got %r"
                         % (list(_MODES), mode)) from None


class Schedule:
    """Schedule(lengths, mode="cyclic", granule=1, weights=None,
    changes=(), skip=(), grow=()).

    A plain stream has one source (lengths=[N]) read in mode with cycle
    multiple granule (a run's world * batch_size: keep the first run's
    when the world or batch size change).  A mixture has weights (one per
    source; its sources are always cyclic) and changes [(from, weights)].
    skip: [(from, until)] positions not served.  grow: [(at, source,
    length)] a source's new length, taking effect at its next cycle
    boundary.  Entries apply in position order.  to_dict() and
    from_dict() give the JSON-able form a loader's state_dict holds."""

    def __init__(self, lengths, mode="cyclic", granule=1, weights=None,
                 changes=(), skip=(), grow=()):
        self.lengths = [_u64("length", n) for n in lengths]
        if not self.lengths:
            raise ValueError("a stream needs at least one source")
        self.mode = _mode_name(mode)
        self.granule = _u64("granule", granule)
        self.weights = (None if weights is None
                        else [_u64("weight", w) for w in weights])
        if self.weights is not None and len(self.weights) != len(lengths):
            raise ValueError("want one weight per source (%d), got %d"
                             % (len(lengths), len(self.weights)))
        self.changes = [(_u64("from", f), [_u64("weight", w) for w in ws])
                        for f, ws in changes]
        self.skip = [(_u64("from", a), _u64("until", b)) for a, b in skip]
        self.grow = [(_u64("at", a), _u64("source", k), _u64("length", n))
                     for a, k, n in grow]
        self.stream(0)  # checks it: the library says what is wrong

    @property
    def mixture(self):
        return self.weights is not None

    def _entries(self):
        out = [(f, 0, i, "w", ws) for i, (f, ws) in enumerate(self.changes)]
        out += [(a, 1, i, "s", (a, b)) for i, (a, b) in enumerate(self.skip)]
        out += [(a, 2, i, "g", (a, k, n))
                for i, (a, k, n) in enumerate(self.grow)]
        return sorted(out, key=lambda e: e[:3])

    def stream(self, seed):
        """A zr_stream of this schedule for seed (a cffi handle)."""
        out = ffi.new("zr_stream **")
        seed = int(seed) % _U64
        if self.mixture:
            check(lib.zr_stream_new_mixture(
                seed, len(self.lengths), ffi.new("uint64_t[]", self.lengths),
                ffi.new("uint64_t[]", self.weights), out))
        else:
            check(lib.zr_stream_new(_MODES.index(self.mode), seed,
                                    self.lengths[0], self.granule, out))
        st = ffi.gc(out[0], lib.zr_stream_free)
        for at, _, _, kind, v in self._entries():
            if kind == "w":
                if not self.mixture:
                    raise ValueError("weight changes need a mixture")
                if len(v) != len(self.lengths):
                    raise ValueError("a weight change wants one weight per "
                                     "source")
                check(lib.zr_stream_weights(st, at,
                                            ffi.new("uint64_t[]", v)))
            elif kind == "s":
                check(lib.zr_stream_skip(st, v[0], v[1]))
            else:
                if v[1] >= len(self.lengths):
                    raise ValueError("grow: no source %d" % v[1])
                check(lib.zr_stream_grow(st, v[0], v[1], v[2]))
        return st

    def current_lengths(self):
        """Each source's length after every growth entry."""
        out = list(self.lengths)
        for _, k, n in self.grow:
            out[k] = max(out[k], n)
        return out

    def grown(self, at, lengths):
        """This schedule with a growth entry at position at for each source
        now longer than it knows (ValueError for one that shrank)."""
        have = self.current_lengths()
        if len(lengths) != len(have):
            raise ValueError("the schedule has %d sources, the data %d"
                             % (len(have), len(lengths)))
        extra = []
        for k, (old, new) in enumerate(zip(have, lengths)):
            if new < old:
                raise ValueError("source %d has %d records, fewer than the "
                                 "%d the schedule knows (a store that "
                                 "shrank needs a new run)" % (k, new, old))
            if new > old:
                extra.append((at, k, new))
        if not extra:
            return self
        d = self.to_dict()
        d["grow"] = d["grow"] + [list(e) for e in extra]
        return Schedule.from_dict(d)

    def to_dict(self):
        d = {"lengths": list(self.lengths), "skip": [list(e) for e in
                                                     self.skip],
             "grow": [list(e) for e in self.grow]}
        if self.mixture:
            d["weights"] = list(self.weights)
            d["changes"] = [[f, list(w)] for f, w in self.changes]
        else:
            d["mode"] = self.mode
            d["granule"] = self.granule
        return d

    @classmethod
    def from_dict(cls, d):
        if not isinstance(d, dict) or "lengths" not in d:
            raise ValueError("a schedule is a dict with lengths, got %r"
                             % (d,))
        return cls(d["lengths"], d.get("mode", "cyclic"),
                   d.get("granule", 1), d.get("weights"),
                   d.get("changes", ()), d.get("skip", ()),
                   d.get("grow", ()))

    def __eq__(self, other):
        return isinstance(other, Schedule) and \
            self.to_dict() == other.to_dict()

    def __repr__(self):
        return "Schedule.from_dict(%r)" % (self.to_dict(),)


def batch(st, start, step, rank, world, batch_size, sources=False):
    """Rank's batch of step of a run from position start: int64 indices,
    or (int64 sources, int64 indices) when sources is set."""
    idx = np.empty(batch_size, dtype=np.int64)
    src = np.empty(batch_size, dtype=np.uint32) if sources else None
    check(lib.zr_stream_batch(
        st, start, step, rank, world, batch_size,
        ffi.from_buffer("uint32_t[]", src) if sources else ffi.NULL,
        ffi.from_buffer("uint64_t[]", idx)))
    return (src.astype(np.int64), idx) if sources else idx


def position(st, start, served):
    """The position a run from start reaches after served samples."""
    out = ffi.new("uint64_t *")
    check(lib.zr_stream_position(st, start, served, out))
    return out[0]
