"""The secondary network filter of the state=absent refusals (vsphere_vm_nic, machineset_network)."""

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import egress_networks, hosted_egress_ips, in_egress_networks
from ansible_collections.ocp.egressip.plugins.module_utils.plan.vsphere_network import egress_ips_by_node

EGRESSIPS = [
    {'metadata': {'name': 'payments'}, 'status': {'items': [{'node': 'w0', 'egressIP': '10.20.0.200'},
                                                            {'node': 'w1', 'egressIP': 'fd00:20::c8'}]}},
    {'metadata': {'name': 'legacy-primary'}, 'status': {'items': [{'node': 'w0', 'egressIP': '192.168.10.200'}]}},
]


def test_no_option_counts_every_egress_ip():
    networks, problems = egress_networks({'cidr': None, 'ipv6_cidr': None})
    assert networks is None and problems == []
    assert egress_ips_by_node(EGRESSIPS, networks) == {'w0': ['10.20.0.200', '192.168.10.200'], 'w1': ['fd00:20::c8']}


def test_only_the_secondary_networks_count():
    networks, problems = egress_networks({'cidr': '10.20.0.0/24', 'ipv6_cidr': None})
    assert problems == []
    assert egress_ips_by_node(EGRESSIPS, networks) == {'w0': ['10.20.0.200']}
    assert hosted_egress_ips(EGRESSIPS, networks) == {'w0': [('payments', '10.20.0.200')]}
    networks, _problems = egress_networks({'cidr': '10.20.0.0/24', 'ipv6_cidr': 'fd00:20::/64'})
    assert hosted_egress_ips(EGRESSIPS, networks) == {'w0': [('payments', '10.20.0.200')], 'w1': [('payments', 'fd00:20::c8')]}


def test_the_secondary_network_option_whole():
    networks, problems = egress_networks({'secondary_network': {'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1',
                                                                'ipv6': {'cidr': 'fd00:20::/64'}}}, option='secondary_network')
    assert problems == [] and [str(network) for network in networks] == ['10.20.0.0/24', 'fd00:20::/64']
    assert hosted_egress_ips(EGRESSIPS, networks) == {'w0': [('payments', '10.20.0.200')], 'w1': [('payments', 'fd00:20::c8')]}
    networks, problems = egress_networks({'network': {'cidr': '10.20.0.0/24', 'gateway': '10.30.0.1'}})
    assert networks is None and 'network.gateway 10.30.0.1 is not inside network.cidr' in problems[0] and 'Fix: ' in problems[0]


def test_an_unparsable_status_entry_still_counts():
    networks, _problems = egress_networks({'cidr': '10.20.0.0/24'})
    assert in_egress_networks('not-an-ip', networks) is True
    assert in_egress_networks('10.20.1.5', networks) is False


@pytest.mark.parametrize('params, words', [
    ({'cidr': '10.20.0.0'}, ["cidr '10.20.0.0' has no prefix length", 'address/prefix']),
    ({'cidr': '10.20.0.0/33'}, ["cidr '10.20.0.0/33' is not a network", 'Fix:']),
    ({'cidr': 'fd00:20::/64'}, ["cidr 'fd00:20::/64' is not an IPv4 network", '10.20.0.0/24']),
    ({'ipv6_cidr': '10.20.0.0/24'}, ["ipv6_cidr '10.20.0.0/24' is not an IPv6 network", 'fd00:20::/64']),
    ({'cidr': '10.20.0.5/24'}, ["cidr '10.20.0.5/24' has host bits set", 'Fix: Use the network address: 10.20.0.0/24']),
])
def test_bad_cidrs_name_the_option_the_value_and_the_fix(params, words):
    networks, problems = egress_networks(params)
    assert networks is None and len(problems) == 1
    for word in words:
        assert word in problems[0]
