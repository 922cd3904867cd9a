# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The context every preflight check reads: the snapshot of the cluster and vCenter (its shape is in preflight.py),
parsed once, and the small readers and constants the checks share. Pure: no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network_model
from ansible_collections.ocp.egressip.plugins.module_utils.checks import variables_schema as _variables_schema
from ansible_collections.ocp.egressip.plugins.module_utils.plan import vsphere_network as _vsphere_network
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, name as _name, node_ready
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches


PLAN = 'plan'
AUDIT = 'audit'
MODES = (PLAN, AUDIT)

MINIMUM_VERSION = (4, 14)   # secondary-interface EgressIP arrived in 4.14 (openshift/enhancements egress-ip-multi-nic.md)
PRIMARY_UDN_LABEL = 'k8s.ovn.org/primary-user-defined-network'
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

def network_of(text):
    """A netaddr.IPNetwork with host bits cleared, or None."""
    try:
        return netaddr.IPNetwork(str(text).strip()).cidr
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def address_of(text):
    try:
        return netaddr.IPAddress(str(text).strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def overlaps(first, second):
    return first.version == second.version and first.first <= second.last and second.first <= first.last


def node_ref(node):
    return {'kind': 'Node', 'name': _name(node)}


def names_text(items, limit=20):
    items = sorted(items)
    text = ', '.join(items[:limit])
    return text + (' and %d more' % (len(items) - limit) if len(items) > limit else '')


def node_subnets(node):
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
        self.networks = dict((_name(node), node_subnets(node)) for node in self.nodes)
        self.selector = (self.config.get('nodes') or {}).get('selector')
        # a malformed selector is a finding of check_node_selector, never an exception here
        self.selector_ok = not _variables_schema.node_selector_problems('egressip_nodes.selector', self.selector or {})
        self.selected_nodes = ([node for node in self.nodes if selector_matches(self.selector, _labels(node))]
                               if self.requested() and self.selector_ok and self.selector else [])
        self.selected_names = set(_name(node) for node in self.selected_nodes)
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
                    if EGRESS_ASSIGNABLE_LABEL in _labels(node) and node_ready(node) and self.holds_secondary_subnet(node)]
        return [node for node in self.selected_nodes
                if node_ready(node) and (not self.vsphere_cluster_read() or self.node_vm(node) is not None)]

    def selected_namespaces(self, egress_object):
        selector = egress_object.get('namespace_selector')
        return [namespace for namespace in self.snapshot.get('namespaces') or []
                if namespace_selector_matches(selector, _labels(namespace))]
