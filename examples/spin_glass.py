"""The ground state of a +-J spin glass on an L x L square lattice, as a MinPlus tensor network.

    python examples/spin_glass.py --size 16        # on the GPU if there is one
    python examples/spin_glass.py --size 4         # small: checked by brute force

Spins s_i = +-1 sit on the sites of an L x L lattice with open boundaries; each bond (i, j) between
neighbours has a coupling J_ij = +-1 drawn at random, and the energy of a configuration is
E(s) = -sum over bonds of J_ij s_i s_j. In MinPlus (min, +), each bond is a 2 x 2 matrix
-J_ij s_i s_j over the two states of its spins, and each site a vector [0, 0] (the semiring's one,
there only so that the gradient can name its spin); their tropical einsum over every index is the
minimum over configurations of E: the ground-state energy.

Its gradient with respect to each site's vector is 1 at the spin state of one ground state (the
backward pass follows the argmin of each pairwise product), so the configuration is read off the
gradient and checked: its energy, computed directly, is the ground-state energy; and for L <= 4 no
configuration has less, by trying all 2^(L*L).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import tropical_gemm as tg

SPIN = np.array([-1, 1])  # index 0 is spin -1, index 1 is spin +1


def lattice_bonds(size: int) -> list[tuple[int, int]]:
    """The bonds of an open size x size lattice; site (r, c) is r * size + c."""
    bonds = []
    for r in range(size):
        for c in range(size):
            if c + 1 < size:
                bonds.append((r * size + c, r * size + c + 1))
            if r + 1 < size:
                bonds.append((r * size + c, (r + 1) * size + c))
    return bonds


def energy(spins: np.ndarray, bonds, couplings) -> float:
    """E(s) = -sum J_ij s_i s_j for +-1 spins (a row of them, or one per row of a matrix)."""
    u, v = np.array(bonds).T
    return -(couplings * spins[..., u] * spins[..., v]).sum(-1)


def ground_energy_by_brute_force(sites: int, bonds, couplings) -> float:
    states = (np.arange(1 << sites)[:, None] >> np.arange(sites)) & 1
    return float(energy(SPIN[states], bonds, couplings).min())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10, help="L, the side of the lattice (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--optimize", default="auto", help="einsum's planner: auto, greedy, random-greedy, cotengra, ...")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    sites = args.size * args.size
    bonds = lattice_bonds(args.size)
    couplings = rng.choice([-1.0, 1.0], size=len(bonds))
    device, dtype = torch.device(args.device), torch.float32  # energies are small integers: exact in float32

    pair = np.outer(SPIN, SPIN)  # s_i s_j over the four states of a bond
    bond_tensors = [torch.tensor(-j * pair, dtype=dtype, device=device) for j in couplings]
    site_tensors = [torch.zeros(2, dtype=dtype, device=device, requires_grad=True) for _ in range(sites)]
    network = [x for i, t in enumerate(site_tensors) for x in (t, [i])]
    network += [x for (i, j), t in zip(bonds, bond_tensors) for x in (t, [i, j])]

    start = time.perf_counter()
    ground = tg.einsum(*network, [], semiring="minplus", optimize=args.optimize)
    ground.backward()
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start

    states = np.array([int(t.grad.argmax()) for t in site_tensors])
    spins = SPIN[states]
    print(f"+-J spin glass on a {args.size} x {args.size} lattice, {len(bonds)} bonds, seed {args.seed}, on {device}")
    print(f"ground-state energy: {ground.item():.0f} ({seconds * 1e3:.1f} ms, forward and backward)")
    print("one ground state, from the gradient:")
    for r in range(args.size):
        print("  " + " ".join("+" if s > 0 else "-" for s in spins[r * args.size:(r + 1) * args.size]))

    assert all(t.grad.sum().item() == 1 for t in site_tensors), "each site's gradient marks exactly one state"
    found = energy(spins, bonds, couplings)
    assert found == ground.item(), f"the configuration read off the gradient has energy {found}"
    print(f"checked: the configuration's energy, computed directly, is {found:.0f}")
    if sites <= 16:
        best = ground_energy_by_brute_force(sites, bonds, couplings)
        assert best == ground.item(), f"brute force finds {best}"
        print(f"checked by brute force over all {1 << sites} configurations: {best:.0f}")


if __name__ == "__main__":
    main()
