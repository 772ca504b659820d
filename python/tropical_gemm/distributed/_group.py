"""The process group side: is there one, who am I, how shards are cut, and the one small exchange
of metadata that lets every rank check every other rank's shards before any matrix data moves.

Every check that could fail on some ranks and not on others is made after that exchange, from the
same gathered table on every rank, so that all ranks raise the same error instead of some of them
waiting forever in a collective for a rank that gave up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import Tensor

from .._checks import DTYPES, type_list
from .._native import BOOLEAN, ELEMENT_TYPES, SEMIRINGS, InvalidArgumentError, UnsupportedError

SPLITS = ("k", "m", "grid")  # the order gives each split its code in the exchanged metadata
WHERE = "tropical_gemm.distributed"


def require_group(group, what: str):
    """The group to use (None: the default one), after checking that torch.distributed is running
    and that this process belongs to it. Raised on every rank alike (nothing has been exchanged)."""
    if not dist.is_available():
        raise InvalidArgumentError(
            f"{WHERE}.{what}: this PyTorch was built without torch.distributed; install a build that has it"
        )
    if not dist.is_initialized():
        raise InvalidArgumentError(
            f"{WHERE}.{what}: the default process group is not initialised: call "
            f"torch.distributed.init_process_group(backend='nccl') (GPUs) or backend='gloo' (CPUs) first, "
            f"e.g. in a script launched with `torchrun --nproc_per_node N script.py`"
        )
    group = group if group is not None else dist.group.WORLD
    if dist.get_rank(group) < 0:
        raise InvalidArgumentError(
            f"{WHERE}.{what}: this process (global rank {dist.get_rank()}) is not a member of the group it "
            f"was given; call it only on the group's ranks"
        )
    return group


def collective_device(group, tensor: Tensor) -> torch.device:
    """Where this group's collectives take their tensors: the operands' own device for CUDA tensors,
    the CPU for CPU tensors where the backend has a CPU half (gloo)."""
    if tensor.is_cuda:
        return tensor.device
    backend = str(dist.get_backend(group)).lower()
    if "gloo" in backend or "mpi" in backend or "ucc" in backend:
        return torch.device("cpu")
    raise InvalidArgumentError(
        f"{WHERE}: the operands are on {tensor.device} but the process group's backend is {backend!r}, "
        f"which moves CUDA tensors only: move them to this rank's GPU (.cuda()), or initialise the group "
        f"with backend='gloo' (CPU) or 'cpu:gloo,cuda:nccl' (both)"
    )


def shard_range(size: int, parts: int, index: int) -> tuple[int, int]:
    """[start, stop) of part `index` when `size` is cut into `parts` nearly equal parts, the first
    size % parts of them one longer (as torch.tensor_split cuts)."""
    base, extra = divmod(size, parts)
    start = index * base + min(index, extra)
    return start, start + base + (1 if index < extra else 0)


def default_grid(world: int) -> tuple[int, int]:
    """The most nearly square rows x columns = world, with rows <= columns (2 -> 1 x 2, 4 -> 2 x 2)."""
    rows = max(r for r in range(1, math.isqrt(world) + 1) if world % r == 0)
    return rows, world // rows


def grid_shape(grid, world: int, what: str) -> tuple[int, int]:
    """The process grid asked for (None: default_grid), checked against the group's size."""
    if grid is None:
        return default_grid(world)
    try:
        rows, cols = (int(x) for x in grid)
    except (TypeError, ValueError):
        raise InvalidArgumentError(f"{WHERE}.{what}: grid must be (rows, columns), got {grid!r}") from None
    if rows < 1 or cols < 1 or rows * cols != world:
        raise InvalidArgumentError(
            f"{WHERE}.{what}: a grid of {rows} x {cols} ranks does not fit the group's {world} ranks: "
            f"rows x columns must equal the group's size (or pass grid=None for {default_grid(world)})"
        )
    return rows, cols


@dataclass(frozen=True)
class Shards:
    """What every rank holds, gathered: one row per rank of the group, in group-rank order."""

    rank: int
    world: int
    a_shapes: list[tuple[int, int]]  # this rank's a: (rows, cols)
    b_shapes: list[tuple[int, int]]


# The exchanged row: split, semiring, dtype, argmax wanted, grid rows, grid columns (all must agree),
# then the dimensions of a and b and their shapes.
_FIELDS = ("split", "semiring", "dtype", "argmax (asked for, or needed by a gradient)", "grid rows", "grid columns")


def exchange(group, device: torch.device, what: str, split: str, semiring: str, a: Tensor, b: Tensor,
             argmax: bool, grid: tuple[int, int]) -> Shards:
    """One all_gather of a few integers per rank; then the checks that every rank asked for the same
    product (an error names the first rank that differs and how). `semiring` is a canonical name, or
    anything else for an unknown one (reported here, on every rank)."""
    dtype = DTYPES.get(a.dtype, -1) if a.dtype == b.dtype else -2
    row = [SPLITS.index(split) if split in SPLITS else -1, SEMIRINGS.get(semiring, -1), dtype,
           int(argmax), grid[0], grid[1], a.dim(), b.dim(), *_rows_cols(a), *_rows_cols(b)]
    mine = torch.tensor(row, dtype=torch.int64, device=device)
    world = dist.get_world_size(group)
    table = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(table, mine, group=group)
    rows = [t.tolist() for t in table]
    rank = dist.get_rank(group)
    first = rows[0]
    for r, other in enumerate(rows):
        for i, name in enumerate(_FIELDS):
            if other[i] != first[i]:
                raise InvalidArgumentError(
                    f"{WHERE}.{what}: ranks disagree on the {name}: rank 0 gave {_describe(i, first[i])} and rank "
                    f"{r} {_describe(i, other[i])}; every rank of the group must make the same call"
                )
    if any(r[6] != 2 or r[7] != 2 for r in rows):
        bad = next(r for r, other in enumerate(rows) if other[6] != 2 or other[7] != 2)
        raise InvalidArgumentError(
            f"{WHERE}.{what} takes 2-D shards, but rank {bad}'s a is {rows[bad][6]}-D and b {rows[bad][7]}-D; "
            f"fold leading dimensions into rows first (a.reshape(-1, a.shape[-1]))"
        )
    if first[0] < 0:
        raise InvalidArgumentError(f"{WHERE}.{what}: unknown split {split!r}: use one of {SPLITS}, or None to choose")
    if first[1] < 0:
        raise InvalidArgumentError(f"{WHERE}.{what}: unknown semiring {semiring!r}: use one of {sorted(SEMIRINGS)}")
    if first[2] == -1:
        raise UnsupportedError(
            f"{WHERE}.{what}: operands of dtype {a.dtype}; tropical_gemm supports "
            f"{type_list(n for n in ELEMENT_TYPES if n != BOOLEAN.name)}: convert them first"
        )
    if first[2] == -2:
        raise InvalidArgumentError(
            f"{WHERE}.{what}: a is {a.dtype} but b is {b.dtype}: both must have the same dtype; convert one"
        )
    return Shards(rank, world, [tuple(r[8:10]) for r in rows], [tuple(r[10:12]) for r in rows])


def _rows_cols(t: Tensor) -> tuple[int, int]:
    return (t.shape[0], t.shape[1]) if t.dim() == 2 else (0, 0)


def _describe(field: int, value: int) -> str:
    if field == 0:
        return repr(SPLITS[value]) if value >= 0 else "an unknown split"
    if field == 1:
        names = {v: k for k, v in SEMIRINGS.items()}
        return repr(names.get(value, "an unknown semiring"))
    if field == 2:
        names = {t.value: t.name for t in ELEMENT_TYPES.values()}
        return names.get(value, "an unsupported dtype")
    if field == 3:
        return "return_argmax=True" if value else "return_argmax=False"
    return str(value)


def gather_all(local: Tensor, group) -> list[Tensor]:
    """Every rank's `local` (same number of dimensions and dtype; sizes may differ), in rank order.
    all_gather wants equal sizes, so each is padded to the largest in every dimension and trimmed after."""
    device = local.device
    shape = torch.tensor(list(local.shape), dtype=torch.int64, device=device)
    world = dist.get_world_size(group)
    shapes = [torch.empty_like(shape) for _ in range(world)]
    dist.all_gather(shapes, shape, group=group)
    shapes = [s.tolist() for s in shapes]
    largest = [max(s[d] for s in shapes) for d in range(local.dim())]
    padded = local.new_zeros(largest)
    padded[tuple(slice(0, n) for n in local.shape)] = local
    pieces = [torch.empty_like(padded) for _ in range(world)]
    dist.all_gather(pieces, padded, group=group)
    return [p[tuple(slice(0, n) for n in s)] for p, s in zip(pieces, shapes)]
