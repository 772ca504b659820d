"""The library of ops ``torch.ops.tropical`` and how an op joins it: :func:`define` registers an op's
schema, its CPU and CUDA implementations, a catch-all that explains other devices, and its fake
implementation; ``IMPLS`` keeps each op's (CPU, CUDA) implementations for the autograd fast path
(``_autograd``). ``ops``, ``_contract`` and ``_counting`` define their ops here.
"""

from __future__ import annotations

import torch

from ._checks import NAMESPACE, unsupported_device


def dispatch(op: str, cpu, cuda):
    """The catch-all implementation: any device other than CPU and CUDA gets an error that says what to do."""

    def impl(*args):
        t = args[0]
        if t.device.type == "cpu":
            return cpu(*args)
        if t.device.type == "cuda":
            return cuda(*args)
        raise unsupported_device(op, t)

    return impl


LIBRARY = torch.library.Library(NAMESPACE, "DEF")
IMPLS: dict = {}  # op name -> (CPU implementation, CUDA implementation)

# register_fake looks up its caller's source line and module with `inspect` for its messages: about
# a quarter of a millisecond per op, a third of the import. It then fills the op's fake-impl holder,
# which also registers the Meta kernel; register_fake below fills that holder directly where this
# PyTorch's holder takes the library (2.5 and later), and calls torch's register_fake elsewhere.
try:
    from torch._library.simple_registry import singleton as _fake_holders
except ImportError:
    _fake_holders = None


def register_fake(name: str, fake) -> None:
    qualname = f"{NAMESPACE}::{name}"
    if _fake_holders is not None:
        try:
            _fake_holders.find(qualname).fake_impl.register(fake, f"tropical_gemm.ops, op {name}", lib=LIBRARY)
            return
        except TypeError:  # a holder of another shape
            pass
    torch.library.register_fake(qualname, fake, lib=LIBRARY)


def define(name: str, schema: str, cpu, cuda, fake):
    """Defines op `name` with `schema` (its arguments and results) and registers its implementations."""
    IMPLS[name] = (cpu, cuda)
    LIBRARY.define(f"{name}{schema}")
    LIBRARY.impl(name, dispatch(name, cpu, cuda), "CompositeExplicitAutograd")
    LIBRARY.impl(name, cpu, "CPU")
    LIBRARY.impl(name, cuda, "CUDA")
    register_fake(name, fake)
