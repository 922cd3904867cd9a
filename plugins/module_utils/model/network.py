# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The secondary network (the public ``egressip_network`` variable) as one value object, parsed by one set of rules.

``parse(config, field_prefix)`` turns the variable (or a module's ``network`` option, same keys) into a
``SecondaryNetwork`` and the refusals. Rules (docs/variables.md): ``cidr`` is ``address/prefix`` with the host
bits clear; ``gateway`` is an address of the same family inside ``cidr``, not its network or broadcast address;
``node_address_range`` is ``first-last`` or a CIDR block inside ``cidr`` that does not include the network,
broadcast or gateway address, and needs ``gateway``; ``ipv6`` (the same keys, and its own ``route_metric``) is the
IPv6 family of a dual-stack network whose first family is IPv4. A step says which keys it needs; a key it does not
need may be absent.

``from_options(params, flat, deprecate)`` is how a module reads it: the ``network`` option, or (deprecated until
2.0.0) the flat options it took before (``cidr``, ``ipv6_cidr``, ``gateway``, ...), parsed by the same rules.

One ``Family`` per address family; an IPv6-only network is one IPv6 family. Pure code (netaddr, no I/O).
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

FAMILY_KEYS = ('cidr', 'gateway', 'node_address_range')
DEFAULT_ROUTE_METRIC = 200
PER_INTERFACE = 'per_interface'
IP_FORWARDING_CHOICES = ('per_interface', 'global', 'external')
INVALID = 'node_network_input_invalid'
EXAMPLES = {4: '10.20.0.0/24', 6: 'fd00:20::/64'}


def argument_spec(required=False):
    """The ``network`` option of every module that reads the secondary network (doc fragment
    ocp.egressip.egressip_network): every key of ``egressip_network``; a module ignores the keys it does not need.
    No key is required here: parse() refuses a missing one that the step needs, naming the public variable."""
    family = dict((key, dict(type='str')) for key in FAMILY_KEYS)
    options = dict(family, route_metric=dict(type='int', default=DEFAULT_ROUTE_METRIC),
                   ip_forwarding=dict(type='str', choices=list(IP_FORWARDING_CHOICES), default=PER_INTERFACE),
                   ipv6=dict(type='dict', options=dict(family, route_metric=dict(type='int'))))
    return dict(type='dict', required=required, options=options)


class Family:
    """One address family of the secondary network, validated: cidr, gateway, node address range."""

    def __init__(self, cidr, gateway, pool, field, route_metric=None):
        self.cidr = cidr          # netaddr.IPNetwork, host bits clear
        self.gateway = gateway    # netaddr.IPAddress or None (a step that does not need it)
        self.pool = pool          # netaddr.IPRange of the node NIC base addresses, or None
        self.field = field        # prefix of the option path in messages, e.g. 'egressip_network.' or 'ipv6.'
        self.route_metric = route_metric  # metric of this family's default route (None: the network's)

    @property
    def version(self):
        return self.cidr.version

    def reserved(self):
        """{address: what} no node and no egress IP may hold: network, broadcast (IPv4 below /31), gateway."""
        addresses = {self.cidr.network: 'the network address'}
        if self.version == 4 and self.cidr.prefixlen < 31:
            addresses[self.cidr.broadcast] = 'the broadcast address'
        if self.gateway is not None:
            addresses[self.gateway] = 'the gateway'
        return addresses

    def describe_reserved(self, address):
        """'the gateway (network.gateway)' / 'the network address of 10.20.0.0/24' for a reserved address."""
        what = self.reserved()[address]
        if what == 'the gateway':
            return 'the gateway (%sgateway)' % self.field
        return '%s of %s' % (what, self.cidr)

    def holds(self, ip):
        """Whether an address ('ip' or 'ip/prefix', text or netaddr) lies in the cidr; unparsable: False."""
        address = _address(ip)
        return address is not None and address.version == self.version and address in self.cidr

    def held_by(self, host_cidr):
        """Whether a host-cidr ('ip/prefix') is a base address of this subnet (same prefix: not a /32 egress IP)."""
        return host_cidr_holds(host_cidr, self.cidr)

    def with_prefix(self, address):
        return '%s/%d' % (address, self.cidr.prefixlen)

    def __repr__(self):
        return 'Family(%s, gateway %s, range %s)' % (self.cidr, self.gateway, self.pool)


class SecondaryNetwork:
    """The secondary network: its families (the first one IPv4 or IPv6, then a dual-stack IPv6 one), the route
    metric and the IP forwarding choice."""

    def __init__(self, families, route_metric=DEFAULT_ROUTE_METRIC, ip_forwarding=PER_INTERFACE):
        self.families = list(families)
        self.route_metric = DEFAULT_ROUTE_METRIC if route_metric is None else route_metric
        self.ip_forwarding = ip_forwarding or PER_INTERFACE
        for family in self.families:
            if family.route_metric is None:
                family.route_metric = self.route_metric

    def route_metrics(self):
        """{version: metric of that family's default route via its gateway}."""
        return dict((family.version, family.route_metric) for family in self.families)

    @property
    def first(self):
        return self.families[0]

    @property
    def cidr(self):
        return self.first.cidr

    def family(self, version):
        return next((family for family in self.families if family.version == version), None)

    def holds(self, ip):
        return any(family.holds(ip) for family in self.families)

    def held_by(self, host_cidr):
        return any(family.held_by(host_cidr) for family in self.families)

    def reserved(self):
        addresses = {}
        for family in self.families:
            addresses.update(family.reserved())
        return addresses

    def __repr__(self):
        return 'SecondaryNetwork(%r, route_metric %s, ip_forwarding %s)' % (self.families, self.route_metric, self.ip_forwarding)


def host_cidr_holds(host_cidr, cidr):
    """Whether a host-cidr entry ('ip/prefix' or netaddr.IPNetwork) is an address of `cidr` with its prefix length."""
    try:
        entry, network = netaddr.IPNetwork(str(host_cidr).strip()), netaddr.IPNetwork(str(cidr).strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return False
    return entry.version == network.version and entry.ip in network and entry.prefixlen == network.prefixlen


def _address(value):
    try:
        return netaddr.IPAddress(str(value).strip().split('/', 1)[0])
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None


def refusal(field, value, problem, fix, finding_id=INVALID):
    return catalogue_finding(finding_id, '%s %r %s.' % (field, value, problem), objects=[{'kind': 'option', 'name': field}], remedy=fix)


def parse_cidr(field, value, finding_id=INVALID):
    """(netaddr.IPNetwork or None, finding or None): address/prefix with the host bits clear."""
    not_network = 'it is not a network address in CIDR notation'
    try:
        cidr = netaddr.IPNetwork(str(value).strip())
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None, refusal(field, value, 'is not a network in CIDR notation', 'write it as address/prefix, e.g. 10.20.0.0/24.', finding_id)
    if '/' not in str(value):
        return None, refusal(field, value, 'has no prefix length: ' + not_network,
                             'write it as address/prefix, e.g. %s/24.' % str(value).strip(), finding_id)
    if cidr.ip != cidr.network:
        return None, refusal(field, value, 'has host bits set: ' + not_network, 'use the network address: %s.' % cidr.cidr, finding_id)
    return cidr.cidr, None


def _parse_address(field, value, version, finding_id):
    address = _address(value) if '/' not in str(value) else None
    if address is None:
        return None, refusal(field, value, 'is not an IP address', 'give one address, e.g. 10.20.0.1.', finding_id)
    if address.version != version:
        return None, refusal(field, value, 'is IPv%d but the cidr is IPv%d' % (address.version, version),
                             'use an IPv%d address from the same family as the cidr.' % version, finding_id)
    return address, None


def _parse_range(field, value, version, finding_id):
    """'first-last' (inclusive) or a CIDR block, as a netaddr.IPRange."""
    text = str(value).strip()
    fix = 'write it as first-last (e.g. 10.20.0.10-10.20.0.99) or as a CIDR block inside the cidr.'
    if '-' not in text and '/' not in text:
        # a lone address would be read as a one-address block: almost always a typo for a range
        return None, refusal(field, value, 'is neither first-last nor a CIDR block (no "-" and no "/")', fix, finding_id)
    try:
        if '-' in text:
            first, last = [part.strip() for part in text.split('-', 1)]
            pool = netaddr.IPRange(first, last)
        else:
            block = netaddr.IPNetwork(text)
            pool = netaddr.IPRange(block.first, block.last)
    except (netaddr.AddrFormatError, ValueError, TypeError):
        return None, refusal(field, value, 'is not an address range', fix, finding_id)
    if pool.version != version:
        return None, refusal(field, value, 'is IPv%d but the cidr is IPv%d' % (pool.version, version), fix, finding_id)
    return pool, None


def _missing(names, keys, values, needs, finding_id):
    """Refusals for the keys the step needs and a node_address_range without its gateway."""
    findings = [refusal(names[key], values[key], 'is missing', 'give %s of the secondary network.' % names[key], finding_id)
                for key in keys if key in needs and not values[key]]
    if not findings and values['node_address_range'] and not values['gateway']:
        findings.append(refusal(names['gateway'], values['gateway'], 'is missing while node_address_range is set',
                                'give the gateway of %s too.' % values['cidr'], finding_id))
    return findings


def _outside(names, network, gateway, pool, text_range):
    """Refusals for a gateway or range outside the cidr, and a gateway on the network or broadcast address."""
    findings, objects = [], [{'kind': 'option', 'name': names['cidr']}]
    if gateway is not None and gateway not in network:
        findings.append(catalogue_finding(
            'node_gateway_outside_cidr', '%s %s is not inside %s %s.' % (names['gateway'], gateway, names['cidr'], network),
            objects=objects, remedy='set %s to the router address of %s (or correct %s).' % (names['gateway'], network, names['cidr'])))
    elif gateway is not None and gateway in (network.network, network.broadcast) and network.version == 4 and network.prefixlen < 31:
        findings.append(refusal(names['gateway'], str(gateway), 'is the network or broadcast address of %s' % network,
                                'set %s to the router address of %s.' % (names['gateway'], network)))
    if pool is not None and (pool.first < network.first or pool.last > network.last):
        findings.append(catalogue_finding(
            'node_address_range_outside_cidr', '%s %s is not inside %s %s.' % (names['node_address_range'], text_range, names['cidr'], network),
            objects=objects, remedy='choose a range inside %s, e.g. %s.' % (network, example_range(network, gateway))))
    return findings


def _not_global_unicast(field, network):
    """A refusal for a link-local, loopback or multicast subnet: OVN-Kubernetes drops host-cidrs that are not global
    unicast (util.GetSecondaryHostNetworkContainingIP), so no egress IP could ever be placed in it."""
    if network.ip.is_link_local():
        what = 'link-local'
    elif network.ip.is_loopback():
        what = 'loopback'
    elif network.ip.is_multicast():
        what = 'multicast'
    else:
        return None
    return catalogue_finding(
        'secondary_cidr_not_global_unicast', '%s %s is a %s network: OVN-Kubernetes places egress IPs only in global unicast host '
        'networks.' % (field, network, what), objects=[{'kind': 'option', 'name': field}],
        remedy='choose a global unicast subnet for %s, e.g. %s.' % (field, EXAMPLES[network.version]))


def parse_family(values, field_prefix='', needs=FAMILY_KEYS, finding_id=INVALID):
    """(Family or None, findings) from {cidr, gateway, node_address_range}: every problem is reported, not only the first."""
    values = dict((key, (values or {}).get(key)) for key in FAMILY_KEYS)
    names = dict((key, field_prefix + key) for key in FAMILY_KEYS)
    findings = _missing(names, ('cidr',), values, needs, finding_id)
    if findings:
        return None, findings
    network, error = parse_cidr(names['cidr'], values['cidr'], finding_id)
    error = error or _not_global_unicast(names['cidr'], network)
    findings = [error] if error else _missing(names, ('gateway', 'node_address_range'), values, needs, finding_id)
    if findings:
        return None, findings
    gateway = pool = None
    if values['gateway']:
        gateway, error = _parse_address(names['gateway'], values['gateway'], network.version, finding_id)
        findings += [error] if error else []
    if values['node_address_range']:
        pool, error = _parse_range(names['node_address_range'], values['node_address_range'], network.version, finding_id)
        findings += [error] if error else []
    findings = findings or _outside(names, network, gateway, pool, values['node_address_range'])
    if findings:
        return None, findings
    family = Family(network, gateway, pool, field_prefix)
    inside = ['%s (%s)' % (address, what) for address, what in sorted(family.reserved().items()) if pool is not None and address in pool]
    if inside:
        return None, [catalogue_finding(
            'node_address_range_reserved', '%s %s includes %s.' % (names['node_address_range'], values['node_address_range'], ', '.join(inside)),
            objects=[{'kind': 'option', 'name': names['cidr']}],
            remedy='start the range after and end it before those addresses, e.g. %s.' % example_range(network, gateway))]
    return family, []


def parse(config, field_prefix='', needs=FAMILY_KEYS, finding_id=INVALID):
    """(SecondaryNetwork or None, findings) from ``egressip_network`` or a ``network`` option: the first family and,
    with ``ipv6``, the IPv6 family of a dual-stack network (then all three keys, and the first family IPv4)."""
    config = config if isinstance(config, dict) else {}
    first, findings = parse_family(config, field_prefix, needs, finding_id)
    families = [first] if first is not None else []
    ipv6 = config.get('ipv6')
    if ipv6:
        prefix = field_prefix + 'ipv6.'
        second, found = parse_family(ipv6, prefix, needs, finding_id)
        findings += found
        if second is not None:
            second.route_metric = ipv6.get('route_metric')
        if second is not None and second.version != 6:
            findings.append(refusal(prefix + 'cidr', ipv6.get('cidr'), 'is not an IPv6 network',
                                    'give the IPv6 family of the secondary network, e.g. fd00:20::/64, or remove %sipv6.' % field_prefix,
                                    finding_id))
        elif second is not None and first is not None and first.version != 4:
            findings.append(refusal(field_prefix + 'cidr', config.get('cidr'), 'must be IPv4 when %sipv6 is given' % field_prefix,
                                    'give the IPv4 network in %scidr and the IPv6 one in %scidr.' % (field_prefix, prefix), finding_id))
        elif second is not None:
            families.append(second)
    if findings or not families:
        return None, findings
    return SecondaryNetwork(families, config.get('route_metric'), config.get('ip_forwarding')), []


# the flat options modules took before the ``network`` option (deprecated: removed in 2.0.0)
DEPRECATED_IN = '2.0.0'


def flat_argument_spec(keys):
    """The deprecated flat options ``keys`` of a module (of FAMILY_KEYS, ``route_metric``, ``ipv6``, ``ipv6_cidr``),
    with no defaults, so a run that sets none of them is told apart from one that sets them."""
    types = dict((key, dict(type='str')) for key in FAMILY_KEYS + ('ipv6_cidr',))
    types.update(route_metric=dict(type='int'), ipv6=dict(type='dict', options=dict((key, dict(type='str')) for key in FAMILY_KEYS)))
    return dict((key, types[key]) for key in keys)


def exclusive_with(flat, option='network'):
    """The ``mutually_exclusive`` groups of the ``network`` option and the deprecated flat options."""
    return [[option, key] for key in flat]


def _deprecated(deprecate, used, option):
    if deprecate is not None and used:
        deprecate('the options %s are deprecated: pass the secondary network whole, %s: "{{ egressip_network }}".'
                  % (', '.join(used), option), version=DEPRECATED_IN, collection_name='ocp.egressip')


def from_options(params, flat=(), deprecate=None, needs=FAMILY_KEYS, finding_id=INVALID, option='network'):
    """(SecondaryNetwork or None, findings): the module's ``network`` option (messages name ``network.<key>``) or,
    when only the deprecated flat options ``flat`` are set, those (messages name the flat option); neither: (None, [])
    - the caller decides whether a network is needed. ``deprecate``: the module's ``deprecate`` method, told when
    flat options are used. The argument spec makes ``network`` and the flat options mutually exclusive."""
    if params.get(option):
        return parse(params[option], option + '.', needs, finding_id)
    used = [key for key in flat if params.get(key) not in (None, '', {})]
    if not used:
        return None, []
    _deprecated(deprecate, used, option)
    return parse(dict((key, params[key]) for key in used), '', needs, finding_id)


def cidr_options(params, flat, deprecate=None, option='network'):
    """(cidr texts, findings) of a module that needs only the cidrs of the secondary network: its ``option``
    (``network``, parsed by parse() with only cidr needed) or the deprecated flat options ``flat``, ((name,
    version), ...) such as (('cidr', 4), ('ipv6_cidr', 6)), each checked alone by validate_cidr."""
    if params.get(option):
        network, findings = parse(params[option], option + '.', needs=('cidr',))
        return ([str(family.cidr) for family in network.families] if network is not None else []), findings
    cidrs, findings = [], []
    used = [(name, version) for name, version in flat if params.get(name)]
    for name, version in used:
        found = validate_cidr(name, params[name], version)
        findings += found
        cidrs += [] if found else [params[name].strip()]
    _deprecated(deprecate, [name for name, _version in used], option)
    return cidrs, findings


def networks_from(params, field_prefix=''):
    """(families, findings) of the node address step (node_nic_address, egressip_render): cidr, gateway and
    node_address_range are required."""
    missing = [field_prefix + key for key in FAMILY_KEYS if not params.get(key)]
    if missing:
        return [], [catalogue_finding(INVALID, '%s is required with state: present.' % ', '.join(missing),
                                      objects=[{'kind': 'option', 'name': key} for key in missing],
                                      remedy='give egressip_network.cidr, gateway and node_address_range.')]
    network, findings = parse(params, field_prefix)
    return (network.families if network is not None else []), findings


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


def validate_cidr(field, value, version=None, finding_id=INVALID):
    """Refusals for one network option given alone (address/prefix, host bits clear, IPv`version` when given)."""
    cidr, error = parse_cidr(field, value, finding_id)
    if error:
        return [error]
    if version and cidr.version != version:
        return [refusal(field, value, 'is not an IPv%d network' % version, 'give an IPv%d network, e.g. %s.' % (version, EXAMPLES[version]),
                        finding_id)]
    return []
