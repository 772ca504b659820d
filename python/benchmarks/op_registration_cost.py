"""What registering custom ops with ``torch.library`` costs a fresh process, the floor under
``import tropical_gemm`` (issue 14's fresh-process target): 14 trivial ops, as many as the package
registers, defined in a namespace of their own exactly as ``tropical_gemm.ops._define`` does (the
schema, an implementation for CompositeExplicitAutograd, CPU and CUDA, a fake one), then given a
backward with ``torch.library.register_autograd``. Each measurement runs in a fresh process that has
imported torch, as the package's import does; needs no GPU.

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
ops = {ops}
t0 = time.perf_counter()
lib = torch.library.Library("tropical_probe", "DEF")
for i in range(ops):
    name = f"op{{i}}"
    lib.define(f"{{name}}(Tensor a, Tensor b, str semiring='maxplus') -> Tensor")
    impl = lambda a, b, semiring="maxplus": a
    lib.impl(name, impl, "CompositeExplicitAutograd")
    lib.impl(name, impl, "CPU")
    lib.impl(name, impl, "CUDA")
    torch.library.register_fake(f"tropical_probe::{{name}}", lambda a, b, semiring="maxplus": a.new_empty(a.shape), lib=lib)
t1 = time.perf_counter()
for i in range(ops):
    torch.library.register_autograd(f"tropical_probe::op{{i}}", lambda ctx, g: (g, None, None),
                                    setup_context=lambda ctx, inputs, output: None, lib=lib)
t2 = time.perf_counter()
print(f"{{ops}} ops: define + impl + register_fake {{(t1 - t0) * 1e3:.2f}} ms; register_autograd {{(t2 - t1) * 1e3:.2f}} ms")
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
