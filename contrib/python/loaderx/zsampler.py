"""
zsampler.py - Sampler, the seed's step-based index generator.  Every
batch is a pure function of (mode, seed, length, batch size, rank, world,
step) computed by libzrecord's zr_sampler_batch, so the same step gives the
same indices here, in the zrecord command and in the filesystem's batch
files, and a run resumes exactly by seeking to a step.
"""
import enum

import numpy as np

from ._lib import check, ffi, lib

__all__ = ["Sampler"]


class Sampler:
    """Sampler(length, batch_size, mode=Sampler.Mode.IID, seed=0, rank=0,
    world=1, step=0).  next() returns the int64 indices of the current
    step (this rank's contiguous slice of the global batch) and advances;
    batch(step) computes any step without moving."""

    class Mode(enum.IntEnum):
        SEQUENTIAL = 0
        IID = 1
        CYCLIC = 2

    def __init__(self, length, batch_size, mode=Mode.IID, seed=0, rank=0,
                 world=1, step=0):
        self.mode = self._mode(mode)
        cfg = ffi.new("zr_sampler *")
        try:
            cfg.mode = int(self.mode)
            cfg.seed = int(seed) % (1 << 64)
            cfg.length = length
            cfg.batch_size = batch_size
            cfg.rank = rank
            cfg.world = world
        except (OverflowError, TypeError) as e:
            raise ValueError("bad sampler argument: %s" % e) from None
        if length >= 1 << 63:
            raise ValueError("length must be below 2**63")
        check(lib.zr_sampler_check(cfg))
        self._cfg = cfg
        self.length = length
        self.batch_size = batch_size
        self.seed = int(seed)
        self.rank = rank
        self.world = world
        self.step = self._step(step)

    @classmethod
    def _mode(cls, mode):
        if isinstance(mode, str):
            try:
                return cls.Mode[mode.upper()]
            except KeyError:
                pass
        try:
            return cls.Mode(mode)
        except ValueError:
            raise ValueError("mode must be one of %s, got %r"
                             % ([m.name.lower() for m in cls.Mode], mode))

    @staticmethod
    def _step(step):
        step = int(step)
        if not 0 <= step < 1 << 64:
            raise ValueError("step must be in 0..2**64-1, got %d" % step)
        return step

    def batch(self, step):
        """This rank's indices for step, as int64."""
        out = np.empty(self.batch_size, dtype=np.int64)
        check(lib.zr_sampler_batch(self._cfg, self._step(step),
                                   ffi.from_buffer("uint64_t[]", out)))
        return out

    def next(self):
        """The current step's indices; then moves to the next step."""
        out = self.batch(self.step)
        self.step += 1
        return out

    __next__ = next

    def __iter__(self):
        return self

    def seek(self, step):
        """Makes step the next one next() returns."""
        self.step = self._step(step)

    def __repr__(self):
        return ("Sampler(%d, %d, Sampler.Mode.%s, seed=%d, rank=%d, "
                "world=%d, step=%d)" % (self.length, self.batch_size,
                                        self.mode.name, self.seed,
                                        self.rank, self.world, self.step))
