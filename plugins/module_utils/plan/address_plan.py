# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Address plan for the secondary NICs: one stable base address per node (pure code, netaddr).

DOMAIN.md section 5 (prerequisite 4): each node's secondary NIC holds one base address in the
secondary subnet, and that subnet overlaps no other host subnet. The plan is stable: an
allocation recorded on a policy this collection created never moves; a new node takes the
lowest free address of `node_address_range`; a node that leaves the list keeps its
allocation reserved until it is released with `state: absent`.

Everything here is a pure function of its inputs; refusals are findings from the catalogue.
The network is a validated `model/network.py` Family, one per address family; dual stack is two plans.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import refusal
# the modules that plan addresses check the library through this name
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import NETADDR_IMPORT_ERROR  # noqa: F401 pylint: disable=unused-import

# Where an allocation came from, as reported per node.
EXISTING = 'existing'      # read back from the node's policy: never moves
REQUESTED = 'requested'    # the user named the address for this node
CURRENT = 'current'        # the node already holds it (host-cidrs), adopted without disruption
ALLOCATED = 'allocated'    # lowest free address of the range


def check_host_subnets(network, primary_subnets, host_subnets):
    """Refuse a secondary cidr that overlaps the primary machine network or another host subnet.

    primary_subnets / host_subnets: iterables of (subnet text, owner text), e.g.
    ('192.168.10.0/24', 'node worker-0 primary address'). A host subnet equal to the
    secondary cidr is the secondary network itself (already configured), not an overlap;
    single-address entries (/32, /128) are addresses, handled by the in-use check.
    """
    findings = []
    seen = set()
    for kind, entries in (('primary', primary_subnets), ('host', host_subnets)):
        for subnet_text, owner in entries:
            subnet = netaddr.IPNetwork(subnet_text)
            if subnet.version != network.version or subnet.size == 1:
                continue
            subnet = subnet.cidr
            if kind == 'host' and subnet == network.cidr:
                continue
            if not _overlaps(subnet, network.cidr) or (kind, str(subnet)) in seen:
                continue
            seen.add((kind, str(subnet)))
            what = 'the primary machine network' if kind == 'primary' else 'host subnet'
            findings.append(catalogue_finding(
                'node_network_overlaps_host_subnet',
                '%scidr %s overlaps %s %s (%s).' % (network.field, network.cidr, what, subnet, owner),
                objects=[{'kind': 'option', 'name': network.field + 'cidr'}]))
    return findings


def _overlaps(first, second):
    return first.first <= second.last and second.first <= first.last


class AddressUse:
    """Who holds an address today: a node (host-cidrs) or an EgressIP object (spec.egressIPs)."""

    def __init__(self, address, kind, name):
        self.address = _normal(address)
        self.kind = kind        # 'node' or 'egressip'
        self.name = name

    def describe(self):
        return 'node %s' % self.name if self.kind == 'node' else 'EgressIP %s' % self.name


def plan_addresses(network, nodes, existing=None, requested=None, current=None, in_use=None):
    """One base address per node of `nodes`.

    network: a validated model/network.py Family. nodes: node names to address.
    existing: {node: address} read back from the policies this collection created, for every
      node that has one (also nodes not in `nodes`: their addresses stay reserved).
    requested: {node: address} the user named. current: {node: [address, ...]} addresses the
      node already holds inside the cidr with the cidr's prefix (host-cidrs), adopted when free.
    in_use: [AddressUse] every address held by a node or claimed by an EgressIP object.
    Returns (allocations, findings); allocations is a list of
    {'node', 'address' (ip/prefix), 'ip', 'source'} in the order of `nodes`.
    """
    existing = dict((node, _normal(address)) for node, address in (existing or {}).items())
    requested = dict((node, _normal(address)) for node, address in (requested or {}).items() if address)
    current = current or {}
    users = {}
    for use in in_use or []:
        users.setdefault(use.address, []).append(use)
    reserved = dict((str(address), what) for address, what in network.reserved().items())
    holders = {}  # address -> node for every existing allocation
    for node, address in existing.items():
        holders.setdefault(address, node)

    findings = []
    chosen = {}
    for node in nodes:
        if node in existing:
            address, source = existing[node], EXISTING
            findings += _check_existing(network, node, address, requested.get(node))
        elif node in requested:
            address, source = requested[node], REQUESTED
            findings += _check_requested(network, node, address, reserved)
        else:
            continue
        conflict = _conflict(address, node, users, holders)
        if conflict:
            findings.append(_in_use(network, node, address, conflict, source))
        chosen[node] = (address, source)

    claimed = set(holders) | set(reserved) | set(address for address, _source in chosen.values())
    for node in sorted(node for node in nodes if node not in chosen):
        adopted = _adoptable(network, node, current.get(node, []), users, claimed)
        if adopted:
            chosen[node] = (adopted, CURRENT)
            claimed.add(adopted)
    taken = claimed | set(users)
    pending = sorted(node for node in nodes if node not in chosen)
    free = _lowest_free(network, taken, len(pending))
    if len(free) < len(pending):
        findings.append(_too_small(network, len(pending), len(free), len(nodes)))
    for node, address in zip(pending, free):
        chosen[node] = (address, ALLOCATED)

    allocations = []
    for node in nodes:
        if node in chosen:
            address, source = chosen[node]
            allocations.append({'node': node, 'ip': address, 'address': network.with_prefix(address), 'source': source})
    return allocations, findings


def _normal(address):
    """The canonical text of an address ('ip' or 'ip/prefix' in, 'ip' out); bad input unchanged."""
    text = str(address).strip().split('/', 1)[0]
    try:
        return str(netaddr.IPAddress(text))
    except (netaddr.AddrFormatError, ValueError):
        return text


def _check_existing(network, node, address, wanted):
    findings = []
    if netaddr.IPAddress(address) not in network.cidr:
        findings.append(catalogue_finding(
            'node_address_allocation_fixed',
            'node %s already holds %s from its policy, outside %scidr %s.' % (node, address, network.field, network.cidr),
            objects=[{'kind': 'Node', 'name': node}],
            remedy='an allocation never moves: release the node with state: absent first (it loses its address), '
                   'then run again with the new network.'))
    if wanted and wanted != address:
        findings.append(catalogue_finding(
            'node_address_allocation_fixed',
            'node %s already holds %s from its policy; %s %s was requested.'
            % (node, address, 'ipv6_address' if network.field.endswith('ipv6.') else 'address', wanted),
            objects=[{'kind': 'Node', 'name': node}],
            remedy='drop the address option for this node, or release it with state: absent first (it loses its address).'))
    return findings


def _check_requested(network, node, address, reserved):
    try:
        parsed = netaddr.IPAddress(address)
    except (netaddr.AddrFormatError, ValueError):
        return [refusal('nodes[%s].address' % node, address, 'is not an IP address', 'give one address inside %s.' % network.cidr)]
    if parsed.version != network.version or parsed not in network.cidr:
        return [refusal('nodes[%s].address' % node, address, 'is not inside %scidr %s' % (network.field, network.cidr),
                        'give an address inside %s or drop the option to allocate one.' % network.cidr)]
    if address in reserved:
        return [catalogue_finding(
            'node_address_in_use', 'address %s requested for node %s is %s of %s.' % (address, node, reserved[address], network.cidr),
            objects=[{'kind': 'Node', 'name': node}], remedy='give another address or drop the option to allocate one.')]
    return []


def _conflict(address, node, users, holders):
    """The first holder of `address` other than `node` itself, as a description, or None."""
    holder = holders.get(address)
    if holder is not None and holder != node:
        return 'the policy of node %s' % holder
    for use in users.get(address, []):
        if not (use.kind == 'node' and use.name == node):
            return use.describe()
    return None


def _in_use(network, node, address, conflict, source):
    fix = {EXISTING: 'free the address on %s (or move that EgressIP to another address); the allocation of %s never moves.' % (conflict, node),
           REQUESTED: 'give node %s another address, or drop the option to allocate a free one.' % node}[source]
    return catalogue_finding(
        'node_address_in_use', 'address %s of node %s in %s is already used by %s.' % (address, node, network.cidr, conflict),
        objects=[{'kind': 'Node', 'name': node}], remedy=fix)


def _adoptable(network, node, addresses, users, claimed):
    """An address the node already holds in the range that no one else holds, claims or reserves."""
    for address in sorted((text.split('/')[0] for text in addresses), key=netaddr.IPAddress):
        parsed = netaddr.IPAddress(address)
        if parsed.version != network.version or parsed not in network.pool or address in claimed:
            continue
        if any(not (use.kind == 'node' and use.name == node) for use in users.get(address, [])):
            continue
        return address
    return None


def _lowest_free(network, taken, count):
    free = []
    if count <= 0:
        return free
    for value in range(network.pool.first, network.pool.last + 1):
        address = str(netaddr.IPAddress(value, network.version))
        if address not in taken:
            free.append(address)
            if len(free) == count:
                break
    return free


def _too_small(network, needed, available, total):
    return catalogue_finding(
        'node_address_range_too_small',
        '%snode_address_range %s has %d free address(es); %d of the %d node(s) need a new one.'
        % (network.field, network.pool, available, needed, total),
        objects=[{'kind': 'option', 'name': network.field + 'node_address_range'}],
        remedy='widen %snode_address_range inside %s (free addresses taken by other hosts or EgressIPs), '
               'or address fewer nodes.' % (network.field, network.cidr))


def addresses_by_family(addresses):
    """Split 'ip/prefix' strings into {4: [...], 6: [...]} keeping order."""
    families = {4: [], 6: []}
    for text in addresses:
        families[netaddr.IPNetwork(text).version].append(text)
    return families
