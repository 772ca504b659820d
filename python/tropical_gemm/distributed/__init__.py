"""tropical_gemm.distributed: tropical products and contractions over torch.distributed.

No communication layer of its own: tropical (+) is max or min, which torch.distributed reduces
(NCCL between GPUs, gloo on CPUs; launch with torchrun). The operands are sharded over the ranks of
a process group:

    import torch.distributed as dist, tropical_gemm.distributed as td
    dist.init_process_group("nccl")                      # or "gloo" on CPUs; torchrun sets the rest
    a_part, b_part = td.shard_operands(a, b, "k")        # this rank's slab of K (views)
    c = td.matmul(a_part, b_part, "maxplus", split="k")  # the whole C on every rank: one all_reduce
    c_rows = td.matmul(a_rows, b, "minplus", split="m")  # this rank's rows of C: no communication
    c_blk = td.matmul(a_blk, b_blk, "minplus", split="grid")  # blocks on a process grid
    c = td.matmul(a, b)                                  # whole operands: the split chosen from shapes
    d = td.sliced_contract(fn, [x, y, z], [1, 0, None], "maxplus")  # a contraction sliced over ranks

README.md, "Beyond one GPU", has the layouts, the semantics, gradients and memory per rank.
"""

from __future__ import annotations

from ._products import choose_split, gather_result, matmul, shard_operands, split_costs
from ._slicing import einsum, sliced_contract

__all__ = ["matmul", "choose_split", "split_costs", "shard_operands", "gather_result", "sliced_contract", "einsum"]
