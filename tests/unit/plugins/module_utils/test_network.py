"""The secondary network value object (model/network.py): one parse, one set of rules, every refusal message.

The validation tests of the address plan moved here with the rules they test."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.model import network as net_model
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import (
    Family, SecondaryNetwork, argument_spec, host_cidr_holds, networks_from, parse, parse_family, validate_cidr)
from ansible_collections.ocp.egressip.plugins.module_utils.checks.variables_schema import SCHEMA

NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'}
IPV6 = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99'}


def network(cidr='10.20.0.0/24', gateway='10.20.0.1', node_range='10.20.0.10-10.20.0.99', prefix=''):
    result, findings = parse_family({'cidr': cidr, 'gateway': gateway, 'node_address_range': node_range}, prefix)
    assert findings == [], findings
    return result


def refusal(cidr='10.20.0.0/24', gateway='10.20.0.1', node_range='10.20.0.10-10.20.0.99'):
    result, findings = parse_family({'cidr': cidr, 'gateway': gateway, 'node_address_range': node_range})
    assert result is None
    return findings


def ids(findings):
    return [item['id'] for item in findings]


# --- validation -------------------------------------------------------------------------------

def test_valid_network():
    net = network()
    assert str(net.cidr) == '10.20.0.0/24'
    assert net.version == 4
    assert net.pool.size == 90


def test_range_as_cidr_block():
    net = network(node_range='10.20.0.64/27')
    assert (str(net.pool[0]), str(net.pool[-1])) == ('10.20.0.64', '10.20.0.95')


def test_gateway_outside_cidr():
    findings = refusal(gateway='10.30.0.1')
    assert ids(findings) == ['node_gateway_outside_cidr']
    assert 'gateway 10.30.0.1 is not inside cidr 10.20.0.0/24' in findings[0]['message']
    assert '10.20.0.0/24' in findings[0]['remedy']


def test_range_outside_cidr():
    findings = refusal(node_range='10.20.1.10-10.20.1.99')
    assert ids(findings) == ['node_address_range_outside_cidr']
    assert 'node_address_range 10.20.1.10-10.20.1.99 is not inside cidr 10.20.0.0/24' in findings[0]['message']
    assert 'e.g. 10.20.0.2-10.20.0.254' in findings[0]['remedy']


def test_gateway_and_range_outside_both_reported():
    assert ids(refusal(gateway='10.30.0.1', node_range='10.21.0.1-10.21.0.5')) == [
        'node_gateway_outside_cidr', 'node_address_range_outside_cidr']


@pytest.mark.parametrize('node_range, inside', [
    ('10.20.0.0-10.20.0.20', '10.20.0.0 (the network address)'),
    ('10.20.0.1-10.20.0.20', '10.20.0.1 (the gateway)'),
    ('10.20.0.200-10.20.0.255', '10.20.0.255 (the broadcast address)'),
])
def test_range_including_reserved_addresses(node_range, inside):
    findings = refusal(node_range=node_range)
    assert ids(findings) == ['node_address_range_reserved']
    assert inside in findings[0]['message']


def test_gateway_in_the_middle_of_the_range():
    findings = refusal(gateway='10.20.0.50')
    assert ids(findings) == ['node_address_range_reserved']
    assert '10.20.0.50 (the gateway)' in findings[0]['message']


@pytest.mark.parametrize('cidr, gateway, node_range, field, text', [
    ('10.20.0.0', '10.20.0.1', '10.20.0.10-10.20.0.20', 'cidr', 'has no prefix length'),
    ('10.20.0.5/24', '10.20.0.1', '10.20.0.10-10.20.0.20', 'cidr', 'use the network address: 10.20.0.0/24'),
    ('banana', '10.20.0.1', '10.20.0.10-10.20.0.20', 'cidr', 'is not a network in CIDR notation'),
    ('10.20.0.0/24', 'gw', '10.20.0.10-10.20.0.20', 'gateway', 'is not an IP address'),
    ('10.20.0.0/24', 'fd00::1', '10.20.0.10-10.20.0.20', 'gateway', 'is IPv6 but the cidr is IPv4'),
    ('10.20.0.0/24', '10.20.0.1', '10.20.0.30-10.20.0.20', 'node_address_range', 'is not an address range'),
    ('10.20.0.0/24', '10.20.0.1', 'fd00::10-fd00::20', 'node_address_range', 'is IPv6 but the cidr is IPv4'),
])
def test_malformed_values_name_field_value_and_fix(cidr, gateway, node_range, field, text):
    findings = refusal(cidr, gateway, node_range)
    assert ids(findings) == ['node_network_input_invalid']
    assert findings[0]['message'].startswith(field + ' ')
    assert text in findings[0]['message'] + findings[0]['remedy']
    assert findings[0]['objects'] == [{'kind': 'option', 'name': field}]


def test_field_prefix_in_messages():
    _result, findings = parse_family(dict(zip(net_model.FAMILY_KEYS, ('fd00:20::/64', 'fd00:21::1', 'fd00:20::10-fd00:20::99'))), 'ipv6.')
    assert 'ipv6.gateway fd00:21::1 is not inside ipv6.cidr fd00:20::/64' in findings[0]['message']


def test_ipv6_range_may_not_include_the_subnet_router_anycast_address():
    findings = refusal('fd00:20::/64', 'fd00:20::1', 'fd00:20::-fd00:20::ff')
    assert ids(findings) == ['node_address_range_reserved']


# --- host bits, families, reserved addresses ----------------------------------------------------

def test_host_bits_are_refused_with_the_network_address_to_write():
    findings = parse({'cidr': '10.20.0.5/24'}, 'egressip_network.', needs=('cidr',))[1]
    assert ids(findings) == ['node_network_input_invalid']
    assert findings[0]['message'] == ("egressip_network.cidr '10.20.0.5/24' has host bits set: it is not a network address "
                                      "in CIDR notation.")
    assert findings[0]['remedy'] == 'use the network address: 10.20.0.0/24.'
    assert findings[0]['objects'] == [{'kind': 'option', 'name': 'egressip_network.cidr'}]


def test_no_prefix_is_not_a_network_address():
    message = parse({'cidr': '10.20.0.0'}, 'network.', needs=('cidr',))[1][0]['message']
    assert message == "network.cidr '10.20.0.0' has no prefix length: it is not a network address in CIDR notation."


def test_the_finding_id_is_the_callers():
    findings = parse({'cidr': 'banana'}, 'network.', needs=('cidr',), finding_id='egressip_input_invalid')[1]
    assert ids(findings) == ['egressip_input_invalid']


def test_a_step_needs_only_its_keys():
    result, findings = parse({'cidr': '10.20.0.0/24'}, 'network.', needs=('cidr',))
    assert findings == [] and result.first.gateway is None and result.first.pool is None
    findings = parse({'cidr': '10.20.0.0/24'}, 'egressip_network.')[1]
    assert [item['message'] for item in findings] == ['egressip_network.gateway None is missing.',
                                                      'egressip_network.node_address_range None is missing.']
    assert parse({}, 'network.', needs=('cidr',))[1][0]['message'] == 'network.cidr None is missing.'


def test_a_range_needs_its_gateway():
    findings = parse({'cidr': '10.20.0.0/24', 'node_address_range': '10.20.0.10-10.20.0.99'}, 'network.', needs=('cidr',))[1]
    assert findings[0]['message'] == 'network.gateway None is missing while node_address_range is set.'
    assert findings[0]['remedy'] == 'give the gateway of 10.20.0.0/24 too.'


@pytest.mark.parametrize('gateway', ['10.20.0.0', '10.20.0.255'])
def test_the_gateway_is_not_the_network_or_broadcast_address(gateway):
    findings = parse({'cidr': '10.20.0.0/24', 'gateway': gateway}, 'network.', needs=('cidr',))[1]
    assert ids(findings) == ['node_network_input_invalid']
    assert 'network.gateway %r is the network or broadcast address of 10.20.0.0/24' % gateway in findings[0]['message']


def test_the_gateway_is_an_address_not_a_network():
    findings = refusal(gateway='10.20.0.1/24')
    assert "gateway '10.20.0.1/24' is not an IP address" in findings[0]['message']


def test_reserved_addresses_and_their_descriptions():
    family = network(prefix='network.')
    reserved = dict((str(address), what) for address, what in family.reserved().items())
    assert reserved == {'10.20.0.0': 'the network address', '10.20.0.255': 'the broadcast address', '10.20.0.1': 'the gateway'}
    descriptions = sorted(family.describe_reserved(address) for address in family.reserved())
    assert descriptions == ['the broadcast address of 10.20.0.0/24', 'the gateway (network.gateway)', 'the network address of 10.20.0.0/24']
    assert '10.20.0.1' not in [str(address) for address in parse({'cidr': '10.20.0.0/30'}, needs=('cidr',))[0].reserved()]


def test_no_broadcast_below_31_and_none_in_ipv6():
    family = parse({'cidr': '10.20.0.0/31'}, needs=('cidr',))[0].first
    assert [str(address) for address in family.reserved()] == ['10.20.0.0']
    ipv6 = network(**dict(zip(('cidr', 'gateway', 'node_range'), IPV6.values())))
    assert sorted(ipv6.reserved().values()) == ['the gateway', 'the network address']


def test_holds_and_host_cidr_holds_the_subnet():
    family = network()
    assert family.holds('10.20.0.7') and family.holds('10.20.0.7/24') and not family.holds('10.21.0.7')
    assert not family.holds('fd00:20::7') and not family.holds('banana')
    assert family.held_by('10.20.0.10/24') and not family.held_by('10.20.0.200/32') and not family.held_by('10.21.0.10/24')
    assert host_cidr_holds('fd00:20::10/64', 'fd00:20::/64') and not host_cidr_holds('fd00:20::10/64', '10.20.0.0/24')
    assert not host_cidr_holds('garbage', '10.20.0.0/24')
    assert family.with_prefix('10.20.0.10') == '10.20.0.10/24'


# --- the whole network ---------------------------------------------------------------------------

def test_parse_gives_families_route_metric_and_forwarding():
    result, findings = parse(dict(NETWORK, ipv6=IPV6, route_metric=300, ip_forwarding='global'), 'egressip_network.')
    assert findings == []
    assert isinstance(result, SecondaryNetwork) and [family.version for family in result.families] == [4, 6]
    assert isinstance(result.first, Family) and str(result.cidr) == '10.20.0.0/24'
    assert (result.route_metric, result.ip_forwarding) == (300, 'global')
    assert result.family(6).field == 'egressip_network.ipv6.' and result.family(5) is None
    assert result.holds('fd00:20::200') and result.holds('10.20.0.200') and not result.holds('10.30.0.1')
    assert result.held_by('fd00:20::10/64') and not result.held_by('fd00:20::10/128')
    assert len(result.reserved()) == 5


def test_defaults():
    result = parse(NETWORK)[0]
    assert (result.route_metric, result.ip_forwarding) == (net_model.DEFAULT_ROUTE_METRIC, net_model.PER_INTERFACE)
    assert 'SecondaryNetwork' in repr(result) and 'Family(10.20.0.0/24' in repr(result)


def test_ipv6_must_be_ipv6_on_an_ipv4_first_family():
    findings = parse(dict(NETWORK, ipv6=dict(NETWORK, cidr='10.30.0.0/24', gateway='10.30.0.1',
                                             node_address_range='10.30.0.10-10.30.0.99')), 'egressip_network.')[1]
    assert findings[0]['message'] == "egressip_network.ipv6.cidr '10.30.0.0/24' is not an IPv6 network."
    assert 'remove egressip_network.ipv6' in findings[0]['remedy']
    findings = parse(dict(IPV6, ipv6=IPV6), 'egressip_network.')[1]
    assert findings[0]['message'] == "egressip_network.cidr 'fd00:20::/64' must be IPv4 when egressip_network.ipv6 is given."


def test_ipv6_needs_all_three_keys():
    findings = parse(dict(NETWORK, ipv6={'cidr': 'fd00:20::/64'}), 'egressip_network.')[1]
    assert [item['message'] for item in findings] == ['egressip_network.ipv6.gateway None is missing.',
                                                      'egressip_network.ipv6.node_address_range None is missing.']


def test_not_a_dict_is_a_missing_cidr():
    assert parse(None, 'network.')[1][0]['message'] == 'network.cidr None is missing.'


def test_networks_from_requires_the_three_keys():
    families, findings = networks_from({'cidr': '10.20.0.0/24', 'gateway': None, 'node_address_range': ''})
    assert families == [] and ids(findings) == ['node_network_input_invalid']
    assert findings[0]['message'] == 'gateway, node_address_range is required with state: present.'
    families, findings = networks_from(dict(NETWORK, ipv6=IPV6))
    assert findings == [] and [family.version for family in families] == [4, 6]
    assert networks_from(dict(NETWORK, cidr='10.20.0.5/24'))[0] == []


@pytest.mark.parametrize('value, version, text', [
    ('10.20.0.0', None, "cidr '10.20.0.0' has no prefix length"),
    ('10.20.0.0/24', 6, "cidr '10.20.0.0/24' is not an IPv6 network"),
    ('fd00:20::/64', 4, "cidr 'fd00:20::/64' is not an IPv4 network"),
])
def test_validate_cidr(value, version, text):
    [finding] = validate_cidr('cidr', value, version)
    assert text in finding['message']
    assert ('10.20.0.0/24' if version == 4 else 'fd00:20::/64' if version == 6 else 'address/prefix') in finding['remedy']
    assert validate_cidr('cidr', 'fd00:20::/64') == []


def test_the_argument_spec_accepts_every_key_of_the_public_variable():
    spec = argument_spec()
    assert set(spec['options']) == set(SCHEMA['egressip_network'].keys)
    assert set(spec['options']['ipv6']['options']) == set(SCHEMA['egressip_network'].keys['ipv6'].keys)
    assert spec['options']['route_metric']['default'] == 200 and spec['options']['ip_forwarding']['default'] == 'per_interface'
    assert argument_spec(required=True)['required'] is True


def test_networks_from_names_the_option_path():
    assert networks_from({'cidr': '10.20.0.0/24'}, 'network.')[1][0]['message'] == (
        'network.gateway, network.node_address_range is required with state: present.')
    [family] = networks_from(NETWORK, 'network.')[0]
    assert family.field == 'network.' and family.describe_reserved(family.gateway) == 'the gateway (network.gateway)'


# --- the network option, and the deprecated flat options --------------------------------------------------------

class Deprecations(list):
    def __call__(self, message, version=None, collection_name=None):
        self.append((message, version, collection_name))


def test_the_ipv6_family_has_its_own_route_metric_else_the_networks():
    result, findings = parse(dict(NETWORK, route_metric=250, ipv6=dict(IPV6, route_metric=260)), 'network.')
    assert findings == [] and result.route_metrics() == {4: 250, 6: 260}
    result, _findings = parse(dict(NETWORK, route_metric=250, ipv6=IPV6), 'network.')
    assert result.route_metrics() == {4: 250, 6: 250}
    assert parse(NETWORK)[0].route_metrics() == {4: 200}


def test_from_options_reads_the_network_option_and_names_its_keys():
    told = Deprecations()
    result, findings = net_model.from_options({'network': dict(NETWORK, ipv6=IPV6), 'cidr': None}, ('cidr', 'gateway'), told)
    assert findings == [] and [family.version for family in result.families] == [4, 6] and told == []
    _result, findings = net_model.from_options({'network': dict(NETWORK, gateway='10.30.0.1')}, ('cidr',), told)
    assert 'network.gateway 10.30.0.1 is not inside network.cidr 10.20.0.0/24' in findings[0]['message']
    assert net_model.from_options({'network': None, 'cidr': None}, ('cidr',), told) == (None, [])


def test_from_options_takes_the_flat_options_with_a_deprecation():
    told = Deprecations()
    params = dict(NETWORK, network=None, route_metric=300, ipv6=None)
    result, findings = net_model.from_options(params, ('cidr', 'gateway', 'node_address_range', 'route_metric', 'ipv6'), told)
    assert findings == [] and result.route_metrics() == {4: 300}
    [(message, version, collection)] = told
    assert (version, collection) == ('2.0.0', 'ocp.egressip')
    assert 'cidr, gateway, node_address_range, route_metric are deprecated' in message and 'network: "{{ egressip_network }}"' in message
    _result, findings = net_model.from_options(dict(params, gateway='10.30.0.1'), ('cidr', 'gateway', 'node_address_range'), told)
    assert findings[0]['message'].startswith('gateway 10.30.0.1 is not inside cidr')


def test_cidr_options_one_parse_of_the_network_or_each_flat_cidr_alone():
    told = Deprecations()
    flat = (('cidr', 4), ('ipv6_cidr', 6))
    assert net_model.cidr_options({'network': dict(NETWORK, ipv6=IPV6)}, flat, told) == (['10.20.0.0/24', 'fd00:20::/64'], [])
    assert net_model.cidr_options({'network': {'cidr': 'fd00:20::/64'}}, flat, told) == (['fd00:20::/64'], [])
    assert told == []
    assert net_model.cidr_options({'cidr': '10.20.0.0/24', 'ipv6_cidr': 'fd00:20::/64'}, flat, told) == (['10.20.0.0/24', 'fd00:20::/64'], [])
    assert 'cidr, ipv6_cidr are deprecated' in told[0][0]
    cidrs, findings = net_model.cidr_options({'secondary_network': {'cidr': '10.20.0.5/24'}}, flat, told, 'secondary_network')
    assert cidrs == [] and "secondary_network.cidr '10.20.0.5/24' has host bits set" in findings[0]['message']


def test_flat_options_are_mutually_exclusive_with_network():
    assert net_model.exclusive_with(('cidr', 'ipv6_cidr'), 'secondary_network') == [['secondary_network', 'cidr'], ['secondary_network', 'ipv6_cidr']]
    spec = net_model.flat_argument_spec(('cidr', 'route_metric', 'ipv6'))
    assert spec['route_metric'] == {'type': 'int'} and 'default' not in spec['cidr'] and set(spec['ipv6']['options']) == set(net_model.FAMILY_KEYS)


@pytest.mark.parametrize('cidr, what', [('fe80::/64', 'link-local'), ('169.254.20.0/24', 'link-local'), ('ff05::/64', 'multicast'),
                                        ('127.0.0.0/8', 'loopback')])
def test_a_network_that_is_not_global_unicast_is_refused(cidr, what):
    findings = parse({'cidr': '10.20.0.0/24', 'ipv6': {'cidr': cidr}}, 'egressip_network.', needs=('cidr',))[1] if ':' in cidr else \
        parse({'cidr': cidr}, 'egressip_network.', needs=('cidr',))[1]
    assert [item['id'] for item in findings] == ['secondary_cidr_not_global_unicast']
    assert 'is a %s network: OVN-Kubernetes places egress IPs only in global unicast host networks' % what in findings[0]['message']
    assert parse({'cidr': 'fd00:20::/64'}, needs=('cidr',))[1] == []  # unique-local is global unicast


def test_the_ipv6_gateway_must_be_in_the_ipv6_cidr():
    findings = parse(dict(NETWORK, ipv6=dict(IPV6, gateway='fd00:99::1')), 'egressip_network.')[1]
    assert [item['id'] for item in findings] == ['node_gateway_outside_cidr']
    assert 'egressip_network.ipv6.gateway fd00:99::1 is not inside egressip_network.ipv6.cidr fd00:20::/64' in findings[0]['message']
