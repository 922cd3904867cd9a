"""Ports of ovn-kubernetes EgressIP scenarios on a secondary host network, against the twin.

Upstream read at ovn-org/ovn-kubernetes 6c366bb49d6f (2024-12-20): test/e2e/egressip.go ("[secondary-host-eip]"
tests; the kind setup gives each node an address in a second docker network, here a vNIC on a port group with an
NMState base address) and, where the e2e suite has no scenario, the cluster manager's ginkgo tests in
go-controller/pkg/clustermanager/egressip_controller_test.go, driven here through the API instead of the fake clients.
The tests share one twin (workers 0 and 1 on 10.10.10.0/24, worker 2 on 10.30.0.0/24) and run in order; each
restores the labels and deletes its EgressIPs.
"""

import json

import pytest

import _ovnk_e2e as e2e

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 11}
NS = 'e2e-secondary'
OVN_EIP = '192.168.10.210'
EIP1, EIP2 = '10.10.10.100', '10.10.10.200'  # the e2e's IPv4 Entry
OTHER_SUBNET_EIP = '10.30.0.100'


@pytest.fixture(name='nodes', scope='module')
def nodes_fixture(twin):
    """egress1Node, egress2Node on the secondary host network 10.10.10.0/24; a third worker on 10.30.0.0/24 only."""
    workers = e2e.workers(twin)
    e2e.secondary_network(twin, {workers[0]: '10.10.10.11/24', workers[1]: '10.10.10.12/24', workers[2]: '10.30.0.13/24'})
    e2e.namespace(twin, NS)
    return workers


@pytest.fixture(name='cleanup')
def cleanup_fixture(twin, nodes):
    names = []
    yield names
    for node in nodes:
        e2e.label(twin, node, present=False)
    for name in names:
        e2e.delete_egressip(twin, name)


def _placed(twin, node):
    return json.loads(e2e.node_annotation(twin, node, e2e.SECONDARY_HOST_EGRESS_IPS) or '[]')


def test_two_egress_ips_on_the_same_secondary_host_network(twin, nodes, cleanup):
    """e2e table "[secondary-host-eip] Using different methods to disable a node or pod availability for egress",
    Entry "IPv4" (test/e2e/egressip.go). Steps 6 and 7 (pod to pod, pod to the API server) are not ported."""
    egress1, egress2 = nodes[0], nodes[1]
    cleanup.append('eip-secondary')
    e2e.label(twin, egress1)  # 0.
    e2e.label(twin, egress2)
    e2e.create_egressip(twin, 'eip-secondary', [EIP1, EIP2], NS)  # 1.
    items = e2e.wait_status(twin, 'eip-secondary', 2)  # 2./3. different nodes, the right IPs
    assert {node for _ip, node in items} == {egress1, egress2} and [ip for ip, _node in items] == [EIP1, EIP2]
    for ip, node in items:  # ovnkube-node put each egress IP on the node's secondary link
        twin.wait_for(lambda ip=ip, node=node: _placed(twin, node) == [ip], what='%s on a secondary link of %s' % (ip, node))
    assert e2e.echo_source(twin, NS, 'pod1-5', egress1) in (EIP1, EIP2)  # 4./5.
    assert e2e.echo_source(twin, NS, 'pod2-5', egress2) in (EIP1, EIP2)
    assert e2e.echo_source(twin, NS, 'pod2-9', egress2, wants='nothing') == e2e.node_ip(twin, egress2)  # 8./9.
    e2e.label(twin, egress1, present=False)  # 12.
    remaining = e2e.wait_status(twin, 'eip-secondary', 1)  # 13./14.
    assert remaining[0][1] == egress2
    assert e2e.echo_source(twin, NS, 'pod1-15', egress1) == remaining[0][0]  # 15.
    e2e.label(twin, egress2, present=False)  # 16.
    e2e.wait_status(twin, 'eip-secondary', 0)  # 18.
    assert e2e.echo_source(twin, NS, 'pod1-17', egress1) == e2e.node_ip(twin, egress1)  # 17.
    e2e.label(twin, egress1)  # 19.
    assert e2e.wait_status(twin, 'eip-secondary', 1)[0][1] == egress1  # 20./21.
    e2e.label(twin, egress2)  # 23.
    assert [ip for ip, _node in e2e.wait_status(twin, 'eip-secondary', 2)] == [EIP1, EIP2]  # 24./25.
    assert e2e.echo_source(twin, NS, 'pod2-26', egress2) in (EIP1, EIP2)  # 26.


def test_one_ovn_network_and_one_secondary_host_network_egress_ip(twin, nodes, cleanup):
    """e2e "[secondary-host-eip] Using different methods to disable a node or pod availability for egress" (the It with
    one egress IP on the OVN network and one on a secondary host network, test/e2e/egressip.go), steps 0-4, 14-19, 21-26."""
    egress1, egress2 = nodes[0], nodes[1]
    cleanup.append('eip-mixed')
    e2e.label(twin, egress1)  # 0.
    e2e.label(twin, egress2)
    e2e.create_egressip(twin, 'eip-mixed', [OVN_EIP, EIP1], NS)  # 1.
    items = dict(e2e.wait_status(twin, 'eip-mixed', 2))  # 2./3.
    assert set(items) == {OVN_EIP, EIP1} and items[OVN_EIP] != items[EIP1]
    ovn_node, secondary_node = items[OVN_EIP], items[EIP1]
    assert e2e.echo_source(twin, NS, 'pod-5', ovn_node) in (OVN_EIP, EIP1)  # 4./5./6.
    e2e.label(twin, ovn_node, present=False)  # 14.
    assert e2e.wait_status(twin, 'eip-mixed', 1) == [(EIP1, secondary_node)]  # 15./16. the secondary IP stays put
    e2e.label(twin, secondary_node, present=False)  # 18.
    e2e.wait_status(twin, 'eip-mixed', 0)  # 19.
    e2e.label(twin, secondary_node)  # 21.
    e2e.wait_status(twin, 'eip-mixed', 1)  # 22./23.
    e2e.label(twin, ovn_node)  # 24.
    items = dict(e2e.wait_status(twin, 'eip-mixed', 2))  # 25./26.
    assert set(items) == {OVN_EIP, EIP1} and items[OVN_EIP] != items[EIP1]


def test_multiple_egressip_objects_hosted_on_the_same_interface(twin, nodes, cleanup):
    """e2e "[secondary-host-eip] Multiple EgressIP objects and their Egress IP hosted on the same interface"
    (test/e2e/egressip.go)."""
    egress1 = nodes[0]
    cleanup.extend(['eip-same-1', 'eip-same-2'])
    e2e.label(twin, egress1)  # 0.
    e2e.create_egressip(twin, 'eip-same-1', [EIP1], NS)  # 1.
    e2e.create_egressip(twin, 'eip-same-2', [EIP2], NS, wants='egress2')
    assert e2e.wait_status(twin, 'eip-same-1', 1) == [(EIP1, egress1)]  # 2.
    assert e2e.wait_status(twin, 'eip-same-2', 1) == [(EIP2, egress1)]
    twin.wait_for(lambda: _placed(twin, egress1) == [EIP1, EIP2], what='both egress IPs on the secondary link of %s' % egress1)
    assert e2e.echo_source(twin, NS, 'pod1-4', nodes[2]) == EIP1  # 3./4.
    assert e2e.echo_source(twin, NS, 'pod2-4', nodes[2], wants='egress2') == EIP2
    e2e.delete_egressip(twin, 'eip-same-1')  # 5.
    cleanup.remove('eip-same-1')
    twin.wait_for(lambda: _placed(twin, egress1) == [EIP2], what='only %s left on the link of %s' % (EIP2, egress1))
    assert e2e.echo_source(twin, NS, 'pod2-6', nodes[2], wants='egress2') == EIP2  # 6.
    assert e2e.echo_source(twin, NS, 'pod1-7', nodes[2]) == e2e.node_ip(twin, nodes[2])  # 7.


def test_only_nodes_holding_the_subnet_get_a_secondary_egress_ip(twin, nodes, cleanup):
    """clustermanager egressip_controller_test.go "should only get assigned EgressIPs which matches their subnet when the
    node is tagged": a secondary-network IP goes only to a labelled node whose host-cidrs hold a subnet containing it
    (GetSecondaryHostNetworkContainingIP); with no such node it stays unassigned (NoMatchingNodeFound)."""
    cleanup.extend(['eip-subnet-10', 'eip-subnet-30'])
    e2e.label(twin, nodes[2])  # only the 10.30.0.0/24 node is assignable
    e2e.create_egressip(twin, 'eip-subnet-10', [EIP1], NS)
    e2e.create_egressip(twin, 'eip-subnet-30', [OTHER_SUBNET_EIP], NS, wants='other')
    assert e2e.wait_status(twin, 'eip-subnet-30', 1) == [(OTHER_SUBNET_EIP, nodes[2])]
    e2e.hold_status(twin, 'eip-subnet-10', [])
    assert e2e.events(twin, 'eip-subnet-10', 'NoMatchingNodeFound') == [
        'No matching nodes found, which can host any of the egress IPs: [%s] for object EgressIP: eip-subnet-10' % EIP1]
    e2e.label(twin, nodes[1])  # a node of 10.10.10.0/24 is tagged: the IP lands there, not on the 10.30 node
    assert e2e.wait_status(twin, 'eip-subnet-10', 1) == [(EIP1, nodes[1])]


def test_ensure_only_one_egress_ip_per_node_the_rest_pending(twin, nodes, cleanup):
    """clustermanager egressip_controller_test.go "ensure only one egressIP is assigned to the given node while rest of the
    IPs go into pending state": the pending IP lands when another capable node is tagged (addEgressNode's synthetic
    update of objects not fully assigned)."""
    cleanup.append('eip-pending')
    e2e.label(twin, nodes[0])
    e2e.create_egressip(twin, 'eip-pending', [EIP1, EIP2], NS)
    assigned = e2e.wait_status(twin, 'eip-pending', 1)
    assert assigned[0][1] == nodes[0]
    e2e.hold_status(twin, 'eip-pending', assigned)
    assert e2e.events(twin, 'eip-pending', 'UnassignedRequest')
    e2e.label(twin, nodes[1])
    items = e2e.wait_status(twin, 'eip-pending', 2)
    assert assigned[0] in items and {node for _ip, node in items} == {nodes[0], nodes[1]}


@pytest.mark.parametrize('which', ['secondary base address', 'node IP'])
def test_egress_ip_equal_to_a_host_address_is_refused(twin, nodes, cleanup, which):
    """clustermanager egressip_controller_test.go "should result in error and event if specified egress IP is a cluster
    node IP" and "should not be able to allocate EgressIP equal to an address in host-cidrs annotation"
    (isEgressIPAddrConflict over every node's host-cidrs)."""
    holder = nodes[1]
    address = '10.10.10.12' if which == 'secondary base address' else e2e.node_ip(twin, holder)
    name = 'eip-conflict-%s' % which.split()[0]
    cleanup.append(name)
    e2e.label(twin, nodes[0])
    e2e.create_egressip(twin, name, [address], NS)
    expected = 'Egress IP %s with IP %s is conflicting with a host (%s) IP address and will not be assigned' % (name, address, holder)
    twin.wait_for(lambda: e2e.events(twin, name, 'EgressIPConflict') == [expected], what='the EgressIPConflict event')
    e2e.hold_status(twin, name, [])


def test_node_reboot_moves_the_ip_and_it_does_not_fail_back(twin, nodes, cleanup):
    """A node reboot as vCenter shows it (VM powered off, then on). No e2e test reboots a node; this follows the
    reachability steps of e2e "Should re-assign egress IPs when node readiness / reachability goes down/up"
    (test/e2e/egressip.go, steps 4./5. and 15.): nothing answers the health check of a powered-off VM, so the IP moves at the next probe; back up, the node's
    NIC reconnects, NetworkManager re-applies the base address (host-cidrs) and the IP stays where it went."""
    cleanup.append('eip-reboot')
    e2e.label(twin, nodes[0])
    e2e.label(twin, nodes[1])
    e2e.create_egressip(twin, 'eip-reboot', [EIP1], NS)
    before = e2e.wait_status(twin, 'eip-reboot', 1)[0][1]
    after = nodes[1] if before == nodes[0] else nodes[0]
    e2e.power(twin, before, False)
    try:
        assert e2e.wait_status(twin, 'eip-reboot', 1, lambda items: items[0][1] == after) == [(EIP1, after)]
    finally:
        e2e.power(twin, before, True)
    base = '10.10.10.%d/24' % (11 + nodes.index(before))
    twin.wait_for(lambda: base in e2e.host_cidrs(twin, before), what='the base address of %s back in host-cidrs' % before)
    e2e.hold_status(twin, 'eip-reboot', [(EIP1, after)])
    assert e2e.echo_source(twin, NS, 'pod-reboot', nodes[2]) == EIP1
