# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The failover drill's triggers: what it does to a node, and how it undoes it.

Kubernetes: merge patches of one Node (the egress-assignable label, ``spec.unschedulable``),
sent with ``dryRun=All`` in check mode. vCenter: the node's VM found through its
``spec.providerID`` with the batched reads of ``clients/vcenter.py``, its vNIC on the egress
port group identified by backing, then one ReconfigVM_Task (connected true/false) or a power
task. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter
from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere_network_io as vnio
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.plan.vsphere_network import DISTRIBUTED, nic_on_network, resolve_targets

TASK_TIMEOUT = 300


def label_patch(present):
    return {'metadata': {'labels': {EGRESS_ASSIGNABLE_LABEL: '' if present else None}}}


def cordon_patch(cordoned):
    return {'spec': {'unschedulable': True if cordoned else None}}


def patch_node(k8s, name, body, check_mode):
    return kube.patch(k8s, kube.NODES, name, body, check_mode)


def read_node_vm(client, datacenter, node, portgroup=None):
    """The node's VM (raw devices kept) and, with ``portgroup``, its vNIC on that port group.

    Returns {'vm': snapshot of _vsphere_network_io.read_vm_devices, 'network', 'nic'}; raises
    ModuleFailure naming the node, the providerID or the port group when one is missing.
    """
    dc = vcenter.find_datacenter(client, datacenter, 'datacenter')
    networks, network = [], None
    if portgroup:
        networks = vcenter.read_networks(client, dc)
        switch = portgroup.get('switch') if portgroup.get('switch_type') == DISTRIBUTED else None
        network, findings = vnio.find_network(networks, portgroup['name'], switch)
        if network is None:
            raise ModuleFailure('portgroup: %s' % ' '.join(item['message'] for item in findings), reason='not_found')
    name = (node.get('metadata') or {}).get('name')
    targets, findings = resolve_targets(vcenter.index_vms(client, dc),
                                        nodes=[{'name': name, 'provider_id': (node.get('spec') or {}).get('providerID')}])
    if findings or not targets:
        raise ModuleFailure('node %s: %s' % (name, ' '.join(item['message'] for item in findings) or 'no VM found'), reason='not_found')
    vms = vcenter.read_vm_devices(client, [targets[0]['vm']], networks)
    if not vms:
        raise ModuleFailure('node %s: VM %s vanished while it was read' % (name, targets[0]['vm']['name']), reason='not_found')
    vm = vms[0]
    nic = None
    if network is not None:
        nics = sorted((item for item in vm['nics'] if nic_on_network(item, network)), key=lambda item: not item.get('connected'))
        if not nics:
            raise ModuleFailure('node %s: VM %s has no vNIC on port group %s, so there is nothing to disconnect or reconnect'
                                % (name, vm['name'], portgroup['name']), reason='not_found')
        nic = nics[0]
    return {'vm': vm, 'network': network, 'nic': nic}


def set_nic_connected(client, target, connected):
    """Connect or disconnect the vNIC (one ReconfigVM_Task, waited for)."""
    entry = {'action': 'connect', 'nics': [target['nic']], 'after': [{'connected': connected}]}
    change = vnio.nic_device_change(entry, target['vm'], target['network'])
    task = vnio.start_reconfigure(client, target['vm'], change)
    purpose = '%s vNIC %s of VM %s' % ('connecting' if connected else 'disconnecting', target['nic']['mac'], target['vm']['name'])
    vnio.wait_task(client, task, TASK_TIMEOUT, purpose, 'VM %s' % target['vm']['name'])


def set_power(client, target, on):
    """Power the VM on or off (hard power-off, as a host failure would), waited for."""
    vm = target['vm']
    method = 'PowerOnVM_Task' if on else 'PowerOffVM_Task'
    purpose = 'powering %s VM %s' % ('on' if on else 'off', vm['name'])
    task = client.call(method, purpose, getattr(vm['ref'], method))
    vnio.wait_task(client, task, TASK_TIMEOUT, purpose, 'VM %s' % vm['name'])
