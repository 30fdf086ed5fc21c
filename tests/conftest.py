"""Shared test setup: the tests folder on sys.path (for tests/seeds.py)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
