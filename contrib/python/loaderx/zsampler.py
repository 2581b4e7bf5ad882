"""
zsampler.py - Sampler and MixtureSampler, the index generators.  Every
batch is a pure function of the stream (Schedule: mode, granule, lengths,
weights, skips, growth), the seed and a position: a run that began at
position start reads, at step t on rank r of world W with batch B,
positions start + t*W*B + r*B ... + B - 1 (libzrecord's zr_stream_batch),
so the same step gives the same indices here, in the zrecord command and
in the filesystem's batch files, and a run resumes exactly from the
position it reached, with any world or batch size.
"""
import enum

from . import zstream
from ._lib import check, ffi, lib
from .zstream import Schedule

__all__ = ["Sampler", "MixtureSampler"]


class _Positions:
    """What both samplers share: the run's geometry, its start, its steps
    and the positions they reach."""

    def _setup(self, schedule, batch_size, seed, rank, world, step, start):
        self.schedule = schedule
        self.batch_size = batch_size
        self.seed = int(seed)
        self.rank = rank
        self.world = world
        self.start = zstream._u64("start", start)
        self.step = self._step(step)
        self._st = schedule.stream(self.seed)

    @staticmethod
    def _step(step):
        step = int(step)
        if not 0 <= step < 1 << 64:
            raise ValueError("step must be in 0..2**64-1, got %d" % step)
        return step

    def position(self, step=None):
        """The stream position reached after steps 0..step-1 of this run
        (all ranks' samples; default: the current step)."""
        step = self.step if step is None else self._step(step)
        return zstream.position(self._st, self.start,
                                step * max(self.world, 1) * self.batch_size)

    def next(self):
        """The current step's batch; then moves to the next step."""
        out = self.batch(self.step)
        self.step += 1
        return out

    __next__ = next

    def __iter__(self):
        return self

    def seek(self, step):
        """Makes step the next one next() returns."""
        self.step = self._step(step)


def _check_geometry(length, batch_size, rank, world, mode):
    cfg = ffi.new("zr_sampler *")
    try:
        cfg.mode = int(mode)
        cfg.length = length
        cfg.batch_size = batch_size
        cfg.rank = rank
        cfg.world = world
    except (OverflowError, TypeError) as e:
        raise ValueError("bad sampler argument: %s" % e) from None
    if length >= 1 << 63:
        raise ValueError("length must be below 2**63")
    check(lib.zr_sampler_check(cfg))


def _check_resume(start, mode):
    """A cyclic or iid stream resumed past 0 draws by the granule it was
    made with (its first run's world * batch_size), which only its
    schedule remembers: taking this run's instead would repeat records
    within a cycle once the world or batch size changed."""
    if int(start) and mode != Sampler.Mode.SEQUENTIAL:
        raise ValueError(
            "start=%d: a %s stream resumed past 0 needs the schedule of the "
            "run that began it (its granule, that run's world * "
            "batch_size): pass schedule=state[\"schedule\"] of its "
            "state_dict() (or load_state_dict(state)), or schedule="
            "Schedule([length], %r, granule=G)"
            % (int(start), mode.name.lower(), mode.name.lower()))


class Sampler(_Positions):
    """Sampler(length, batch_size, mode=Sampler.Mode.IID, seed=0, rank=0,
    world=1, step=0, start=0, schedule=None).  next() returns the int64
    indices of the current step (this rank's contiguous slice of the
    global batch) and advances; batch(step) computes any step without
    moving.  start: the stream position this run begins at (samples
    consumed before it); start=0 gives the step-based batches of earlier
    versions.  schedule (a Schedule or its to_dict()) continues a stream
    of an earlier run: keep it when the world or batch size change (its
    granule keeps the cycles); a store longer than the schedule knows
    takes its new length at the next cycle boundary after start.  A
    cyclic or iid start > 0 needs it (ValueError without): only the
    schedule knows the granule the stream began with."""

    class Mode(enum.IntEnum):
        SEQUENTIAL = 0
        IID = 1
        CYCLIC = 2

    def __init__(self, length, batch_size, mode=Mode.IID, seed=0, rank=0,
                 world=1, step=0, start=0, schedule=None):
        self.mode = self._mode(mode)
        if schedule is None:
            _check_resume(start, self.mode)
            _check_geometry(length, batch_size, rank, world, self.mode)
            schedule = Schedule([length], self.mode.name,
                                max(world, 1) * batch_size)
        else:
            if isinstance(schedule, dict):
                schedule = Schedule.from_dict(schedule)
            if schedule.mixture or schedule.mode != self.mode.name.lower():
                raise ValueError("the schedule is a %s stream, not %s"
                                 % ("mixture" if schedule.mixture else
                                    schedule.mode, self.mode.name.lower()))
            # W * B may now pass the length: the granule bounds cycles.
            _check_geometry(length, batch_size, rank, world,
                            self.Mode.IID)
            schedule = schedule.grown(start, [length])
        self.length = length
        self._setup(schedule, batch_size, seed, rank, world, step, start)

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

    def batch(self, step):
        """This rank's indices for step, as int64."""
        return zstream.batch(self._st, self.start, self._step(step),
                             self.rank, self.world, self.batch_size)

    def __repr__(self):
        return ("Sampler(%d, %d, Sampler.Mode.%s, seed=%d, rank=%d, "
                "world=%d, step=%d, start=%d)"
                % (self.length, self.batch_size, self.mode.name, self.seed,
                   self.rank, self.world, self.step, self.start))


class MixtureSampler(_Positions):
    """MixtureSampler(lengths, weights, batch_size, seed=0, rank=0,
    world=1, step=0, start=0, schedule=None).  A weighted mixture of
    sources of lengths[k] records: batch(step) returns (sources,
    indices), int64 arrays of this rank's samples (source number, record
    index in that source).  Source k is drawn weights[k] times in every
    period of sum(weights) positions and cycles through its own
    permutation (zrecord.h, "Streams").  schedule continues an earlier
    run's stream (its weights, changes, skips and growth)."""

    def __init__(self, lengths, weights, batch_size, seed=0, rank=0,
                 world=1, step=0, start=0, schedule=None):
        lengths = list(lengths)
        _check_geometry(1, batch_size, rank, world, Sampler.Mode.IID)
        if schedule is None:
            schedule = Schedule(lengths, weights=weights)
        else:
            if isinstance(schedule, dict):
                schedule = Schedule.from_dict(schedule)
            if not schedule.mixture:
                raise ValueError("the schedule is not a mixture's")
            schedule = schedule.grown(start, lengths)
        self.lengths = lengths
        self._setup(schedule, batch_size, seed, rank, world, step, start)

    def batch(self, step):
        """This rank's (sources, indices) for step, both int64."""
        return zstream.batch(self._st, self.start, self._step(step),
                             self.rank, self.world, self.batch_size,
                             sources=True)

    def __repr__(self):
        return ("MixtureSampler(%r, %r, %d, seed=%d, rank=%d, world=%d, "
                "step=%d, start=%d)"
                % (self.lengths, self.schedule.weights, self.batch_size,
                   self.seed, self.rank, self.world, self.step, self.start))
