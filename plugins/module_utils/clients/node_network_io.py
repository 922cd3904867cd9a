# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The wait of the node steps (NIC address, IP forwarding) for NodeNetworkState to report a new NIC.

The reads and writes themselves go through the one Kubernetes API layer (kube.py). Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.parallel import Clock


def wait_for_states(k8s, snapshot, plan, replan, timeout, sleep):
    """Re-read the NodeNetworkStates into snapshot['nns'] until replan(snapshot) has nothing pending (or `timeout` s); the last plan.

    NodeNetworkState is refreshed about every 60 s, so a NIC added in vCenter a moment ago is listed a minute later.
    """
    clock = Clock(timeout, sleep)
    while plan['pending'] and not clock.expired():
        clock.sleep()
        snapshot['nns'] = kube.list_objects(k8s, kube.NNS)
        plan = replan(snapshot)
    return plan
