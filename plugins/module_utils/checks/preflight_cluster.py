# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight checks of the cluster: platform, version, the support acknowledgement, IP forwarding, Infrastructure
nodeNetworking, NMState and the Machine API. Pure: each takes the PreflightContext and returns findings.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import HOSTNAME_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as _machine_api
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as _node_network
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, name as _name
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.checks import preflight_context as pc


# --- platform ---------------------------------------------------------------------------------

def _cluster_setting(ctx, kind, paths, expected, finding_id, message, about):
    """[] when the singleton ``kind`` was not read or its setting (the first of ``paths`` that is set) is ``expected``;
    else the finding, ``message`` naming the setting found."""
    item = ctx.kind(kind)
    if item is None:
        return []
    value = next((found for found in (_dig(item, *path) for path in paths) if found), None)
    if value == expected:
        return []
    return [catalogue_finding(finding_id, message % (value or 'not reported'), objects=[about])]


def check_platform(ctx):
    return _cluster_setting(
        ctx, 'infrastructure', (('status', 'platformStatus', 'type'), ('status', 'platform')), 'VSphere',
        'platform_not_vsphere',
        'The cluster platform is %s, not VSphere (Infrastructure cluster status.platformStatus.type): this collection '
        'configures OpenShift on VMware vSphere only.',
        {'kind': 'Infrastructure', 'name': 'cluster'})


def check_network_type(ctx):
    return _cluster_setting(
        ctx, 'network_config', (('status', 'networkType'), ('spec', 'networkType')), 'OVNKubernetes',
        'platform_network_type_not_ovn_kubernetes',
        'The cluster network type is %s, not OVNKubernetes (Network.config.openshift.io cluster): EgressIP on a '
        'secondary interface is an OVN-Kubernetes feature.',
        {'kind': 'Network', 'apiVersion': 'config.openshift.io/v1', 'name': 'cluster'})


def cluster_version(snapshot):
    """The OpenShift version: status.desired.version, else the newest Completed history entry."""
    version = snapshot.get('cluster_version')
    text = _dig(version, 'status', 'desired', 'version')
    if text:
        return text
    for entry in _dig(version, 'status', 'history') or []:
        if entry.get('state') == 'Completed' and entry.get('version'):
            return entry['version']
    return None


def check_openshift_version(ctx):
    if ctx.kind('cluster_version') is None:
        return []
    text = cluster_version(ctx.snapshot)
    parsed = pc.parse_version(text)
    objects = [{'kind': 'ClusterVersion', 'name': 'version'}]
    if parsed is None:
        return [catalogue_finding(
            'platform_version_unsupported',
            'The OpenShift version cannot be read from ClusterVersion version (status.desired.version is %r); '
            '4.14 or newer is required.' % (text,), objects=objects, severity=WARNING)]
    if parsed >= pc.MINIMUM_VERSION:
        return []
    return [catalogue_finding(
        'platform_version_unsupported',
        'OpenShift %s is older than 4.14: EgressIP on a secondary host interface arrived in 4.14 (GA in 4.15).' % text,
        objects=objects)]


# --- support status ---------------------------------------------------------------------------

SUPPORT_STATEMENT = ('Red Hat documents EgressIP on a secondary host interface for bare-metal installations only '
                     '("disabled within a cloud or a hypervisor environment"); vSphere is a hypervisor, so this '
                     'configuration is outside Red Hat support. EgressIP on the primary network is supported on vSphere.')


def check_acknowledgement(ctx):
    if not ctx.requested():
        return []
    objects = [{'kind': 'option', 'name': 'egressip_acknowledge_unsupported'}]
    if ctx.config.get('acknowledge_unsupported') is True:
        return [catalogue_finding(
            'support_acknowledged',
            'Secondary-network EgressIP on vSphere is outside Red Hat support; acknowledged with '
            'egressip_acknowledge_unsupported: true. %s' % SUPPORT_STATEMENT, objects=objects)]
    return [catalogue_finding(
        'support_not_acknowledged',
        'A secondary egress network is requested but egressip_acknowledge_unsupported is not true. %s' % SUPPORT_STATEMENT,
        objects=objects)]


# --- IP forwarding ----------------------------------------------------------------------------

def forwarding_state(snapshot):
    """How IP forwarding is enabled today.

    {'ip_forwarding': gatewayConfig.ipForwarding ('Restricted' when unset), 'global': bool,
     'by_hostname': {hostname: [interfaces]} (IPv4 forwarding by a Tuned recommended per hostname, as the collection writes it),
     'other_profiles': [tuned/profile] (profiles with a forwarding sysctl recommended some other way)}
    """
    mode = fw.cluster_ip_forwarding(snapshot.get('network_operator')) or 'Restricted'
    state = {'ip_forwarding': mode, 'global': mode == 'Global', 'by_hostname': {}, 'other_profiles': []}
    for tuned in snapshot.get('tuneds') or []:
        for hostname, interfaces in fw.forwarded_interfaces(tuned).items():
            state['by_hostname'].setdefault(hostname, set()).update(interfaces)
        recommended_by_hostname = set(item.get('profile') for item in _dig(tuned, 'spec', 'recommend') or []
                                      if any(match.get('label') == HOSTNAME_LABEL for match in item.get('match') or []))
        for profile in _dig(tuned, 'spec', 'profile') or []:
            interfaces = [match.group(1) for match in pc.FORWARDING_SYSCTL.finditer(profile.get('data') or '')
                          if match.group(1) not in pc.OVN_MANAGED_INTERFACES]
            if interfaces and profile.get('name') not in recommended_by_hostname:
                state['other_profiles'].append('%s/%s' % (_name(tuned), profile.get('name')))
    state['by_hostname'] = dict((hostname, sorted(interfaces)) for hostname, interfaces in state['by_hostname'].items())
    return state


def _uncovered(ctx, state, nodes):
    """(node names, sysctl text) of the nodes no Tuned forwards IPv4 on. IPv6 needs no per-interface key: Linux forwards
    IPv6 by the node-wide net.ipv6.conf.all.forwarding alone (ip6_forward), which ovnkube-node sets to 1 on a cluster with
    IPv6; _ipv6_switched_off finds the profiles that turn it off."""
    versions = sorted(family.version for family in ctx.network.families) if ctx.network is not None else [4]
    if 4 not in versions:
        return [], ''
    by_hostname = state['by_hostname']
    missing = [_name(node) for node in nodes if not by_hostname.get(_labels(node).get(HOSTNAME_LABEL, _name(node)))]
    return missing, 'net.ipv4.conf.<interface>.forwarding=1'


def _ipv6_switched_off(ctx):
    """node_ip_forwarding_off for each Tuned profile that sets net.ipv6.conf.all.forwarding to 0 (with its includes), when
    the secondary network has an IPv6 part: wherever TuneD applies it, the node forwards no IPv6 at all."""
    if ctx.network is None or 6 not in [family.version for family in ctx.network.families]:
        return []
    tuneds = ctx.snapshot.get('tuneds') or []
    names = sorted(set('%s/%s' % (_name(tuned), item.get('name')) for tuned in tuneds for item in _dig(tuned, 'spec', 'profile') or []
                       if fw.ipv6_all_forwarding_in_profile(item.get('name'), tuneds) is False))
    if not names:
        return []
    return [catalogue_finding(
        'node_ip_forwarding_off', 'Tuned profile(s) %s set net.ipv6.conf.all.forwarding to 0: on every node TuneD applies '
        'them, the node forwards no IPv6, so IPv6 egress traffic through the secondary NIC is dropped (Linux forwards IPv6 by '
        'that node-wide switch alone; ovnkube-node sets it to 1 on a cluster with IPv6).' % ', '.join(names),
        objects=[{'kind': 'Tuned', 'name': name.split('/', 1)[0]} for name in names], severity=WARNING,
        remedy='Remove net.ipv6.conf.all.forwarding=0 from those profiles (or their includes), or recommend them to no egress node.')]


def check_ip_forwarding(ctx):
    if not ctx.requested():
        return []
    state = forwarding_state(ctx.snapshot)
    if state['global']:
        return []
    nodes = ctx.capable_nodes() if ctx.mode == pc.AUDIT else ctx.selected_nodes
    uncovered, keys = _uncovered(ctx, state, nodes)
    if not uncovered:
        return _ipv6_switched_off(ctx)
    return _ipv4_uncovered(ctx, state, uncovered, keys) + _ipv6_switched_off(ctx)


def _ipv4_uncovered(ctx, state, uncovered, keys):
    choice = ctx.network_config.get('ip_forwarding') or 'per_interface'
    objects = [{'kind': 'Node', 'name': name} for name in uncovered[:20]]
    found = ('IP forwarding is not enabled for the secondary NIC of node(s) %s: gatewayConfig.ipForwarding is %s and no '
             'Tuned profile sets %s for them.' % (pc.names_text(uncovered), state['ip_forwarding'], keys))
    unknown = ''
    if state['other_profiles']:
        unknown = (' Tuned profile(s) %s set forwarding but are recommended by other rules, which preflight does not '
                   'evaluate.' % ', '.join(sorted(state['other_profiles'])))
    if choice == 'external' or unknown:
        return [catalogue_finding(
            'node_ip_forwarding_off', found + unknown + ' MachineConfig sysctl files are not read either, so this cannot be '
            'confirmed; without forwarding, egress traffic through the secondary NIC is silently dropped.',
            objects=objects, severity=WARNING)]
    if ctx.mode == pc.PLAN:
        return [catalogue_finding(
            'node_ip_forwarding_off', found + ' The node network step will enable it (ip_forwarding: %s).' % choice,
            objects=objects, severity=INFO)]
    return [catalogue_finding(
        'node_ip_forwarding_off', found + ' Without it, egress traffic through the secondary NIC is silently dropped '
        '(OVN-Kubernetes does not check it).', objects=objects, severity=ERROR)]


# --- Infrastructure nodeNetworking -------------------------------------------------------------

def _side_pinned(side, cidr, portgroup):
    """(pinned, selects_secondary) for one side (internal/external) of nodeNetworking."""
    side = side or {}
    subnets = [subnet for subnet in (pc.network_of(text) for text in side.get('networkSubnetCidr') or []) if subnet is not None]
    if cidr is not None and any(pc.overlaps(subnet, cidr) for subnet in subnets):
        return False, True
    if subnets:
        return True, False
    excluded = [subnet for subnet in (pc.network_of(text) for text in side.get('excludeNetworkSubnetCidr') or []) if subnet is not None]
    if cidr is not None and any(subnet.version == cidr.version and cidr in subnet for subnet in excluded):
        return True, False
    network = side.get('network')
    if network and network == portgroup:
        return False, True
    return bool(network), False


def check_node_networking(ctx):
    infrastructure = ctx.kind('infrastructure')
    if infrastructure is None or not ctx.requested():
        return []
    node_networking = _dig(infrastructure, 'spec', 'platformSpec', 'vsphere', 'nodeNetworking') or {}
    portgroup = ctx.portgroup_config.get('name')
    unpinned, selecting = [], []
    for side in ('internal', 'external'):
        pinned, selects_secondary = _side_pinned(node_networking.get(side), ctx.cidr, portgroup)
        if selects_secondary:
            selecting.append(side)
        elif not pinned:
            unpinned.append(side)
    primary = sorted(ctx.primary_networks()) or ['<primary machine network>']
    objects = [{'kind': 'Infrastructure', 'name': 'cluster'}]
    remedy = ('Set spec.platformSpec.vsphere.nodeNetworking.internal.networkSubnetCidr and .external.networkSubnetCidr '
              'to [%s] in Infrastructure cluster (oc edit infrastructure cluster).' % ', '.join(primary))
    if selecting:
        return [catalogue_finding(
            'infrastructure_node_networking_not_pinned',
            'Infrastructure cluster nodeNetworking.%s selects the secondary network (%s): the vSphere cloud provider would '
            'report secondary addresses as node addresses.' % ('/'.join(selecting), ctx.cidr or portgroup),
            objects=objects, severity=ERROR, remedy=remedy)]
    if not unpinned:
        return []
    return [catalogue_finding(
        'infrastructure_node_networking_not_pinned',
        'Infrastructure cluster nodeNetworking.%s does not pin the primary subnet: once nodes have a second vNIC the vSphere '
        'cloud provider may report the secondary address as a node address, and new nodes can pick the wrong one.'
        % '/'.join(unpinned), objects=objects, remedy=remedy)]


# --- NMState ----------------------------------------------------------------------------------

def check_nmstate(ctx):
    if not ctx.requested() or 'nncps' not in ctx.snapshot:
        return []
    if ctx.kind('nncps') is None:
        problem = 'the NodeNetworkConfigurationPolicy API (nmstate.io) is not served: the Kubernetes NMState Operator is not installed'
    elif 'nmstates' in ctx.snapshot and not any(_name(item) == 'nmstate' for item in ctx.kind('nmstates') or []):
        problem = 'the Kubernetes NMState Operator is installed but the NMState CR named nmstate does not exist'
    else:
        return []
    return [catalogue_finding(
        'nmstate_not_installed', 'The secondary NIC addresses are applied with NMState, but %s.' % problem,
        objects=[{'kind': 'NMState', 'name': 'nmstate'}])]


def check_nmstate_version(ctx):
    """The NMState handler's nmstate release per node (NodeNetworkState), for the report and support cases."""
    if not ctx.requested() or not ctx.kind('nns'):
        return []
    selected = set(_name(node) for node in ctx.selected_nodes)
    versions = dict((node, version) for node, version in _node_network.handler_versions(ctx.kind('nns')).items()
                    if node in selected)
    unknown = sorted(node for node, version in versions.items() if not version)
    known = {}
    for node, version in versions.items():
        if version:
            known.setdefault(version, []).append(node)
    findings = []
    if known:
        findings.append(catalogue_finding(
            'node_nmstate_version', 'NMState handler nmstate release: %s.' % '; '.join(
                '%s on %d node(s)' % (version, len(nodes)) for version, nodes in sorted(known.items())),
            objects=[{'kind': 'NodeNetworkState', 'name': node} for nodes in known.values() for node in sorted(nodes)]))
    if unknown:
        findings.append(catalogue_finding(
            'node_nmstate_version_unknown', 'The NMState handler\'s nmstate release could not be read from the NodeNetworkState '
            'of %s (status.handlerNmstateVersion is empty).' % ', '.join(unknown),
            objects=[{'kind': 'NodeNetworkState', 'name': node} for node in unknown]))
    return findings


def _policy_addresses(policy):
    for interface in _dig(policy, 'spec', 'desiredState', 'interfaces') or []:
        for family in ('ipv4', 'ipv6'):
            for entry in (interface.get(family) or {}).get('address') or []:
                if entry.get('ip'):
                    yield interface.get('name') or '', str(entry['ip'])


def requested_egress_ips(ctx):
    """Every egress IP of the requested objects: {canonical ip text: object name}."""
    wanted = {}
    for egress_object in ctx.objects:
        for ip in egress_object.get('egress_ips') or []:
            address = pc.address_of(ip)
            if address is not None:
                wanted[str(address)] = egress_object.get('name') or ''
    return wanted


def check_egress_ips_in_policies(ctx):
    """DOMAIN.md 5.9: an egress IP must not appear in any NetworkManager profile."""
    wanted = requested_egress_ips(ctx)
    findings = []
    for policy in ctx.kind('nncps') or []:
        for interface, ip in _policy_addresses(policy):
            address = pc.address_of(ip)
            if address is not None and str(address) in wanted:
                findings.append(catalogue_finding(
                    'egress_ip_in_nmstate_policy',
                    'Egress IP %s (EgressIP %s) is a static address of interface %s in NodeNetworkConfigurationPolicy %s: '
                    'OVN-Kubernetes must own it; a NetworkManager profile keeps it on that node after a failover.'
                    % (address, wanted[str(address)], interface, _name(policy)),
                    objects=[{'kind': 'NodeNetworkConfigurationPolicy', 'name': _name(policy)}]))
    return findings


# --- Machine API (rules owned by _machine_api.py) ---------------------------------------------

def check_machine_api(ctx):
    """Which Machines and MachineSets build the egress nodes; MachineSet templates without the port group."""
    if not ctx.requested() or not ctx.selected_nodes or 'machinesets' not in ctx.snapshot:
        return []
    rows = _machine_api.node_machines(ctx.selected_nodes, ctx.kind('machines') or [], ctx.kind('machinesets') or [])
    findings = _machine_api.coverage_findings(rows)
    portgroup = ctx.portgroup_config.get('name')
    if not portgroup:
        return findings
    owners = sorted(set(row['machineset'] for row in rows if row['machineset']))
    for machineset in ctx.kind('machinesets') or []:
        if _name(machineset) not in owners:
            continue
        devices = _dig(machineset, *_machine_api.TEMPLATE_DEVICES_PATH) or []
        if any(_machine_api.device_matches(device, portgroup) for device in devices):
            continue
        ref = {'kind': 'MachineSet', 'namespace': _dig(machineset, 'metadata', 'namespace'), 'name': _name(machineset)}
        if ctx.mode == pc.PLAN:
            findings.append(catalogue_finding(
                'machineset_missing_secondary_device',
                'MachineSet %s has no network device on %s; the vSphere network step will append it after its %d existing '
                'device(s) (template changes reach new Machines only).' % (_name(machineset), portgroup, len(devices)),
                objects=[ref], severity=INFO))
        else:
            findings.append(catalogue_finding(
                'machineset_missing_secondary_device',
                'MachineSet %s has no network device on %s: a replacement Machine is built from the template and comes up '
                'without the secondary NIC.' % (_name(machineset), portgroup), objects=[ref]))
    return findings


def _machines_enable_aligns(ctx):
    """(namespace, name) of the Machines enable's vSphere network step aligns: those backing the selected egress nodes,
    when the step runs with align_machines (plan mode only; in audit mode the configuration should be in place)."""
    if ctx.mode != pc.PLAN or not ctx.align_machines or not ctx.portgroup_config.get('name'):
        return set()
    rows = _machine_api.node_machines(ctx.selected_nodes, ctx.kind('machines') or [], ctx.kind('machinesets') or [])
    return set((_dig(row['machine'], 'metadata', 'namespace'), _name(row['machine'])) for row in rows if row['machine'])


def _enable_readds_nic(ctx, machine, entry, on_network, portgroup):
    """Plan mode: the Machine of a selected egress node lists the port group, its VM lost that NIC (removed by hand) and
    nothing else: enable's vSphere network step adds the NIC again, which ends the mismatch."""
    selected = ctx.selected_names
    return (ctx.mode == pc.PLAN and bool(portgroup) and entry['mismatch'] and not on_network
            and _dig(machine, 'status', 'nodeRef', 'name') in selected
            and _machine_api.lists_network(machine, _machine_api.MACHINE_DEVICES_PATH, portgroup)
            and entry['expected'] == entry['current'] + 1)


def _readd_notice(entry, portgroup):
    return catalogue_finding(
        'machine_nic_count_mismatch',
        'Machine %s lists %d network device(s), its VM %s has %d NIC(s), none on %s, which the Machine lists (Machine API reports '
        '"invalid network count: expected=%d current=%d"): enable will add the NIC again in its vSphere network step (a new MAC; '
        'the node address step keeps the node\'s address and moves it to the new MAC).'
        % (entry['object']['name'], entry['expected'], entry['vm'], entry['current'], portgroup, entry['expected'], entry['current']),
        objects=[entry['object'], {'kind': 'VirtualMachine', 'name': entry['vm']}], severity=INFO,
        remedy='Nothing to do before enable, which adds the NIC again.')


def check_machine_nic_counts(ctx):
    """Machine API fails reconcile with `invalid network count` when devices != VM NICs.

    In plan mode a Machine whose VM has exactly one NIC more, on the configured port group, is what enable's vSphere
    network step fixes with align_machines (it appends the port group to the Machine's providerSpec): a notice, not an
    error, so enable is not stopped before the step that aligns it. Every other mismatch stays an error."""
    if not ctx.vsphere_cluster_read() or not ctx.kind('machines'):
        return []
    portgroup = ctx.portgroup_config.get('name') or ''
    vms_by_name = dict((vm.get('name'), vm) for vm in ctx.vms)
    aligned = _machines_enable_aligns(ctx)
    findings = []
    for machine in ctx.kind('machines'):
        node = ctx.nodes_by_name.get(_dig(machine, 'status', 'nodeRef', 'name'))
        vm = _machine_api.machine_vm(machine, {}, vms_by_name) or (ctx.node_vm(node) if node else None)
        if vm is None:
            continue
        on_network = any(nic.get('network') == portgroup for nic in vm.get('nics') or [])
        align = (_dig(machine, 'metadata', 'namespace'), _name(machine)) in aligned
        entry = _machine_api.plan_machine(machine, vm, portgroup, on_network, align=align)
        if _enable_readds_nic(ctx, machine, entry, on_network, portgroup):
            findings.append(_readd_notice(entry, portgroup))
            continue
        if entry['action'] == 'append':
            findings.append(catalogue_finding(
                'machine_nic_count_mismatch',
                'Machine %s lists %d network device(s), its VM %s has %d NIC(s), the extra one on %s (Machine API reports '
                '"invalid network count: expected=%d current=%d"): enable will align the Machine\'s providerSpec, its vSphere '
                'network step (align_machines) appends %s to the devices.'
                % (entry['object']['name'], entry['expected'], entry['vm'], entry['current'], portgroup, entry['expected'],
                   entry['current'], portgroup),
                objects=[entry['object'], {'kind': 'VirtualMachine', 'name': entry['vm']}], severity=INFO,
                remedy='Nothing to do before enable, which aligns it. To leave the Machine as it is, run enable with '
                       'vsphere_network_align_machines=false; preflight then stops on this mismatch.'))
        findings += entry['findings']
    return findings
