# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Migrate: describe an egress setup made by hand as the collection's variables file (pure, no I/O).

Input: one snapshot as preflight reads it (`_preflight_snapshot.read_cluster` plus `read_vcenter`)
and optional hints (what the user already knows). Output: the public variables (docs/variables.md)
that make `enable` describe exactly what exists, the role variables adoption needs, a table per
node and per EgressIP object, and findings (this module's and preflight's, in plan mode over the
discovered variables: the findings enable will meet).

How each value is found (DOMAIN.md sections 2-8):
- secondary subnet: the nodes' `k8s.ovn.org/host-cidrs` minus the primary network; the one holding the
  EgressIP objects' addresses (or the only one);
- each node's NIC: the NodeNetworkState interface holding the base address gives the MAC, the MAC gives
  the VM NIC (never names); its backing gives the port group, standard or distributed, and its VLAN;
- gateway and metric: the default route through that interface (NodeNetworkState, else the NMState policy);
- node address range: the smallest range holding every base address (extended, where nodes still need an
  address, over addresses nobody in the cluster holds), refused when it would hold an egress IP or the gateway;
- egress nodes: a label that selects exactly the nodes with a NIC or an address, else their hostnames;
- forwarding: `ipForwarding: Global`, else the Tuned profile the Node Tuning Operator gives each egress node;
- EgressIP objects: those whose every IP is in the subnet, copied exactly (spec order kept); objects of the
  SDN to OVN-Kubernetes migration (`egressip-<namespace>` selecting `kubernetes.io/metadata.name: <namespace>`,
  as the openshift/release migration checks expect) are named as such.

The readers of each value are in migrate_facts.py, IP forwarding in migrate_forwarding.py, the report files and
their Markdown in reports/migrate.py; this file holds the Discovery that puts them together (`discover`) and the
preflight configuration of the discovered variables.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    EGRESS_ASSIGNABLE_LABEL,
    HOSTNAME_LABEL,
    is_managed,
    LABEL_RECORD_ANNOTATION,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
)
from ansible_collections.ocp.egressip.plugins.module_utils.model import lifecycle as _lifecycle
from ansible_collections.ocp.egressip.plugins.module_utils.plan import machine_api as _machine_api
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import node_networks_from_node, parse_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, dedupe, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight_context import PLAN
from ansible_collections.ocp.egressip.plugins.module_utils.checks.preflight import run_checks
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import vm_uuid_from_provider_id
from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig, labels as _labels, meta as _meta, name as _name, node_ready
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el
from ansible_collections.ocp.egressip.plugins.module_utils.plan import forwarding as fw
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_facts as mf
from ansible_collections.ocp.egressip.plugins.module_utils.checks import migrate_forwarding as mfw

HINT_KEYS = ('datacenter', 'cluster', 'portgroup', 'cidr', 'gateway', 'node_address_range', 'ipv6')
FAMILY_HINT_KEYS = ('cidr', 'gateway', 'node_address_range')
DEFAULT_ROUTE_METRIC = 200
DEFAULT_INTERFACE_NAME = 'egressip0'
PROFILE_NAME_MAX = 15
NIC_ADAPTER = 'vmxnet3'


# --- putting it together ---------------------------------------------------------------------------

class Discovery(object):
    """One discovery over one snapshot; `run()` returns the result dict."""

    def __init__(self, snapshot, hints=None, acknowledge_unsupported=False):
        self.snapshot = snapshot
        self.hints = dict((key, value) for key, value in (hints or {}).items() if key in HINT_KEYS and value not in (None, '', {}))
        if 'ipv6' in self.hints:
            ipv6 = dict((key, value) for key, value in (self.hints['ipv6'] if isinstance(self.hints['ipv6'], dict) else {}).items()
                        if key in FAMILY_HINT_KEYS and value not in (None, ''))
            self.hints.pop('ipv6')
            self.hints.update({'ipv6': ipv6} if ipv6 else {})
        self.families = {}  # {version: cidr text} of the secondary network, set by run()
        self.acknowledge = bool(acknowledge_unsupported)
        self.nodes = sorted(snapshot.get('nodes') or [], key=_name)
        self.nodes_by_name = dict((_name(node), node) for node in self.nodes)
        self.states = dict((_name(item), item) for item in snapshot.get('nns') or [])
        self.egressips = snapshot.get('egressips') or []
        self.policies = snapshot.get('nncps') or []
        self.vms = mf.vm_index(snapshot.get('vsphere'))
        self.findings = []
        self.plan = []

    # the families of the secondary network: the first one (IPv4, or IPv6 for an IPv6-only network), then IPv6 of dual stack

    @property
    def versions(self):
        return sorted(self.families)

    @property
    def dual(self):
        return len(self.families) == 2

    def hint(self, key, version):
        """The hint of `key` for the IPv`version` family: ipv6.<key>, else <key> when it is of that family (unparsable: the first's)."""
        if version == 6 and (self.hints.get('ipv6') or {}).get(key):
            return self.hints['ipv6'][key]
        value = self.hints.get(key)
        found = mf.hint_version(value) if value else None
        return value if value and (found == version or (found is None and version == self.versions[0])) else None

    def field(self, key, version, prefix='migrate_hints.'):
        """The option a finding about `key` of a family names: <prefix><key>, IPv6 of dual stack <prefix>ipv6.<key>."""
        return '%s%s%s' % (prefix, 'ipv6.' if version == 6 and self.dual else '', key)

    def row_addresses(self, row):
        """{version: the row's base address of that family, or None}."""
        found = {self.versions[0]: row['address']}
        if self.dual:
            found[6] = row.get('ipv6_address')
        return found

    def address_text(self, row):
        return ', '.join(address for _version, address in sorted(self.row_addresses(row).items()) if address)

    # each step adds to self.findings; a None return stops the discovery (an error finding says why)

    def node_rows(self):
        rows = []
        for node in self.nodes:
            addresses = dict((version, mf.base_address(node, cidr)) for version, cidr in self.families.items())
            held = [addresses[version] for version in self.versions if addresses[version]]
            if not held:
                continue
            state = self.states.get(_name(node))
            interface = next((found for found in (mf.interface_holding(state, address) for address in held) if found), None)
            vm = mf.node_vm(node, self.vms)
            mac = nn.normalize_mac(interface.get('mac-address')) if interface else None
            rows.append(self._row(node, vm, addresses, interface.get('name') if interface else None, mac,
                                  mf.nic_by_mac(vm, mac) if mac else None))
        return rows

    def _row(self, node, vm, addresses, interface, mac, nic):
        hosted = hosted_egress_ips(self.egressips).get(_name(node), [])
        row = {'node': _name(node), 'hostname': _labels(node).get(HOSTNAME_LABEL) or _name(node), 'ready': node_ready(node),
               'vm': (vm or {}).get('name'), 'host': (vm or {}).get('host'), 'power_state': (vm or {}).get('power_state'),
               'address': addresses.get(self.versions[0]), 'interface': interface, 'mac': mac,
               'network': (nic or {}).get('network'), 'switch_uuid': (nic or {}).get('switch_uuid'),
               'portgroup_key': (nic or {}).get('portgroup_key'), 'adapter': (nic or {}).get('adapter'),
               'connected': (nic or {}).get('connected'), 'start_connected': (nic or {}).get('start_connected'),
               'egress_assignable': EGRESS_ASSIGNABLE_LABEL in _labels(node),
               'egress_ips': sorted('%s %s' % item for item in hosted)}
        if self.dual:
            row['ipv6_address'] = addresses.get(6)
        return row

    def networks_with_node_nics(self):
        """Every network a node VM has a NIC on, with the nodes (the primary one included, marked)."""
        primary = mf.primary_network_names(self.snapshot.get('infrastructure'))
        found = {}
        for node in self.nodes:
            for nic in (mf.node_vm(node, self.vms) or {}).get('nics') or []:
                found.setdefault(nic.get('network') or nic.get('opaque_network_id') or '?', set()).add(_name(node))
        return [{'network': name, 'primary': name in primary, 'nodes': sorted(nodes)} for name, nodes in sorted(found.items())]

    def portgroup(self, rows):
        hint = self.hints.get('portgroup')
        if isinstance(hint, dict) and hint.get('name'):
            return dict(hint, switches=[hint.get('switch')], hosts_missing=[], switch_uuid=None), []
        primary = mf.primary_network_names(self.snapshot.get('infrastructure'))
        name = hint or mf.most_common(row['network'] for row in rows if row['network'] not in primary)
        names = sorted(set(row['network'] for row in rows if row['network'] and row['network'] not in primary))
        if not name or (not hint and len(names) > 1):
            what = ('the NICs holding the base addresses are on %s' % ', '.join(names) if names else
                    'no NIC holding a base address was found in vCenter (VMs read: %d)' % len(self.vms))
            return None, [catalogue_finding('migrate_portgroup_undetermined', 'Migrate cannot tell the egress port group: %s.' % what,
                                            objects=[{'kind': 'option', 'name': 'migrate_hints.portgroup'}])]
        nics = [row for row in rows if row['network'] == name]
        portgroup = mf.describe_portgroup(name, nics, self.snapshot.get('vsphere'))
        if portgroup is None:
            return None, [catalogue_finding('migrate_portgroup_undetermined', 'Port group %s exists on no host and no distributed switch of '
                                            'the vSphere cluster read.' % name, objects=[{'kind': 'Network', 'name': name}])]
        return portgroup, mf.portgroup_findings(portgroup)

    def add_nic_only_nodes(self, rows, portgroup):
        """Nodes whose VM has a NIC on the port group but no base address in the subnet."""
        known = set(row['node'] for row in rows)
        for node in self.nodes:
            vm = mf.node_vm(node, self.vms)
            if _name(node) in known or vm is None:
                continue
            nics = [nic for nic in vm.get('nics') or [] if mf.on_portgroup(nic, portgroup)]
            if nics:
                interface = nn.interface_by_mac(self.states.get(_name(node)), nics[0].get('mac'))
                rows.append(self._row(node, vm, {}, (interface or {}).get('name'), nn.normalize_mac(nics[0].get('mac')), nics[0]))
        return sorted(rows, key=lambda row: row['node'])

    def nic_findings(self, rows, portgroup):
        findings = []
        incomplete, disconnected, bad = [], [], []
        for row in rows:
            vm = self.vms.get(vm_uuid_from_provider_id(_dig(self.nodes_by_name[row['node']], 'spec', 'providerID')) or '')
            on_pg = [nic for nic in (vm or {}).get('nics') or [] if mf.on_portgroup(nic, portgroup)]
            missing = [version for version, address in sorted(self.row_addresses(row).items()) if not address]
            if len(missing) == len(self.versions):
                incomplete.append('%s (NIC %s, no address)' % (row['node'], row['mac']))
            elif row['network'] != portgroup['name']:
                incomplete.append('%s (address %s on %s, not on port group %s)' % (
                    row['node'], self.address_text(row), 'NIC %s' % row['mac'] if row['mac'] else 'an interface vCenter does not show',
                    portgroup['name']))
            elif missing:
                incomplete.append('%s (NIC %s, no IPv%d address)' % (row['node'], row['mac'], missing[0]))
            if len(on_pg) > 1:
                bad.append('%s has %d NICs on %s' % (row['node'], len(on_pg), portgroup['name']))
            if row['network'] == portgroup['name'] and row['adapter'] != NIC_ADAPTER:
                bad.append('%s has a %s NIC' % (row['node'], row['adapter']))
            if row['network'] == portgroup['name'] and row['power_state'] == 'poweredOn' and not (row['connected'] and row['start_connected']):
                disconnected.append('%s (%s)' % (row['node'], 'disconnected' if not row['connected'] else 'not connected at power-on'))
        if incomplete:
            findings.append(catalogue_finding('migrate_node_incomplete', 'Egress node(s) with a missing part: %s. Enable adds the NIC or '
                                              'the base address.' % '; '.join(incomplete),
                                              objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in incomplete]))
        if disconnected:
            findings.append(catalogue_finding('migrate_nic_disconnected', 'Secondary NIC of %s.' % '; '.join(disconnected),
                                              objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in disconnected]))
            self.plan.append('connects the secondary NIC of %s' % ', '.join(text.split(' ')[0] for text in disconnected))
        if bad:
            findings.append(catalogue_finding('migrate_nic_not_adoptable', '%s.' % '; '.join(bad),
                                              objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in bad]))
        if portgroup.get('hosts_missing'):
            self.plan.append('creates port group %s on host(s) %s' % (portgroup['name'], ', '.join(portgroup['hosts_missing'])))
        return findings

    def gateway(self, rows, version, default_metric=DEFAULT_ROUTE_METRIC):
        """(gateway, metric, findings) of the IPv`version` family: the default route of that family through the secondary NIC."""
        cidr, routes = self.families[version], []
        for row in rows:
            if not row['interface']:
                continue
            found = mf.default_routes(self.states.get(row['node']), row['interface'], version)
            if not found:
                for policy, profile in mf.policies_for(self.nodes_by_name[row['node']], row['mac'], row['interface'], self.policies):
                    found += mf.policy_default_routes(policy, (profile, row['interface']), version)
            routes += found
        network = netaddr.IPNetwork(cidr)
        routes = [(gateway, metric) for gateway, metric in routes
                  if parse_ip(gateway) is not None and parse_ip(gateway).version == version and parse_ip(gateway) in network]
        gateway = self.hint('gateway', version) or mf.most_common(gateway for gateway, _metric in routes)
        if not gateway:
            field = self.field('gateway', version)
            return None, None, [catalogue_finding(
                'migrate_gateway_unknown', 'No default route through the secondary NIC of %s names a gateway in %s%s.' % (
                    mf.names_text(row['node'] for row in rows), cidr,
                    ' (a link-local next hop, as router advertisements give, is not inside it)' if version == 6 else ''),
                objects=[{'kind': 'option', 'name': field}],
                remedy='Give %s; enable then adds the gateway route (metric above br-ex) that DOMAIN prerequisite 5 requires.' % field)]
        metric = mf.most_common(metric for found, metric in routes if found == str(gateway) and metric is not None)
        if metric is None:
            metric = default_metric
            self.plan.append('adds a default route through %s with metric %d on the secondary NIC of every egress node' % (gateway, metric))
        return str(gateway), int(metric), []

    def node_address_range(self, rows, version, gateway, egress_ips):
        hint = self.hint('node_address_range', version)
        if hint:
            return str(hint), []
        cidr, field = self.families[version], self.field('node_address_range', version)
        addresses = [self.row_addresses(row)[version] for row in rows]
        bases = [netaddr.IPNetwork(address).ip for address in addresses if address]
        if not bases:
            return None, [catalogue_finding('migrate_address_range_conflict', 'No egress node has a base address in %s to derive the '
                                            'range from.' % cidr, objects=[{'kind': 'option', 'name': field}],
                                            remedy='Give %s (first-last or a CIDR block inside %s).' % (field, cidr))]
        used = [cidr_entry.ip for node in self.nodes for cidr_entry in node_networks_from_node(node).host_cidrs]
        blockers = [parse_ip(ip) for ip in egress_ips] + [parse_ip(gateway)]
        text, extended, findings = mf.address_range(cidr, bases, [item for item in blockers if item is not None], used,
                                                    len([address for address in addresses if not address]), field)
        if extended:
            findings.append(catalogue_finding(
                'migrate_address_range_extended', '%s %s holds %d address(es) beyond the ones in use, for the egress '
                'node(s) without a base address.' % (self.field('node_address_range', version, ''), text, extended),
                objects=[{'kind': 'option', 'name': self.field('node_address_range', version, 'egressip_network.')}]))
        return text, findings

    def network_variable(self, rows, entries):
        """(egressip_network without ip_forwarding, complete?): per family its cidr, gateway, route metric and node address
        range; the IPv6 family of a dual-stack network under ipv6 (its metric defaults to the IPv4 one, as enable's does)."""
        egress_ips = [ip for entry in entries for ip in entry['egress_ips']]
        network, complete, metric = {}, True, DEFAULT_ROUTE_METRIC
        for version in self.versions:
            part = network if version == self.versions[0] else network.setdefault('ipv6', {})
            part['cidr'] = self.families[version]
            gateway, metric, findings = self.gateway(rows, version, metric or DEFAULT_ROUTE_METRIC)
            self.findings += findings
            text, findings = self.node_address_range(rows, version, gateway, egress_ips) if gateway else (None, [])
            self.findings += findings
            if gateway:
                part.update(gateway=gateway, route_metric=metric)
            if text:
                part['node_address_range'] = text
            complete = complete and bool(gateway and text)
        return network, complete

    def policy_findings(self, rows):
        """Hand-made NMState policies: duplicates after adoption, names taken, profile names; addresses from elsewhere."""
        findings, names, duplicates, outside = [], [], [], []
        for row in rows:
            node = self.nodes_by_name[row['node']]
            found = mf.policies_for(node, row['mac'], row['interface'], self.policies) if row['mac'] else []
            row['policies'] = sorted(_name(policy) for policy, _profile in found)
            hand_made = [(policy, profile) for policy, profile in found if not is_managed(policy)]
            taken = next((policy for policy in self.policies if _name(policy) == nn.policy_name(row['node'])), None)
            if taken is not None and not is_managed(taken):
                findings.append(catalogue_finding(
                    'migrate_object_name_taken', 'NodeNetworkConfigurationPolicy %s exists without the label %s=%s; enable (node_nic_address) '
                    'refuses to change it.' % (_name(taken), MANAGED_BY_LABEL, MANAGED_BY_VALUE),
                    objects=[{'kind': 'NodeNetworkConfigurationPolicy', 'name': _name(taken)}]))
            # once enable replaced the hand-made policies, the collection's keeps the profile name: the file stays the same
            names += [profile for _policy, profile in (hand_made or found) if profile]
            if hand_made:
                duplicates.append('%s (%s)' % (row['node'], ', '.join(sorted(_name(policy) for policy, _profile in hand_made))))
            address = self.address_text(row)
            if address and not found:
                outside.append('%s (%s on %s)' % (row['node'], address, row['interface'] or 'an unknown interface'))
            if not any(is_managed(policy) for policy, _profile in found):
                self.plan.append('creates NMState policy %s for %s (%s)' % (
                    nn.policy_name(row['node']), row['node'], 'same address %s' % address if address else 'a new address'))
        if duplicates:
            findings.append(catalogue_finding(
                'migrate_policy_duplicate', 'Hand-made NMState policies configure the secondary NIC of %s. After adoption the collection\'s '
                'policy egressip-<node> describes the same NIC with the same address.' % '; '.join(duplicates),
                objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in duplicates]))
        if outside:
            findings.append(catalogue_finding(
                'migrate_address_not_from_nmstate', 'No NMState policy configures the base address of %s.' % '; '.join(outside),
                objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in outside]))
        overrides, reasons = {}, {}
        if duplicates:
            overrides['node_network_replace_hand_made'] = False
            reasons['node_network_replace_hand_made'] = (
                'hand-made NMState policies configure the secondary NIC of %s; set true once the adoption check passed and run '
                'enable: it deletes those that configure only that NIC (same address, routes through it) after the collection\'s '
                'policy is Available, and reports the others (deleting a policy never changes the node)'
                % mf.names_text(text.split(' ')[0] for text in duplicates))
        profile = mf.most_common(names)
        if len(set(names)) > 1:
            findings.append(catalogue_finding(
                'migrate_interface_names_differ', 'The hand-made policies name the NIC %s; the variables file keeps %s.' % (
                    ', '.join('%s (%d)' % (name, count) for name, count in sorted(collections.Counter(names).items())), profile),
                objects=[{'kind': 'option', 'name': 'node_network_interface_name'}]))
        if profile and profile != DEFAULT_INTERFACE_NAME and 0 < len(profile) <= PROFILE_NAME_MAX:
            overrides['node_network_interface_name'] = profile
            reasons['node_network_interface_name'] = ('the hand-made NMState policies name the NIC profile %s; the collection\'s policy '
                                                      'keeps that NetworkManager profile instead of adding another' % profile)
        return findings, overrides, reasons

    def ipv6_policy_findings(self, rows):
        """Hand-made policies giving the NIC IPv6 addresses by autoconf (SLAAC) or DHCPv6: the collection's turns both off."""
        dynamic = []
        for row in rows:
            address = self.row_addresses(row).get(6)
            reasons = mf.dynamic_ipv6(self.nodes_by_name[row['node']], row['mac'], row['interface'], self.policies, address) if (
                address and row['mac']) else []
            if not reasons:
                continue
            dynamic.append('%s (%s)' % (row['node'], '; '.join(reasons)))
            if not any(is_managed(policy) and _name(policy) in row.get('policies', []) for policy in self.policies):
                self.plan.append('turns IPv6 autoconf and DHCPv6 off on the secondary NIC of %s (base address %s kept, set statically)'
                                 % (row['node'], address))
        if not dynamic:
            return []
        return [catalogue_finding(
            'migrate_ipv6_dynamic', 'IPv6 on the secondary NIC of %s. The collection\'s policy sets the IPv6 base address statically with '
            'autoconf and dhcp off: addresses and routes that NIC learned from router advertisements or DHCPv6 go away; the base '
            'address and the default route through the gateway stay.' % '; '.join(dynamic),
            objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in dynamic])]

    def label_findings(self, rows, cidrs):
        findings, overrides, reasons = [], {}, {}
        chosen = set(row['node'] for row in rows)
        outside = sorted(_name(node) for node in self.nodes if EGRESS_ASSIGNABLE_LABEL in _labels(node) and _name(node) not in chosen)
        if outside:
            overrides['egress_nodes_exclusive'] = False
            reasons['egress_nodes_exclusive'] = ('node(s) %s carry the egress-assignable label but are not egress nodes of the secondary '
                                                 'network (primary-network egress IPs may use them): enable keeps their label' % ', '.join(outside))
            findings.append(catalogue_finding('migrate_labelled_outside_selection', 'Node(s) %s carry %s without a secondary NIC or address.'
                                              % (mf.names_text(outside), EGRESS_ASSIGNABLE_LABEL),
                                              objects=[{'kind': 'Node', 'name': name} for name in outside[:mf.MAX_LISTED]]))
        add, remove, blocked, by_hand = [], [], [], []
        for row in rows:
            node = self.nodes_by_name[row['node']]
            reasons_now = el.node_capability([str(entry) for entry in node_networks_from_node(node).host_cidrs],
                                             self.states.get(row['node']), cidrs, row['mac'])
            row['capable'] = not reasons_now
            row['not_capable_because'] = reasons_now
            if row['egress_assignable'] and not reasons_now:
                by_hand.append((row['node'], el.label_recorded(node)))
            if row['egress_assignable'] and reasons_now and row['egress_ips']:
                blocked.append('%s (%s; hosts %s)' % (row['node'], '; '.join(reasons_now), ', '.join(row['egress_ips'])))
            elif row['egress_assignable'] and reasons_now:
                remove.append(row['node'])
            elif not row['egress_assignable'] and not reasons_now:
                add.append(row['node'])
        if blocked:
            findings.append(catalogue_finding('migrate_label_would_be_removed', 'Labelled egress node(s) that are not capable: %s.'
                                              % '; '.join(blocked), objects=[{'kind': 'Node', 'name': text.split(' ')[0]} for text in blocked]))
        if by_hand:
            # without the hand-over enable keeps hand-set labels unmanaged (egress_label_set_by_hand) and disable leaves them
            overrides['egress_nodes_adopt'] = True
            # no node names here: enable labels more nodes, and the file must stay the same after the adoption
            reasons['egress_nodes_adopt'] = ('egress nodes carry the egress-assignable label: a label set by hand is handed over to the '
                                             'collection (the record %s is written beside it; the label stays, nothing moves), so later '
                                             'runs and disable manage it; kept true so the file stays the same after the adoption'
                                             % LABEL_RECORD_ANNOTATION)
            unrecorded = [name for name, recorded in by_hand if not recorded]
            if unrecorded:
                self.plan.append('hands over the hand-made %s label of %s (record %s; the label stays)'
                                 % (EGRESS_ASSIGNABLE_LABEL, ', '.join(unrecorded), LABEL_RECORD_ANNOTATION))
        if add:
            self.plan.append('labels %s with %s' % (', '.join(add), EGRESS_ASSIGNABLE_LABEL))
        if remove:
            self.plan.append('removes %s from %s (not capable, hosting no egress IP)' % (EGRESS_ASSIGNABLE_LABEL, ', '.join(remove)))
        return findings, overrides, reasons

    def machineset_rows(self, rows, portgroup):
        nodes = [self.nodes_by_name[row['node']] for row in rows]
        machinesets = self.snapshot.get('machinesets') or []
        backing = _machine_api.node_machines(nodes, self.snapshot.get('machines') or [], machinesets)
        names = sorted(set(row['machineset'] for row in backing if row['machineset']))
        result = []
        for machineset in sorted(machinesets, key=_name):
            if _name(machineset) not in names:
                continue
            devices = _dig(machineset, *_machine_api.TEMPLATE_DEVICES_PATH) or []
            has = any(_machine_api.device_matches(device, portgroup['name']) for device in devices)
            result.append({'name': _name(machineset), 'devices': [device.get('networkName') for device in devices], 'has_portgroup': has})
        missing = [row['name'] for row in result if not row['has_portgroup']]
        if missing:
            self.plan.append('appends port group %s to the devices of MachineSet(s) %s' % (portgroup['name'], ', '.join(missing)))
        return result

    def forwarding(self, rows):
        choice, findings, state = mfw.forwarding_choice(self.snapshot, rows, self.versions)
        for row in rows:
            row['forwarding'] = state.get(row['node'])
        if choice == fw.PER_INTERFACE:
            tuned = next((item for item in self.snapshot.get('tuneds') or []
                          if _name(item) == nn.TUNED_NAME and _meta(item).get('namespace') == mfw.TUNED_NAMESPACE), None)
            if tuned is not None and not is_managed(tuned):
                findings.append(catalogue_finding(
                    'migrate_object_name_taken', 'Tuned %s/%s exists without the label %s=%s; enable (ip_forwarding) refuses to change it.'
                    % (mfw.TUNED_NAMESPACE, nn.TUNED_NAME, MANAGED_BY_LABEL, MANAGED_BY_VALUE),
                    objects=[{'kind': 'Tuned', 'name': nn.TUNED_NAME, 'namespace': mfw.TUNED_NAMESPACE}]))
            covered = dict((version, fw.forwarded_interfaces(tuned, version) if is_managed(tuned) else {}) for version in self.versions)
            todo = [row['node'] for row in rows
                    if any(row['interface'] not in covered[version].get(row['hostname'], set()) for version in self.versions)]
            if todo:
                self.plan.append('sets IP forwarding on the secondary NIC of %s (Tuned %s)' % (', '.join(todo), nn.TUNED_NAME))
        return choice, findings

    def run(self):
        result = {'variables': None, 'overrides': {}, 'override_reasons': {}, 'nodes': [], 'egressips': [], 'portgroup': None,
                  'machinesets': [], 'adoption_plan': [], 'record': _lifecycle.record(self.snapshot),
                  'networks': self.networks_with_node_nics()}
        datacenter, cluster, findings = mf.vsphere_target(self.snapshot.get('infrastructure'), self.hints)
        self.findings += findings
        self.families, findings = mf.choose_families(self.nodes, self.states, self.egressips, self.hints)
        self.findings += findings
        if not self.families or datacenter is None:
            return self._finish(result)
        rows = self.node_rows()
        portgroup, findings = self.portgroup(rows)
        self.findings += findings
        if portgroup is None:
            return self._finish(result)
        rows = self.add_nic_only_nodes(rows, portgroup)
        self.findings += self.nic_findings(rows, portgroup)
        return self.describe(result, (datacenter, cluster), rows, portgroup)

    def describe(self, result, target, rows, portgroup):
        """The variables, overrides and tables once the network, its nodes and the port group are known."""
        cidrs = [self.families[version] for version in self.versions]
        entries, object_rows, findings = mf.classify_objects(self.egressips, self.nodes, cidrs)
        self.findings += findings
        network, complete = self.network_variable(rows, entries)
        policy_findings, overrides, reasons = self.policy_findings(rows)
        label_findings, label_overrides, label_reasons = self.label_findings(rows, cidrs)
        self.findings += policy_findings + self.ipv6_policy_findings(rows) + label_findings
        overrides.update(label_overrides)
        reasons.update(label_reasons)
        network['ip_forwarding'], findings = self.forwarding(rows)
        self.findings += findings
        result['machinesets'] = self.machineset_rows(rows, portgroup)
        adopt = [row['name'] for row in object_rows if row.get('action') == 'adopt']
        if adopt:
            self.plan.append('adopts EgressIP object(s) %s (ownership label; spec unchanged)' % ', '.join(adopt))
        if entries:
            overrides['egressips_adopt'] = True
            reasons['egressips_adopt'] = ('EgressIP objects made by hand are taken over by name (the ownership label is added, the spec is '
                                          'the one they have); kept true so the file stays the same after the adoption')
        selector, by_hostname = mf.exact_selector(self.nodes, [row['node'] for row in rows])
        if by_hostname:
            self.findings.append(catalogue_finding('migrate_selector_by_hostname', 'No label selects exactly %s.' % mf.names_text(
                row['node'] for row in rows), objects=[{'kind': 'option', 'name': 'egressip_nodes.selector'}]))
        vsphere_portgroup = dict((key, portgroup[key]) for key in ('name', 'switch_type', 'switch', 'vlan_id') if portgroup.get(key) is not None)
        result['variables'] = {
            'egressip_acknowledge_unsupported': self.acknowledge,
            'egressip_vsphere': {'datacenter': target[0], 'cluster': target[1], 'portgroup': vsphere_portgroup},
            'egressip_network': network,
            'egressip_nodes': {'selector': selector},
            'egressip_objects': entries,
        }
        result.update(overrides=overrides, override_reasons=reasons, nodes=rows, egressips=object_rows,
                      portgroup=dict((key, value) for key, value in portgroup.items() if key != 'switch_uuid'))
        return self._finish(result, complete=complete)

    def _finish(self, result, complete=False):
        findings = list(self.findings)
        if complete:
            if self.plan:
                findings.append(catalogue_finding('migrate_adoption_plan', 'Enable with the discovered variables %s.' % '; '.join(self.plan),
                                                  objects=[{'kind': 'option', 'name': 'migrate_adopt'}]))
            findings += run_checks(dict(self.snapshot, config=preflight_config(result['variables'])), PLAN)
        result['adoption_plan'] = list(self.plan) if complete else []
        result['findings'] = dedupe(findings)
        summary = summarize(result['findings'])
        summary.update(ok=summary[ERROR] == 0, complete=complete, nodes=len(result['nodes']), egressip_objects=len(result['egressips']))
        result['summary'] = summary
        return result


def preflight_config(variables):
    """The discovered variables in the shape preflight's checks read (the public schema without the prefix)."""
    vsphere = dict(variables['egressip_vsphere'], accept_untested_nsx=False)
    return {'acknowledge_unsupported': variables['egressip_acknowledge_unsupported'], 'vsphere': vsphere,
            'network': variables['egressip_network'], 'nodes': variables['egressip_nodes'], 'objects': variables['egressip_objects']}


def discover(snapshot, hints=None, acknowledge_unsupported=False):
    """Everything migrate reports about one snapshot; see the module docstring."""
    return Discovery(snapshot, hints, acknowledge_unsupported).run()
