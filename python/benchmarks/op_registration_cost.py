"""What registering custom ops with ``torch.library`` costs a fresh process, the floor under
``import tropical_gemm`` (issue 14's fresh-process target): 14 trivial ops, as many as the package
registers, each with a schema, implementations for CompositeExplicitAutograd, CPU and CUDA, a fake
one and an autograd kernel, registered two ways in namespaces of their own:

- ``public``: ``torch.library.register_fake`` and ``torch.library.register_autograd``, as the
  package did until 2026-11-27;
- ``package``: as ``tropical_gemm.ops._define`` and ``_autograd._register_autograd`` do now: the
  fake-impl holder filled directly (no ``inspect`` lookup of the caller's source) and an Autograd
  kernel of one function, whose general path is built at its first use.

Each measurement runs in a fresh process that has imported torch, as the package's import does;
needs no GPU.

    python3 python/benchmarks/op_registration_cost.py [--ops N] [--processes P]

Prints one line per process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile

_PROBE = """
import time, torch
from torch._library.simple_registry import singleton as holders
ops = {ops}
impl = lambda a, b, semiring="maxplus": a
fake = lambda a, b, semiring="maxplus": a.new_empty(a.shape)


def define(lib, name):
    lib.define(f"{{name}}(Tensor a, Tensor b, str semiring='maxplus') -> Tensor")
    lib.impl(name, impl, "CompositeExplicitAutograd")
    lib.impl(name, impl, "CPU")
    lib.impl(name, impl, "CUDA")


t0 = time.perf_counter()
lib = torch.library.Library("tropical_probe_public", "DEF")
for i in range(ops):
    define(lib, f"op{{i}}")
    torch.library.register_fake(f"tropical_probe_public::op{{i}}", fake, lib=lib)
for i in range(ops):
    torch.library.register_autograd(f"tropical_probe_public::op{{i}}", lambda ctx, g: (g, None, None),
                                    setup_context=lambda ctx, inputs, output: None, lib=lib)
t1 = time.perf_counter()
lib2 = torch.library.Library("tropical_probe_package", "DEF")
for i in range(ops):
    define(lib2, f"op{{i}}")
    holders.find(f"tropical_probe_package::op{{i}}").fake_impl.register(fake, "probe", lib=lib2)
    lib2.impl(f"op{{i}}", lambda keyset, *args: None, "Autograd", with_keyset=True)
t2 = time.perf_counter()
print(f"{{ops}} ops: public API {{(t1 - t0) * 1e3:.2f}} ms; the package's way {{(t2 - t1) * 1e3:.2f}} ms")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=14, help="ops to register (default: the package's 14)")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes to measure in")
    args = parser.parse_args()
    # From a file, as a package's module is: code run with -c makes register_fake ten times slower
    # (measured: 24 against 2 ms for 14 ops).
    with tempfile.NamedTemporaryFile("w", suffix=".py") as probe:
        probe.write(_PROBE.format(ops=args.ops))
        probe.flush()
        for _ in range(args.processes):
            subprocess.run([sys.executable, probe.name], check=True)


if __name__ == "__main__":
    main()
