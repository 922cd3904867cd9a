# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure planning for Machine API on vSphere: MachineSet template devices and Machine/VM NIC counts.

Both directions: append the egress port group (enable) and take it out again (disable).

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

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig

MAX_DEVICES = 10
TEMPLATE_DEVICES_PATH = ('spec', 'template', 'spec', 'providerSpec', 'value', 'network', 'devices')
MACHINE_DEVICES_PATH = ('spec', 'providerSpec', 'value', 'network', 'devices')
NODE_MACHINE_ANNOTATION = 'machine.openshift.io/machine'


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


def plan_devices_append(obj, path, network_name, device_options=None, previous=()):
    """Append the port group after the existing devices, never reordering or dropping any.

    previous: names the egress port group had before (renamed in vCenter, or another one configured): a device naming
    one of them is renamed in place (action replace) instead of a second egress device being appended.
    Returns {'object', 'action': append|replace|none|refused, 'before', 'after', 'patch', 'findings'}.
    `patch` is an RFC 6902 list whose `test` makes a concurrent edit fail instead of being lost.
    """
    devices = dig(obj, *path)
    entry = {'object': _ref(obj), 'before': copy.deepcopy(devices), 'after': copy.deepcopy(devices), 'patch': None, 'findings': []}
    name = entry['object']['name']
    if not isinstance(devices, list):
        entry['findings'].append(catalogue_finding(
            'machine_api_providerspec_unexpected', '%s %s has no %s list.' % (entry['object']['kind'], name, '.'.join(path)),
            objects=[entry['object']]))
        return dict(entry, action='refused')
    if any(device_matches(device, network_name) for device in devices):
        return dict(entry, action='none')
    stale = [index for index, device in enumerate(devices)
             if isinstance(device, dict) and any(device_matches(device, old) for old in previous if old and old != network_name)]
    if len(stale) > 1:
        entry['findings'].append(catalogue_finding(
            'machine_api_device_rename_ambiguous', '%s %s lists %d devices on earlier names of the egress port group (%s): which one '
            'to rename to %s cannot be told.' % (entry['object']['kind'], name, len(stale), ', '.join(devices[i].get('networkName') for i in stale),
                                                 network_name), objects=[entry['object']]))
        return dict(entry, action='refused')
    if stale:
        pointer = '%s/%d/networkName' % (_pointer(path), stale[0])
        entry['after'][stale[0]]['networkName'] = network_name
        entry['patch'] = [{'op': 'test', 'path': _pointer(path), 'value': devices}, {'op': 'replace', 'path': pointer, 'value': network_name}]
        return dict(entry, action='replace')
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


def plan_machineset(machineset, network_name, device_options=None, previous=()):
    return plan_devices_append(machineset, TEMPLATE_DEVICES_PATH, network_name, device_options, previous)


def secondary_devices(obj, path):
    """The devices after the first: the first is the node's primary network, never the collection's."""
    devices = dig(obj, *path)
    return [device for device in devices[1:] if isinstance(device, dict)] if isinstance(devices, list) else []


def stale_device_names(obj, path, network_names):
    """networkName of the secondary devices that name no network of the datacenter (a port group renamed or removed in vCenter)."""
    return [device.get('networkName') for device in secondary_devices(obj, path) if device.get('networkName')
            and not any(device_matches(device, name) for name in network_names)]


def matching_indexes(devices, network_name):
    """Indexes of the devices naming the port group (as device_matches, the way the append recognises it)."""
    if not isinstance(devices, list):
        return []
    return [index for index, device in enumerate(devices) if isinstance(device, dict) and device_matches(device, network_name)]


def lists_network(obj, path, network_name):
    return bool(matching_indexes(dig(obj, *path), network_name))


def plan_devices_remove(obj, path, network_name):
    """Take the device(s) naming the port group out, leaving every other device where it is.

    Returns {'object', 'action': remove|none, 'before', 'after', 'patch', 'findings'}. `patch` tests the whole list
    first, then removes the matching indexes from the highest down, so a concurrent edit of the list fails the patch
    (HTTP 422) instead of removing the wrong entry.
    """
    devices = dig(obj, *path)
    entry = {'object': _ref(obj), 'before': copy.deepcopy(devices), 'after': copy.deepcopy(devices), 'patch': None, 'findings': []}
    indexes = matching_indexes(devices, network_name)
    if not indexes:
        return dict(entry, action='none')
    entry['after'] = [device for index, device in enumerate(devices) if index not in indexes]
    entry['patch'] = ([{'op': 'test', 'path': _pointer(path), 'value': devices}]
                      + [{'op': 'remove', 'path': '%s/%d' % (_pointer(path), index)} for index in sorted(indexes, reverse=True)])
    return dict(entry, action='remove')


def machineset_members(machines):
    """{MachineSet name: [(Machine name, node name or None)]} from the Machines' owner references and status.nodeRef."""
    members = {}
    for machine in machines:
        owner = _owner_machineset(machine)
        if owner:
            node = ((machine.get('status') or {}).get('nodeRef') or {}).get('name')
            members.setdefault(owner, []).append((machine['metadata']['name'], node))
    return members


def _hosting(members, hosted):
    """[(Machine, node, EgressIP, IP)] for the members whose node hosts egress IPs."""
    return [(machine, node, egressip, ip) for machine, node in members if node for egressip, ip in hosted.get(node, [])]


def _refuse_hosting(entry, network_name, hosting, what):
    ips = '; '.join('node %s (Machine %s) hosts egress IP %s of EgressIP %s' % (node, machine, ip, egressip)
                    for machine, node, egressip, ip in hosting)
    objects = [entry['object']]
    for machine, node, egressip, _ip in hosting:
        for ref in ({'kind': 'Machine', 'namespace': entry['object']['namespace'], 'name': machine}, {'kind': 'Node', 'name': node},
                    {'kind': 'EgressIP', 'name': egressip}):
            if ref not in objects:
                objects.append(ref)
    egressips = sorted(set(item[2] for item in hosting))
    nodes = sorted(set(item[1] for item in hosting))
    remedy = ('delete EgressIP %s or move its IPs off node %s first (take k8s.ovn.org/egress-assignable off the node and wait '
              'until status.items names another node; the disable role does both before this step), then rerun; or set '
              'force=true to take the port group out anyway (those egress IPs stop working once the NIC goes).'
              % (', '.join(egressips), ', '.join(nodes)))
    entry['findings'].append(catalogue_finding(
        'machine_api_device_hosts_egress_ips', '%s %s: not taking port group %s out of %s while %s.'
        % (entry['object']['kind'], entry['object']['name'], network_name, what, ips), objects=objects, remedy=remedy))
    return dict(entry, action='refused', after=entry['before'], patch=None)


def plan_machineset_remove(machineset, network_name, members, hosted, force=False):
    """Take the port group out of the template; refused while a node of one of its Machines hosts egress IPs (unless force).

    members: [(Machine, node)] of the MachineSet; hosted: _ip_networks.hosted_egress_ips().
    """
    entry = plan_devices_remove(machineset, TEMPLATE_DEVICES_PATH, network_name)
    entry['nodes'] = sorted(set(node for _machine, node in members if node))
    hosting = _hosting(members, hosted)
    if entry['action'] == 'remove' and hosting and not force:
        return _refuse_hosting(entry, network_name, hosting, 'its template')
    return entry


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


def plan_machine(machine, vm, network_name, nic_on_network, align, previous=()):
    """Compare the Machine's device count with its VM's NIC count; plan the append when it fixes the mismatch.

    nic_on_network: whether the VM has a NIC on the port group. previous: earlier names of the port group; with align,
    a consistent Machine listing one of them has that device renamed (action replace), as its MachineSet's template.
    Returns {'object', 'vm', 'expected', 'current', 'mismatch', 'action': append|replace|none|report, 'patch', 'findings'}.
    """
    entry = _machine_entry(machine, vm)
    if not entry['mismatch']:
        rename = plan_devices_append(machine, MACHINE_DEVICES_PATH, network_name, previous=previous) if align and previous else None
        if rename and rename['action'] == 'replace' and nic_on_network:
            return dict(entry, action='replace', patch=rename['patch'], after=rename['after'])
        return dict(entry, action='none')
    append = plan_devices_append(machine, MACHINE_DEVICES_PATH, network_name)
    # Appending fixes the count only when our NIC is the one extra NIC the VM has.
    fixable = nic_on_network and append['action'] == 'append' and entry['expected'] + 1 == entry['current']
    if fixable and align:
        return dict(entry, action='append', patch=append['patch'], after=append['after'])
    hint = ' Set align_machines=true to append the port group to its providerSpec.' if fixable else ''
    if not nic_on_network and append['action'] == 'none' and entry['expected'] == entry['current'] + 1:
        hint = (' The VM lost its NIC on %s, which the Machine lists: run enable (its vSphere network step, vsphere_vm_nic, adds the '
                'NIC again); align_machines cannot help here.' % network_name)
    entry['findings'].append(_mismatch_finding(entry, hint))
    return dict(entry, action='report')


def machine_nic_agrees(machine, vm, network_name):
    """A Machine with one device per NIC of its VM that does not list the port group (so one of its devices names the
    egress NIC's network under another name)."""
    devices = dig(machine, *MACHINE_DEVICES_PATH)
    return (isinstance(devices, list) and len(devices) == nic_count(vm)
            and not any(device_matches(device, network_name) for device in devices if isinstance(device, dict)))


def nic_count(vm):
    """How many NICs a VM has: ``nic_count`` when the VM came as a count (vsphere_vm_nic's RV(vms)), else its NIC list."""
    return vm['nic_count'] if 'nic_count' in vm else len(vm['nics'])


def _machine_entry(machine, vm):
    """The comparison Machine API makes: providerSpec devices (expected) against the VM's NICs (current)."""
    devices = dig(machine, *MACHINE_DEVICES_PATH)
    entry = {'object': _ref(machine), 'vm': vm['name'] if vm else None,
             'expected': len(devices) if isinstance(devices, list) else None,
             'current': nic_count(vm) if vm else None, 'patch': None, 'findings': [], 'before': devices, 'after': devices}
    entry['mismatch'] = vm is not None and entry['expected'] is not None and entry['expected'] != entry['current']
    return entry


def _mismatch_finding(entry, note=''):
    return catalogue_finding(
        'machine_nic_count_mismatch',
        'Machine %s lists %d network device(s), its VM %s has %d NIC(s): Machine API reports '
        '"invalid network count: expected=%d current=%d".%s'
        % (entry['object']['name'], entry['expected'], entry['vm'], entry['current'], entry['expected'], entry['current'], note),
        objects=[entry['object'], {'kind': 'VirtualMachine', 'name': entry['vm']}])


def plan_machine_remove(machine, vm, network_name, nic_on_network, node, hosted, force=False):
    """Take the port group out of a Machine's providerSpec only where that keeps (or makes) it consistent with its VM.

    Machine API compares the device count with the VM's NIC count, so the device goes once the VM has lost the NIC:
    - `remove`: the VM has no NIC on the port group and exactly as many NICs as the Machine lists without it (the
      removal ends the VM-side `invalid network count`); refused while the node hosts egress IPs, unless force;
    - `pending`: the VM still has the NIC (or as many NICs as listed): removing the device now would start an
      `invalid network count`; it goes after vsphere_vm_nic state=absent took the NIC out;
    - `report`: the counts differ in a way the removal does not fix, or the VM was not found (finding);
    - `none`: the Machine does not list the port group (a count mismatch is still reported).
    """
    entry = _machine_entry(machine, vm)
    removal = plan_devices_remove(machine, MACHINE_DEVICES_PATH, network_name)
    if removal['action'] == 'none':
        if entry['mismatch']:
            entry['findings'].append(_mismatch_finding(entry))
            return dict(entry, action='report')
        return dict(entry, action='none')
    if vm is None:
        entry['findings'].append(catalogue_finding(
            'vsphere_node_vm_not_found', 'Machine %s lists port group %s, but no VM has its UID as instance UUID or its name: '
            'left as it is.' % (entry['object']['name'], network_name), objects=[entry['object']], severity='warning'))
        return dict(entry, action='report')
    if nic_on_network or entry['expected'] == entry['current']:
        return dict(entry, action='pending')
    if len(removal['after']) != entry['current']:
        entry['findings'].append(_mismatch_finding(entry, ' Taking %s out would still leave %d device(s) for %d NIC(s): '
                                                          'left as it is.' % (network_name, len(removal['after']), entry['current'])))
        return dict(entry, action='report')
    entry.update(after=removal['after'], patch=removal['patch'])
    hosting = _hosting([(entry['object']['name'], node)], hosted)
    if hosting and not force:
        return _refuse_hosting(entry, network_name, hosting, 'its providerSpec')
    return dict(entry, action='remove')
