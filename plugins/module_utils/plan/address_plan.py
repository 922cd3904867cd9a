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
One `Network` describes one address family; dual stack is two networks and two plans.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import netaddr
    NETADDR_IMPORT_ERROR = None
except ImportError as exc:  # reported by the modules through missing_required_lib
    netaddr = None
    NETADDR_IMPORT_ERROR = exc

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding

# Where an allocation came from, as reported per node.
EXISTING = 'existing'      # read back from the node's policy: never moves
REQUESTED = 'requested'    # the user named the address for this node
CURRENT = 'current'        # the node already holds it (host-cidrs), adopted without disruption
ALLOCATED = 'allocated'    # lowest free address of the range


class Network:
    """One address family of the secondary network, validated."""

    def __init__(self, cidr, gateway, pool, field):
        self.cidr = cidr          # netaddr.IPNetwork, host bits clear
        self.gateway = gateway    # netaddr.IPAddress
        self.pool = pool          # netaddr.IPRange of base addresses for the node NICs
        self.field = field        # option path used in messages, e.g. 'ipv6.cidr' prefix ''

    @property
    def version(self):
        return self.cidr.version

    def reserved(self):
        """Addresses no node may hold: network, broadcast (IPv4), gateway."""
        addresses = {self.cidr.network: 'the network address', self.gateway: 'the gateway'}
        if self.version == 4 and self.cidr.prefixlen < 31:
            addresses[self.cidr.broadcast] = 'the broadcast address'
        return addresses

    def with_prefix(self, address):
        return '%s/%d' % (address, self.cidr.prefixlen)

    def __repr__(self):
        return 'Network(%s, gateway %s, range %s)' % (self.cidr, self.gateway, self.pool)


def _invalid(field, value, problem, fix):
    return catalogue_finding('node_network_input_invalid', '%s %r %s.' % (field, value, problem),
                             objects=[{'kind': 'option', 'name': field}], remedy=fix)


def _parse_address(field, value, version=None):
    try:
        address = netaddr.IPAddress(str(value).strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None, _invalid(field, value, 'is not an IP address', 'give one address, e.g. 10.20.0.1.')
    if version and address.version != version:
        return None, _invalid(field, value, 'is IPv%d but the cidr is IPv%d' % (address.version, version),
                              'use an IPv%d address from the same family as the cidr.' % version)
    return address, None


def _parse_cidr(field, value):
    try:
        cidr = netaddr.IPNetwork(str(value).strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None, _invalid(field, value, 'is not a network in CIDR notation', 'write it as address/prefix, e.g. 10.20.0.0/24.')
    if '/' not in str(value):
        return None, _invalid(field, value, 'has no prefix length', 'write it as address/prefix, e.g. %s/24.' % value)
    if cidr.ip != cidr.network:
        return None, _invalid(field, value, 'has host bits set', 'use the network address: %s.' % cidr.cidr)
    return cidr.cidr, None


def validate_cidr(field, value, version=None):
    """Refusals for one network option (CIDR notation, host bits clear, IPv`version` when given)."""
    cidr, error = _parse_cidr(field, value)
    if error:
        return [error]
    if version and cidr.version != version:
        return [_invalid(field, value, 'is not an IPv%d network' % version, 'give an IPv%d network, e.g. fd00:20::/64.' % version)]
    return []


def _parse_range(field, value, version):
    """'first-last' (inclusive) or a CIDR block, as a netaddr.IPRange."""
    text = str(value).strip()
    fix = 'write it as first-last (e.g. 10.20.0.10-10.20.0.99) or as a CIDR block inside the cidr.'
    if '-' not in text and '/' not in text:
        # a lone address would be read as a one-address block: almost always a typo for a range
        return None, _invalid(field, value, 'is neither first-last nor a CIDR block (no "-" and no "/")', fix)
    try:
        if '-' in text:
            first, last = [part.strip() for part in text.split('-', 1)]
            pool = netaddr.IPRange(first, last)
        else:
            block = netaddr.IPNetwork(text)
            pool = netaddr.IPRange(block.first, block.last)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None, _invalid(field, value, 'is not an address range', fix)
    if pool.version != version:
        return None, _invalid(field, value, 'is IPv%d but the cidr is IPv%d' % (pool.version, version), fix)
    return pool, None


def parse_network(cidr, gateway, node_address_range, field_prefix=''):
    """Validate one family of the secondary network.

    Returns (Network or None, findings). Every problem is reported, not only the first.
    """
    names = dict((key, field_prefix + key) for key in ('cidr', 'gateway', 'node_address_range'))
    network, error = _parse_cidr(names['cidr'], cidr)
    if error:
        return None, [error]
    findings = []
    gateway_address, error = _parse_address(names['gateway'], gateway, network.version)
    if error:
        findings.append(error)
    pool, error = _parse_range(names['node_address_range'], node_address_range, network.version)
    if error:
        findings.append(error)
    if findings:
        return None, findings
    objects = [{'kind': 'option', 'name': names['cidr']}]
    if gateway_address not in network:
        findings.append(catalogue_finding(
            'node_gateway_outside_cidr', '%s %s is not inside %s %s.' % (names['gateway'], gateway_address, names['cidr'], network),
            objects=objects, remedy='set %s to the router address of %s (or correct %s).' % (names['gateway'], network, names['cidr'])))
    elif gateway_address in (network.network, network.broadcast) and network.version == 4 and network.prefixlen < 31:
        findings.append(_invalid(names['gateway'], str(gateway_address), 'is the network or broadcast address of %s' % network,
                                 'set %s to the router address of %s.' % (names['gateway'], network)))
    if pool.first < network.first or pool.last > network.last:
        findings.append(catalogue_finding(
            'node_address_range_outside_cidr', '%s %s is not inside %s %s.' % (names['node_address_range'], node_address_range, names['cidr'], network),
            objects=objects, remedy='choose a range inside %s, e.g. %s.' % (network, example_range(network, gateway_address))))
    if findings:
        return None, findings
    result = Network(network, gateway_address, pool, field_prefix)
    inside = ['%s (%s)' % (address, what) for address, what in sorted(result.reserved().items()) if address in pool]
    if inside:
        findings.append(catalogue_finding(
            'node_address_range_reserved', '%s %s includes %s.' % (names['node_address_range'], node_address_range, ', '.join(inside)),
            objects=objects, remedy='start the range after and end it before those addresses, e.g. %s.' % example_range(network, gateway_address)))
        return None, findings
    return result, findings


def parse_networks(cidr, gateway, node_address_range, ipv6=None, field_prefix=''):
    """(networks, findings) of the secondary network: its first family and, with ``ipv6`` ({cidr, gateway,
    node_address_range}), the IPv6 family of a dual-stack network, which must then be IPv6 on an IPv4 first family."""
    networks = []
    first, findings = parse_network(cidr, gateway, node_address_range, field_prefix)
    if first is not None:
        networks.append(first)
    if not ipv6:
        return networks, findings
    prefix = field_prefix + 'ipv6.'
    second, found = parse_network(ipv6.get('cidr'), ipv6.get('gateway'), ipv6.get('node_address_range'), prefix)
    findings += found
    if second is not None and second.version != 6:
        findings.append(_invalid(prefix + 'cidr', ipv6.get('cidr'), 'is not an IPv6 network',
                                 'give the IPv6 family of the secondary network, e.g. fd00:20::/64, or remove %sipv6.' % field_prefix))
    elif second is not None and first is not None and first.version != 4:
        findings.append(_invalid(field_prefix + 'cidr', cidr, 'must be IPv4 when %sipv6 is given' % field_prefix,
                                 'give the IPv4 network in %scidr and the IPv6 one in %scidr.' % (field_prefix, prefix)))
    elif second is not None:
        networks.append(second)
    return networks, findings


def example_range(network, gateway):
    """A range to suggest in messages: the usable addresses minus the gateway side."""
    first, last = network.first + 1, network.last - (1 if network.version == 4 else 0)
    if gateway is not None and gateway.value == first:
        first += 1
    elif gateway is not None and gateway.value == last:
        last -= 1
    if last < first:
        return '(none: %s is too small)' % network
    return '%s-%s' % (netaddr.IPAddress(first, network.version), netaddr.IPAddress(last, network.version))


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

    network: a validated Network. nodes: node names to address.
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
            'node %s already holds %s from its policy; %saddress %s was requested.' % (node, address, network.field, wanted),
            objects=[{'kind': 'Node', 'name': node}],
            remedy='drop the address option for this node, or release it with state: absent first (it loses its address).'))
    return findings


def _check_requested(network, node, address, reserved):
    try:
        parsed = netaddr.IPAddress(address)
    except (netaddr.AddrFormatError, ValueError):
        return [_invalid('nodes[%s].address' % node, address, 'is not an IP address', 'give one address inside %s.' % network.cidr)]
    if parsed.version != network.version or parsed not in network.cidr:
        return [_invalid('nodes[%s].address' % node, address, 'is not inside %scidr %s' % (network.field, network.cidr),
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
