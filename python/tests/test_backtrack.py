"""tropical_gemm.backtrack (torch.ops.tropical.backtrack), the walk back of a Viterbi decoder, against a
plain NumPy walk of its rule on planted paths (tables of random in-range states with a random path
planted in each row, so that the paths are known by construction): no steps, no rows, one state, no
states; indices outside [0, S) that end a walk with -1; transposed, sliced, permuted and copied
layouts; a decoder's chain of matmul steps; errors; torch.compile. On CUDA (marked gpu) the same,
a device mismatch and a CUDA graph's replay. opcheck: test_opcheck.backtrack_samples."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
import tropical_gemm as tg  # noqa: E402

T = torch.ops.tropical
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]
# (steps T, rows B, states S): one of each, an empty chain, no rows, one state, more rows than a block.
SHAPES = [(1, 1, 1), (5, 3, 4), (40, 17, 9), (0, 4, 3), (6, 0, 5), (7, 5, 1), (3, 300, 64)]


def walk(back, last) -> np.ndarray:
    """The rule, in plain NumPy: path[b, T] = last[b], path[b, t] = back[t, b, path[b, t + 1]]; the first
    index outside [0, S) and every earlier entry of its row are -1."""
    back, last = np.asarray(back), np.asarray(last).reshape(-1)
    steps, rows, states = back.shape
    path = np.full((rows, steps + 1), -1, dtype=np.int32)
    for b in range(rows):
        state = last[b]
        for t in range(steps, -1, -1):
            if not 0 <= state < states:
                break
            path[b, t] = state
            if t > 0:
                state = back[t - 1, b, state]
    return path


def planted(steps, rows, states, seed=0):
    """(back, last, path): random paths, and tables of random states with each row's path planted."""
    rng = np.random.default_rng(seed)
    path = rng.integers(0, states, (rows, steps + 1), dtype=np.int32)
    back = rng.integers(0, states, (steps, rows, states), dtype=np.int32)
    for t in range(steps):
        back[t, np.arange(rows), path[:, t + 1]] = path[:, t]
    return torch.from_numpy(back), torch.from_numpy(path[:, steps].copy()), torch.from_numpy(path)


def check(back, last, want, device):
    """backtrack on `device` gives `want` (and the NumPy walk does too)."""
    got = tg.backtrack(back.to(device), last.to(device))
    assert got.dtype == torch.int32 and got.device.type == device and got.shape == (back.shape[1], back.shape[0] + 1)
    np.testing.assert_array_equal(walk(back, last), want.numpy())
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("steps,rows,states", SHAPES)
def test_planted_paths(device, steps, rows, states):
    back, last, want = planted(steps, rows, states, seed=steps + rows + states)
    check(back, last, want, device)
    check(back, last[:, None], want, device)  # last as a column, as matmul(..., return_argmax=True) gives it


@pytest.mark.parametrize("device", DEVICES)
def test_an_index_outside_the_states_ends_the_walk(device):
    steps, states = 6, 4
    back, last, want = planted(steps, 6, states, seed=1)
    want = want.clone()
    last[0], want[0] = -1, -1  # a final state outside [0, S): the whole row
    last[1], want[1] = states, -1
    for row, step, bad in ((2, 3, -1), (3, 1, states), (4, 0, 2**31 - 1), (5, steps - 1, -(2**31))):
        back[step, row, want[row, step + 1]] = bad  # the pointer to step `step`: it and the earlier ones
        want[row, : step + 1] = -1
    check(back, last, want, device)
    # No states at all: every index is outside.
    check(torch.empty(3, 2, 0, dtype=torch.int32), torch.zeros(2, dtype=torch.int32),
          torch.full((2, 4), -1, dtype=torch.int32), device)


@pytest.mark.parametrize("device", DEVICES)
def test_layouts(device):
    steps, rows, states = 5, 12, 7
    back, last, want = planted(steps, rows, states, seed=2)
    col_major = back.transpose(1, 2).contiguous().transpose(1, 2)  # each table column-major
    check(col_major, last, want, device)
    check(back[:, ::2], last[::2], want[::2], device)  # a sliced batch: rows 2 S apart
    check(back.permute(1, 0, 2).contiguous().permute(1, 0, 2), last, want, device)  # tables S apart, ld T S
    interleaved = torch.zeros(steps, 2, rows, states, dtype=torch.int32)
    interleaved[:, 0] = back
    check(interleaved[:, 0], last, want, device)  # tables 2 B S apart
    wide = torch.zeros(steps, rows, 2 * states, dtype=torch.int32)
    wide[..., ::2] = back
    check(wide[..., ::2], last, want, device)  # no stride of 1: copied first
    check(back, torch.stack([last, -last], 1)[:, 0], want, device)  # last strided
    # One table for every step (a batch stride of 0): against the NumPy walk.
    same = back[:1].expand(steps, rows, states)
    check(same, last, torch.from_numpy(walk(same, last)), device)


@pytest.mark.parametrize("device", DEVICES)
def test_decodes_a_viterbi_chain(device):
    # v_{t+1}, back[t] = v_t (x) W_t with argmax: the walk back from the best final state gives a path
    # whose score, summed along it, is the best final score.
    g = torch.Generator().manual_seed(3)
    steps, rows, states = 8, 6, 5
    v0 = torch.randn(rows, states, generator=g, dtype=torch.float64).to(device)
    w = torch.randn(steps, states, states, generator=g, dtype=torch.float64).to(device)
    v, backs = v0, []
    for t in range(steps):
        v, idx = tg.matmul(v, w[t], "maxplus", return_argmax=True)
        backs.append(idx)
    best, last = tg.matmul(v, v.new_zeros(states, 1), "maxplus", return_argmax=True)
    path = tg.backtrack(torch.stack(backs), last).cpu()
    assert torch.equal(path[:, steps], v.argmax(-1).int().cpu())
    score = v0.cpu()[torch.arange(rows), path[:, 0]]
    for t in range(steps):
        score = score + w[t].cpu()[path[:, t], path[:, t + 1]]
    torch.testing.assert_close(score, best[:, 0].cpu())


def test_errors_say_what_to_do():
    back, last, _ = planted(3, 5, 4)
    with pytest.raises(tg.InvalidArgumentError, match=r"back must hold int32 .* not torch.int64; convert it with .int"):
        tg.backtrack(back.long(), last)
    with pytest.raises(tg.InvalidArgumentError, match=r"last must hold int32 .* not torch.float32"):
        tg.backtrack(back, last.float())
    with pytest.raises(tg.InvalidArgumentError, match=r"back must be 3-D, \(T, B, S\).* it is 2-D \(5, 4\)"):
        tg.backtrack(back[0], last)
    with pytest.raises(tg.InvalidArgumentError, match=r"last is \(4,\) but must be \(5,\) or \(5, 1\)"):
        tg.backtrack(back, last[:4])  # one row short
    with pytest.raises(tg.InvalidArgumentError, match=r"last is \(5, 2\) but must be"):
        tg.backtrack(back, torch.stack([last, last], 1))
    with pytest.raises(tg.InvalidArgumentError, match=r"last is \(\) but must be"):
        tg.backtrack(back, last[0])
    with pytest.raises(tg.InvalidArgumentError, match=r"back is on cpu but last is on meta: .*\.to\(back.device\)"):
        T.backtrack(back, last.to("meta"))


def test_meta_tensors_give_the_shape():
    path = T.backtrack(torch.empty(7, 3, 5, dtype=torch.int32, device="meta"),
                       torch.empty(3, 1, dtype=torch.int32, device="meta"))
    assert path.shape == (3, 8) and path.dtype == torch.int32 and path.device.type == "meta"


@pytest.mark.parametrize("device", DEVICES)
def test_torch_compile_traces_a_decoder(device):
    def decode(v, w):
        backs = []
        for t in range(w.shape[0]):
            v, idx = tg.matmul(v, w[t], "maxplus", return_argmax=True)
            backs.append(idx)
        _, last = tg.matmul(v, v.new_zeros(v.shape[1], 1), "maxplus", return_argmax=True)
        return tg.backtrack(torch.stack(backs), last)

    torch._dynamo.reset()
    g = torch.Generator().manual_seed(4)
    v0, w = torch.randn(6, 5, generator=g).to(device), torch.randn(4, 5, 5, generator=g).to(device)
    compiled = torch.compile(decode, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(v0, w), decode(v0, w))
    # The op alone, with dynamic shapes: the fake implementation's (B, T + 1) in symbols.
    torch._dynamo.reset()
    op = torch.compile(lambda b, l: T.backtrack(b, l), fullgraph=True, dynamic=True, backend="aot_eager")
    for steps, rows in ((3, 4), (5, 7), (9, 2)):
        back, last, want = planted(steps, rows, 6, seed=steps)
        assert torch.equal(op(back.to(device), last.to(device)).cpu(), want)


# --- CUDA -------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_cuda_refuses_tensors_on_two_devices():
    back, last, _ = planted(3, 5, 4)
    with pytest.raises(tg.InvalidArgumentError, match=r"back is on cuda:0 but last is on cpu"):
        tg.backtrack(back.cuda(), last)


@pytest.mark.gpu
def test_cuda_graph_replays_on_new_tables():
    steps, rows, states = 16, 300, 32
    back, last, _ = planted(steps, rows, states, seed=5)
    back, last = back.cuda(), last.cuda()
    side = torch.cuda.Stream()  # a first call outside the capture, on a side stream, as PyTorch advises
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        tg.backtrack(back, last)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        path = tg.backtrack(back, last)
    for replay in range(2):
        if replay:  # new tables in the static inputs: the replay must read them
            new_back, new_last, _ = planted(steps, rows, states, seed=6)
            back.copy_(new_back)
            last.copy_(new_last)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(path.cpu(), tg.backtrack(back.cpu(), last.cpu())), f"replay {replay}"
