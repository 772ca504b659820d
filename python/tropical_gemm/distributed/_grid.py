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
from itertools import accumulate

import torch
import torch.distributed as dist

from .._native import InvalidArgumentError
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


def product(a, b, semiring, group, shards, shape, want_argmax: bool, panel_width):
    rows, cols = shape
    if panel_width is not None and int(panel_width) < 1:
        raise InvalidArgumentError(
            f"{WHERE}.matmul: panel_width must be a positive number of columns, got {panel_width}"
        )
    m_cut, n_cut, ka, kb = _block_sizes(shards, rows, cols)
    p, q = divmod(shards.rank, cols)
    row_groups, col_groups = _line_groups(group, rows, cols)
    ranks = dist.get_process_group_ranks(group)
    plan = segments(ka, kb, int(panel_width) if panel_width else None)
    if not plan:  # K = 0: the zero everywhere, as the local product of empty blocks says
        return local_matmul(a[:, :0], b[:0, :], semiring, return_argmax=want_argmax)

    def post(segment):
        """This segment's A and B panels, arriving (or here already), and the works to wait for."""
        start, stop, qa, pb, a_first, b_first = segment
        works = []
        if q == qa:
            a_panel = a[:, start - a_first:stop - a_first]
        else:
            a_panel = a.new_empty(m_cut[p], stop - start)
        if row_groups[p] is not None and a_panel.numel():  # a grid row of no rows sends nothing, on every member
            a_panel = a_panel.contiguous()
            works.append(dist.broadcast(a_panel, src=ranks[p * cols + qa], group=row_groups[p], async_op=True))
        if p == pb:
            b_panel = b[start - b_first:stop - b_first]
        else:
            b_panel = b.new_empty(stop - start, n_cut[q])
        if col_groups[q] is not None and b_panel.numel():
            b_panel = b_panel.contiguous()
            works.append(dist.broadcast(b_panel, src=ranks[pb * cols + q], group=col_groups[q], async_op=True))
        return a_panel, b_panel, works

    is_max = plus_is_max(semiring)
    c = k = None
    arriving = post(plan[0])
    for index, segment in enumerate(plan):
        a_panel, b_panel, works = arriving
        if index + 1 < len(plan):
            arriving = post(plan[index + 1])
        for work in works:
            work.wait()
        if want_argmax:
            part, part_k = local_matmul(a_panel, b_panel, semiring, return_argmax=True)
            part_k = torch.where(part_k >= 0, part_k + segment[0], part_k)
        else:
            part, part_k = local_matmul(a_panel, b_panel, semiring), None
        c, k = (part, part_k) if c is None else combine_in_order(c, k, part, part_k, is_max)
    return (c, k) if want_argmax else c
