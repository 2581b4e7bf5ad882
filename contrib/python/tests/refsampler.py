"""
refsampler.py - the binding's view of tests/fixtures/sampler_ref.py, the
plain-Python transcription of the sampler algorithm that include/zrecord.h
documents (and of its position streams: Stream), so the tests check the
library's batches against the specification rather than against itself.
"""
import os
import sys

_TOP = os.environ.get("top_srcdir") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
sys.path.insert(0, os.path.join(_TOP, "tests", "fixtures"))

import sampler_ref  # noqa: E402

_MODES = ("sequential", "iid", "cyclic")
Stream = sampler_ref.Stream


def batch(mode, seed, n, b, step, rank=0, world=1):
    """mode 0 sequential, 1 iid, 2 cyclic: rank's slice of step's batch."""
    return sampler_ref.batch(_MODES[int(mode)], seed, n, b, step, rank,
                             world)
