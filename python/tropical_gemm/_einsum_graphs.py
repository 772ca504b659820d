"""``tropical_gemm.einsum(..., cuda_graph=True)``: a network's steps captured once into a CUDA graph,
then replayed.

A network of hundreds of small steps spends its time on the host: each step is a C ABI call, two
allocations and, where strides need it, a copy, some 40 µs against 3 µs of kernel. A graph replays
every launch in one call. The graph reads fixed input tensors and writes a fixed result: each call
copies the operands in (one multi-tensor copy), replays, and returns a clone of the result, so
that nothing a caller holds aliases the graph's memory.

The graph is captured on a side stream after one eager run of the same steps (which compiles or
loads every kernel, and lets the program learn which steps need a copy), with the capture mode
"thread_local" so that other threads' CUDA work does not break it. A replay runs on the caller's
current stream; a lock and an event per graph keep two callers (threads or streams) from
overwriting its inputs while the other's replay may still read them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import torch
from torch import Tensor

from ._native import InvalidArgumentError

_KEEP = 8  # graphs kept, most recently used first out of the eviction
_graphs: OrderedDict = OrderedDict()
_lock = threading.Lock()


class _Graph:
    def __init__(self, program, operands, execute, device: torch.device):
        self.program = program  # alive while its graph is: the key holds its id
        # The graph's inputs: dense tensors of the operands' shapes (the copy in takes any strides).
        self.inputs = [torch.empty(t.shape, dtype=t.dtype, device=device) for t in operands]
        torch._foreach_copy_(self.inputs, list(operands))
        side = torch.cuda.Stream(device)
        side.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(side):
            execute(self.inputs)  # the eager run: kernels loaded, the steps that copy learned
        torch.cuda.current_stream(device).wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
            self.output = execute(self.inputs)
        self.lock = threading.Lock()
        self.done = None  # the event after the last replay's clone, on the stream that replayed

    def replay(self, operands) -> Tensor:
        with self.lock:
            stream = torch.cuda.current_stream(self.output.device)
            if self.done is not None:
                stream.wait_event(self.done)  # the last replay, maybe on another stream, has read its inputs
            torch._foreach_copy_(self.inputs, list(operands))
            self.graph.replay()
            result = self.output.clone()
            self.done = torch.cuda.Event()
            self.done.record(stream)
            return result


def check(operands, grad: bool, direct: bool) -> None:
    """Refuses what a replay cannot serve, saying what to do instead."""
    where = "tropical_gemm.einsum(..., cuda_graph=True)"
    if operands[0].device.type != "cuda":
        raise InvalidArgumentError(f"{where} replays CUDA work, and the operands are on "
                                   f"{operands[0].device}: move them to a GPU or leave cuda_graph off")
    if grad:
        raise InvalidArgumentError(f"{where} replays a forward without autograd, and an operand requires grad: "
                                   f"call it under torch.no_grad(), or leave cuda_graph off to get gradients")
    if not direct:
        raise InvalidArgumentError(f"{where} needs plain tensors outside torch.compile, modes and transforms "
                                   f"(torch.compile(mode='reduce-overhead') captures graphs of its own): "
                                   f"leave cuda_graph off there")


def replay(key, program, operands, execute) -> Tensor:
    """The result of `execute(operands)`, from the graph of `key` (the program's id, semiring, dtype
    and device), captured on its first use. Runs eagerly inside a capture that the caller makes:
    that capture records the steps itself."""
    device = operands[0].device
    if torch.cuda.is_current_stream_capturing():
        return execute(operands)
    with _lock:
        graph = _graphs.get(key)
        if graph is not None:
            _graphs.move_to_end(key)
    if graph is None:
        with torch.cuda.device(device):
            graph = _Graph(program, operands, execute, device)
        with _lock:
            graph = _graphs.setdefault(key, graph)
            while len(_graphs) > _KEEP:
                _graphs.popitem(last=False)
    return graph.replay(operands)


def clear() -> None:
    """Frees every graph that ``einsum(..., cuda_graph=True)`` keeps, with its GPU memory (after the
    replays already queued have run)."""
    with _lock:
        _graphs.clear()
