"""Validation of the EgressIP objects of the variables file: one test per refusal, and what passes."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.checks import egressip_validation as validation
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import failure_message

from _cluster_states import egressip_object, node_object

NETWORK = {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'}


def snap(nodes=3, egressips=(), networks=('10.20.0.0/24',)):
    return _placement.snapshot([node_object('w%d' % index, index, list(networks)) for index in range(nodes)], list(egressips))


def entry(name='payments', ips=('10.20.0.200', '10.20.0.201'), selector=None, **extra):
    result = {'name': name, 'egress_ips': list(ips), 'namespace_selector': selector or {'matchLabels': {'team': name}}}
    result.update(extra)
    return result


def ids(findings):
    return [item['id'] for item in findings]


def only(findings):
    assert len(findings) == 1, findings
    return findings[0]


def test_valid_objects_pass():
    objects = [entry(), entry('billing', ['10.20.0.210'], pod_selector={'matchExpressions': [{'key': 'app', 'operator': 'Exists'}]})]
    assert validation.validate(objects, NETWORK, snap()) == []


def test_network_without_range_or_gateway_is_enough():
    assert validation.validate([entry()], {'cidr': '10.20.0.0/24'}, snap()) == []
    assert validation.validate([entry()], {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1'}, snap()) == []


# --- shape ---------------------------------------------------------------------------------------


@pytest.mark.parametrize('name, problem', [
    ('', 'is empty'), (None, 'is empty'), ('Payments_1', 'is not a valid object name'), ('x' * 254, 'is not a valid object name'),
])
def test_bad_names(name, problem):
    finding = only(validation.validate([entry(name, selector={'matchLabels': {'team': 'payments'}})], NETWORK, snap()))
    assert finding['id'] == 'egressip_input_invalid' and 'objects[0].name' in finding['message'] and problem in finding['message']


def test_invalid_name_suggestion_never_derives_text_from_the_name():
    # the name may be templated from a secret: Ansible masks it verbatim, never a lowercased or rewritten copy
    finding = only(validation.validate([entry('S3cret_Passw0rd')], NETWORK, snap()))
    assert 'DNS-1123' in finding['remedy']
    assert 's3cret' not in (finding['message'] + finding['remedy']).replace('S3cret', '')


def test_repeated_name():
    finding = only(validation.validate([entry(), entry(ips=['10.20.0.210'])], NETWORK, snap()))
    assert "objects[1].name 'payments' is also the name of objects[0]" in finding['message']


@pytest.mark.parametrize('ips', [[], None, '10.20.0.200'])
def test_missing_ip_list(ips):
    finding = only(validation.validate([dict(entry(), egress_ips=ips)], NETWORK, snap()))
    assert finding['id'] == 'egressip_input_invalid' and 'objects[0].egress_ips' in finding['message']


def test_ip_that_does_not_parse():
    finding = only(validation.validate([entry(ips=['10.20.0.200', '10.20.0.300'])], NETWORK, snap()))
    assert finding['message'] == "objects[0].egress_ips[1] '10.20.0.300' is not an IP address."
    assert finding['objects'] == [{'kind': 'option', 'name': 'objects[0].egress_ips[1]'}, {'kind': 'EgressIP', 'name': 'payments'}]


def test_namespace_selector_missing_or_empty():
    missing = dict(entry())
    del missing['namespace_selector']
    finding = only(validation.validate([missing], NETWORK, snap()))
    assert finding['id'] == 'egressip_selector_missing' and 'objects[0].namespace_selector is missing' in finding['message']
    finding = only(validation.validate([entry(selector={'matchLabels': {}})], NETWORK, snap()))
    assert finding['id'] == 'egressip_selector_missing' and 'selects every namespace' in finding['message']


@pytest.mark.parametrize('selector, problem', [
    ({'team': 'payments'}, 'has key(s) team'),
    ({'matchLabels': {'tier': 1}}, 'is not a map of label to string value'),
    ({'matchExpressions': {'key': 'team'}}, 'is not a list'),
    ({'matchExpressions': [{'key': 'team', 'operator': 'Has'}]}, 'a selector operator is one of In, NotIn, Exists, DoesNotExist'),
    ({'matchExpressions': [{'operator': 'In', 'values': ['x']}]}, 'needs a key and an operator'),
    ({'matchExpressions': [{'key': 'team', 'operator': 'In'}]}, 'has operator In but no values'),
    ({'matchExpressions': [{'key': 'team', 'operator': 'Exists', 'values': ['x']}]}, 'which takes no values'),
    ('team=payments', 'is not a dictionary'),
])
def test_malformed_selectors(selector, problem):
    finding = only(validation.validate([entry(selector=selector)], NETWORK, snap()))
    assert finding['id'] == 'egressip_input_invalid' and problem in finding['message']


def test_malformed_pod_selector():
    finding = only(validation.validate([entry(pod_selector={'app': 'x'})], NETWORK, snap()))
    assert 'objects[0].pod_selector' in finding['message']


def test_objects_not_a_list_and_entries_not_dicts():
    assert 'is not a list' in only(validation.validate({'name': 'x'}, NETWORK, snap()))['message']
    assert 'is not a dictionary' in only(validation.validate(['payments'], NETWORK, snap()))['message']


# --- network ------------------------------------------------------------------------------------


@pytest.mark.parametrize('network, field, problem', [
    ({}, 'network.cidr', 'is missing'),
    ({'cidr': '10.20.0.5/24'}, 'network.cidr', 'is not a network address'),
    ({'cidr': '10.20.0.0'}, 'network.cidr', 'is not a network address'),
    ({'cidr': '10.20.0.0/24', 'gateway': '10.30.0.1'}, 'network.gateway', 'is not inside network.cidr 10.20.0.0/24'),
    ({'cidr': '10.20.0.0/24', 'gateway': '10.20.0.255'}, 'network.gateway', 'is the network or broadcast address'),
    ({'cidr': '10.20.0.0/24', 'node_address_range': '10.20.0.10-10.20.0.99'}, 'network.gateway', 'is missing while'),
])
def test_bad_network(network, field, problem):
    finding = only(validation.validate([entry()], network, snap()))
    assert field in finding['message'] and problem in finding['message']


def test_network_with_range_uses_the_address_plan_rules():
    finding = only(validation.validate([entry()], dict(NETWORK, node_address_range='10.20.1.10-10.20.1.20'), snap()))
    assert finding['id'] == 'node_address_range_outside_cidr' and 'network.node_address_range' in finding['message']


# --- addresses ----------------------------------------------------------------------------------


@pytest.mark.parametrize('ip, finding_id, text', [
    ('10.30.0.200', 'egressip_outside_network', 'is outside network.cidr 10.20.0.0/24'),
    ('fd00::200', 'egressip_family_missing', 'is IPv6 but the secondary network has no IPv6 part (network.ipv6 is missing)'),
    ('10.20.0.0', 'egressip_reserved_address', 'is the network address of 10.20.0.0/24'),
    ('10.20.0.255', 'egressip_reserved_address', 'is the broadcast address of 10.20.0.0/24'),
    ('10.20.0.1', 'egressip_reserved_address', 'is the gateway (network.gateway)'),
    ('10.20.0.50', 'egressip_in_node_address_range', 'is inside network.node_address_range 10.20.0.10-10.20.0.99'),
])
def test_address_refusals(ip, finding_id, text):
    finding = only(validation.validate([entry(ips=['10.20.0.200', ip])], NETWORK, snap()))
    assert finding['id'] == finding_id and text in finding['message']
    assert finding['message'].startswith('objects[0].egress_ips[1] %s (EgressIP payments)' % ip)


IPV6 = {'cidr': 'fd00:20::/64', 'gateway': 'fd00:20::1', 'node_address_range': 'fd00:20::10-fd00:20::99'}


@pytest.mark.parametrize('ip, finding_id, text', [
    ('fd00:21::200', 'egressip_outside_network', 'is outside network.ipv6.cidr fd00:20::/64'),
    ('fd00:20::1', 'egressip_reserved_address', 'is the gateway (network.ipv6.gateway)'),
    ('fd00:20::50', 'egressip_in_node_address_range', 'is inside network.ipv6.node_address_range fd00:20::10-fd00:20::99'),
    ('fe80::200', 'egressip_link_local', 'is a link-local address'),
])
def test_ipv6_egress_ips_are_checked_against_the_ipv6_part(ip, finding_id, text):
    finding = only(validation.validate([entry(ips=['10.20.0.200', ip])], dict(NETWORK, ipv6=IPV6), snap(), check_capacity_rule=False))
    assert finding['id'] == finding_id and text in finding['message'], finding


def test_egress_ips_of_both_families_on_a_dual_stack_network():
    assert validation.validate([entry(ips=['10.20.0.200', 'fd00:20::200'])], dict(NETWORK, ipv6=IPV6), snap(), check_capacity_rule=False) == []
    finding = only(validation.validate([entry(ips=['10.20.0.200'])], {'cidr': 'fd00:20::/64'}, snap(), check_capacity_rule=False))
    assert finding['id'] == 'egressip_family_missing' and 'is IPv4 but the secondary network has no IPv4 part' in finding['message']


def test_node_address_outside_the_range_is_refused():
    nodes = [node_object('w0', 0, ['10.20.0.0/24'])]
    nodes[0]['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = '["192.168.10.11/24", "10.20.0.150/24"]'
    finding = only(validation.validate([entry(ips=['10.20.0.150'])], NETWORK, _placement.snapshot(nodes, []), check_capacity_rule=False))
    assert finding['id'] == 'egressip_node_address' and 'is an address of node w0' in finding['message']
    assert {'kind': 'Node', 'name': 'w0'} in finding['objects']


def test_ip_claimed_by_another_object():
    other = egressip_object('legacy', ['10.20.0.200'])
    finding = only(validation.validate([entry()], NETWORK, snap(egressips=[other])))
    assert finding['id'] == 'egressip_claimed' and 'spec.egressIPs of EgressIP legacy' in finding['message']


def test_claims_of_the_objects_of_this_run_and_ignored_ones_do_not_count():
    existing = [egressip_object('payments', ['10.20.0.200']), egressip_object('old', ['10.20.0.201'])]
    assert validation.validate([entry()], NETWORK, snap(egressips=existing), others_ignored=['old']) == []


def test_duplicates_within_and_across_objects():
    findings = validation.validate([entry(ips=['10.20.0.200', '10.20.0.200']), entry('billing', ['10.20.0.200'])],
                                   NETWORK, snap(4))
    assert ids(findings) == ['egressip_duplicate', 'egressip_duplicate']
    assert 'objects[0].egress_ips[1] 10.20.0.200 (EgressIP payments) is also listed at objects[0].egress_ips[0]' in findings[0]['message']
    assert 'is also listed at objects[0].egress_ips[0]' in findings[1]['message']


def test_ipv6_spellings_are_the_same_address():
    network = {'cidr': 'fd00:20::/64'}
    nodes = [node_object('w%d' % index, index, []) for index in range(3)]
    for index, node in enumerate(nodes):
        node['metadata']['annotations']['k8s.ovn.org/host-cidrs'] = '["192.168.10.%d/24", "fd00:20::%d/64"]' % (11 + index, 10 + index)
    findings = validation.validate([entry(ips=['fd00:20::200', 'FD00:20:0::200'])], network, _placement.snapshot(nodes, []))
    assert ids(findings) == ['egressip_duplicate']


# --- capacity -----------------------------------------------------------------------------------


def test_capacity_needs_one_node_more_than_ips():
    finding = only(validation.validate([entry()], NETWORK, snap(2)))
    assert finding['id'] == 'egress_nodes_capacity_insufficient' and finding['severity'] == 'error'
    assert 'has 2 IP(s) but only 2 capable node(s)' in finding['message'] and '(w0, w1)' in finding['message']
    assert 'one node failure leaves an IP unassigned' in finding['message'] and 'at least 3 are needed' in finding['message']


def test_capacity_below_the_ip_count():
    finding = only(validation.validate([entry(ips=['10.20.0.200', '10.20.0.201', '10.20.0.202'])], NETWORK, snap(2)))
    assert '1 of its IPs cannot be assigned at all' in finding['message']


def test_capacity_warning_when_accepted():
    finding = only(validation.validate([entry()], NETWORK, snap(2), allow_insufficient_capacity=True))
    assert finding['severity'] == 'warning' and 'Accepted with allow_insufficient_capacity' in finding['message']


def test_capacity_counts_only_labelled_ready_nodes_holding_the_network():
    nodes = [node_object('w0', 0, ['10.20.0.0/24']), node_object('w1', 1, ['10.20.0.0/24'], labelled=False),
             node_object('w2', 2, ['10.20.0.0/24'], ready=False), node_object('w3', 3, ['10.30.0.0/24']),
             node_object('w4', 4, ['10.20.0.0/24'])]
    finding = only(validation.validate([entry()], NETWORK, _placement.snapshot(nodes, [])))
    assert 'only 2 capable node(s) (labelled k8s.ovn.org/egress-assignable, Ready, holding its network in host-cidrs) (w0, w4)' \
        in finding['message']
    assert validation.validate([entry(ips=['10.20.0.200'])], NETWORK, _placement.snapshot(nodes, [])) == []


def test_capacity_rule_can_be_left_to_preflight():
    assert validation.validate([entry()], NETWORK, snap(1), check_capacity_rule=False) == []


# --- entry points -------------------------------------------------------------------------------


def test_failure_message_lists_every_error_with_its_fix():
    findings = validation.validate([entry(ips=['10.30.0.1', '10.20.0.1'])], NETWORK, snap())
    message = failure_message(findings, 'EgressIP objects')
    assert message.startswith('EgressIP objects refused: 2 error(s); nothing was written.')
    assert '[egressip_outside_network] objects[0].egress_ips[0] 10.30.0.1 (EgressIP payments) is outside' in message
    assert 'Fix: Use an address inside egressip_network.cidr' in message


def test_validate_config_speaks_the_variables_file():
    config = {'network': NETWORK, 'objects': [entry(ips=['10.20.0.50'])]}
    nodes = [node_object('w%d' % index, index, ['10.20.0.0/24']) for index in range(3)]
    finding = only(validation.validate_config(config, nodes, []))
    assert finding['message'].startswith('egressip_objects[0].egress_ips[0] 10.20.0.50 (EgressIP payments) is inside '
                                         'egressip_network.node_address_range')
    assert validation.validate_config(dict(config, objects=[entry()]), nodes[:1], []) == []
    assert ids(validation.validate_config(dict(config, objects=[entry()]), nodes[:1], [], check_capacity_rule=True)) == [
        'egress_nodes_capacity_insufficient']


def test_an_already_parsed_network_is_used_as_it_is():
    parsed, _findings = _network.parse(NETWORK, 'egressip_network.')
    config = {'objects': [entry(ips=['10.20.0.50'])]}
    findings = validation.validate_config(config, [node_object('w0', 0, ['10.20.0.0/24'])], [], network=parsed)
    assert [item['id'] for item in findings] == ['egressip_in_node_address_range']
    assert 'egressip_network.node_address_range' in findings[0]['message']
