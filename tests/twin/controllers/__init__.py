"""Simulated cluster controllers of the twin: NMState, Node Tuning, ovnkube-node,
ovnkube-cluster-manager, scheduler/kubelets, the wire, and the seed state (tests/twin/README.md).
"""

from . import seed
from .runner import Runner, start

__all__ = ["Runner", "seed", "start"]
