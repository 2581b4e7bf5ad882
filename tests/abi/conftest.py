"""
conftest.py - tests/abi imports zrheader from this folder and loaderx from
contrib/python, and needs the built library.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)),
                                "contrib", "python"))
