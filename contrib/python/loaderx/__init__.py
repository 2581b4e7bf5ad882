"""
loaderx - the seed's Python API (DenseStore, RaggedStore, Sampler,
DataLoader, train_dict) as a thin cffi binding over libzrecord.
"""
from ._lib import LIB_PATH, LockScopeWarning, StoreBusy
from .dataloader import DataLoader
from .utils import train_dict
from .zrecord import DICT_TIERS, DenseStore, RaggedStore
from .zsampler import Sampler

__version__ = "0.1.0"
__all__ = ["DenseStore", "RaggedStore", "StoreBusy", "LockScopeWarning",
           "DICT_TIERS", "Sampler", "DataLoader", "train_dict", "LIB_PATH"]
