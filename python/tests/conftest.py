"""Shared fixtures. Tests that need PyTorch skip without it; tests marked ``gpu`` skip without a
CUDA device (as on CI), with the reason."""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest

HAVE_TORCH = importlib.util.find_spec("torch") is not None
HAVE_NUMPY = importlib.util.find_spec("numpy") is not None


def cuda_available() -> bool:
    if not HAVE_TORCH:
        return False
    import torch

    return torch.cuda.is_available()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped without one)")


def pytest_collection_modifyitems(config, items):
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def subprocess_env(tmp_path):
    """An environment for child processes: an empty cache folder of their own."""
    env = dict(os.environ)
    env["TROPICAL_GEMM_CACHE_DIR"] = str(tmp_path / "cache")
    return env


@pytest.fixture
def python():
    return sys.executable
