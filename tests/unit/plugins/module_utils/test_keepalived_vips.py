"""keepalived's API and ingress VIPs (/32 on br-ex) in host-cidrs, as on vSphere IPI clusters: the collection's node
network parsing, address plan and placement prediction must not take them for a secondary network or miss them as
node addresses. OVN-K itself keeps them in host-cidrs minus the primary entry (ParseNodeHostCIDRsExcludeOVNNetworks)."""

import json

from ansible_collections.ocp.egressip.plugins.module_utils.plan import address_plan as _address_plan
from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import networks_from

API_VIP, INGRESS_VIP = '192.168.10.5', '192.168.10.6'


def node(name, primary, secondary=None, vips=(), labelled=True):
    cidrs = [primary] + ([secondary] if secondary else []) + ['%s/32' % vip for vip in vips]
    annotations = {'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary}), 'k8s.ovn.org/host-cidrs': json.dumps(sorted(cidrs))}
    labels = {'k8s.ovn.org/egress-assignable': ''} if labelled else {}
    return {'metadata': {'name': name, 'labels': labels, 'annotations': annotations},
            'status': {'conditions': [{'type': 'Ready', 'status': 'True'}],
                       'addresses': [{'type': 'InternalIP', 'address': primary.split('/')[0]}]}}


NODES = [node('master-0', '192.168.10.11/24', vips=[API_VIP], labelled=False),
         node('worker-0', '192.168.10.14/24', '10.20.0.14/24', vips=[INGRESS_VIP]),
         node('worker-1', '192.168.10.15/24', '10.20.0.15/24')]


def networks():
    return [_egress_network.node_networks_from_node(n) for n in NODES]


def test_a_secondary_egress_ip_is_classified_by_the_real_secondary_network():
    where = _egress_network.classify_ip_on_nodes('10.20.0.200', networks())
    assert (where.network, str(where.subnet), where.nodes) == ('secondary', '10.20.0.0/24', ['worker-0', 'worker-1'])


def test_an_egress_ip_equal_to_a_vip_is_primary_and_a_node_address():
    where = _egress_network.classify_ip_on_nodes(INGRESS_VIP, networks())
    assert where.network == 'primary'
    holders = [n.name for n in networks() if _egress_network.parse_ip(INGRESS_VIP) in _egress_network.node_addresses(n)]
    assert holders == ['worker-0']


def test_the_address_plan_takes_a_vip_for_an_address_not_an_overlapping_subnet():
    [network], findings = networks_from({'cidr': '10.20.0.0/24', 'gateway': '10.20.0.1', 'node_address_range': '10.20.0.10-10.20.0.99'})
    assert findings == []
    host = [(str(subnet), 'host-cidrs of node %s' % n.name) for n in networks() for subnet in _egress_network.secondary_subnets(n)]
    assert ('192.168.10.5/32', 'host-cidrs of node master-0') in host  # listed, as OVN-K lists it
    assert _address_plan.check_host_subnets(network, [('192.168.10.0/24', 'primary')], host) == []


def test_placement_puts_secondary_ips_on_the_secondary_nodes_only_and_counts_vips_as_addresses():
    egressip = {'metadata': {'name': 'eip'}, 'spec': {'egressIPs': ['10.20.0.200', '10.20.0.201']}}
    snap = _placement.snapshot(NODES, [egressip])
    assert INGRESS_VIP in snap['nodes']['worker-0']['addresses'] and API_VIP in snap['nodes']['master-0']['addresses']
    assert _placement.hosting_nodes(snap, '10.20.0.200') == ['worker-0', 'worker-1']
    assert _placement.holds_network(snap, 'worker-0', INGRESS_VIP) == 'primary'
    candidates = sorted(c for p in _placement.predict(snap)['placements'] for c in p['candidates'])
    assert candidates == ['worker-0', 'worker-0', 'worker-1', 'worker-1']
