# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The cluster lock options of every writing module (module_utils/clients/module_lock.py ModuleLock).

``ocp.egressip.cluster_lock.nested``, for a vCenter module, whose Lease goes through the Kubernetes connection of its
``kubernetes`` option, is the same with O(lock_timeout) saying so (written by plugin_utils/fragments.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.fragments import rewritten


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  lock_timeout:
    description:
      - "One writer per cluster (docs/reliability.md): a real run (not check mode) holds the cluster lock, the Lease
        O(lock_namespace)/O(lock_name), from before it reads what it will change to after its last write, renewing it while it
        runs and releasing it at the end, failed or not. When the run that called the module already holds it (the
        collection's playbooks take it with the C(ocp.egressip.cluster_lock) role: same C(ansible-playbook) run, or the
        holder O(lock_holder)), the module only reads the Lease."
      - While another run holds it, the module waits up to this many seconds, then fails with C(cluster_lock_held) naming
        the holder and since when, before its first write. C(0) fails at once.
      - Check mode takes no lock and reads no Lease.
    type: int
    default: 120
  lock_name:
    description:
      - Name of the cluster lock Lease; the same as C(egressip_lock.name) of the playbooks.
    type: str
    default: egressip-lock
  lock_namespace:
    description:
      - Namespace of the cluster lock Lease; the same as C(egressip_lock.namespace) of the playbooks. The credentials
        need C(get), C(create) and C(update) on C(leases) there.
    type: str
    default: openshift-machine-api
  lock_holder:
    description:
      - The holder identity of a cluster lock the caller already holds (the C(holder) that M(ocp.egressip.cluster_lock)
        returned, when it was given one of its own). While the Lease names it, the module takes no lock of its own.
      - Default - the identity of the C(ansible-playbook) run the module runs under, as M(ocp.egressip.cluster_lock) makes it.
        A task with C(async) runs detached from that process, so give it the holder (C(cluster_lock_result.holder) after the
        C(ocp.egressip.cluster_lock) role), or it waits for its own run's lock.
    type: str
'''


ModuleDocFragment.NESTED = rewritten(
    ModuleDocFragment.DOCUMENTATION,
    ('O(lock_namespace)/O(lock_name), from before', 'O(lock_namespace)/O(lock_name), through the Kubernetes connection of O(kubernetes), from before'),
    ('      - Check mode takes no lock', '''      - Without any Kubernetes connection (no O(kubernetes) options, no C(KUBECONFIG), no C(~/.kube/config),
        not in a Pod) the module takes no lock and warns.
      - Check mode takes no lock'''),
)
