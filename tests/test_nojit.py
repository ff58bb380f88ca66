"""The kernel tests once more with NUMBA_DISABLE_JIT=1: the plain-Python path of the core,
its step report, and the observation, episode and vector-env kernels."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize(
    "target",
    [
        "test_perft.py::test_published_counts[3-1879]",
        "test_perft.py::test_kernel_perft_matches_brute_force",
        "test_conformance.py::test_record",
        "test_kernels.py",
        "test_env_observation.py",
        "test_env_equivalence.py::test_aec_env_matches_game",
        "test_env_equivalence.py::test_vector_env_matches_game",
        "test_env_equivalence.py::test_hand_decided_at_the_deal_is_paid_with_the_next_step",
        "test_env_api.py::test_vector_env_arrays",
        "test_env_api.py::test_vector_env_seeds",
        "test_step_report.py",
    ],
)
def test_without_jit(target):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", str(HERE / target)],
        capture_output=True,
        text=True,
        env=env,
        cwd=HERE.parent,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
