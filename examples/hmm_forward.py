"""The forward algorithm of a hidden Markov model in log space, as a chain of LogPlus products.

    python examples/hmm_forward.py                          # 256 states, 64 sequences of 512 steps
    python examples/hmm_forward.py --states 16 --steps 40   # small, e.g. on the CPU

An HMM with S states has an initial distribution pi, a transition matrix T (S x S) and emission
probabilities E (S x V over V symbols). The probability of an observed sequence o_0 ... o_{L-1} is
sum over the hidden paths, computed by the forward algorithm:

    alpha_0[j] = pi[j] E[j, o_0],    alpha_{t+1}[j] = (sum_i alpha_t[i] T[i, j]) E[j, o_{t+1}]

Its probabilities underflow any float within a few hundred steps, so it runs in log space, where the
sum of products is the LogPlus product: with a = log alpha for a batch of sequences (one row each),

    a_{t+1} = (a_t (x) log T) + log E[:, o_{t+1}]      (x): C[b,j] = log sum_i exp(a[b,i] + logT[i,j])

Each step is one tropical_gemm.matmul(a, log_t, "logplus") and one addition; on the GPU the whole
chain is captured once in a CUDA graph and replayed, and the time per step is printed. The log
likelihoods are checked against a float64 NumPy forward pass.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import tropical_gemm as tg


def random_hmm(states: int, symbols: int, rng: np.random.Generator):
    """log pi, log T, log E of a random HMM (Dirichlet rows; T's rows concentrated on a few states)."""
    log_pi = np.log(rng.dirichlet(np.ones(states)))
    log_t = np.log(rng.dirichlet(np.full(states, 0.1), size=states) + 1e-300)
    log_e = np.log(rng.dirichlet(np.ones(symbols), size=states))
    return log_pi, log_t, log_e


def forward_numpy(log_pi, log_t, log_e, obs) -> np.ndarray:
    """The log likelihood of each sequence (a row of obs), in float64 with NumPy alone."""
    a = log_pi[None, :] + log_e[:, obs[:, 0]].T
    for t in range(1, obs.shape[1]):
        terms = a[:, :, None] + log_t[None, :, :]  # [b, i, j]
        top = terms.max(axis=1)
        a = top + np.log(np.exp(terms - top[:, None, :]).sum(axis=1)) + log_e[:, obs[:, t]].T
    top = a.max(axis=1)
    return top + np.log(np.exp(a - top[:, None]).sum(axis=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=256)
    parser.add_argument("--sequences", type=int, default=64)
    parser.add_argument("--steps", type=int, default=512)
    parser.add_argument("--symbols", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--replays", type=int, default=20, help="timed replays of the captured chain (GPU)")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    log_pi, log_t, log_e = random_hmm(args.states, args.symbols, rng)
    obs = rng.integers(0, args.symbols, size=(args.sequences, args.steps))
    want = forward_numpy(log_pi, log_t, log_e, obs)

    device = torch.device(args.device)
    dtype = torch.float32
    t_log = torch.tensor(log_t, dtype=dtype, device=device)
    # The emissions of every step, gathered once: emit[t] is sequences x states.
    emit = torch.tensor(np.ascontiguousarray(log_e[:, obs].transpose(2, 1, 0)), dtype=dtype, device=device)
    start = torch.tensor(log_pi, dtype=dtype, device=device)[None, :] + emit[0]

    def chain() -> torch.Tensor:
        alpha = start
        for t in range(1, args.steps):
            alpha = tg.matmul(alpha, t_log, "logplus")  # a fresh tensor each step (in a graph: its pool)
            alpha.add_(emit[t])
        return alpha

    alpha = chain()  # compiles the kernels (and warms up) before a capture
    per_step_us = None
    if device.type == "cuda":
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            alpha = chain()  # replays write this tensor
        graph.replay()
        torch.cuda.synchronize()
        began = time.perf_counter()
        for _ in range(args.replays):
            graph.replay()
        torch.cuda.synchronize()
        per_step_us = (time.perf_counter() - began) / args.replays / (args.steps - 1) * 1e6
    got = torch.logsumexp(alpha.double(), dim=1).cpu().numpy()

    worst = float(np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want))))
    print(f"{args.sequences} sequences x {args.steps} steps, {args.states} states, on {device}")
    print(f"log likelihood of sequence 0: {got[0]:.4f} (float64 NumPy: {want[0]:.4f})")
    print(f"largest relative difference from NumPy over all sequences: {worst:.2e}")
    if per_step_us is not None:
        print(f"per step in a CUDA graph ({args.sequences}x{args.states} (x) {args.states}x{args.states}"
              f" and the emissions): {per_step_us:.2f} us")
    # f32 rounds each step's logarithms at about 1e-7 of their size; over the chain that stays far
    # below this bound (the products themselves are within 1e-5 * max(1, |C|)).
    assert worst < 1e-4, f"the GPU's log likelihoods differ from NumPy's by {worst:.2e}"
    print("ok: matches the float64 NumPy forward pass")


if __name__ == "__main__":
    main()
