# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight guardrails: pure checks from ONE snapshot of the cluster and vCenter to findings.

DOMAIN.md sections 1, 5 and 6 are the list of what is checked. Nothing here does I/O: the
`preflight` module reads everything once into a snapshot (a plain dict, shape below) and
`run_checks` turns it into findings from the catalogue (`_catalogue.py`). Where another
module_util already owns a rule (address plan, Machine API, VM NICs, node network), the check
calls it, so preflight and the step that writes report the same finding ids.

Snapshot (every key optional; None for a kind means its API is not served, a kind missing
from the dict means it was not read):

    {
      'infrastructure': Infrastructure 'cluster' (config.openshift.io/v1),
      'network_config': Network 'cluster' (config.openshift.io/v1),
      'network_operator': Network 'cluster' (operator.openshift.io/v1),
      'cluster_version': ClusterVersion 'version',
      'nodes': [Node], 'namespaces': [Namespace], 'pods': [Pod],
      'egressips': [EgressIP] or None,
      'nncps': [NodeNetworkConfigurationPolicy] or None (NMState not installed),
      'nmstates': [NMState] or None, 'nns': [NodeNetworkState] or None,
      'tuneds': [Tuned] or None,
      'machinesets': [MachineSet] or None (no Machine API), 'machines': [Machine] or None,
      'unreadable': {kind: reason},                  # reads that failed (e.g. HTTP 403)
      'vsphere': None (not read) or {
          'about': vCenter's full name and version, 'datacenter': name, 'cluster': name, 'not_found': message or None,
          'hosts': [_vsphere_facts.host_network_facts],
          'distributed_switches': [_vsphere_facts.distributed_switch_facts
                                   (port groups may carry 'backing_type')],
          'opaque_networks': [{'name', 'type'}],
          'vms': [VM facts of clients/vcenter.read_vm_nics: {'name', 'moid', 'uuid', 'host', 'power_state', 'nics'}],
      },
      'config': the requested configuration: {'acknowledge_unsupported', 'vsphere': {'datacenter',
                'cluster', 'portgroup', 'accept_untested_nsx'}, 'network', 'nodes', 'objects'}
                (the public variables schema without the egressip_ prefix),
    }

`mode` says what to expect: 'plan' (before enable writes anything: what the collection will
create is reported as info) or 'audit' (the configuration should be in place: anything
missing is a problem), used by verify and the support report. `align_machines` (plan mode only) says whether
enable's vSphere network step will align the Machines' providerSpec with their VMs' NICs, so a Machine/VM NIC count
mismatch that step fixes is a notice rather than an error.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

try:
    import netaddr
except ImportError:  # the preflight module reports it through _address_plan.NETADDR_IMPORT_ERROR
    netaddr = None

from ansible_collections.ocp.egressip.plugins.module_utils.plan import address_plan as _address_plan
from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network_model
from ansible_collections.ocp.egressip.plugins.module_utils.checks import egressip_validation as _egressip_validation
from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as _machine_api
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as _node_network
from ansible_collections.ocp.egressip.plugins.module_utils.checks import variables_schema as _variables_schema
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as _vsphere_network
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, name as _name, node_ready
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches

PLAN = 'plan'
AUDIT = 'audit'
MODES = (PLAN, AUDIT)

MINIMUM_VERSION = (4, 14)   # secondary-interface EgressIP arrived in 4.14 (openshift/enhancements egress-ip-multi-nic.md)
EGRESS_ASSIGNABLE = _node_network.EGRESS_ASSIGNABLE_LABEL
PRIMARY_UDN_LABEL = 'k8s.ovn.org/primary-user-defined-network'
HOSTNAME_LABEL = _node_network.HOSTNAME_LABEL
# configure-ovs.sh gives br-ex's default route metric 48 (openshift/machine-config-operator,
# templates/common/_base/files/configure-ovs-network.yaml: BRIDGE_METRIC="48"); used when no
# NodeNetworkState shows the real one.
PRIMARY_DEFAULT_ROUTE_METRIC = 48
# OVN-Kubernetes internal subnets: (default, path of the override under ovnKubernetesConfig, what it is).
OVN_INTERNAL_SUBNETS = (
    ('100.64.0.0/16', ('ipv4', 'internalJoinSubnet'), 'OVN-Kubernetes join subnet'),
    ('100.88.0.0/16', ('ipv4', 'internalTransitSwitchSubnet'), 'OVN-Kubernetes transit switch subnet'),
    ('169.254.0.0/17', ('gatewayConfig', 'ipv4', 'internalMasqueradeSubnet'), 'OVN-Kubernetes masquerade subnet'),
    ('fd98::/64', ('ipv6', 'internalJoinSubnet'), 'OVN-Kubernetes IPv6 join subnet'),
    ('fd97::/64', ('ipv6', 'internalTransitSwitchSubnet'), 'OVN-Kubernetes IPv6 transit switch subnet'),
    ('fd69::/112', ('gatewayConfig', 'ipv6', 'internalMasqueradeSubnet'), 'OVN-Kubernetes IPv6 masquerade subnet'),
)
# A forwarding sysctl in any Tuned profile, whatever it is recommended to.
FORWARDING_SYSCTL = re.compile(r'net\.ipv[46]\.conf\.([^.\s=]+)\.forwarding\s*=\s*1\b')
OVN_MANAGED_INTERFACES = ('br-ex', 'ovn-k8s-mp0', 'lo', 'default', 'breth0')
IP_FORWARDING_CHOICES = ('per_interface', 'global', 'external')


# --- small readers over plain Kubernetes dicts ------------------------------------------------

def _network(text):
    """A netaddr.IPNetwork with host bits cleared, or None."""
    try:
        return netaddr.IPNetwork(str(text).strip()).cidr
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def _address(text):
    try:
        return netaddr.IPAddress(str(text).strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def _overlap(first, second):
    return first.version == second.version and first.first <= second.last and second.first <= first.last


def _node_ref(node):
    return {'kind': 'Node', 'name': _name(node)}


def _names(items, limit=20):
    items = sorted(items)
    text = ', '.join(items[:limit])
    return text + (' and %d more' % (len(items) - limit) if len(items) > limit else '')


def _subnets(node):
    """(primary subnets, secondary subnets) of a Node as CIDR texts, from its OVN-K annotations."""
    networks = _egress_network.node_networks_from_node(node)
    return ([str(subnet) for subnet in _egress_network.primary_subnets(networks)],
            [str(subnet) for subnet in _egress_network.secondary_subnets(networks)])


def namespace_selector_matches(selector, labels):
    """An EgressIP namespaceSelector: {} selects every namespace, a missing selector none."""
    return selector is not None and selector_matches(selector, labels)


def parse_version(text):
    """(major, minor) of an OpenShift version string such as 4.16.3, or None."""
    match = re.match(r'^\s*v?(\d+)\.(\d+)', str(text or ''))
    return (int(match.group(1)), int(match.group(2))) if match else None


# --- the context every check reads: the snapshot, parsed once --------------------------------

class PreflightContext:
    """The snapshot with what several checks need, computed once."""

    def __init__(self, snapshot, mode=PLAN, align_machines=True):
        if mode not in MODES:
            raise ValueError('mode must be one of %s, not %r' % (', '.join(MODES), mode))
        self.snapshot = snapshot
        self.mode = mode
        # whether enable's vSphere network step aligns the Machines (machineset_network align_machines)
        self.align_machines = bool(align_machines)
        self.config = snapshot.get('config') or {}
        self.network_config = self.config.get('network') or {}
        self.vsphere_config = self.config.get('vsphere') or {}
        self.portgroup_config = self.vsphere_config.get('portgroup') or {}
        self.objects = self.config.get('objects') or []
        # the secondary network, parsed once by the rules of model/network.py; its refusals are check_address_plan's
        self.network, self.network_findings = (_network_model.parse(self.network_config, 'egressip_network.')
                                               if self.network_config.get('cidr') else (None, []))
        self.cidr = self.network.cidr if self.network is not None else None
        self.nodes = snapshot.get('nodes') or []
        self.nodes_by_name = dict((_name(node), node) for node in self.nodes)
        # {node: (primary subnet texts, secondary subnet texts)} from the OVN-K annotations
        self.networks = dict((_name(node), _subnets(node)) for node in self.nodes)
        self.selector = (self.config.get('nodes') or {}).get('selector')
        # a malformed selector is a finding of check_node_selector, never an exception here
        self.selector_ok = not _variables_schema.node_selector_problems('egressip_nodes.selector', self.selector or {})
        self.selected_nodes = ([node for node in self.nodes if selector_matches(self.selector, _labels(node))]
                               if self.requested() and self.selector_ok and self.selector else [])
        self.vsphere = snapshot.get('vsphere')
        self.vms = (self.vsphere or {}).get('vms') or []
        self.vms_by_uuid = dict((_vsphere_network.normalize_uuid(vm.get('uuid')), vm) for vm in self.vms if vm.get('uuid'))

    def requested(self):
        """Whether secondary-network egress is requested (a secondary cidr or egress objects)."""
        return bool(self.network_config.get('cidr') or self.objects)

    def kind(self, key):
        return self.snapshot.get(key)

    def vsphere_cluster_read(self):
        return self.vsphere is not None and not self.vsphere.get('not_found')

    def primary_networks(self):
        """{primary subnet text: [node names]} from every node's node-primary-ifaddr."""
        networks = {}
        for name in sorted(self.networks):
            for subnet in self.networks[name][0]:
                networks.setdefault(subnet, []).append(name)
        return networks

    def node_vm(self, node):
        uuid = _vsphere_network.vm_uuid_from_provider_id(_dig(node, 'spec', 'providerID'))
        return self.vms_by_uuid.get(uuid) if uuid else None

    def holds_secondary_subnet(self, node):
        return self.cidr is not None and str(self.cidr) in self.networks.get(_name(node), ((), ()))[1]

    def capable_nodes(self):
        """Nodes that can host the secondary egress IPs now (audit) or once enable has run (plan)."""
        if self.mode == AUDIT:
            return [node for node in self.nodes
                    if EGRESS_ASSIGNABLE in _labels(node) and node_ready(node) and self.holds_secondary_subnet(node)]
        return [node for node in self.selected_nodes
                if node_ready(node) and (not self.vsphere_cluster_read() or self.node_vm(node) is not None)]

    def selected_namespaces(self, egress_object):
        selector = egress_object.get('namespace_selector')
        return [namespace for namespace in self.snapshot.get('namespaces') or []
                if namespace_selector_matches(selector, _labels(namespace))]


# --- platform ---------------------------------------------------------------------------------

def check_platform(ctx):
    infrastructure = ctx.kind('infrastructure')
    if infrastructure is None:
        return []
    platform = _dig(infrastructure, 'status', 'platformStatus', 'type') or _dig(infrastructure, 'status', 'platform')
    if platform == 'VSphere':
        return []
    return [catalogue_finding(
        'platform_not_vsphere',
        'The cluster platform is %s, not VSphere (Infrastructure cluster status.platformStatus.type): this collection '
        'configures OpenShift on VMware vSphere only.' % (platform or 'not reported'),
        objects=[{'kind': 'Infrastructure', 'name': 'cluster'}])]


def check_network_type(ctx):
    network = ctx.kind('network_config')
    if network is None:
        return []
    network_type = _dig(network, 'status', 'networkType') or _dig(network, 'spec', 'networkType')
    if network_type == 'OVNKubernetes':
        return []
    return [catalogue_finding(
        'platform_network_type_not_ovn_kubernetes',
        'The cluster network type is %s, not OVNKubernetes (Network.config.openshift.io cluster): EgressIP on a '
        'secondary interface is an OVN-Kubernetes feature.' % (network_type or 'not reported'),
        objects=[{'kind': 'Network', 'apiVersion': 'config.openshift.io/v1', 'name': 'cluster'}])]


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
    parsed = parse_version(text)
    objects = [{'kind': 'ClusterVersion', 'name': 'version'}]
    if parsed is None:
        return [catalogue_finding(
            'platform_version_unsupported',
            'The OpenShift version cannot be read from ClusterVersion version (status.desired.version is %r); '
            '4.14 or newer is required.' % (text,), objects=objects, severity=WARNING)]
    if parsed >= MINIMUM_VERSION:
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
     'by_hostname': {hostname: [interfaces]} (Tuned recommended per hostname, as the collection writes it),
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
            interfaces = [match.group(1) for match in FORWARDING_SYSCTL.finditer(profile.get('data') or '')
                          if match.group(1) not in OVN_MANAGED_INTERFACES]
            if interfaces and profile.get('name') not in recommended_by_hostname:
                state['other_profiles'].append('%s/%s' % (_name(tuned), profile.get('name')))
    state['by_hostname'] = dict((hostname, sorted(interfaces)) for hostname, interfaces in state['by_hostname'].items())
    return state


def check_ip_forwarding(ctx):
    if not ctx.requested():
        return []
    state = forwarding_state(ctx.snapshot)
    if state['global']:
        return []
    nodes = ctx.capable_nodes() if ctx.mode == AUDIT else ctx.selected_nodes
    uncovered = [_name(node) for node in nodes if not state['by_hostname'].get(_labels(node).get(HOSTNAME_LABEL, _name(node)))]
    if not uncovered:
        return []
    choice = ctx.network_config.get('ip_forwarding') or 'per_interface'
    objects = [{'kind': 'Node', 'name': name} for name in uncovered[:20]]
    found = ('IP forwarding is not enabled for the secondary NIC of node(s) %s: gatewayConfig.ipForwarding is %s and no '
             'Tuned profile sets net.ipv4.conf.<interface>.forwarding=1 for them.' % (_names(uncovered), state['ip_forwarding']))
    unknown = ''
    if state['other_profiles']:
        unknown = (' Tuned profile(s) %s set forwarding but are recommended by other rules, which preflight does not '
                   'evaluate.' % ', '.join(sorted(state['other_profiles'])))
    if choice == 'external' or unknown:
        return [catalogue_finding(
            'node_ip_forwarding_off', found + unknown + ' MachineConfig sysctl files are not read either, so this cannot be '
            'confirmed; without forwarding, egress traffic through the secondary NIC is silently dropped.',
            objects=objects, severity=WARNING)]
    if ctx.mode == PLAN:
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
    subnets = [subnet for subnet in (_network(text) for text in side.get('networkSubnetCidr') or []) if subnet is not None]
    if cidr is not None and any(_overlap(subnet, cidr) for subnet in subnets):
        return False, True
    if subnets:
        return True, False
    excluded = [subnet for subnet in (_network(text) for text in side.get('excludeNetworkSubnetCidr') or []) if subnet is not None]
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
            address = _address(ip)
            if address is not None:
                wanted[str(address)] = egress_object.get('name') or ''
    return wanted


def check_egress_ips_in_policies(ctx):
    """DOMAIN.md 5.9: an egress IP must not appear in any NetworkManager profile."""
    wanted = requested_egress_ips(ctx)
    findings = []
    for policy in ctx.kind('nncps') or []:
        for interface, ip in _policy_addresses(policy):
            address = _address(ip)
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
        if ctx.mode == PLAN:
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
    if ctx.mode != PLAN or not ctx.align_machines or not ctx.portgroup_config.get('name'):
        return set()
    rows = _machine_api.node_machines(ctx.selected_nodes, ctx.kind('machines') or [], ctx.kind('machinesets') or [])
    return set((_dig(row['machine'], 'metadata', 'namespace'), _name(row['machine'])) for row in rows if row['machine'])


def _enable_readds_nic(ctx, machine, entry, on_network, portgroup):
    """Plan mode: the Machine of a selected egress node lists the port group, its VM lost that NIC (removed by hand) and
    nothing else: enable's vSphere network step adds the NIC again, which ends the mismatch."""
    selected = set(_name(node) for node in ctx.selected_nodes)
    return (ctx.mode == PLAN and bool(portgroup) and entry['mismatch'] and not on_network
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


# --- vSphere: nodes to VMs, switches, port groups, NSX ---------------------------------------

def check_vsphere_read(ctx):
    if not ctx.requested():
        return []
    if ctx.vsphere is None:
        return [catalogue_finding(
            'vsphere_not_checked',
            'vCenter was not read (no datacenter/cluster or connection given): the port group, VM NIC, NSX and Machine '
            'NIC count checks were skipped.', objects=[{'kind': 'option', 'name': 'egressip_vsphere'}])]
    if ctx.vsphere.get('not_found'):
        return [catalogue_finding('vsphere_cluster_not_found', ctx.vsphere['not_found'],
                                  objects=[{'kind': 'option', 'name': 'egressip_vsphere'}])]
    return []


def _vm_targets(ctx):
    nodes = [{'name': _name(node), 'provider_id': _dig(node, 'spec', 'providerID')} for node in ctx.selected_nodes]
    return _vsphere_network.resolve_targets(ctx.vms, nodes)


def _secondary_network(ctx):
    """The network the NICs go on, as _vsphere_network describes it, or None when it does not exist yet."""
    name = ctx.portgroup_config.get('name')
    if ctx.portgroup_config.get('switch_type') == _vsphere_network.DISTRIBUTED:
        for switch in ctx.vsphere.get('distributed_switches') or []:
            for portgroup in switch.get('portgroups') or []:
                if portgroup.get('name') == name and switch.get('name') == (ctx.portgroup_config.get('switch') or switch.get('name')):
                    return {'type': _vsphere_network.DISTRIBUTED, 'name': name, 'moid': portgroup.get('moid'),
                            'portgroup_key': portgroup.get('key'), 'switch_uuid': switch.get('uuid')}
        return None
    return {'type': _vsphere_network.STANDARD, 'name': name, 'moid': None}


def check_node_vms(ctx):
    """Every selected node has exactly one VM, and its VM can take the NIC (NIC limit, ambiguity, adapter)."""
    if not ctx.vsphere_cluster_read() or not ctx.selected_nodes:
        return []
    targets, findings = _vm_targets(ctx)
    network = _secondary_network(ctx) if ctx.portgroup_config.get('name') else None
    if network is not None:
        # the collection's NICs by MAC (its policies): a changed port group moves them, or is refused here, before any write
        owned = _vsphere_network.own_macs_by_node(_node_network.policy_allocation(policy) for policy in ctx.kind('nncps') or [])
        for entry in _vsphere_network.plan_vm_nics(targets, network, own_macs_by_node=owned):
            findings += entry['findings']
    return findings


def _portgroup_missing_severity(ctx):
    return INFO if ctx.mode == PLAN else ERROR


def _standard_portgroup_state(ctx, name, vlan, switch):
    missing, vlan_mismatch, other_switch, no_switch = [], [], [], []
    for host in ctx.vsphere.get('hosts') or []:
        switches = [item.get('name') for item in host.get('standard_switches') or []]
        if switch and switch not in switches:
            no_switch.append(host['name'])
        portgroup = next((item for item in host.get('standard_portgroups') or [] if item.get('name') == name), None)
        if portgroup is None:
            missing.append(host['name'])
            continue
        if vlan is not None and portgroup.get('vlan_id') != vlan:
            vlan_mismatch.append('%s (VLAN %s)' % (host['name'], portgroup.get('vlan_id')))
        if switch and portgroup.get('vswitch') != switch:
            other_switch.append('%s (on %s)' % (host['name'], portgroup.get('vswitch')))
    return missing, vlan_mismatch, other_switch, no_switch


def check_standard_portgroup(ctx):
    if not ctx.vsphere_cluster_read() or ctx.portgroup_config.get('switch_type', 'standard') != 'standard':
        return []
    name, vlan, switch = ctx.portgroup_config.get('name'), ctx.portgroup_config.get('vlan_id'), ctx.portgroup_config.get('switch')
    if not name:
        return []
    missing, vlan_mismatch, other_switch, no_switch = _standard_portgroup_state(ctx, name, vlan, switch)
    hosts = [host['name'] for host in ctx.vsphere.get('hosts') or []]
    findings = []
    if no_switch:
        findings.append(catalogue_finding(
            'switch_missing', 'Standard vSwitch %s does not exist on host(s) %s of vSphere cluster %s.'
            % (switch, _names(no_switch), ctx.vsphere.get('cluster')),
            objects=[{'kind': 'HostSystem', 'name': host} for host in no_switch]))
    if other_switch:
        findings.append(catalogue_finding(
            'vsphere_portgroup_on_other_vswitch', 'Port group %s is not on vSwitch %s on host(s) %s.' % (name, switch, _names(other_switch)),
            objects=[{'kind': 'HostSystem', 'name': item.split(' ')[0]} for item in other_switch]))
    if vlan_mismatch:
        findings.append(catalogue_finding(
            'portgroup_vlan_mismatch', 'Standard port group %s has another VLAN than %s on host(s) %s: a node VM on (or moved '
            'by DRS, vMotion or HA to) such a host is on another network.' % (name, vlan, _names(vlan_mismatch)),
            objects=[{'kind': 'HostSystem', 'name': item.split(' ')[0]} for item in vlan_mismatch]))
    if missing and len(missing) == len(hosts):
        message = ('Standard port group %s does not exist on any host of vSphere cluster %s%s.'
                   % (name, ctx.vsphere.get('cluster'), '; the vSphere network step will create it on every host (VLAN %s)' % vlan
                      if ctx.mode == PLAN else ''))
        findings.append(catalogue_finding('portgroup_missing', message, severity=_portgroup_missing_severity(ctx),
                                          objects=[{'kind': 'Network', 'name': name}]))
    elif missing:
        message = ('Standard port group %s is missing on host(s) %s of vSphere cluster %s: a node VM moved there by DRS, vMotion '
                   'or HA silently loses its secondary network and no EgressIP failover happens.%s'
                   % (name, _names(missing), ctx.vsphere.get('cluster'),
                      ' The vSphere network step will create it there.' if ctx.mode == PLAN else ''))
        findings.append(catalogue_finding('portgroup_missing', message, severity=_portgroup_missing_severity(ctx),
                                          objects=[{'kind': 'HostSystem', 'name': host} for host in missing]))
    return findings


def check_distributed_portgroup(ctx):
    if not ctx.vsphere_cluster_read() or ctx.portgroup_config.get('switch_type') != 'distributed':
        return []
    name, vlan, switch = ctx.portgroup_config.get('name'), ctx.portgroup_config.get('vlan_id'), ctx.portgroup_config.get('switch')
    if not name:
        return []
    switches = dict((item.get('name'), item) for item in ctx.vsphere.get('distributed_switches') or [])
    if switch and switch not in switches:
        return [catalogue_finding(
            'switch_missing', "Distributed switch '%s' not found in datacenter %s; distributed switches there: %s."
            % (switch, ctx.vsphere.get('datacenter'), _names(switches) or 'none'),
            objects=[{'kind': 'option', 'name': 'egressip_vsphere.portgroup.switch'}])]
    findings = []
    if switch:
        members = set(switches[switch].get('hosts') or [])
        outside = [host['name'] for host in ctx.vsphere.get('hosts') or [] if host['name'] not in members]
        if outside:
            findings.append(catalogue_finding(
                'switch_missing', 'Host(s) %s of vSphere cluster %s are not members of distributed switch %s: a node VM '
                'placed there cannot connect to %s.' % (_names(outside), ctx.vsphere.get('cluster'), switch, name),
                objects=[{'kind': 'HostSystem', 'name': host} for host in outside]))
    candidates = [(item, portgroup) for item in switches.values() if not switch or item.get('name') == switch
                  for portgroup in item.get('portgroups') or [] if portgroup.get('name') == name]
    if not candidates:
        message = 'Distributed port group %s does not exist%s%s.' % (
            name, ' on %s' % switch if switch else '',
            '; the vSphere network step will create it (VLAN %s)' % vlan if ctx.mode == PLAN else '')
        findings.append(catalogue_finding('portgroup_missing', message, severity=_portgroup_missing_severity(ctx),
                                          objects=[{'kind': 'DistributedVirtualPortgroup', 'name': name}]))
        return findings
    for item, portgroup in candidates:
        if vlan is not None and (portgroup.get('vlan_type') not in (None, 'vlan') or portgroup.get('vlan_id') != vlan):
            current = portgroup.get('vlan_id') if portgroup.get('vlan_type') in (None, 'vlan') else '%s %s' % (
                portgroup.get('vlan_type'), portgroup.get('vlan_ranges') or portgroup.get('vlan_id'))
            findings.append(catalogue_finding(
                'portgroup_vlan_mismatch', 'Distributed port group %s on %s has VLAN %s, not %s.' % (name, item.get('name'), current, vlan),
                objects=[{'kind': 'DistributedVirtualPortgroup', 'name': name, 'key': portgroup.get('key')}]))
    return findings


def check_nsx(ctx):
    if not ctx.vsphere_cluster_read() or not ctx.portgroup_config.get('name'):
        return []
    name = ctx.portgroup_config['name']
    backed = ['distributed port group %s on %s (backing type %s)' % (name, switch.get('name'), portgroup.get('backing_type'))
              for switch in ctx.vsphere.get('distributed_switches') or [] for portgroup in switch.get('portgroups') or []
              if portgroup.get('name') == name and str(portgroup.get('backing_type') or '').lower() == 'nsx']
    backed += ['opaque network %s (%s)' % (item.get('name'), item.get('type') or 'NSX')
               for item in ctx.vsphere.get('opaque_networks') or [] if item.get('name') == name]
    if not backed:
        return []
    accepted = ctx.vsphere_config.get('accept_untested_nsx') is True
    return [catalogue_finding(
        'nsx_backed_network',
        'The secondary network %s is backed by NSX: %s. NSX segments may limit the addresses learned per port (SpoofGuard, '
        'IP discovery), so egress IPs next to the NIC address may be dropped; this is untested and unconfirmed.%s'
        % (name, '; '.join(backed), ' Accepted with egressip_vsphere.accept_untested_nsx: true.' if accepted else ''),
        objects=[{'kind': 'Network', 'name': name}], severity=WARNING if accepted else ERROR)]


# --- secondary subnet, address plan, route metric --------------------------------------------

def cluster_internal_networks(snapshot):
    """[(subnet, owner)] of the cluster, service and OVN-Kubernetes internal networks."""
    networks = []
    network = snapshot.get('network_config') or {}
    for source in ('status', 'spec'):
        entries = [(entry.get('cidr'), 'cluster network') for entry in _dig(network, source, 'clusterNetwork') or []]
        entries += [(text, 'service network') for text in _dig(network, source, 'serviceNetwork') or []]
        if entries:
            networks.extend(entries)
            break
    ovn = _dig(snapshot.get('network_operator'), 'spec', 'defaultNetwork', 'ovnKubernetesConfig') or {}
    for default, path, owner in OVN_INTERNAL_SUBNETS:
        override = _dig(ovn, *path)
        networks.append((override, owner + ' (as configured)') if override else (default, owner + ' (default)'))
    return [(subnet, owner) for subnet, owner in ((_network(text), owner) for text, owner in networks) if subnet is not None]


def check_cluster_network_overlap(ctx):
    if ctx.cidr is None:
        return []
    return [catalogue_finding(
        'secondary_cidr_overlaps_cluster_network',
        'egressip_network.cidr %s overlaps the %s %s: traffic to the secondary subnet would be routed inside the cluster.'
        % (ctx.cidr, owner, subnet), objects=[{'kind': 'option', 'name': 'egressip_network.cidr'}])
        for subnet, owner in cluster_internal_networks(ctx.snapshot) if _overlap(subnet, ctx.cidr)]


def _primary_and_host_subnets(ctx):
    """(primary, host) lists of (subnet text, owner) for the address plan's overlap check."""
    primary = [(subnet, 'primary address of node %s' % _names(nodes, 3)) for subnet, nodes in sorted(ctx.primary_networks().items())]
    vsphere_spec = _dig(ctx.kind('infrastructure'), 'spec', 'platformSpec', 'vsphere') or {}
    primary += [(text, 'Infrastructure machineNetworks') for text in vsphere_spec.get('machineNetworks') or [] if _network(text)]
    host = [(subnet, 'host-cidrs of node %s' % name) for name in sorted(ctx.networks) for subnet in ctx.networks[name][1]]
    return primary, host


def check_address_plan(ctx):
    """The address plan's own validation (`_address_plan.py`): cidr, gateway, range (both families of a dual-stack
    network), host subnet overlaps; in plan mode also the node step's allocation for the selected nodes."""
    if not ctx.network_config.get('cidr'):
        return []
    networks = ctx.network.families if ctx.network is not None else []
    findings = list(ctx.network_findings)
    primary, host = _primary_and_host_subnets(ctx)
    for network in networks:
        findings += _address_plan.check_host_subnets(network, primary, host)
    if findings or ctx.mode != PLAN or not ctx.selected_nodes:
        return findings
    return findings + _node_address_plan(ctx, networks)


# found by other checks of preflight from the same rules (route_metric_findings, check_host_subnets)
_NODE_PLAN_OWN_CHECKS = ('node_route_metric_too_low', 'node_network_overlaps_host_subnet')


def _node_address_plan(ctx, networks):
    """The refusals of the node address step (`na.plan_nic_addresses`) for the nodes enable will address:
    range too small, address in use, allocation fixed, policy not owned. The MACs are not known before the NICs exist."""
    snapshot = {'nodes': ctx.nodes, 'nncps': ctx.kind('nncps') or [], 'nnces': [], 'nns': ctx.kind('nns') or [],
                'egressips': ctx.kind('egressips') or []}
    entries = [{'node': _name(node), 'mac': None, 'address': None, 'ipv6_address': None} for node in ctx.selected_nodes]
    plan = na.plan_nic_addresses(entries, networks, ctx.network.route_metric, 'egressip0', snapshot)
    return [item for item in plan['findings'] if item['severity'] == ERROR and item['id'] not in _NODE_PLAN_OWN_CHECKS]


def check_variables(ctx):
    """The variables file against the public schema (`_variables_schema.py`): unknown keys, types, bounds.
    config['variables'] holds the egressip_* variables as the role passes them; absent for module options."""
    if ctx.config.get('variables') is None:
        return []
    normalized, findings = _variables_schema.check(ctx.config['variables'])
    portgroup = (normalized.get('egressip_vsphere') or {}).get('portgroup')
    if findings or not portgroup:
        return findings
    # the vSphere network step's own option rules (vsphere_portgroup), for the keys only that step reads
    options = dict((key, portgroup.get(key)) for key in ('vlan_id', 'port_binding', 'num_ports', 'elastic'))
    return [catalogue_finding('variables_invalid', 'egressip_vsphere.portgroup.%s' % problem,
                              objects=[{'kind': 'option', 'name': 'egressip_vsphere.portgroup'}])
            for problem in _vsphere_network.validate_portgroup_options(portgroup.get('switch_type') or 'standard', options)]


def check_bounds(ctx):
    """Bounds and formats of the public schema (`_variables_schema.py`) for values given as module options."""
    values = (('egressip_network.route_metric', ctx.network_config.get('route_metric')),
              ('egressip_vsphere.portgroup.name', ctx.portgroup_config.get('name')),
              ('egressip_vsphere.portgroup.vlan_id', ctx.portgroup_config.get('vlan_id')))
    return [item for path, value in values if value is not None for item in _variables_schema.field_findings(path, value)]


def check_route_metric(ctx):
    """The gateway route via the secondary NIC must have a higher metric than the primary default route."""
    metric = ctx.network_config.get('route_metric')
    if metric is None or not ctx.requested():
        return []
    try:
        metric = int(metric)
    except (TypeError, ValueError):
        return []
    if not 0 <= metric <= _variables_schema.ROUTE_METRIC_MAX:
        return []  # check_bounds
    versions = (ctx.cidr.version,) if ctx.cidr is not None else (4,)
    selected = set(_name(node) for node in ctx.selected_nodes)
    nns_by_node = dict((_name(nns), nns) for nns in ctx.kind('nns') or [] if _name(nns) in selected)
    if nns_by_node:
        return _node_network.route_metric_findings(nns_by_node, metric, {}, versions)
    if metric > PRIMARY_DEFAULT_ROUTE_METRIC:
        return []
    return [catalogue_finding(
        'node_route_metric_too_low',
        'egressip_network.route_metric %d is not above the metric %d that configure-ovs gives the primary default route via '
        'br-ex: the secondary gateway would take over the default route, which OVN-Kubernetes does not support.'
        % (metric, PRIMARY_DEFAULT_ROUTE_METRIC), objects=[{'kind': 'option', 'name': 'egressip_network.route_metric'}])]


def check_reachability(ctx):
    if not ctx.requested() or ctx.kind('network_operator') is None:
        return []
    config = _dig(ctx.kind('network_operator'), 'spec', 'defaultNetwork', 'ovnKubernetesConfig', 'egressIPConfig') or {}
    if config.get('reachabilityTotalTimeoutSeconds') != 0:
        return []
    return [catalogue_finding(
        'egress_reachability_check_disabled',
        'egressIPConfig.reachabilityTotalTimeoutSeconds is 0: OVN-Kubernetes does not probe egress nodes, so an unreachable '
        'node keeps its egress IPs until its Ready condition turns false.',
        objects=[{'kind': 'Network', 'apiVersion': 'operator.openshift.io/v1', 'name': 'cluster'}])]


# --- egress nodes and capacity ---------------------------------------------------------------

def check_node_selector(ctx):
    """The egress node selector is well formed (the shared LabelSelector rules) and not empty when egress is requested."""
    problems = _variables_schema.node_selector_problems('egressip_nodes.selector', ctx.selector if ctx.selector is not None else {})
    if problems or not ctx.requested() or ctx.selector:
        return problems
    return [catalogue_finding(
        'egress_nodes_selector_empty',
        'egressip_nodes.selector is %s: it would select every node of the cluster, control plane included, and give each a '
        'secondary NIC, an address and the %s label.' % ('empty ({})' if ctx.selector == {} else 'missing', EGRESS_ASSIGNABLE),
        objects=[{'kind': 'option', 'name': 'egressip_nodes.selector'}])]


def check_egress_nodes(ctx):
    if not ctx.requested() or ctx.kind('nodes') is None or ctx.selected_nodes or not ctx.selector_ok or not ctx.selector:
        return []
    selector = (ctx.config.get('nodes') or {}).get('selector') or {}
    return [catalogue_finding(
        'egress_nodes_none_selected',
        'egressip_nodes.selector %s matches none of the %d nodes.' % (json.dumps(selector, sort_keys=True), len(ctx.nodes)),
        objects=[{'kind': 'option', 'name': 'egressip_nodes.selector'}])]


def check_capacity(ctx):
    if not ctx.objects or ctx.kind('nodes') is None or (ctx.mode == PLAN and not (ctx.selector_ok and ctx.selector)):
        return []  # plan mode counts the selected nodes: a selector finding comes first
    capable = ctx.capable_nodes()
    if ctx.mode == AUDIT:
        how = 'capable node(s) (labelled %s, Ready, holding %s in host-cidrs)' % (EGRESS_ASSIGNABLE, ctx.cidr)
    else:
        how = 'Ready node(s) selected by egressip_nodes.selector%s' % (' with a VM' if ctx.vsphere_cluster_read() else '')
    findings = []
    for egress_object in ctx.objects:
        count = len(egress_object.get('egress_ips') or [])
        if count == 0 or len(capable) >= count + 1:
            continue
        if len(capable) < count:
            consequence = '%d of its IPs cannot be assigned at all' % (count - len(capable))
        else:
            consequence = 'one node failure leaves an IP unassigned (a node never hosts two IPs of one EgressIP)'
        single = ' This is a single-node cluster: there is no second node to fail over to.' if len(ctx.nodes) == 1 else ''
        findings.append(catalogue_finding(
            'egress_nodes_capacity_insufficient',
            'EgressIP %s has %d IP(s) but there are only %d %s: %s; at least %d are needed.%s'
            % (egress_object.get('name'), count, len(capable), how, consequence, count + 1, single),
            objects=[{'kind': 'EgressIP', 'name': egress_object.get('name')}] + [_node_ref(node) for node in capable][:20]))
    return findings


# --- selected namespaces and pods ------------------------------------------------------------

def check_udn_namespaces(ctx):
    findings = []
    for egress_object in ctx.objects:
        udn = [_name(namespace) for namespace in ctx.selected_namespaces(egress_object) if PRIMARY_UDN_LABEL in _labels(namespace)]
        if udn:
            findings.append(catalogue_finding(
                'namespace_primary_udn',
                'EgressIP %s selects namespace(s) %s, which use a user-defined primary network (label %s): the secondary-interface '
                'egress path this collection configures serves pods on the default cluster network.'
                % (egress_object.get('name'), _names(udn), PRIMARY_UDN_LABEL),
                objects=[{'kind': 'Namespace', 'name': name} for name in udn[:20]]))
    return findings


def check_host_network_pods(ctx):
    pods = ctx.kind('pods')
    if not pods:
        return []
    findings = []
    for egress_object in ctx.objects:
        namespaces = set(_name(namespace) for namespace in ctx.selected_namespaces(egress_object))
        pod_selector = egress_object.get('pod_selector')
        selected = sorted((_dig(pod, 'metadata', 'namespace'), _name(pod)) for pod in pods
                          if _dig(pod, 'metadata', 'namespace') in namespaces and _dig(pod, 'spec', 'hostNetwork')
                          and (pod_selector is None or selector_matches(pod_selector, _labels(pod))))
        if selected:
            findings.append(catalogue_finding(
                'host_network_pods_selected',
                'EgressIP %s selects host-networked pod(s) %s: their traffic leaves with the node address, never with an egress IP.'
                % (egress_object.get('name'), _names('%s/%s' % item for item in selected)),
                objects=[{'kind': 'Pod', 'namespace': namespace, 'name': name} for namespace, name in selected[:20]]))
    return findings


# --- EgressIPs already on the primary network -------------------------------------------------

def primary_egressips(snapshot):
    """Every egress IP of the cluster's EgressIP objects that lies on the primary network (DOMAIN.md section 3).

    [{'name', 'egress_ip', 'node' (assigned node or None), 'subnet'}] sorted by object and IP:
    the record later runs compare with, to prove these were not changed.
    """
    nodes = [_egress_network.node_networks_from_node(node) for node in snapshot.get('nodes') or []]
    records = []
    for egressip in snapshot.get('egressips') or []:
        assigned = dict((str(_address(item.get('egressIP'))), item.get('node')) for item in _dig(egressip, 'status', 'items') or [])
        for ip in _dig(egressip, 'spec', 'egressIPs') or []:
            address = _address(ip)
            if address is None:
                continue
            where = _egress_network.classify_ip_on_nodes(address, nodes)
            if where.network == _egress_network.PRIMARY:
                records.append({'name': _name(egressip), 'egress_ip': str(address), 'node': assigned.get(str(address)),
                                'subnet': str(where.subnet)})
    return sorted(records, key=lambda record: (record['name'], record['egress_ip']))


def check_primary_egressips(ctx):
    records = primary_egressips(ctx.snapshot)
    if not records:
        return []
    findings = [catalogue_finding(
        'primary_egressips_present',
        '%d egress IP(s) on the primary network exist and are recorded: %s. This collection does not change them.'
        % (len(records), _names('%s %s on %s' % (record['name'], record['egress_ip'], record['node'] or 'no node')
                                for record in records)),
        objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(record['name'] for record in records))])]
    if ctx.mode != PLAN:
        return findings
    newly = [node for node in ctx.selected_nodes if EGRESS_ASSIGNABLE not in _labels(node)]
    affected = []
    for record in records:
        candidates = [_name(node) for node in newly if record['subnet'] in ctx.networks[_name(node)][0]]
        if candidates:
            affected.append((record, candidates))
    if affected:
        lines = ['%s %s (%s; candidates: %s)' % (record['name'], record['egress_ip'],
                                                 'unassigned now, may be placed on a new node at once' if record['node'] is None
                                                 else 'on %s now, may move to a new node after a failover' % record['node'],
                                                 _names(candidates, 5))
                 for record, candidates in affected]
        findings.append(catalogue_finding(
            'primary_egressips_affected_by_labels',
            'The %s label is shared by primary and secondary egress IPs: labelling %d new node(s) also makes them candidates '
            'for primary-network egress IPs: %s.' % (EGRESS_ASSIGNABLE, len(newly), '; '.join(lines)),
            objects=[{'kind': 'EgressIP', 'name': name} for name in sorted(set(record['name'] for record, _nodes in affected))],
            severity=WARNING if any(record['node'] is None for record, _nodes in affected) else INFO))
    return findings


# --- EgressIP plan validation (owned by the EgressIP step) -------------------------------------

def check_egressip_plan(ctx):
    """The EgressIP step's own validation (`_egressip_validation.py`): shape, each IP inside the cidr and
    not reserved, not in the node address range, not a node address, not claimed by another object, no
    duplicates. Capacity is checked here instead (plan mode counts the nodes about to be labelled)."""
    if not ctx.objects:
        return []
    return _egressip_validation.validate_config(ctx.config, ctx.nodes, ctx.kind('egressips') or [], check_capacity_rule=False,
                                                network=ctx.network)


# --- reads that failed ------------------------------------------------------------------------

def check_unreadable(ctx):
    unreadable = ctx.snapshot.get('unreadable') or {}
    if not unreadable:
        return []
    return [catalogue_finding(
        'preflight_read_incomplete',
        'Preflight could not read %s; the checks that need them were skipped.' % '; '.join(
            '%s (%s)' % (kind, reason) for kind, reason in sorted(unreadable.items())),
        objects=[{'kind': kind} for kind in sorted(unreadable)])]


CHECKS = (
    check_unreadable,
    check_variables,
    check_bounds,
    check_platform,
    check_network_type,
    check_openshift_version,
    check_acknowledgement,
    check_ip_forwarding,
    check_node_networking,
    check_nmstate,
    check_nmstate_version,
    check_egress_ips_in_policies,
    check_vsphere_read,
    check_node_vms,
    check_machine_api,
    check_machine_nic_counts,
    check_standard_portgroup,
    check_distributed_portgroup,
    check_nsx,
    check_cluster_network_overlap,
    check_address_plan,
    check_route_metric,
    check_reachability,
    check_node_selector,
    check_egress_nodes,
    check_capacity,
    check_egressip_plan,
    check_udn_namespaces,
    check_host_network_pods,
    check_primary_egressips,
)

SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def run_checks(snapshot, mode=PLAN, align_machines=True):
    """Every finding for one snapshot, errors first (stable order within a severity).

    align_machines: whether the enable run that follows aligns the Machines' providerSpec with their VMs' NICs
    (the vSphere network step's align_machines); read in plan mode only."""
    ctx = PreflightContext(snapshot, mode, align_machines)
    findings, seen = [], set()
    for check in CHECKS:
        for item in check(ctx):
            # two rule owners may report the same problem (the address plan is validated by both steps)
            if (item['id'], item['message']) not in seen:
                seen.add((item['id'], item['message']))
                findings.append(item)
    return sorted(findings, key=lambda item: SEVERITY_ORDER[item['severity']])


def cluster_facts(snapshot):
    """What the summary and the report show about the cluster: versions, platform, forwarding, counts."""
    infrastructure = snapshot.get('infrastructure')
    state = forwarding_state(snapshot)
    nodes = snapshot.get('nodes') or []
    return {
        'openshift_version': cluster_version(snapshot),
        'platform': _dig(infrastructure, 'status', 'platformStatus', 'type') or _dig(infrastructure, 'status', 'platform'),
        'network_type': _dig(snapshot.get('network_config'), 'status', 'networkType') or _dig(snapshot.get('network_config'), 'spec', 'networkType'),
        'ip_forwarding': state['ip_forwarding'],
        'forwarding_by_hostname': state['by_hostname'],
        'nodes': len(nodes),
        'egress_assignable_nodes': sorted(_name(node) for node in nodes if EGRESS_ASSIGNABLE in _labels(node)),
        'machine_api': bool(snapshot.get('machines')),
        'nmstate': snapshot.get('nncps') is not None,
        'egressips': len(snapshot.get('egressips') or []),
    }
