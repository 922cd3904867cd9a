# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure planning for the vSphere side of the secondary network: port groups and VM NICs.

No I/O. The modules read a snapshot (plain dicts, shapes below), call these functions, and
write what the plan says. DOMAIN.md sections 6 and 10 hold the facts and the peers' traps.

Port group views (what diffs show and what is compared), one per host or per switch:
    standard:    {'vswitch', 'vlan_id', 'promiscuous', 'mac_changes', 'forged_transmits'}
    distributed: {'switch', 'vlan_id', 'port_binding', 'num_ports', 'elastic',
                  'promiscuous', 'mac_changes', 'forged_transmits'}
A security value of None means "inherited from the switch". `wanted` dicts hold only the
options the user set: nothing else is ever compared or changed.

VM snapshot: {'name', 'moid', 'uuid', 'instance_uuid', 'power_state', 'nics': [nic, ...]}
NIC: the facts of _vsphere_facts.nic_facts: {'key', 'mac', 'adapter', 'network', 'network_moid',
    'portgroup_key', 'switch_uuid', 'opaque_network_id', 'connected', 'start_connected', ...}
Network: {'type': 'standard', 'name', 'moid'} or
         {'type': 'distributed', 'name', 'moid', 'portgroup_key', 'switch_uuid'}
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import (
    DISTRIBUTED,
    PORT_BINDINGS as PORT_BINDING_NAMES,
    STANDARD,
    normalize_uuid,
    vm_uuid_from_provider_id,
)

MAX_VM_NICS = 10
VLAN_MIN = 0
VLAN_MAX = 4094
NIC_ADAPTER = 'vmxnet3'
SECURITY_OPTIONS = ('promiscuous', 'mac_changes', 'forged_transmits')
# The user's words for port binding -> vSphere's DVPortgroupConfigSpec.type (dynamic is deprecated: not offered).
PORT_BINDINGS = dict((name, vsphere) for vsphere, name in PORT_BINDING_NAMES.items() if name != 'dynamic')
# Defaults vSphere itself uses for a new port group; only used when creating one.
CREATE_DEFAULTS = {
    STANDARD: {'vlan_id': 0},
    DISTRIBUTED: {'vlan_id': 0, 'port_binding': 'static', 'num_ports': 8, 'elastic': True},
}


# --- identities -------------------------------------------------------------------------

def normalize_mac(mac):
    """MACs compare case-insensitively: vCenter reports lower case, users paste upper case."""
    return (mac or '').strip().lower()


def normalize_switch_uuid(uuid):
    # DVS UUIDs are written with spaces and dashes in different places by different tools.
    return ''.join(ch for ch in (uuid or '').lower() if ch not in ' -')


def planned_network(name, switch=None):
    """A port group that an earlier step of a check-mode run would create: no NIC can be on it yet."""
    return {'type': DISTRIBUTED if switch else STANDARD, 'name': name, 'moid': None, 'portgroup_key': None,
            'switch': switch, 'switch_uuid': None, 'planned': True}


def nic_on_network(nic, network):
    """Whether a NIC's backing is the network: never by label, which vCenter may rename."""
    if network.get('planned'):
        return False
    if network['type'] == DISTRIBUTED:
        return (nic.get('portgroup_key') == network['portgroup_key']
                and normalize_switch_uuid(nic.get('switch_uuid')) == normalize_switch_uuid(network['switch_uuid']))
    if nic.get('portgroup_key') or nic.get('opaque_network_id'):
        return False
    if nic.get('network_moid') and network.get('moid'):
        return nic['network_moid'] == network['moid']
    return nic.get('network') == network['name']


# --- validation of the user's options -----------------------------------------------------

def validate_vlan(vlan_id, field='vlan_id'):
    """A message naming field, value and fix, or None."""
    if vlan_id is None:
        return None
    if not VLAN_MIN <= vlan_id <= VLAN_MAX:
        return ('%s=%s is outside the VLAN range: use a VLAN id from %d to %d (0 means untagged).'
                % (field, vlan_id, VLAN_MIN, VLAN_MAX))
    return None


def validate_portgroup_options(switch_type, options):
    """Messages for options that do not fit the switch type; empty when all is well."""
    problems = []
    vlan_problem = validate_vlan(options.get('vlan_id'))
    if vlan_problem:
        problems.append(vlan_problem)
    if switch_type == STANDARD:
        for field in ('port_binding', 'num_ports', 'elastic'):
            if options.get(field) is not None:
                problems.append('%s=%s applies to distributed port groups only: remove it, or set switch_type=distributed.'
                                % (field, options[field]))
    else:
        if options.get('hosts'):
            problems.append('hosts=%s applies to standard port groups only: a distributed port group exists once on its '
                            'switch; remove hosts, or set switch_type=standard.' % ', '.join(options['hosts']))
        if options.get('num_ports') is not None and options['num_ports'] < 0:
            problems.append('num_ports=%s is negative: use 0 or more (with elastic=true vSphere adds ports as needed).'
                            % options['num_ports'])
        if options.get('port_binding') == 'ephemeral' and options.get('elastic'):
            problems.append('elastic=true applies to static port binding only: remove elastic, or set port_binding=static.')
    return problems


def wanted_options(options, switch_type):
    """The options the user set (not None), in the view's field names."""
    fields = ['vlan_id'] + list(SECURITY_OPTIONS)
    if switch_type == DISTRIBUTED:
        fields += ['port_binding', 'num_ports', 'elastic']
    return dict((field, options[field]) for field in fields if options.get(field) is not None)


def changed_options(current, wanted):
    """{field: new value} for each option the user set that differs from the current view."""
    return dict((field, value) for field, value in sorted(wanted.items()) if current.get(field) != value)


def apply_options(current, wanted):
    after = dict(current)
    after.update(wanted)
    return after


# --- standard port group: the same on every host ---------------------------------------------

def new_portgroup_view(switch_type, switch, wanted):
    """The view of a port group this plan creates: vSphere's defaults plus the user's options."""
    view = {'vswitch': switch} if switch_type == STANDARD else {'switch': switch}
    view.update(CREATE_DEFAULTS[switch_type])
    for option in SECURITY_OPTIONS:
        view[option] = None
    view.update(wanted)
    return view


def plan_standard_portgroup(name, vswitch, wanted, hosts):
    """Plan the port group on each host.

    hosts: [{'name', 'vswitches': [names], 'portgroups': {name: standard view}}]
    Returns {'hosts': [{'host', 'action': create|update|none, 'before', 'after', 'changes'}],
             'findings': [...]}; any error finding means nothing may be written on any host.
    """
    findings = []
    plans = []
    if not hosts:
        findings.append(catalogue_finding('vsphere_cluster_without_hosts',
                                          'no ESXi host was found to place standard port group %s on.' % name))
    for host in hosts:
        current = host['portgroups'].get(name)
        if current is not None and current['vswitch'] != vswitch:
            findings.append(catalogue_finding(
                'vsphere_portgroup_on_other_vswitch',
                'host %s has port group %s on vSwitch %s, not on %s.' % (host['name'], name, current['vswitch'], vswitch),
                objects=[{'kind': 'HostSystem', 'name': host['name']}]))
            continue
        if current is None and vswitch not in host['vswitches']:
            findings.append(catalogue_finding(
                'switch_missing',
                'host %s has no vSwitch %s (it has: %s).' % (host['name'], vswitch, ', '.join(sorted(host['vswitches'])) or 'none'),
                objects=[{'kind': 'HostSystem', 'name': host['name']}]))
            continue
        plans.append(_location_plan(host['name'], current, new_portgroup_view(STANDARD, vswitch, wanted), wanted))
    return {'hosts': [dict(plan, host=plan.pop('location')) for plan in plans], 'findings': findings}


def _location_plan(location, current, created_view, wanted):
    if current is None:
        return {'location': location, 'action': 'create', 'before': None, 'after': created_view, 'changes': dict(wanted)}
    changes = changed_options(current, wanted)
    return {'location': location, 'action': 'update' if changes else 'none', 'before': current,
            'after': apply_options(current, wanted), 'changes': changes}


def plan_distributed_portgroup(name, switch, wanted, current):
    """Plan the port group on its distributed switch; current is its view or None."""
    plan = _location_plan(switch, current, new_portgroup_view(DISTRIBUTED, switch, wanted), wanted)
    plan['switch'] = plan.pop('location')
    plan['name'] = name
    return plan


# --- removal -----------------------------------------------------------------------------

def plan_portgroup_removal(name, locations, attached, force):
    """Remove from every location unless VM NICs still use it and force is not set.

    attached: [{'vm', 'mac', 'connected'}] NICs whose backing is this port group.
    Returns {'action': remove|none|refused, 'locations', 'attached', 'findings'}.
    """
    if not locations:
        return {'action': 'none', 'locations': [], 'attached': attached, 'findings': []}
    if attached and not force:
        vms = sorted(set(nic['vm'] for nic in attached))
        finding = catalogue_finding(
            'vsphere_portgroup_in_use',
            'port group %s still backs %d NIC(s) of VM(s) %s.' % (name, len(attached), ', '.join(vms)),
            objects=[{'kind': 'VirtualMachine', 'name': vm} for vm in vms])
        return {'action': 'refused', 'locations': list(locations), 'attached': attached, 'findings': [finding]}
    return {'action': 'remove', 'locations': list(locations), 'attached': attached, 'findings': []}


# --- which VMs: nodes by providerID, or VMs by name / BIOS UUID / moid -------------------------

def resolve_targets(vms, nodes=None, vm_refs=None):
    """Map the requested nodes and VM references to VMs of the snapshot.

    nodes: [{'name', 'provider_id'}]; vm_refs: [{'by': 'name'|'uuid'|'moid', 'value'}].
    Returns (targets, findings); targets: [{'vm': snapshot, 'node': name or None}], each VM once.
    """
    index = {'uuid': {}, 'moid': {}, 'name': {}}
    for vm in vms:
        index['uuid'].setdefault(normalize_uuid(vm['uuid']), []).append(vm)
        index['moid'].setdefault(vm['moid'], []).append(vm)
        index['name'].setdefault(vm['name'], []).append(vm)
    targets, findings, seen = [], [], set()

    def add(vm, node):
        if vm['moid'] not in seen:
            seen.add(vm['moid'])
            targets.append({'vm': vm, 'node': node})

    for node in nodes or []:
        uuid = vm_uuid_from_provider_id(node.get('provider_id'))
        if uuid is None:
            findings.append(catalogue_finding(
                'vsphere_node_vm_not_found',
                'node %s has spec.providerID %r, not vsphere://<BIOS UUID>.' % (node['name'], node.get('provider_id') or ''),
                objects=[{'kind': 'Node', 'name': node['name']}]))
            continue
        matches = index['uuid'].get(uuid, [])
        if len(matches) != 1:
            findings.append(_node_vm_finding(node, uuid, matches))
            continue
        add(matches[0], node['name'])
    for ref in vm_refs or []:
        value = normalize_uuid(ref['value']) if ref['by'] == 'uuid' else ref['value']
        matches = index[ref['by']].get(value, [])
        if len(matches) == 1:
            add(matches[0], None)
        elif not matches:
            findings.append(catalogue_finding('vsphere_vm_not_found', 'no VM has the %s %s.' % (REF_WORDS[ref['by']], ref['value']),
                                              objects=[{'kind': 'VirtualMachine', ref['by']: ref['value']}]))
        else:
            moids = ', '.join(sorted(vm['moid'] for vm in matches))
            findings.append(catalogue_finding(
                'vsphere_vm_ambiguous', '%d VMs have the %s %s (%s).' % (len(matches), REF_WORDS[ref['by']], ref['value'], moids),
                objects=[{'kind': 'VirtualMachine', 'name': vm['name'], 'moid': vm['moid']} for vm in matches]))
    return targets, findings


REF_WORDS = {'name': 'name', 'uuid': 'BIOS UUID', 'moid': 'moid'}


def _node_vm_finding(node, uuid, matches):
    if not matches:
        return catalogue_finding('vsphere_node_vm_not_found',
                                 'node %s has providerID vsphere://%s, but no VM in the datacenter has that BIOS UUID.' % (node['name'], uuid),
                                 objects=[{'kind': 'Node', 'name': node['name']}])
    return catalogue_finding('vsphere_vm_ambiguous',
                             'node %s has providerID vsphere://%s, and %d VMs share that BIOS UUID (%s).'
                             % (node['name'], uuid, len(matches), ', '.join(sorted(vm['name'] for vm in matches))),
                             objects=[{'kind': 'Node', 'name': node['name']}]
                             + [{'kind': 'VirtualMachine', 'name': vm['name'], 'moid': vm['moid']} for vm in matches])


def node_selected(selector, labels):
    """Whether a node's labels match the user's selector: a map of labels, a LabelSelector, or a selector string."""
    if isinstance(selector, dict):
        return selector_matches(selector, labels)
    parsed = {'matchLabels': {}, 'matchExpressions': []}
    for term in (term.strip() for term in selector.split(',')):
        if not term:
            continue
        if term.startswith('!'):
            parsed['matchExpressions'].append({'key': term[1:], 'operator': 'DoesNotExist'})
        elif '!=' in term:
            key, value = term.split('!=', 1)
            parsed['matchExpressions'].append({'key': key.strip(), 'operator': 'NotIn', 'values': [value.strip()]})
        elif '=' in term:
            key, value = term.replace('==', '=').split('=', 1)
            parsed['matchLabels'][key.strip()] = value.strip()
        else:
            parsed['matchExpressions'].append({'key': term, 'operator': 'Exists'})
    return selector_matches(parsed, labels)


def nodes_of_vms(nodes):
    """{BIOS UUID: node name} from the Nodes' providerIDs, to name the node of a VM given by name."""
    return dict((vm_uuid_from_provider_id(node.get('provider_id')), node['name']) for node in nodes
                if vm_uuid_from_provider_id(node.get('provider_id')))


# --- one NIC per VM on the network -----------------------------------------------------------

def nic_view(nic):
    return {'key': nic.get('key'), 'mac': normalize_mac(nic.get('mac')) or None, 'adapter': nic.get('adapter'),
            'connected': nic.get('connected'), 'start_connected': nic.get('start_connected')}


def planned_nic_view(vm):
    """The NIC this plan adds; vCenter assigns its key and MAC."""
    return {'key': None, 'mac': None, 'adapter': NIC_ADAPTER, 'connected': vm['power_state'] == 'poweredOn',
            'start_connected': True}


def plan_vm_nic(target, network, state='present', force=False, egress_ips=(), own_macs=()):
    """Plan one VM: add, move, connect, remove, none or refused (with findings).

    target: {'vm': snapshot, 'node': name or None}; egress_ips: egress IPs its node hosts.
    own_macs: MACs of the collection's NIC for this VM's node (its NMState policy, own_macs_by_node): a NIC with one
    of them on another network is moved (same device, same MAC) instead of a second NIC being added.
    """
    vm = target['vm']
    on_network = [nic for nic in vm['nics'] if nic_on_network(nic, network)]
    entry = {'vm': vm['name'], 'moid': vm['moid'], 'uuid': vm['uuid'], 'instance_uuid': vm.get('instance_uuid'), 'node': target['node'],
             'power_state': vm['power_state'], 'nics': on_network, 'nic_count': len(vm['nics']), 'findings': [],
             'before': [nic_view(nic) for nic in on_network], 'change_version': vm.get('change_version')}
    if state == 'absent':
        return _plan_removal(entry, vm, network, force, egress_ips)
    if len(on_network) > 1:
        return _refuse(entry, 'vsphere_vm_nic_ambiguous',
                       'VM %s has %d NICs on %s (MACs %s): which one carries the egress network is ambiguous.'
                       % (vm['name'], len(on_network), network['name'], ', '.join(normalize_mac(nic['mac']) for nic in on_network)))
    wanted_macs = set(normalize_mac(mac) for mac in own_macs or ())
    own = [nic for nic in vm['nics'] if normalize_mac(nic['mac']) in wanted_macs and nic not in on_network]
    if own:
        return _plan_move(entry, vm, own, network)
    if not on_network:
        if len(vm['nics']) >= MAX_VM_NICS:
            return _refuse(entry, 'vsphere_vm_nic_limit',
                           'VM %s already has %d NICs, the vSphere limit is %d.' % (vm['name'], len(vm['nics']), MAX_VM_NICS))
        return dict(entry, action='add', after=[planned_nic_view(vm)])
    nic = on_network[0]
    if nic.get('adapter') != NIC_ADAPTER:
        return _refuse(entry, 'vsphere_vm_nic_adapter',
                       'VM %s has a %s NIC (MAC %s) on %s, not %s.' % (vm['name'], nic.get('adapter'), normalize_mac(nic['mac']),
                                                                       network['name'], NIC_ADAPTER))
    wanted = dict(nic_view(nic), start_connected=True)
    if vm['power_state'] == 'poweredOn':
        wanted['connected'] = True  # a powered-off VM reports every NIC disconnected
    action = 'connect' if wanted != nic_view(nic) else 'none'
    return dict(entry, action=action, after=[wanted])


def _plan_move(entry, vm, own, network):
    """The collection's NIC is on another network (port group renamed, or another one configured): move its backing.

    Refused when the move cannot be told safe: another NIC is already on the network, several NICs carry the
    collection's MACs, the NIC is the VM's only one (it would be the primary network), or it is not vmxnet3.
    """
    macs = ', '.join(normalize_mac(nic['mac']) for nic in own)
    where = ', '.join('%s on %s' % (normalize_mac(nic['mac']), nic.get('network') or 'an unknown network') for nic in own)
    if entry['nics']:
        return _refuse(entry, 'vsphere_vm_nic_move_refused',
                       'VM %s has NIC %s on %s, and the NIC its node\'s NMState policy names (%s) is on another network: '
                       'two NICs would carry the egress network.' % (vm['name'], normalize_mac(entry['nics'][0]['mac']), network['name'], where))
    if len(own) > 1:
        return _refuse(entry, 'vsphere_vm_nic_move_refused',
                       'VM %s has %d NICs with MACs the collection\'s NMState policies name (%s): which one to move to %s cannot be told.'
                       % (vm['name'], len(own), where, network['name']))
    nic = own[0]
    if len(vm['nics']) < 2:
        return _refuse(entry, 'vsphere_vm_nic_move_refused',
                       'VM %s has only NIC %s, which its node\'s NMState policy names: moving it to %s would take the VM off '
                       'its primary network.' % (vm['name'], macs, network['name']))
    if nic.get('adapter') != NIC_ADAPTER:
        return _refuse(entry, 'vsphere_vm_nic_adapter',
                       'VM %s has a %s NIC (MAC %s) on %s, not %s.' % (vm['name'], nic.get('adapter'), macs, nic.get('network'), NIC_ADAPTER))
    after = dict(nic_view(nic), network=network['name'], start_connected=True)
    if vm['power_state'] == 'poweredOn':
        after['connected'] = True
    return dict(entry, action='move', nics=[nic], previous_network=nic.get('network'),
                before=[dict(nic_view(nic), network=nic.get('network'))], after=[after])


def _plan_removal(entry, vm, network, force, egress_ips):
    if not entry['nics']:
        return dict(entry, action='none', after=[])
    if egress_ips and not force:
        hosted = ', '.join(sorted(egress_ips))
        return _refuse(entry, 'vsphere_vm_nic_hosts_egress_ips',
                       'node %s (VM %s) hosts egress IP(s) %s on %s.' % (entry['node'], vm['name'], hosted, network['name']))
    return dict(entry, action='remove', after=[])


def _refuse(entry, finding_id, message):
    objects = [{'kind': 'VirtualMachine', 'name': entry['vm'], 'moid': entry['moid']}]
    if entry['node']:
        objects.append({'kind': 'Node', 'name': entry['node']})
    entry['findings'].append(catalogue_finding(finding_id, message, objects=objects))
    return dict(entry, action='refused', after=entry['before'])


def plan_vm_nics(targets, network, state='present', force=False, egress_ips_by_node=None, own_macs_by_node=None):
    egress_ips_by_node = egress_ips_by_node or {}
    own_macs_by_node = own_macs_by_node or {}
    return [plan_vm_nic(target, network, state, force, egress_ips_by_node.get(target['node'], ()),
                        own_macs_by_node.get(target['node'], ()))
            for target in targets]


def own_macs_by_node(allocations):
    """{node: [MACs]} of the NICs the collection's NMState policies name (allocations: _node_network.policy_allocation)."""
    macs = {}
    for allocation in allocations:
        if allocation and allocation.get('node') and allocation.get('mac'):
            macs.setdefault(allocation['node'], []).append(normalize_mac(allocation['mac']))
    return macs


def duplicate_nics(nics_before, nics_after, network, own_macs=()):
    """After a write: (kept, to_remove) when a VM has more than one NIC on the network, else (None, []).

    Another writer that ignored the lock (or a server that ignored changeVersion) may have added one at the same time.
    Every run keeps the same NIC (the one an NMState policy names, else the lowest device key), and removes only the
    ones it added itself, so two runs cleaning up at once never remove each other's keeper.
    """
    on_network = [nic for nic in nics_after if nic_on_network(nic, network)]
    if len(on_network) < 2:
        return None, []
    wanted = set(normalize_mac(mac) for mac in own_macs or ())
    kept = sorted(on_network, key=lambda nic: (normalize_mac(nic['mac']) not in wanted, nic.get('key') or 0))[0]
    known = set(normalize_mac(nic['mac']) for nic in nics_before)
    return kept, [nic for nic in on_network if nic is not kept and normalize_mac(nic['mac']) not in known]


def egress_ips_by_node(egressips, networks=None):
    """{node: [egress IPs]} from EgressIP objects' status.items (DOMAIN.md section 2), only those in `networks` when given."""
    return dict((node, [ip for _name, ip in pairs]) for node, pairs in hosted_egress_ips(egressips, networks).items())


def new_nic(nics_before, nics_after, network):
    """The NIC a reconfigure added: on the network, with a MAC the VM did not have before."""
    known = set(normalize_mac(nic['mac']) for nic in nics_before)
    added = [nic for nic in nics_after if nic_on_network(nic, network) and normalize_mac(nic['mac']) not in known]
    if len(added) == 1:
        return added[0]
    on_network = [nic for nic in nics_after if nic_on_network(nic, network)]
    return on_network[0] if len(on_network) == 1 else None


def vm_result(entry, nic, changed, failed=None, nic_count=None):
    """What the module returns per VM (the node-address step matches on `mac`, the Machine API step on `nic_count`).

    nic_count: the VM's NICs on every network after the run (default: as read before it).
    """
    result = {'name': entry['vm'], 'uuid': entry['uuid'], 'moid': entry['moid'], 'node': entry['node'],
              'instance_uuid': entry.get('instance_uuid'), 'action': entry['action'], 'changed': changed,
              'mac': normalize_mac(nic['mac']) if nic else None, 'device_key': nic['key'] if nic else None,
              'nic_count': entry.get('nic_count') if nic_count is None else nic_count}
    if entry.get('previous_network'):
        result['previous_network'] = entry['previous_network']
    if failed:
        result['failed'] = True
        result['error'] = failed
    return result
