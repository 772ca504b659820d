"""tropical_gemm.distributed on CPUs: process groups of 2 and 4 ranks on the gloo backend, started
once per group size (distributed_worker.py runs every check in each rank and reports each one);
every split, semiring and dtype against the single-process product, argmax ties across ranks,
uneven and empty shards, gradients, errors; the APSP example under torchrun. NCCL on 2 GPUs runs
the same checks where there are 2 GPUs (marked gpu)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("this PyTorch has no torch.distributed with gloo", allow_module_level=True)

import tropical_gemm as tg  # noqa: E402
import tropical_gemm.distributed as td  # noqa: E402
from distributed_worker import CHECK_NAMES  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(HERE, "distributed_worker.py")
TIMEOUT = 300  # seconds for a whole group's run; each collective also gives up after 60 s


def run_group(world: int, tmp, backend: str = "gloo") -> dict:
    """Starts `world` ranks, waits for all (killing them past TIMEOUT), and returns
    {check: [each rank's traceback or None]}."""
    init = tmp / "init"  # file:// rendezvous in a folder of this run's own: no port to clash over
    procs, outs = [], []
    for rank in range(world):
        out = tmp / f"rank{rank}.json"
        log = open(tmp / f"rank{rank}.log", "w")
        procs.append(subprocess.Popen([sys.executable, WORKER, str(rank), str(world), str(init), str(out), backend],
                                      stdout=log, stderr=subprocess.STDOUT, cwd=HERE))
        outs.append(out)
    deadline = time.monotonic() + TIMEOUT
    for p in procs:
        try:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            for q in procs:
                q.wait()
    logs = "\n".join((tmp / f"rank{r}.log").read_text()[-3000:] for r in range(world))
    if any(p.returncode != 0 for p in procs):
        pytest.fail(f"ranks exited with {[p.returncode for p in procs]} (timeout {TIMEOUT} s); their output:\n{logs}")
    results = [json.loads(o.read_text())["results"] for o in outs]
    return {name: [r.get(name, "missing") for r in results] for name in CHECK_NAMES}


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    return run_group(2, tmp_path_factory.mktemp("two_ranks"))


@pytest.fixture(scope="module")
def four_ranks(tmp_path_factory):
    return run_group(4, tmp_path_factory.mktemp("four_ranks"))


def report(results: dict, name: str) -> None:
    failures = [f"rank {r}:\n{tb}" for r, tb in enumerate(results[name]) if tb is not None]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", CHECK_NAMES)
def test_two_ranks(two_ranks, name):
    report(two_ranks, name)


@pytest.mark.parametrize("name", CHECK_NAMES)
def test_four_ranks(four_ranks, name):
    report(four_ranks, name)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2 or not dist.is_nccl_available(),
                    reason="needs 2 CUDA devices and NCCL")
def test_two_gpus_nccl(tmp_path):
    results = run_group(2, tmp_path, backend="nccl")
    failures = [name for name in CHECK_NAMES if any(tb is not None for tb in results[name])]
    assert not failures, "\n".join(f"{n}:\n{results[n]}" for n in failures)


# --- without a process group ------------------------------------------------------------------


def test_needs_an_initialised_group():
    assert not dist.is_initialized()
    a = torch.zeros(2, 2)
    for call in (lambda: td.matmul(a, a, split="k"), lambda: td.shard_operands(a, a, "k"),
                 lambda: td.sliced_contract(lambda x: x, [a], [0])):
        with pytest.raises(tg.InvalidArgumentError, match="init_process_group"):
            call()


def test_choose_split_follows_the_costs():
    assert td.choose_split(64, 1 << 20, 64, 2) == "k"  # a long K: the small C is reduced
    assert td.choose_split(1 << 20, 64, 64, 4) == "m"  # a tall A with a small B: no communication
    assert td.choose_split(4096, 4096, 4096, 16) == "grid"  # nothing whole on one rank
    assert td.choose_split(5, 5, 5, 1) == "m"  # one rank: a local product
    costs = td.split_costs(100, 200, 300, 4)
    assert costs["m"] == 100 * 200 / 4 + 200 * 300 + 100 * 300 / 4


def test_grid_segments_follow_both_cuts():
    from tropical_gemm.distributed._grid import segments

    # A's K cut 3 | 2 (grid columns), B's 1 | 4 (grid rows): segments [0,1) [1,3) [3,5).
    got = [(s, e, qa, pb) for s, e, qa, pb, _, _ in segments([3, 2], [1, 4], None)]
    assert got == [(0, 1, 0, 0), (1, 3, 0, 1), (3, 5, 1, 1)]
    # An empty block owns nothing; width bounds each panel.
    got = [(s, e, qa, pb) for s, e, qa, pb, _, _ in segments([0, 5], [5], 2)]
    assert got == [(0, 2, 1, 0), (2, 4, 1, 0), (4, 5, 1, 0)]


def test_apsp_example_under_torchrun(tmp_path):
    """The example, as its README command launches it, on 2 gloo ranks, checked against one process."""
    example = os.path.join(ROOT, "examples", "distributed_apsp.py")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", example,
           "--backend", "gloo", "--nodes", "60", "--density", "0.05", "--check"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=tmp_path,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "distances match" in done.stdout, done.stdout
