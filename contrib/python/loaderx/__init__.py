"""
loaderx - the seed's Python API (DenseStore, RaggedStore, Sampler,
DataLoader, train_dict) and position streams (Schedule, MixtureSampler,
Mixture) as a thin cffi binding over libzrecord.
"""
from ._lib import (LIB_PATH, LockScopeWarning, RecoveredWarning, StoreBusy,
                   library_version)
from ._version import __version__
from .cache import cache_status, set_cache
from .dataloader import DataLoader
from .utils import train_dict
from .zrecord import DICT_TIERS, DenseStore, RaggedStore
from .mixture import Mixture
from .zsampler import MixtureSampler, Sampler
from .zstream import Schedule

__all__ = ["DenseStore", "RaggedStore", "StoreBusy", "LockScopeWarning",
           "RecoveredWarning",
           "DICT_TIERS", "Sampler", "MixtureSampler", "Schedule", "Mixture",
           "DataLoader", "train_dict", "LIB_PATH",
           "library_version", "__version__", "set_cache", "cache_status"]
