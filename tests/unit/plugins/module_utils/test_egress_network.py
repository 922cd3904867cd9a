"""Egress IP classification (DOMAIN.md section 3) and OVN-K node annotation parsing."""

import json

import pytest
from netaddr import IPAddress, IPNetwork

from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import (
    HOST_CIDRS_ANNOTATION,
    NONE,
    PRIMARY,
    PRIMARY_IFADDR_ANNOTATION,
    SECONDARY,
    SECONDARY_HOST_EGRESS_IPS_ANNOTATION,
    classify_ip,
    classify_ip_on_nodes,
    is_global_unicast,
    node_addresses,
    node_networks_from_node,
    parse_ip,
    parse_node_networks,
    primary_subnets,
    secondary_subnets,
)


def annotations(host_cidrs=None, primary=None, egress_ips=None):
    result = {}
    if host_cidrs is not None:
        result[HOST_CIDRS_ANNOTATION] = json.dumps(host_cidrs)
    if primary is not None:
        result[PRIMARY_IFADDR_ANNOTATION] = json.dumps(primary)
    if egress_ips is not None:
        result[SECONDARY_HOST_EGRESS_IPS_ANNOTATION] = json.dumps(egress_ips)
    return result


def node(name='worker-0', host_cidrs=('192.168.10.14/24', '10.20.0.11/24'), primary=None, egress_ips=None):
    return parse_node_networks(name, annotations(list(host_cidrs), primary or {'ipv4': '192.168.10.14/24'}, egress_ips))


# --- parsing -------------------------------------------------------------------------------

def test_parse_reads_all_three_annotations():
    parsed = node(egress_ips=['10.20.0.200'])
    assert parsed.name == 'worker-0'
    assert [str(cidr) for cidr in parsed.host_cidrs] == ['192.168.10.14/24', '10.20.0.11/24']
    assert [str(cidr) for cidr in parsed.primary_ifaddrs] == ['192.168.10.14/24']
    assert parsed.secondary_host_egress_ips == (IPAddress('10.20.0.200'),)
    assert parsed.annotations[HOST_CIDRS_ANNOTATION] == ['192.168.10.14/24', '10.20.0.11/24']
    assert parsed.annotations[PRIMARY_IFADDR_ANNOTATION] == {'ipv4': '192.168.10.14/24'}
    assert parsed.annotations[SECONDARY_HOST_EGRESS_IPS_ANNOTATION] == ['10.20.0.200']
    assert parsed.notes == ()


def test_missing_annotations_are_none_without_notes():
    parsed = parse_node_networks('fresh', {})
    assert parsed.host_cidrs == () and parsed.primary_ifaddrs == () and parsed.secondary_host_egress_ips == ()
    assert parsed.annotations == {HOST_CIDRS_ANNOTATION: None, PRIMARY_IFADDR_ANNOTATION: None, SECONDARY_HOST_EGRESS_IPS_ANNOTATION: None}
    assert parsed.notes == ()
    assert parse_node_networks('fresh', None).notes == ()


@pytest.mark.parametrize('key', [HOST_CIDRS_ANNOTATION, PRIMARY_IFADDR_ANNOTATION, SECONDARY_HOST_EGRESS_IPS_ANNOTATION])
def test_bad_json_is_a_note_not_a_crash(key):
    values = annotations(['10.20.0.11/24'], {'ipv4': '192.168.10.14/24'}, ['10.20.0.200'])
    values[key] = '["10.20.0.11/24"'  # truncated JSON
    parsed = parse_node_networks('worker-1', values)
    assert parsed.annotations[key] is None
    assert len(parsed.notes) == 1
    assert 'node worker-1' in parsed.notes[0] and key in parsed.notes[0] and 'not valid JSON' in parsed.notes[0]
    # the other annotations are still read
    others = [other for other in parsed.annotations if other != key]
    assert all(parsed.annotations[other] is not None for other in others)


def test_wrong_json_type_is_a_note():
    parsed = parse_node_networks('w', {HOST_CIDRS_ANNOTATION: '{"a": 1}', PRIMARY_IFADDR_ANNOTATION: '["192.168.10.14/24"]',
                                       SECONDARY_HOST_EGRESS_IPS_ANNOTATION: 'null'})
    assert parsed.host_cidrs == () and parsed.primary_ifaddrs == ()
    assert len(parsed.notes) == 3
    assert 'not a JSON list' in parsed.notes[0] and 'not a JSON object' in parsed.notes[1]


def test_bad_entries_are_skipped_with_a_note():
    parsed = parse_node_networks('w', annotations(['10.20.0.11/24', 'garbage', '10.30.0.5', 7], {'ipv4': 'nope', 'ipv6': 'fd00::5/64'},
                                                  ['10.20.0.200', 'x']))
    assert [str(cidr) for cidr in parsed.host_cidrs] == ['10.20.0.11/24']
    assert [str(cidr) for cidr in parsed.primary_ifaddrs] == ['fd00::5/64']
    assert parsed.secondary_host_egress_ips == (IPAddress('10.20.0.200'),)
    assert len(parsed.notes) == 5  # garbage, no prefix, not a string, bad primary, bad egress ip
    assert any("'garbage'" in note for note in parsed.notes)
    assert any("'10.30.0.5'" in note for note in parsed.notes)


def test_node_networks_from_api_node():
    api_node = {'metadata': {'name': 'worker-2', 'annotations': annotations(['10.20.0.12/24'], {'ipv4': '192.168.10.16/24'})}}
    parsed = node_networks_from_node(api_node)
    assert parsed.name == 'worker-2'
    assert [str(cidr) for cidr in parsed.host_cidrs] == ['10.20.0.12/24']
    assert node_networks_from_node({}).name is None


def test_parse_ip():
    assert parse_ip('10.20.0.200') == IPAddress('10.20.0.200')
    assert parse_ip(' fd00::1 ') == IPAddress('fd00::1')
    for bad in ('10.20.0', '10.20.0.200/32', '', None, 'abc', '01.2.3.4'):
        assert parse_ip(bad) is None


# --- subnets -------------------------------------------------------------------------------

def test_primary_and_secondary_subnets():
    parsed = node(host_cidrs=['192.168.10.14/24', '10.20.0.11/24', '10.30.0.11/16', '10.20.0.99/24'])
    assert primary_subnets(parsed) == [IPNetwork('192.168.10.0/24')]
    assert secondary_subnets(parsed) == [IPNetwork('10.20.0.0/24'), IPNetwork('10.30.0.0/16')]


def test_secondary_subnets_exclude_only_the_exact_primary_entry():
    # an API VIP in the primary subnet is another host-cidrs entry: OVN-K only removes the primary-ifaddr entry itself
    parsed = node(host_cidrs=['192.168.10.14/24', '192.168.10.5/24', '10.20.0.11/24'])
    assert secondary_subnets(parsed) == [IPNetwork('10.20.0.0/24'), IPNetwork('192.168.10.0/24')]


@pytest.mark.parametrize('address, expected', [
    ('10.20.0.11', True),          # private ranges are global unicast in Go's sense
    ('192.168.1.1', True),
    ('8.8.8.8', True),
    ('169.254.169.2', False),      # link-local (OVN masquerade addresses)
    ('127.0.0.1', False),
    ('0.0.0.0', False),
    ('255.255.255.255', False),
    ('224.0.0.5', False),
    ('fd00::5', True),
    ('2001:db8::1', True),
    ('fe80::1', False),
    ('::1', False),
    ('::', False),
    ('ff02::1', False),
])
def test_is_global_unicast_matches_go(address, expected):
    assert is_global_unicast(IPAddress(address)) is expected


def test_secondary_subnets_skip_non_global_unicast_entries():
    parsed = node(host_cidrs=['192.168.10.14/24', '169.254.169.2/29', '127.0.0.1/8', 'fe80::1/64', '10.20.0.11/24'])
    assert secondary_subnets(parsed) == [IPNetwork('10.20.0.0/24')]


def test_node_addresses():
    parsed = node(host_cidrs=['192.168.10.14/24', '10.20.0.11/24'])
    assert node_addresses(parsed) == {IPAddress('192.168.10.14'), IPAddress('10.20.0.11')}


# --- classification on one node ------------------------------------------------------------

def test_primary_when_inside_primary_subnet():
    assert classify_ip('192.168.10.200', node()) == (PRIMARY, IPNetwork('192.168.10.0/24'))


def test_secondary_with_its_subnet():
    assert classify_ip('10.20.0.200', node()) == (SECONDARY, IPNetwork('10.20.0.0/24'))


def test_none_when_no_network_matches():
    assert classify_ip('172.16.0.5', node()) == (NONE, None)


def test_primary_wins_over_a_secondary_entry_covering_the_same_ip():
    parsed = node(host_cidrs=['192.168.10.14/24', '192.168.0.7/16'])
    assert classify_ip('192.168.10.200', parsed) == (PRIMARY, IPNetwork('192.168.10.0/24'))
    assert classify_ip('192.168.20.1', parsed) == (SECONDARY, IPNetwork('192.168.0.0/16'))


def test_longest_prefix_match_over_secondary_entries():
    parsed = node(host_cidrs=['192.168.10.14/24', '10.20.0.11/16', '10.20.5.11/24', '10.20.5.129/25'])
    assert classify_ip('10.20.5.200', parsed) == (SECONDARY, IPNetwork('10.20.5.128/25'))
    assert classify_ip('10.20.5.10', parsed) == (SECONDARY, IPNetwork('10.20.5.0/24'))
    assert classify_ip('10.20.9.10', parsed) == (SECONDARY, IPNetwork('10.20.0.0/16'))


def test_link_local_entry_never_hosts_an_egress_ip():
    parsed = node(host_cidrs=['192.168.10.14/24', '169.254.0.2/17'])
    assert classify_ip('169.254.0.50', parsed) == (NONE, None)


def test_ip_family_is_respected():
    parsed = node(host_cidrs=['192.168.10.14/24', '10.20.0.11/24', 'fd00:20::11/64', 'fd00:10::14/64'],
                  primary={'ipv4': '192.168.10.14/24', 'ipv6': 'fd00:10::14/64'})
    assert classify_ip('fd00:10::99', parsed) == (PRIMARY, IPNetwork('fd00:10::/64'))
    assert classify_ip('fd00:20::200', parsed) == (SECONDARY, IPNetwork('fd00:20::/64'))
    assert classify_ip('fd00:30::1', parsed) == (NONE, None)
    assert classify_ip(IPAddress('10.20.0.7'), parsed) == (SECONDARY, IPNetwork('10.20.0.0/24'))


def test_node_without_annotations_hosts_nothing():
    assert classify_ip('10.20.0.200', parse_node_networks('new', {})) == (NONE, None)


def test_malformed_ip_raises_value_error():
    with pytest.raises(ValueError, match='not an IP address'):
        classify_ip('10.20.0.300', node())


# --- classification over nodes ---------------------------------------------------------------

def test_over_nodes_lists_the_nodes_that_have_the_network():
    nodes = [node('w0', ['192.168.10.14/24', '10.20.0.11/24']), node('w1', ['192.168.10.15/24', '10.20.0.12/24']),
             node('w2', ['192.168.10.16/24'])]
    assert classify_ip_on_nodes('10.20.0.200', nodes) == (SECONDARY, IPNetwork('10.20.0.0/24'), ['w0', 'w1'])
    assert classify_ip_on_nodes('192.168.10.200', nodes) == (PRIMARY, IPNetwork('192.168.10.0/24'), ['w0', 'w1', 'w2'])
    assert classify_ip_on_nodes('172.16.0.1', nodes) == (NONE, None, [])
    assert classify_ip_on_nodes('10.20.0.200', []) == (NONE, None, [])


def test_over_nodes_reports_the_most_specific_subnet():
    nodes = [node('w0', ['192.168.10.14/24', '10.20.0.11/16']), node('w1', ['192.168.10.15/24', '10.20.0.12/24'])]
    result = classify_ip_on_nodes('10.20.0.200', nodes)
    assert result.network == SECONDARY and result.subnet == IPNetwork('10.20.0.0/24') and result.nodes == ['w0', 'w1']


def test_over_nodes_primary_anywhere_wins():
    # one node has the IP in its primary subnet (odd, but OVN-K checks primary first on each node)
    nodes = [node('w0', ['192.168.10.14/24', '10.20.0.11/24']),
             node('w9', ['10.20.0.9/24'], primary={'ipv4': '10.20.0.9/24'})]
    assert classify_ip_on_nodes('10.20.0.200', nodes) == (PRIMARY, IPNetwork('10.20.0.0/24'), ['w9'])


def test_a_node_is_parsed_once_per_name_and_annotation_texts():
    first, again = node(), node()
    assert first is again  # a run's checks and plans share one parse
    assert node(name='worker-1') is not first and node(host_cidrs=('192.168.10.14/24',)) is not first
    assert node(host_cidrs=('192.168.10.14/24',)).host_cidrs == (IPNetwork('192.168.10.14/24'),)
    assert secondary_subnets(first) is not None and classify_ip('10.20.0.200', again).network == SECONDARY


def test_an_annotation_that_is_not_text_is_parsed_without_the_cache():
    odd = {HOST_CIDRS_ANNOTATION: ['10.20.0.11/24'], PRIMARY_IFADDR_ANNOTATION: json.dumps({'ipv4': '192.168.10.14/24'})}
    parsed = parse_node_networks('worker-0', odd)
    assert parsed.host_cidrs == () and parsed.notes and parse_node_networks('worker-0', odd) is not parsed
