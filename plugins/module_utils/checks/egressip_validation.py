# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation of the EgressIP objects of the variables file, before anything is written.

Pure code (netaddr, no I/O). DOMAIN.md section 5 item 6 and 7, section 3 hard rules. Each
refusal is a finding from the catalogue whose message names the field, the value and what is
wrong, and whose remedy says what to do:

- shape: a DNS-1123 name, a non-empty list of IPs, ``namespace_selector`` present and not
  empty (an empty selector selects every namespace), selectors as LabelSelector dicts;
- each IP: an IP address, inside ``network.cidr``, not its network, broadcast or gateway
  address, not inside ``network.node_address_range`` (reserved for the node base addresses
  of the address plan), not the address of any node (``host-cidrs``, node addresses), not
  in ``spec.egressIPs`` of another EgressIP object, listed once over all objects;
- capacity: capable nodes (labelled, Ready, holding the IP's network in ``host-cidrs``) at
  least IPs per object + 1, since one failure would otherwise leave an IP unassigned: an
  error, or a warning when the user accepts it.

``validate(objects, network, snapshot, others_ignored=(), allow_insufficient_capacity=False,
check_capacity=True, field='objects', network_field='network')`` returns the findings for the
module's input. ``validate_config(config, nodes, egressips, ...)`` does the same from the
public variables schema (``egressip_objects``, ``egressip_network``) and API objects, for
preflight. ``snapshot`` is a ``_placement.snapshot``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.checks.variables_schema import label_selector_problems

# metadata.name of a cluster-scoped custom resource: a DNS-1123 subdomain.
NAME_PATTERN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
NAME_MAX = 253
SELECTOR_KEYS = ('matchLabels', 'matchExpressions')


def _option(field):
    return [{'kind': 'option', 'name': field}]


def _egressip(name):
    return [{'kind': 'EgressIP', 'name': name}] if name else []


def _invalid(field, value, problem, fix, name=None):
    return catalogue_finding('egressip_input_invalid', '%s %r %s.' % (field, value, problem),
                             objects=_option(field) + _egressip(name), remedy=fix)


# --- shape ---------------------------------------------------------------------------------------


def check_shape(objects, field='objects', require_ips=True):
    """Refusals for malformed entries: names, IP lists, selectors. Every problem is reported."""
    findings = []
    seen = {}
    if not isinstance(objects, list):
        return [_invalid(field, objects, 'is not a list', 'give a list of {name, egress_ips, namespace_selector}.')]
    for index, entry in enumerate(objects):
        where = '%s[%d]' % (field, index)
        if not isinstance(entry, dict):
            findings.append(_invalid(where, entry, 'is not a dictionary', 'give {name, egress_ips, namespace_selector}.'))
            continue
        name = entry.get('name')
        findings += _check_name(where, name, seen, index)
        if require_ips:
            findings += _check_ip_list(where, name, entry.get('egress_ips'))
            findings += _check_namespace_selector(where, name, entry.get('namespace_selector'))
            if entry.get('pod_selector') is not None:
                findings += _check_selector('%s.pod_selector' % where, name, entry.get('pod_selector'))
    return findings


def _check_name(where, name, seen, index):
    field = '%s.name' % where
    if not isinstance(name, str) or not name:
        return [_invalid(field, name, 'is empty', 'give the EgressIP object a name, e.g. payments.')]
    if len(name) > NAME_MAX or not NAME_PATTERN.match(name):
        # no suggestion derived from the name: it may be templated from a secret that Ansible masks only verbatim
        return [_invalid(field, name, 'is not a valid object name (lower case letters, digits, "-" and ".", starting and ending '
                         'with a letter or digit, at most %d characters)' % NAME_MAX,
                         'rename it to a DNS-1123 name such as payments or team-a.api.')]
    if name in seen:
        return [_invalid(field, name, 'is also the name of %s[%d]' % (where.rsplit('[', 1)[0], seen[name]),
                         'give each EgressIP object its own name, or merge the two entries.', name)]
    seen[name] = index
    return []


def _check_ip_list(where, name, ips):
    field = '%s.egress_ips' % where
    if not isinstance(ips, list) or not ips:
        return [_invalid(field, ips, 'is empty or not a list', 'list at least one egress IP, e.g. [10.20.0.200].', name)]
    findings = []
    for position, ip in enumerate(ips):
        if not isinstance(ip, str) or normal_ip(ip) is None:
            findings.append(_invalid('%s[%d]' % (field, position), ip, 'is not an IP address',
                                     'write one IPv4 or IPv6 address per entry, e.g. 10.20.0.200.', name))
    return findings


def _check_namespace_selector(where, name, selector):
    field = '%s.namespace_selector' % where
    if selector is None:
        return [catalogue_finding(
            'egressip_selector_missing', '%s is missing (EgressIP %s): spec.namespaceSelector is required.' % (field, name),
            objects=_option(field) + _egressip(name))]
    malformed = _check_selector(field, name, selector)
    if malformed:
        return malformed
    if not any(selector.get(key) for key in SELECTOR_KEYS):
        return [catalogue_finding(
            'egressip_selector_missing', '%s %r selects every namespace of the cluster (EgressIP %s), including openshift-*.'
            % (field, selector, name), objects=_option(field) + _egressip(name))]
    return []


def _check_selector(field, name, selector):
    """The LabelSelector rules shared with the egress node selector (_variables_schema)."""
    return [_invalid(field + sub, value, problem, fix, name) for sub, value, problem, fix in label_selector_problems(selector)]


# --- network -------------------------------------------------------------------------------------


def egress_network(network, field='network'):
    """(SecondaryNetwork or None, findings) of the network the egress IPs belong to, every family: the rules of
    model/network.py, with only cidr needed here (gateway and node_address_range, when given, are reserved for the nodes)."""
    return _network.parse(network, field + '.', needs=('cidr',), finding_id='egressip_input_invalid')


# --- addresses -----------------------------------------------------------------------------------


def _claims(snap, ignored):
    """{ip: [EgressIP names]} from spec.egressIPs of the objects this run does not manage."""
    claims = {}
    for name, entry in sorted(snap['egressips'].items()):
        if name in ignored:
            continue
        for ip in entry['egress_ips']:
            normal = normal_ip(ip)
            if normal:
                claims.setdefault(normal, []).append(name)
    return claims


def _node_addresses(snap):
    addresses = {}
    for name, node in sorted(snap['nodes'].items()):
        for address in node['addresses']:
            normal = normal_ip(address)
            if normal:
                addresses.setdefault(normal, name)
    return addresses


def check_addresses(objects, network, snap, ignored=(), field='objects'):
    """Refusals for each IP: outside the network, reserved, node range, node address, claimed, duplicate."""
    node_addresses = _node_addresses(snap)
    claims = _claims(snap, set(ignored))
    first_seen = {}
    findings = []
    for index, entry in enumerate(objects):
        name = entry['name']
        for position, ip in enumerate(entry['egress_ips']):
            where = '%s[%d].egress_ips[%d]' % (field, index, position)
            normal = normal_ip(ip)
            problem = _address_problem(where, name, ip, normal, network, node_addresses, claims, first_seen)
            if problem:
                findings.append(problem)
            first_seen.setdefault(normal, where)
    return findings


def _family_of(network, address):
    """The family of the secondary network (a SecondaryNetwork or one Family) of the address's IP version, or None."""
    families = network.families if isinstance(network, _network.SecondaryNetwork) else [network]
    return next((family for family in families if family.version == address.version), None)


def _family_missing(subject, address, network, objects):
    root = network.first.field if isinstance(network, _network.SecondaryNetwork) else network.field
    part = '%sipv6' % root if address.version == 6 else '%scidr (an IPv4 network)' % root
    return catalogue_finding(
        'egressip_family_missing', '%s is IPv%d but the secondary network has no IPv%d part (%s is missing).'
        % (subject, address.version, address.version, part), objects=objects,
        remedy='give the secondary network an IPv%d part (%s, e.g. %s), or use an IPv%d egress IP of %scidr.'
        % (address.version, part, _network.EXAMPLES[address.version], 10 - address.version, root))


def _address_problem(where, name, ip, normal, network, node_addresses, claims, first_seen):
    objects = _option(where) + _egressip(name)
    address = netaddr.IPAddress(normal)
    subject = '%s %s (EgressIP %s)' % (where, ip, name)
    if normal in first_seen:
        return catalogue_finding('egressip_duplicate', '%s is also listed at %s.' % (subject, first_seen[normal]), objects=objects)
    family = _family_of(network, address)
    if family is None:
        return _family_missing(subject, address, network, objects)
    if address.is_link_local():
        return catalogue_finding('egressip_link_local', '%s is a link-local address: OVN-Kubernetes places egress IPs only in '
                                 'global unicast host networks.' % subject, objects=objects)
    network = family
    if not network.holds(address):
        return catalogue_finding('egressip_outside_network', '%s is outside %scidr %s.' % (subject, network.field, network.cidr),
                                 objects=objects)
    if address in network.reserved():
        return catalogue_finding('egressip_reserved_address', '%s is %s.' % (subject, network.describe_reserved(address)), objects=objects)
    if network.pool is not None and address in network.pool:
        return catalogue_finding('egressip_in_node_address_range', '%s is inside %snode_address_range %s, reserved for the node '
                                 'NIC base addresses.' % (subject, network.field, network.pool), objects=objects)
    if normal in node_addresses:
        node = node_addresses[normal]
        return catalogue_finding('egressip_node_address', '%s is an address of node %s (OVN-Kubernetes refuses it with '
                                 'EgressIPConflict).' % (subject, node), objects=objects + [{'kind': 'Node', 'name': node}])
    if normal in claims:
        owners = claims[normal]
        return catalogue_finding('egressip_claimed', '%s is already in spec.egressIPs of EgressIP %s (OVN-Kubernetes refuses a '
                                 'second claim with UnsupportedRequest).' % (subject, ', '.join(owners)),
                                 objects=objects + [{'kind': 'EgressIP', 'name': owner} for owner in owners])
    return None


# --- capacity ------------------------------------------------------------------------------------


def check_capacity(objects, snap, allow_insufficient_capacity=False, field='objects'):
    """Each object needs at least one more capable node than it has IPs (DOMAIN.md section 5 item 7)."""
    findings = []
    for index, entry in enumerate(objects):
        ips = entry['egress_ips']
        capable = None
        for ip in ips:
            hosts = set(_placement.hosting_nodes(snap, ip))
            capable = hosts if capable is None else capable & hosts
        capable = sorted(capable or [])
        if len(capable) >= len(ips) + 1:
            continue
        if len(capable) < len(ips):
            consequence = '%d of its IPs cannot be assigned at all' % (len(ips) - len(capable))
        else:
            consequence = 'one node failure leaves an IP unassigned (a node never hosts two IPs of one EgressIP)'
        accepted = ' Accepted with allow_insufficient_capacity.' if allow_insufficient_capacity else ''
        findings.append(catalogue_finding(
            'egress_nodes_capacity_insufficient',
            '%s[%d] (EgressIP %s) has %d IP(s) but only %d capable node(s) (labelled %s, Ready, holding its network in '
            'host-cidrs)%s: %s; at least %d are needed.%s'
            % (field, index, entry['name'], len(ips), len(capable), _placement.EGRESS_LABEL,
               ' (%s)' % ', '.join(capable) if capable else '', consequence, len(ips) + 1, accepted),
            objects=_egressip(entry['name']) + [{'kind': 'Node', 'name': node} for node in capable[:20]],
            severity=WARNING if allow_insufficient_capacity else None))
    return findings


# --- entry points ----------------------------------------------------------------------------------


def validate(objects, network, snap, others_ignored=(), allow_insufficient_capacity=False, check_capacity_rule=True,
             field='objects', network_field='network'):
    """Every refusal for the desired EgressIP objects, in the order the user wrote them.

    objects: [{name, egress_ips, namespace_selector, pod_selector}]. network: {cidr, gateway,
    node_address_range}, or a model/network.py Family already parsed. snap: the cluster's _placement snapshot. others_ignored: names of
    EgressIP objects whose claims do not count (the objects of this run, those it deletes).
    """
    findings = check_shape(objects, field)
    parsed, network_findings = ((network, []) if isinstance(network, (_network.Family, _network.SecondaryNetwork))
                                else egress_network(network, network_field))
    findings += network_findings
    if findings or parsed is None:
        return findings
    address_findings = check_addresses(objects, parsed, snap, set(others_ignored) | set(entry['name'] for entry in objects), field)
    findings += address_findings
    if check_capacity_rule:
        refused = set(item['name'] for finding in address_findings for item in finding['objects'] if item['kind'] == 'EgressIP')
        findings += check_capacity([entry for entry in objects if entry['name'] not in refused], snap, allow_insufficient_capacity, field)
    return findings


def validate_config(config, nodes, egressips, check_capacity_rule=False, allow_insufficient_capacity=False, network=None):
    """validate() from the public variables schema without the egressip_ prefix ({'network', 'objects'}) and API objects.

    For preflight, which has its own capacity check (plan mode counts the nodes to be labelled) and passes the
    network it parsed (a SecondaryNetwork) when it is valid.
    """
    snap = _placement.snapshot(nodes or [], egressips or [])
    network = network if network is not None else config.get('network') or {}
    return validate(config.get('objects') or [], network, snap,
                    allow_insufficient_capacity=allow_insufficient_capacity, check_capacity_rule=check_capacity_rule,
                    field='egressip_objects', network_field='egressip_network')
