"""The Python examples run as a newcomer runs them, on the CPU: examples/max_independent_set.py and
examples/spin_glass.py at sizes where they check their answer by brute force over every
configuration, the independent set at the issue's 60 vertices (checked by the set read off the
gradient alone), and examples/hmm_forward.py on a small HMM (checked against its float64 NumPy
forward pass), each a subprocess that must exit 0 and print its check lines."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

pytest.importorskip("torch")
pytest.importorskip("numpy")
pytest.importorskip("opt_einsum")

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

RUNS = [
    # 16 vertices: 65536 subsets tried.
    (["max_independent_set.py", "--vertices", "16", "--seed", "1"],
     ["checked: the set is independent and as large as the result",
      "checked by brute force over all 65536 subsets: "]),
    # L = 4: 65536 configurations tried; another planner.
    (["spin_glass.py", "--size", "4", "--seed", "2", "--optimize", "greedy"],
     ["checked: the configuration's energy, computed directly, is ",
      "checked by brute force over all 65536 configurations: "]),
    # Too large for brute force: the set from the gradient is independent and of the size found.
    (["max_independent_set.py", "--vertices", "60"],
     ["maximum independent set: ", "checked: the set is independent and as large as the result"]),
    # LogPlus: an HMM's forward pass, 8 sequences of 60 steps through 32 states.
    (["hmm_forward.py", "--states", "32", "--sequences", "8", "--steps", "60"],
     ["largest relative difference from NumPy over all sequences: ", "ok: matches the float64 NumPy forward pass"]),
]


@pytest.mark.parametrize("args,checks", RUNS, ids=["mis-16", "spin-glass-4", "mis-60", "hmm-32"])
def test_example_checks_itself(args, checks, python, subprocess_env):
    run = subprocess.run([python, str(EXAMPLES / args[0]), *args[1:], "--device", "cpu"], env=subprocess_env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{args[0]} exited {run.returncode}\n{run.stdout}\n{run.stderr}"
    lines = run.stdout.splitlines()
    for check in checks:
        assert any(line.startswith(check) for line in lines), f"{args[0]} printed no '{check}...'\n{run.stdout}"
    assert "on cpu" in lines[0], run.stdout
