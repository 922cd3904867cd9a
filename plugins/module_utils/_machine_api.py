# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure planning for Machine API on vSphere: MachineSet template devices and Machine/VM NIC counts.

Facts (DOMAIN.md section 6, openshift/machine-api-operator pkg/controller/vsphere):
- a replacement Machine is cloned with exactly the NICs of
  `providerSpec.value.network.devices` (reconciler.go getNetworkDevices removes the template's
  NICs and adds one vmxnet3 per device), so the MachineSet template must list the port group;
  template changes reach new Machines only;
- the controller compares `len(providerSpec.network.devices)` with every ethernet card of
  the VM and fails with `invalid network count: expected=N current=M` (reconcileNetwork);
- it finds a Machine's VM by instance UUID = Machine UID, else by the Machine's name (findVM).
No I/O: objects are the dicts the Kubernetes API returns.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.ocp.egressip.plugins.module_utils._catalogue import catalogue_finding

MAX_DEVICES = 10
TEMPLATE_DEVICES_PATH = ('spec', 'template', 'spec', 'providerSpec', 'value', 'network', 'devices')
MACHINE_DEVICES_PATH = ('spec', 'providerSpec', 'value', 'network', 'devices')
NODE_MACHINE_ANNOTATION = 'machine.openshift.io/machine'


def _dig(obj, path):
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return None
        obj = obj[key]
    return obj


def _pointer(path):
    return '/' + '/'.join(path)


def _ref(obj):
    meta = obj.get('metadata') or {}
    return {'kind': obj.get('kind'), 'namespace': meta.get('namespace'), 'name': meta.get('name')}


def device_matches(device, network_name):
    """networkName may be the port group's name or its inventory path (MAPO's finder accepts both)."""
    name = (device or {}).get('networkName') or ''
    return name == network_name or name.endswith('/' + network_name)


def new_device(network_name, options=None):
    """The device appended: networkName plus the optional fields the user gave (gateway, ipAddrs, nameservers)."""
    device = {'networkName': network_name}
    for key, value in sorted((options or {}).items()):
        if value not in (None, [], ''):
            device[key] = value
    return device


def plan_devices_append(obj, path, network_name, device_options=None):
    """Append the port group after the existing devices, never reordering or dropping any.

    Returns {'object', 'action': append|none|refused, 'before', 'after', 'patch', 'findings'}.
    `patch` is an RFC 6902 list whose `test` makes a concurrent edit fail instead of being lost.
    """
    devices = _dig(obj, path)
    entry = {'object': _ref(obj), 'before': copy.deepcopy(devices), 'after': copy.deepcopy(devices), 'patch': None, 'findings': []}
    name = entry['object']['name']
    if not isinstance(devices, list):
        entry['findings'].append(catalogue_finding(
            'machine_api_providerspec_unexpected', '%s %s has no %s list.' % (entry['object']['kind'], name, '.'.join(path)),
            objects=[entry['object']]))
        return dict(entry, action='refused')
    if any(device_matches(device, network_name) for device in devices):
        return dict(entry, action='none')
    if len(devices) >= MAX_DEVICES:
        entry['findings'].append(catalogue_finding(
            'machineset_device_limit', '%s %s already lists %d network devices, the limit is %d.'
            % (entry['object']['kind'], name, len(devices), MAX_DEVICES), objects=[entry['object']]))
        return dict(entry, action='refused')
    device = new_device(network_name, device_options)
    entry['after'] = devices + [device]
    entry['patch'] = [{'op': 'test', 'path': _pointer(path), 'value': devices},
                      {'op': 'add', 'path': _pointer(path) + '/-', 'value': device}]
    return dict(entry, action='append')


def plan_machineset(machineset, network_name, device_options=None):
    return plan_devices_append(machineset, TEMPLATE_DEVICES_PATH, network_name, device_options)


# --- nodes, Machines and MachineSets ---------------------------------------------------------

def _owner_machineset(machine):
    for owner in (machine.get('metadata') or {}).get('ownerReferences') or []:
        if owner.get('kind') == 'MachineSet':
            return owner.get('name')
    return None


def node_machines(nodes, machines, machinesets):
    """Which Machine and MachineSet back each node.

    A node names its Machine in the annotation machine.openshift.io/machine (<namespace>/<name>,
    set by Machine API's nodelink controller); a Machine also names its node in status.nodeRef.
    Returns [{'node', 'machine': Machine dict or None, 'machineset': name or None}].
    """
    by_key = dict(('%s/%s' % (m['metadata'].get('namespace'), m['metadata']['name']), m) for m in machines)
    by_node = dict((((m.get('status') or {}).get('nodeRef') or {}).get('name'), m) for m in machines)
    known_sets = set('%s/%s' % (s['metadata'].get('namespace'), s['metadata']['name']) for s in machinesets)
    rows = []
    for node in nodes:
        annotation = ((node.get('metadata') or {}).get('annotations') or {}).get(NODE_MACHINE_ANNOTATION)
        machine = by_key.get(annotation) or by_node.get(node['metadata']['name'])
        owner = _owner_machineset(machine) if machine else None
        if owner and '%s/%s' % (machine['metadata'].get('namespace'), owner) not in known_sets:
            owner = None
        rows.append({'node': node['metadata']['name'], 'machine': machine, 'machineset': owner})
    return rows


def coverage_findings(rows):
    """UPI detection and nodes a MachineSet does not cover."""
    if rows and not any(row['machine'] for row in rows):
        return [catalogue_finding('machine_api_absent',
                                  'none of the %d selected nodes is backed by a Machine: the cluster has no Machine API '
                                  'management for them (UPI or platform none), only the vCenter path applies.' % len(rows),
                                  objects=[{'kind': 'Node', 'name': row['node']} for row in rows])]
    findings = []
    for row in rows:
        if row['machine'] is None:
            findings.append(catalogue_finding('machine_api_node_without_machineset', 'node %s has no Machine.' % row['node'],
                                              objects=[{'kind': 'Node', 'name': row['node']}]))
        elif row['machineset'] is None:
            findings.append(catalogue_finding(
                'machine_api_node_without_machineset',
                'node %s is backed by Machine %s, which belongs to no MachineSet.' % (row['node'], row['machine']['metadata']['name']),
                objects=[{'kind': 'Node', 'name': row['node']}, _ref(row['machine'])]))
    return findings


# --- Machine/VM NIC counts ---------------------------------------------------------------------

def machine_vm(machine, vms_by_instance_uuid, vms_by_name):
    """The Machine's VM as Machine API finds it: instance UUID = Machine UID, else the Machine's name."""
    meta = machine.get('metadata') or {}
    uid = (meta.get('uid') or '').lower()
    return vms_by_instance_uuid.get(uid) or vms_by_name.get(meta.get('name'))


def plan_machine(machine, vm, network_name, nic_on_network, align):
    """Compare the Machine's device count with its VM's NIC count; plan the append when it fixes the mismatch.

    nic_on_network: whether the VM has a NIC on the port group.
    Returns {'object', 'vm', 'expected', 'current', 'mismatch', 'action': append|none|report, 'patch', 'findings'}.
    """
    devices = _dig(machine, MACHINE_DEVICES_PATH)
    entry = {'object': _ref(machine), 'vm': vm['name'] if vm else None,
             'expected': len(devices) if isinstance(devices, list) else None,
             'current': len(vm['nics']) if vm else None, 'patch': None, 'findings': [], 'before': devices, 'after': devices}
    entry['mismatch'] = vm is not None and entry['expected'] is not None and entry['expected'] != entry['current']
    if not entry['mismatch']:
        return dict(entry, action='none')
    append = plan_devices_append(machine, MACHINE_DEVICES_PATH, network_name)
    # Appending fixes the count only when our NIC is the one extra NIC the VM has.
    fixable = nic_on_network and append['action'] == 'append' and entry['expected'] + 1 == entry['current']
    if fixable and align:
        return dict(entry, action='append', patch=append['patch'], after=append['after'])
    hint = ' Set align_machines=true to append the port group to its providerSpec.' if fixable else ''
    entry['findings'].append(catalogue_finding(
        'machine_nic_count_mismatch',
        'Machine %s lists %d network device(s), its VM %s has %d NIC(s): Machine API reports '
        '"invalid network count: expected=%d current=%d".%s'
        % (entry['object']['name'], entry['expected'], entry['vm'], entry['current'], entry['expected'], entry['current'], hint),
        objects=[entry['object'], {'kind': 'VirtualMachine', 'name': entry['vm']}]))
    return dict(entry, action='report')
