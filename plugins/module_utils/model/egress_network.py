# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which node network can host an egress IP, as the OVN-Kubernetes cluster manager decides it.

Pure (no I/O). The rule (ovn-kubernetes ``go-controller/pkg/util/node_annotations.go``,
``GetEgressIPNetwork`` / ``GetSecondaryHostNetworkContainingIP``; DOMAIN.md section 3):

1. inside the subnet of the node's ``k8s.ovn.org/node-primary-ifaddr`` (same IP family):
   the **primary** network (br-ex);
2. otherwise the longest-prefix match over ``k8s.ovn.org/host-cidrs`` minus the primary
   entries, same IP family, keeping only entries whose address is global unicast: a
   **secondary** network, that subnet;
3. otherwise ``none`` (OVN-K: Warning event ``NoMatchingNodeFound``).

Malformed annotations never raise: the parser keeps what it can read and explains the rest
in ``notes``. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import json
import traceback

try:
    from netaddr import AddrFormatError, IPAddress, IPNetwork
    HAS_NETADDR = True
    NETADDR_IMPORT_ERROR = None
except ImportError:
    HAS_NETADDR = False
    NETADDR_IMPORT_ERROR = traceback.format_exc()
    AddrFormatError = ValueError

HOST_CIDRS_ANNOTATION = 'k8s.ovn.org/host-cidrs'
PRIMARY_IFADDR_ANNOTATION = 'k8s.ovn.org/node-primary-ifaddr'
SECONDARY_HOST_EGRESS_IPS_ANNOTATION = 'k8s.ovn.org/secondary-host-egress-ips'
EGRESSIP_MARK_ANNOTATION = 'k8s.ovn.org/egressip-mark'

PRIMARY = 'primary'
SECONDARY = 'secondary'
NONE = 'none'

NodeNetworks = collections.namedtuple('NodeNetworks', [
    'name',                       # node name
    'primary_ifaddrs',            # tuple of IPNetwork (address with prefix) from node-primary-ifaddr
    'host_cidrs',                 # tuple of IPNetwork (address with prefix) from host-cidrs
    'secondary_host_egress_ips',  # tuple of IPAddress from secondary-host-egress-ips
    'annotations',                # {annotation: parsed JSON value, or None when absent or invalid}
    'notes',                      # tuple of str: what could not be read, and why
])
"""What one node's OVN-Kubernetes annotations say about its networks."""

Classification = collections.namedtuple('Classification', ['network', 'subnet'])
"""Where one node would host an IP: ``network`` primary/secondary/none, ``subnet`` an IPNetwork or None."""

ClusterClassification = collections.namedtuple('ClusterClassification', ['network', 'subnet', 'nodes'])
"""Where the cluster would host an IP: the network, its most specific subnet, and the names of the nodes that have it."""


def parse_ip(value):
    """An IPAddress, or None when ``value`` is not a plain IPv4/IPv6 address."""
    try:
        return IPAddress(str(value).strip())
    except (AddrFormatError, ValueError, TypeError):
        return None


_NORMALISED = {}


def normal_ip(ip):
    """Canonical text of an IP (as Go's net.IP.String()), or None when it does not parse."""
    if ip not in _NORMALISED:
        try:
            _NORMALISED[ip] = str(IPAddress(ip))
        except (AddrFormatError, ValueError, TypeError):
            return None
    return _NORMALISED[ip]


def _parse_cidr(value):
    """An IPNetwork keeping the host address, or None (a prefix length is required, as in OVN-K)."""
    if not isinstance(value, str) or '/' not in value:
        return None
    try:
        return IPNetwork(value.strip())
    except (AddrFormatError, ValueError, TypeError):
        return None


def _load_json(name, annotations, key, expected_type, notes):
    raw = annotations.get(key)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except (TypeError, ValueError) as exc:
        notes.append('node %s: annotation %s is not valid JSON (%s); ignored' % (name, key, exc))
        return None
    if not isinstance(value, expected_type):
        notes.append('node %s: annotation %s is not a JSON %s; ignored' % (name, key, 'list' if expected_type is list else 'object'))
        return None
    return value


def _parsed_entries(name, key, entries, parse, expected, notes):
    """The entries of a JSON list annotation that `parse` reads; a note for each other one (it is ignored)."""
    parsed = []
    for entry in entries or []:
        value = parse(entry)
        if value is None:
            notes.append('node %s: %s entry %r is not %s; ignored' % (name, key, entry, expected))
        else:
            parsed.append(value)
    return parsed


_PARSED = {}  # (name, the three annotations' texts) -> NodeNetworks: a run's checks and plans parse each node many times
_PARSED_MOST = 20000


def parse_node_networks(name, annotations):
    """Parse a node's OVN-K network annotations into a NodeNetworks (never raises on bad data).

    The same name and annotation texts give the same NodeNetworks object (parsed once; treat it as read-only)."""
    annotations = annotations or {}
    key = (name, annotations.get(HOST_CIDRS_ANNOTATION), annotations.get(PRIMARY_IFADDR_ANNOTATION),
           annotations.get(SECONDARY_HOST_EGRESS_IPS_ANNOTATION))
    try:
        return _PARSED[key]
    except (KeyError, TypeError):  # TypeError: an annotation value that is not text (not hashable)
        pass
    parsed = _parse_node_networks(name, annotations)
    try:
        if len(_PARSED) >= _PARSED_MOST:
            _PARSED.clear()
        _PARSED[key] = parsed
    except TypeError:
        pass
    return parsed


def _parse_node_networks(name, annotations):
    notes = []

    host_cidrs_raw = _load_json(name, annotations, HOST_CIDRS_ANNOTATION, list, notes)
    host_cidrs = _parsed_entries(name, HOST_CIDRS_ANNOTATION, host_cidrs_raw, _parse_cidr, 'an address/prefix', notes)

    primary_raw = _load_json(name, annotations, PRIMARY_IFADDR_ANNOTATION, dict, notes)
    primary = []
    for family in ('ipv4', 'ipv6'):
        entry = (primary_raw or {}).get(family)
        if not entry:
            continue
        cidr = _parse_cidr(entry)
        if cidr is None:
            notes.append('node %s: %s %s %r is not an address/prefix; ignored' % (name, PRIMARY_IFADDR_ANNOTATION, family, entry))
        else:
            primary.append(cidr)

    egress_raw = _load_json(name, annotations, SECONDARY_HOST_EGRESS_IPS_ANNOTATION, list, notes)
    egress_ips = _parsed_entries(name, SECONDARY_HOST_EGRESS_IPS_ANNOTATION, egress_raw, parse_ip, 'an IP address', notes)

    return NodeNetworks(
        name=name,
        primary_ifaddrs=tuple(primary),
        host_cidrs=tuple(host_cidrs),
        secondary_host_egress_ips=tuple(egress_ips),
        annotations={
            HOST_CIDRS_ANNOTATION: host_cidrs_raw,
            PRIMARY_IFADDR_ANNOTATION: primary_raw,
            SECONDARY_HOST_EGRESS_IPS_ANNOTATION: egress_raw,
        },
        notes=tuple(notes),
    )


def node_networks_from_node(node):
    """parse_node_networks for a Node as the API returns it (a dict)."""
    metadata = node.get('metadata') or {}
    return parse_node_networks(metadata.get('name'), metadata.get('annotations'))


def is_global_unicast(address):
    """Go's ``netip.Addr.IsGlobalUnicast``: not unspecified, loopback, multicast, link-local, or the IPv4 broadcast.

    Private ranges (10/8, fc00::/7, ...) are global unicast in this sense.
    """
    if address.version == 4 and address == IPAddress('255.255.255.255'):
        return False
    if int(address) == 0:
        return False
    return not (address.is_loopback() or address.is_multicast() or address.is_link_local())


def _same_entry(left, right):
    return left.version == right.version and left.ip == right.ip and left.prefixlen == right.prefixlen


def primary_subnets(node):
    """The node's primary network subnets (IPNetwork, host bits cleared), one per IP family."""
    return [cidr.cidr for cidr in node.primary_ifaddrs]


_SECONDARY = {}  # id(NodeNetworks) -> (that NodeNetworks, its secondary entries): parsed nodes are shared, see _PARSED


def _secondary_entries(node):
    """host-cidrs entries minus the primary ones, global unicast only (addresses kept)."""
    cached = _SECONDARY.get(id(node))
    if cached is not None and cached[0] is node:
        return cached[1]
    entries = tuple(cidr for cidr in node.host_cidrs
                    if not any(_same_entry(cidr, primary) for primary in node.primary_ifaddrs) and is_global_unicast(cidr.ip))
    if len(_SECONDARY) >= _PARSED_MOST:
        _SECONDARY.clear()
    _SECONDARY[id(node)] = (node, entries)
    return entries


def secondary_subnets(node):
    """Subnets the node could host a secondary egress IP in (IPNetwork, host bits cleared, sorted, unique)."""
    subnets = {}
    for cidr in _secondary_entries(node):
        subnets[str(cidr.cidr)] = cidr.cidr
    return sorted(subnets.values(), key=lambda subnet: (subnet.version, subnet.first, subnet.prefixlen))


def node_addresses(node):
    """Every address the node holds (host-cidrs and primary), as IPAddress: an egress IP may not equal any."""
    return set(cidr.ip for cidr in node.host_cidrs) | set(cidr.ip for cidr in node.primary_ifaddrs)


def classify_ip(ip, node):
    """Classification of one IP (str or IPAddress) on one node; raises ValueError for a malformed IP."""
    address = ip if isinstance(ip, IPAddress) else parse_ip(ip)
    if address is None:
        raise ValueError('%r is not an IP address' % (ip,))
    for primary in node.primary_ifaddrs:
        if primary.version == address.version and address in primary:
            return Classification(PRIMARY, primary.cidr)
    matches = [cidr for cidr in _secondary_entries(node) if cidr.version == address.version and address in cidr]
    if matches:
        return Classification(SECONDARY, max(matches, key=lambda cidr: cidr.prefixlen).cidr)
    return Classification(NONE, None)


def classify_ip_on_nodes(ip, nodes):
    """Classification of one IP over several nodes.

    Primary wins when any node has the IP in its primary subnet (OVN-K checks primary
    first); otherwise secondary, with the most specific subnet any node matched; ``nodes``
    lists the nodes whose own classification is that network (sorted).
    """
    per_node = [(node.name, classify_ip(ip, node)) for node in nodes]
    for network in (PRIMARY, SECONDARY):
        matched = [(name, result.subnet) for name, result in per_node if result.network == network]
        if matched:
            subnet = max((subnet for _name, subnet in matched), key=lambda item: item.prefixlen)
            return ClusterClassification(network, subnet, sorted(name for name, _subnet in matched))
    return ClusterClassification(NONE, None, [])
