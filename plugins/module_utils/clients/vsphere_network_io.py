# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""vCenter writes for the secondary network: the I/O around the pure plans of plan/vsphere_network.py.

The reads are vcenter.py's (the one vCenter reader): they keep the raw vSphere objects a write needs
(a port group's current spec, a VM's devices) next to the plain views the plans compare. Writes are built from the plan;
VM reconfigure tasks run in parallel with a bound and are polled together in one read.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import random
import time

from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import vim  # pyVmomi on first use

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core import progress
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, library_versions
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import fault_text
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vcenter import security_view
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import vlan_facts
from ansible_collections.ocp.egressip.plugins.module_utils.plan.vsphere_network import (
    DISTRIBUTED,
    PORT_BINDINGS,
    PORT_BINDING_NAMES,
    SECURITY_OPTIONS,
)

# View field -> vSphere security policy property.
SECURITY_PROPERTIES = {'promiscuous': 'allowPromiscuous', 'mac_changes': 'macChanges', 'forged_transmits': 'forgedTransmits'}
TASK_PATHS = ['info.state', 'info.error']
POLL_FIRST, POLL_MAX = 0.05, 2.0


def _failure(msg, **details):
    details.update(library_versions('pyvmomi'))
    return ModuleFailure(msg, **details)


# --- standard port groups: hosts and their network systems -------------------------------------------

def _host_security(view, security=None):
    security = security or vim.host.NetworkPolicy.SecurityPolicy()
    for option in SECURITY_OPTIONS:
        if view.get(option) is not None:
            setattr(security, SECURITY_PROPERTIES[option], view[option])
    return security


def add_standard_portgroup(client, host, name, view):
    """AddPortGroup with the VLAN and the security options set; unset security inherits from the vSwitch."""
    spec = vim.host.PortGroup.Specification(name=name, vlanId=view['vlan_id'], vswitchName=view['vswitch'],
                                            policy=vim.host.NetworkPolicy(security=_host_security(view)))
    client.call('AddPortGroup', 'adding port group %s on host %s' % (name, host['name']), host['network_system'].AddPortGroup, portgrp=spec)


def update_standard_portgroup(client, host, name, changes):
    """UpdatePortGroup from the port group's own current spec: teaming, shaping and the rest stay as they are."""
    spec = host['specs'][name]
    if 'vlan_id' in changes:
        spec.vlanId = changes['vlan_id']
    if any(option in changes for option in SECURITY_OPTIONS):
        spec.policy = spec.policy or vim.host.NetworkPolicy()
        spec.policy.security = _host_security(changes, spec.policy.security)
    client.call('UpdatePortGroup', 'updating port group %s on host %s' % (name, host['name']), host['network_system'].UpdatePortGroup,
                pgName=name, portgrp=spec)


def remove_standard_portgroup(client, host, name):
    client.call('RemovePortGroup', 'removing port group %s from host %s' % (name, host['name']), host['network_system'].RemovePortGroup,
                pgName=name)


def find_network(networks, name, switch=None):
    """The network a NIC should use: by name, and by distributed switch when given. Returns (network, findings)."""
    matches = [network for network in networks if network['name'] == name and not network.get('uplink')]
    if switch:
        matches = [network for network in matches if network.get('switch') == switch]
    if len(matches) == 1 and matches[0]['type'] != 'opaque':
        return matches[0], []
    where = 'on distributed switch %s' % switch if switch else 'in the datacenter'
    if not matches:
        return None, [catalogue_finding('portgroup_missing', 'port group %s does not exist %s.' % (name, where),
                                        objects=[{'kind': 'Network', 'name': name}])]
    if len(matches) == 1:
        return None, [catalogue_finding('nsx_backed_network', 'network %s is an NSX (opaque) network: not supported.' % name,
                                        objects=[{'kind': 'Network', 'name': name}])]
    return None, [catalogue_finding('vsphere_portgroup_ambiguous', '%d networks are named %s %s (%s).'
                                    % (len(matches), name, where, ', '.join('%s %s' % (m['type'], m['moid']) for m in matches)),
                                    objects=[{'kind': 'Network', 'name': name, 'moid': m['moid']} for m in matches])]


def distributed_view(network):
    """The view of a distributed port group the plans compare, from its raw config."""
    config = network['config']
    port = config.defaultPortConfig
    vlan = vlan_facts(getattr(port, 'vlan', None))
    if vlan['vlan_type'] == 'vlan':
        vlan_id = vlan['vlan_id']
    elif vlan['vlan_type'] == 'pvlan':
        vlan_id = 'pvlan:%s' % vlan['vlan_id']
    else:
        vlan_id = 'trunk:%s' % ','.join(vlan['vlan_ranges']) if vlan['vlan_type'] else None
    view = {'switch': network['switch'], 'vlan_id': vlan_id,
            'port_binding': PORT_BINDING_NAMES.get(config.type, config.type or None),
            'num_ports': config.numPorts, 'elastic': bool(config.autoExpand)}
    view.update(security_view(getattr(port, 'securityPolicy', None)))
    return view


def _dvs_port_setting(view, setting=None):
    setting = setting or vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy()
    if isinstance(view.get('vlan_id'), int):
        setting.vlan = vim.dvs.VmwareDistributedVirtualSwitch.VlanIdSpec(vlanId=view['vlan_id'], inherited=False)
    if any(view.get(option) is not None for option in SECURITY_OPTIONS):
        security = setting.securityPolicy or vim.dvs.VmwareDistributedVirtualSwitch.SecurityPolicy()
        for option in SECURITY_OPTIONS:
            if view.get(option) is not None:
                setattr(security, SECURITY_PROPERTIES[option], vim.BoolPolicy(value=view[option], inherited=False))
        setting.securityPolicy = security
    return setting


def add_distributed_portgroup(client, switch_ref, name, view):
    spec = vim.dvs.DistributedVirtualPortgroup.ConfigSpec(name=name, type=PORT_BINDINGS[view['port_binding']], numPorts=view['num_ports'],
                                                          defaultPortConfig=_dvs_port_setting(view))
    if view['port_binding'] == 'static':
        spec.autoExpand = view['elastic']
    return client.call('AddDVPortgroup_Task', 'adding port group %s' % name, switch_ref.AddDVPortgroup_Task, spec=[spec])


def reconfigure_distributed_portgroup(client, network, changes):
    """ReconfigureDVPortgroup_Task guarded by configVersion (a concurrent edit fails instead of being overwritten).

    The spec carries the current settings with only the user's changes applied, so a server that
    replaces the configuration (vcsim does) keeps what the user did not mention.
    """
    config = network['config']
    spec = vim.dvs.DistributedVirtualPortgroup.ConfigSpec(
        configVersion=config.configVersion, name=config.name, description=config.description, type=config.type,
        numPorts=config.numPorts, autoExpand=config.autoExpand, policy=config.policy, portNameFormat=config.portNameFormat,
        defaultPortConfig=_dvs_port_setting(changes, config.defaultPortConfig))
    if 'port_binding' in changes:
        spec.type = PORT_BINDINGS[changes['port_binding']]
    if 'num_ports' in changes:
        spec.numPorts = changes['num_ports']
    if 'elastic' in changes:
        spec.autoExpand = changes['elastic']
    return client.call('ReconfigureDVPortgroup_Task', 'reconfiguring port group %s' % network['name'],
                       network['ref'].ReconfigureDVPortgroup_Task, spec=spec)


def destroy_distributed_portgroup(client, network):
    return client.call('Destroy_Task', 'removing port group %s' % network['name'], network['ref'].Destroy_Task)


# --- VM NICs ------------------------------------------------------------------------------------------

def _nic_backing(network):
    if network['type'] == DISTRIBUTED:
        port = vim.dvs.PortConnection(portgroupKey=network['portgroup_key'], switchUuid=network['switch_uuid'])
        return vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(port=port)
    return vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network['name'], network=network['ref'])


def nic_device_change(entry, vm, network):
    """The deviceChange list for one VM's planned action (add, connect or remove)."""
    change = vim.vm.device.VirtualDeviceSpec
    if entry['action'] == 'add':
        nic = vim.vm.device.VirtualVmxnet3(key=-1, addressType='generated', backing=_nic_backing(network))
        nic.connectable = vim.vm.device.VirtualDevice.ConnectInfo(startConnected=True, connected=entry['after'][0]['connected'],
                                                                  allowGuestControl=True)
        return [change(operation='add', device=nic)]
    if entry['action'] in ('connect', 'move'):
        # the VM's own device object: same key and MAC (a new object without macAddress would get a new MAC)
        device = vm['devices'][entry['nics'][0]['key']]
        if entry['action'] == 'move':
            device.backing = _nic_backing(network)
        device.connectable = device.connectable or vim.vm.device.VirtualDevice.ConnectInfo(allowGuestControl=True)
        device.connectable.startConnected = True
        device.connectable.connected = entry['after'][0]['connected']
        return [change(operation='edit', device=device)]
    return [change(operation='remove', device=vm['devices'][nic['key']]) for nic in entry['nics']]


def remove_nics_change(vm, nics):
    """The deviceChange removing these NICs (the duplicates a concurrent writer left) from the VM snapshot."""
    return [vim.vm.device.VirtualDeviceSpec(operation='remove', device=vm['devices'][nic['key']]) for nic in nics]


def start_reconfigure(client, vm, device_change, guarded=False):
    """ReconfigVM_Task; guarded: with the changeVersion read with the VM, so vCenter applies it only if nobody changed the VM
    since (the snapshot must then be fresh: a second write from the same snapshot would be refused)."""
    spec = vim.vm.ConfigSpec(deviceChange=device_change, changeVersion=vm.get('change_version') if guarded else None)
    return client.call('ReconfigVM_Task', 'reconfiguring the NICs of VM %s' % vm['name'], vm['ref'].ReconfigVM_Task, spec=spec)


def concurrent_change(error):
    """Whether a reconfigure failed because the VM changed since it was read (stale changeVersion: ConcurrentAccess)."""
    return bool(error) and error.startswith('ConcurrentAccess')


# --- tasks: bounded parallel starts, one read per poll ----------------------------------------------

def run_tasks(client, jobs, parallel, timeout, purpose, names=None):
    """Start tasks with at most ``parallel`` running, poll all running ones in one read, start more as they end.

    jobs: [(job_id, start)] where start() returns a vim.Task or raises ModuleFailure; names: {job_id: what the task is
    about, for the progress note (a VM name)}, default the job ids.
    Returns {job_id: None on success, else the failure text with the vCenter fault}.
    A failure of one job never stops the others.
    """
    pending, running, results = list(jobs), {}, {}
    deadline = time.monotonic() + timeout
    delay = POLL_FIRST
    while pending or running:
        _note_tasks(purpose, running, pending, names or {}, timeout)
        while pending and len(running) < parallel:
            job_id, start = pending.pop(0)
            try:
                task = start()
            except ModuleFailure as failure:
                results[job_id] = failure.msg
                continue
            running[task._moId] = (job_id, task)  # pylint: disable=protected-access
        if not running:
            continue
        finished = _poll(client, running, purpose)
        for moid, outcome in finished.items():
            results[running.pop(moid)[0]] = outcome
        if running and not finished:
            if time.monotonic() > deadline:
                for moid, (job_id, _task) in running.items():
                    results[job_id] = 'task %s did not finish within %d seconds; it may still complete in vCenter' % (moid, timeout)
                break
            time.sleep(delay * random.uniform(0.8, 1.2))  # jitter: many runs do not poll vCenter in step
            delay = min(delay * 2, POLL_MAX)
        else:
            delay = POLL_FIRST
    return results


def _note_tasks(purpose, running, pending, names, timeout):
    about = [names.get(job_id, job_id) for job_id, _task in running.values()] + [names.get(job_id, job_id) for job_id, _start in pending]
    if about:
        progress.note('the vCenter tasks of %s (%s: %d running, %d to start; timeout %d s)'
                      % (progress.shown(about), purpose, len(running), len(pending), timeout))


def _poll(client, running, purpose):
    """{task moid: None or failure text} for the running tasks that ended, in one read."""
    try:
        records = client.retrieve_objects([task for _job, task in running.values()], vim.Task, TASK_PATHS, purpose)
    except ModuleFailure as failure:
        return dict((moid, failure.msg) for moid in running)
    finished = {}
    for record in records:
        state = record.props.get('info.state')
        if state == 'success':
            finished[record.moid] = None
        elif state == 'error':
            finished[record.moid] = task_error_text(record.props.get('info.error'))
    return finished


def task_error_text(error):
    """``<FaultType>: <message>`` from a task's LocalizedMethodFault."""
    if error is None:
        return 'the task failed without a fault from vCenter'
    fault = getattr(error, 'fault', None)
    if fault is None and isinstance(error, vim.MethodFault):
        fault = error  # pyVmomi hands info.error over as the fault itself, its message in msg
    text = fault_text(fault) if fault is not None else 'Fault'
    message = getattr(error, 'localizedMessage', None)
    if message and message not in text:
        text += ' (%s)' % message
    return text


def wait_task(client, task, timeout, purpose, name=None):
    """Wait for one task (about ``name``, for the progress note); raise ModuleFailure with the vCenter fault when it fails."""
    outcome = run_tasks(client, [('task', lambda: task)], 1, timeout, purpose, {'task': name or purpose})['task']
    if outcome:
        raise _failure('vCenter %s: %s failed: %s' % (client.endpoint, purpose, outcome))
