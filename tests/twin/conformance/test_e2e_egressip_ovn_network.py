"""Ports of ovn-kubernetes test/e2e/egressip.go scenarios on the OVN (primary) network, against the twin.

Upstream read at ovn-org/ovn-kubernetes 6c366bb49d6f (2024-12-20). Each test names the ginkgo It()/Entry() it
follows and keeps its step numbers; steps the twin cannot express are said so (tests/twin/FIDELITY.md, "not ported").
Egress IPs are free addresses of the machine network 192.168.10.0/24 (the e2e takes them from the kind node subnet).
The tests share one twin and run in order; each restores what it changed.
"""

import pytest

import _ovnk_e2e as e2e

TWIN_OPTIONS = {'workers': 3, 'probe_interval': 0.5, 'random_seed': 3}
NS = 'e2e-ovn'
EIP1, EIP2, EIP3 = '192.168.10.201', '192.168.10.202', '192.168.10.203'


@pytest.fixture(name='nodes', scope='module')
def nodes_fixture(twin):
    """egress1Node, egress2Node and a third worker that runs the pods when the egress nodes must not (pod1Node)."""
    e2e.namespace(twin, NS)
    return e2e.workers(twin)


class _ViaLabel:
    """egressNodeAvailabilityHandlerViaLabel."""

    @staticmethod
    def enable(twin, node):
        e2e.label(twin, node)

    @staticmethod
    def disable(twin, node):
        e2e.label(twin, node, present=False)

    @staticmethod
    def restore(twin, node):
        e2e.label(twin, node, present=False)


class _ViaHealthCheck:
    """egressNodeAvailabilityHandlerViaHealthCheck{Legacy: false}: labelled, TCP 9107 dropped (the twin's reachability switch)."""

    @staticmethod
    def enable(twin, node):
        e2e.label(twin, node)
        twin.set_reachable(node, True)

    @staticmethod
    def disable(twin, node):
        twin.set_reachable(node, False)

    @staticmethod
    def restore(twin, node):
        twin.set_reachable(node, True)
        e2e.label(twin, node, present=False)


@pytest.mark.parametrize('handler', [_ViaLabel, _ViaHealthCheck], ids=['label', 'grpc-health-check'])
def test_disabling_egress_node_availability(twin, nodes, handler):
    """e2e "[OVN network] Using different methods to disable a node's availability for egress" / "Should validate the
    egress IP functionality against remote hosts", Entries "disabling egress nodes with egress-assignable label" and
    "disabling egress nodes impeding GRCP health check" (test/e2e/egressip.go). Steps 5 and 6 (pod to pod, pod to the
    API server) are not ported: the twin has no pod-to-pod data path."""
    egress1, egress2 = nodes[0], nodes[1]
    name = 'eip-%s' % handler.__name__.lower().strip('_')
    try:
        handler.enable(twin, egress1)  # 0.
        handler.enable(twin, egress2)
        e2e.create_egressip(twin, name, [EIP1, EIP2], NS)  # 1.
        items = e2e.wait_status(twin, name, 2)  # 2. two items on different nodes
        assert items[0][1] != items[1][1] and {node for _ip, node in items} == {egress1, egress2}
        # 3./4. a pod on each egress node sees one of the egress IPs
        assert e2e.echo_source(twin, NS, 'pod1', egress1) in (EIP1, EIP2)
        assert e2e.echo_source(twin, NS, 'pod2', egress2) in (EIP1, EIP2)
        # 7./8. a pod the EgressIP does not select (label removed) leaves with its node's IP
        assert e2e.echo_source(twin, NS, 'pod2-unselected', egress2, wants='nothing') == e2e.node_ip(twin, egress2)
        handler.disable(twin, egress1)  # 10.
        remaining = e2e.wait_status(twin, name, 1)  # 11.
        assert remaining[0][1] == egress2
        assert e2e.echo_source(twin, NS, 'pod1-12', egress1) == remaining[0][0]  # 12.
        handler.disable(twin, egress2)  # 13.
        e2e.wait_status(twin, name, 0)  # 14.
        assert e2e.echo_source(twin, NS, 'pod1-15', egress1) == e2e.node_ip(twin, egress1)  # 15.
        handler.enable(twin, egress2)  # 16.
        back = e2e.wait_status(twin, name, 1)  # 17.
        assert back[0][1] == egress2
        assert e2e.echo_source(twin, NS, 'pod1-18', egress1) == back[0][0]  # 18.
    finally:
        handler.restore(twin, egress1)
        handler.restore(twin, egress2)
        e2e.delete_egressip(twin, name)


def test_reassign_when_node_readiness_or_reachability_goes_down_up(twin, nodes):
    """e2e "Should re-assign egress IPs when node readiness / reachability goes down/up" (test/e2e/egressip.go):
    reachability is TCP 9107 dropped by iptables upstream, the twin's reachability switch here; NotReady is the kubelet
    stopped upstream, the Ready condition False here. Step 7 (pod to the API server) is not ported."""
    name, pod_node = 'eip-readiness', nodes[2]
    e2e.label(twin, nodes[0])  # 0.
    e2e.label(twin, nodes[1])
    try:
        e2e.create_egressip(twin, name, [EIP1], NS)  # 1.
        node1 = e2e.wait_status(twin, name, 1)[0][1]  # 2.
        node2 = nodes[1] if node1 == nodes[0] else nodes[0]
        twin.set_reachable(node1, False)  # 4.
        e2e.wait_status(twin, name, 1, lambda items: items[0][1] == node2)  # 5.
        assert e2e.echo_source(twin, NS, 'pod-6', pod_node) == EIP1  # 6.
        twin.set_reachable(node2, False)  # 8.
        e2e.wait_status(twin, name, 0)  # 9.
        assert e2e.echo_source(twin, NS, 'pod-10', pod_node) == e2e.node_ip(twin, pod_node)  # 10.
        twin.set_reachable(node1, True)  # 11.
        e2e.wait_status(twin, name, 1, lambda items: items[0][1] == node1)  # 12.
        assert e2e.echo_source(twin, NS, 'pod-13', pod_node) == EIP1  # 13.
        twin.set_reachable(node2, True)  # 14.
        e2e.hold_status(twin, name, [(EIP1, node1)])  # 15. no failback: node 1 works, nothing moves
        e2e.set_ready(twin, node1, False)  # 17.
        e2e.wait_status(twin, name, 1, lambda items: items[0][1] == node2)  # 18.
        assert e2e.echo_source(twin, NS, 'pod-19', pod_node) == EIP1  # 19.
        twin.set_reachable(node1, False)  # 20.
        e2e.label(twin, node2, present=False)  # 21.
        e2e.wait_status(twin, name, 0)  # 22. node 1 is unreachable and NotReady
        e2e.set_ready(twin, node1, True)  # 23.
        e2e.hold_status(twin, name, [])  # 24. node 1 is Ready but unreachable
        twin.set_reachable(node1, True)  # 25.
        e2e.wait_status(twin, name, 1, lambda items: items[0][1] == node1)  # 26.
        assert e2e.echo_source(twin, NS, 'pod-27', pod_node) == EIP1  # 27.
    finally:
        for node in nodes[:2]:
            twin.set_reachable(node, True)
            e2e.set_ready(twin, node, True)
            e2e.label(twin, node, present=False)
        e2e.delete_egressip(twin, name)


def test_one_pod_managed_by_more_than_one_egressip_object(twin, nodes):
    """e2e "Should validate egress IP logic when one pod is managed by more than one egressIP object"
    (test/e2e/egressip.go), the status steps and the source address while object1 serves the pod. Not ported: steps 7,
    12, 15 (OVN NB SNAT rows) and the source address after step 9 (upstream the standby object takes the pod over when
    object1's assigned IP goes; the twin's wire serves a pod by its oldest selecting EgressIP: FIDELITY.md, known
    deviations)."""
    egress1, egress2, pod_node = nodes[0], nodes[1], nodes[0]
    e2e.label(twin, egress1)  # 0.
    try:
        e2e.create_egressip(twin, 'eip-object1', [EIP1, EIP2], NS)  # 2.
        items = e2e.wait_status(twin, 'eip-object1', 1)  # 3. one IP on node2, the other pending: one IP of an object per node
        assigned, to_keep = items[0][0], ({EIP1, EIP2} - {items[0][0]}).pop()
        assert items[0][1] == egress1
        assert e2e.events(twin, 'eip-object1', 'UnassignedRequest') == [
            'Not all egress IPs for EgressIP: eip-object1 could be assigned, please tag more nodes']
        assert e2e.echo_source(twin, NS, 'pod1-4', pod_node) == assigned  # 4.
        e2e.create_egressip(twin, 'eip-object2', [EIP3], NS)  # 5. the standby object
        e2e.wait_status(twin, 'eip-object2', 1, lambda items: items[0][1] == egress1)  # 6. same node, another object
        assert e2e.statuses(twin, 'eip-object1') == [(assigned, egress1)]
        assert e2e.echo_source(twin, NS, 'pod1-8', pod_node) == assigned  # 8.
        e2e.set_egress_ips(twin, 'eip-object1', [to_keep])  # 9. the assigned IP is removed from object1
        e2e.wait_status(twin, 'eip-object1', 1, lambda items: items == [(to_keep, egress1)])  # 10.
        assert e2e.statuses(twin, 'eip-object2') == [(EIP3, egress1)]
        e2e.label(twin, egress2)  # 13. egress2 assignable, egress1 not
        e2e.label(twin, egress1, present=False)
        e2e.wait_status(twin, 'eip-object1', 1, lambda items: items == [(to_keep, egress2)])  # 14.
        e2e.wait_status(twin, 'eip-object2', 1, lambda items: items == [(EIP3, egress2)])
        e2e.delete_egressip(twin, 'eip-object1')  # 17.
        assert e2e.echo_source(twin, NS, 'pod1-18', pod_node) == EIP3  # 18. the remaining object serves the pod
        e2e.delete_egressip(twin, 'eip-object2')  # 19.
        assert e2e.echo_source(twin, NS, 'pod1-20', pod_node) == e2e.node_ip(twin, pod_node)  # 20.
    finally:
        e2e.label(twin, egress1, present=False)
        e2e.label(twin, egress2, present=False)
        for name in ('eip-object1', 'eip-object2'):
            try:
                e2e.delete_egressip(twin, name)
            except Exception:  # pylint: disable=broad-except  # deleted by the test already
                pass


def test_snat_for_pods_recreated_with_the_same_name(twin, nodes):
    """e2e "Should validate the egress IP SNAT functionality for stateful-sets" (test/e2e/egressip.go): a pod deleted and
    recreated at once with the same name, alternately on the egress node and on another node, keeps the egress IP."""
    egress1, other = nodes[1], nodes[0]
    e2e.label(twin, egress1)  # 0.
    try:
        e2e.create_egressip(twin, 'eip-stateful', [EIP1], NS)  # 1.
        assert e2e.wait_status(twin, 'eip-stateful', 1) == [(EIP1, egress1)]  # 2.
        assert e2e.echo_source(twin, NS, 'pod1', egress1) == EIP1  # 3./4.
        for run in range(4):  # 5./6./7. same name, swapped between the egress node and another node
            assert e2e.echo_source(twin, NS, 'pod1', egress1 if run % 2 else other) == EIP1
    finally:
        e2e.label(twin, egress1, present=False)
        e2e.delete_egressip(twin, 'eip-stateful')
