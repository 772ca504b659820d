"""The 2-D split: ranks on a grid of rows x columns, each holding one block of A, of B and of C, so
that no rank ever holds a whole operand (SUMMA's schedule, with (+) in place of the sum).

Rank (p, q) owns A[rows p, K-columns q], B[K-rows p, columns q] and computes C[rows p, columns q]
= (+) over K of A[rows p, :] (x) B[:, columns q]. K is walked in segments: each segment lies inside
one block of A's K-cut (owned by grid column qa) and one of B's (grid row pb), so the A panel is
broadcast along grid row p from (p, qa) and the B panel along grid column q from (pb, q). The next
segment's broadcasts are posted before the current segment is multiplied, so that communication
overlaps the product; at most two segments' panels are alive.
"""

from __future__ import annotations

import atexit
import bisect
from dataclasses import dataclass
from itertools import accumulate

import torch
import torch.distributed as dist

from .. import ops
from .._native import GRADIENT_READS, SEMIRINGS, InvalidArgumentError
from ..functional import matmul as local_matmul
from ._group import WHERE
from ._keys import combine_in_order, plus_is_max

# (rows, columns, ranks) -> (default group, its row groups, its column groups); made once per grid.
_LINE_GROUPS: dict = {}
# Let go of the groups while the interpreter is whole: a gloo group destroyed during its
# finalisation can abort the process ("terminate called without an active exception").
atexit.register(_LINE_GROUPS.clear)


def _line_groups(group, rows: int, cols: int):
    """The process groups of each grid row and column (None for a line of one rank: nothing to send).
    torch.distributed.new_group must be entered by every process of the job, in the same order, so
    the grid is made over groups that hold every process, and every rank makes every line's group."""
    if dist.get_world_size(group) != dist.get_world_size():
        raise InvalidArgumentError(
            f"{WHERE}.matmul(split='grid') needs a group of every process of the job (its row and column "
            f"groups are made with torch.distributed.new_group, which every process must enter); this group "
            f"has {dist.get_world_size(group)} of {dist.get_world_size()}: use split='k' or 'm' on a subgroup"
        )
    world_group = dist.group.WORLD
    key = (rows, cols, tuple(dist.get_process_group_ranks(group)))
    cached = _LINE_GROUPS.get(key)
    if cached is not None and cached[0] is world_group:  # a new default group (re-initialised) needs new lines
        return cached[1], cached[2]
    ranks = dist.get_process_group_ranks(group)
    row_groups = [dist.new_group([ranks[p * cols + q] for q in range(cols)]) if cols > 1 else None
                  for p in range(rows)]
    col_groups = [dist.new_group([ranks[p * cols + q] for p in range(rows)]) if rows > 1 else None
                  for q in range(cols)]
    _LINE_GROUPS[key] = (world_group, row_groups, col_groups)
    return row_groups, col_groups


def _block_sizes(shards, rows: int, cols: int):
    """(rows of each grid row's blocks, columns of each grid column's, A's K cut, B's K cut), after
    checking that the blocks of every grid row and column fit together."""
    a, b = shards.a_shapes, shards.b_shapes

    def at(p, q):
        return p * cols + q

    def same(values, what, line):
        for i, v in enumerate(values):
            if v != values[0]:
                raise InvalidArgumentError(
                    f"{WHERE}.matmul(split='grid'): {what} differ along {line}: {values} (rank order); the blocks "
                    f"of a grid {line.split()[1]} must share it. Cut the operands with shard_operands(a, b, 'grid')"
                )
        return values[0]

    m_cut = [same([a[at(p, q)][0] for q in range(cols)], "a's rows", f"grid row {p}") for p in range(rows)]
    n_cut = [same([b[at(p, q)][1] for p in range(rows)], "b's columns", f"grid column {q}") for q in range(cols)]
    ka = [same([a[at(p, q)][1] for p in range(rows)], "a's columns (A's cut of K)", f"grid column {q}")
          for q in range(cols)]
    kb = [same([b[at(p, q)][0] for q in range(cols)], "b's rows (B's cut of K)", f"grid row {p}") for p in range(rows)]
    if sum(ka) != sum(kb):
        raise InvalidArgumentError(
            f"{WHERE}.matmul(split='grid'): A's blocks have {sum(ka)} columns in all ({ka}) but B's have {sum(kb)} "
            f"rows ({kb}): both must cut the same K"
        )
    return m_cut, n_cut, ka, kb


def segments(ka: list[int], kb: list[int], width: int | None):
    """(start, stop, grid column owning A's panel, grid row owning B's panel) for each segment of K,
    in order: the cuts of both operands, and pieces of at most `width`."""
    a_bounds, b_bounds = [0, *accumulate(ka)], [0, *accumulate(kb)]
    cuts = sorted(set(a_bounds) | set(b_bounds))
    out = []
    for start, stop in zip(cuts, cuts[1:]):
        qa = bisect.bisect_right(a_bounds, start) - 1  # the last block starting at or before: never an empty one
        pb = bisect.bisect_right(b_bounds, start) - 1
        step = width or (stop - start)
        for s in range(start, stop, step):
            out.append((s, min(s + step, stop), qa, pb, a_bounds[qa], b_bounds[pb]))
    return out


@dataclass(frozen=True)
class _Grid:
    """This rank's place on the grid and the walk over K, checked and derived once per call."""

    p: int
    q: int
    cols: int
    m_here: int  # rows of this grid row's blocks
    n_here: int  # columns of this grid column's blocks
    row_group: object  # this grid row's group (None: a row of one rank)
    col_group: object
    ranks: list
    plan: list  # segments()

    def a_owner(self, qa: int) -> int:
        return self.ranks[self.p * self.cols + qa]

    def b_owner(self, pb: int) -> int:
        return self.ranks[pb * self.cols + self.q]


def _grid(group, shards, shape, panel_width) -> _Grid:
    rows, cols = shape
    if panel_width is not None and int(panel_width) < 1:
        raise InvalidArgumentError(
            f"{WHERE}.matmul: panel_width must be a positive number of columns, got {panel_width}"
        )
    m_cut, n_cut, ka, kb = _block_sizes(shards, rows, cols)
    p, q = divmod(shards.rank, cols)
    row_groups, col_groups = _line_groups(group, rows, cols)
    return _Grid(p, q, cols, m_cut[p], n_cut[q], row_groups[p], col_groups[q], dist.get_process_group_ranks(group),
                 segments(ka, kb, int(panel_width) if panel_width else None))


def _panels(a, b, grid: _Grid, fetch_a: bool = True, fetch_b: bool = True):
    """Yields (segment, A panel, B panel) in k order. Each panel arrives from its owner (broadcast
    along the grid row, or column); the next segment's broadcasts are posted before the current
    segment is handed out. A panel not fetched is left unset (its shape only), on every member of
    its line alike."""

    def post(segment):
        start, stop, qa, pb, a_first, b_first = segment
        works = []
        if grid.q == qa:
            a_panel = a[:, start - a_first:stop - a_first]
        else:
            a_panel = a.new_empty(grid.m_here, stop - start)
        if fetch_a and grid.row_group is not None and a_panel.numel():  # a line of no rows sends nothing
            a_panel = a_panel.contiguous()
            works.append(dist.broadcast(a_panel, src=grid.a_owner(qa), group=grid.row_group, async_op=True))
        if grid.p == pb:
            b_panel = b[start - b_first:stop - b_first]
        else:
            b_panel = b.new_empty(stop - start, grid.n_here)
        if fetch_b and grid.col_group is not None and b_panel.numel():
            b_panel = b_panel.contiguous()
            works.append(dist.broadcast(b_panel, src=grid.b_owner(pb), group=grid.col_group, async_op=True))
        return a_panel, b_panel, works

    arriving = post(grid.plan[0]) if grid.plan else None
    for index, segment in enumerate(grid.plan):
        a_panel, b_panel, works = arriving
        if index + 1 < len(grid.plan):
            arriving = post(grid.plan[index + 1])
        for work in works:
            work.wait()
        yield segment, a_panel, b_panel


def product(a, b, semiring, group, shards, shape, want_argmax: bool, panel_width):
    grid = _grid(group, shards, shape, panel_width)
    if not grid.plan:  # K = 0: the zero everywhere, as the local product of empty blocks says
        return local_matmul(a[:, :0], b[:0, :], semiring, return_argmax=want_argmax)
    is_max = plus_is_max(semiring)
    c = k = None
    for segment, a_panel, b_panel in _panels(a, b, grid):
        if want_argmax:
            part, part_k = local_matmul(a_panel, b_panel, semiring, return_argmax=True)
            part_k = torch.where(part_k >= 0, part_k + segment[0], part_k)
        else:
            part, part_k = local_matmul(a_panel, b_panel, semiring), None
        c, k = (part, part_k) if c is None else combine_in_order(c, k, part, part_k, is_max)
        # Dropped before the next segment's product allocates its own: held across it, a block the
        # size of C would live twice beside C (a fourth block of the README's three, which ran the
        # largest APSP graph on two H200s out of memory).
        del part, part_k
    return (c, k) if want_argmax else c


def _sum_to(owner: int, part, line_group, mine):
    """Adds the line's parts of one panel's gradient into the owner's block (`mine`, a view of it):
    the transpose of the panel's broadcast. A line of one rank is its own owner."""
    if line_group is not None and part.numel():
        dist.reduce(part, dst=owner, op=dist.ReduceOp.SUM, group=line_group)
    if mine is not None:
        mine += part


class GridProduct(torch.autograd.Function):
    """The grid split with a gradient. Forward as product(), keeping the argmax. Backward walks K
    again: for each segment, this rank routes its block of grad_C through the argmax entries that
    fall in the segment (the package's backward ops, on that segment's panels), and the parts of
    each panel's gradient are summed along the grid line to the panel's owner, which adds them to
    its block of grad_A or grad_B. Panels are fetched again only where the semiring's gradient
    reads operand values (MaxMul, MaxMin, MinMax); no rank ever holds more than in the forward.
    grad_C is each rank's block as it arrives (every rank must call backward, as in DDP)."""

    @staticmethod
    def forward(ctx, a, b, semiring, group, shards, shape, panel_width):
        c, k = product(a, b, semiring, group, shards, shape, True, panel_width)
        ctx.save_for_backward(a, b, k)
        ctx.call = (semiring, group, shards, shape, panel_width)
        ctx.mark_non_differentiable(k)
        return c, k

    @staticmethod
    def backward(ctx, grad_c, _grad_k):
        a, b, k = ctx.saved_tensors
        semiring, group, shards, shape, panel_width = ctx.call
        grid = _grid(group, shards, shape, panel_width)
        grad_a, grad_b = torch.zeros_like(a), torch.zeros_like(b)
        grad_c = grad_c.contiguous()
        code = SEMIRINGS[semiring]
        fetch_a = GRADIENT_READS[code, "a"][0] or GRADIENT_READS[code, "b"][0]
        fetch_b = GRADIENT_READS[code, "a"][1] or GRADIENT_READS[code, "b"][1]
        for segment, a_panel, b_panel in _panels(a.detach(), b.detach(), grid, fetch_a, fetch_b):
            start, stop, qa, pb, a_first, b_first = segment
            here = torch.where((k >= start) & (k < stop), k - start, torch.full_like(k, -1))
            part_a = ops.gemm_backward_a(grad_c, here, a_panel, b_panel, semiring)
            part_b = ops.gemm_backward_b(grad_c, here, a_panel, b_panel, semiring)
            _sum_to(grid.a_owner(qa), part_a, grid.row_group,
                    grad_a[:, start - a_first:stop - a_first] if grid.q == qa else None)
            _sum_to(grid.b_owner(pb), part_b, grid.col_group,
                    grad_b[start - b_first:stop - b_first] if grid.p == pb else None)
        return (grad_a if ctx.needs_input_grad[0] else None, grad_b if ctx.needs_input_grad[1] else None,
                None, None, None, None, None)
