"""Failover triggers, cordon, no failback and reachability timing (DOMAIN.md section 7)."""

import pytest

from twin.controllers.cluster_manager import NETWORK_OPERATOR
from twin.controllers.testing import FakeCluster

IP = "10.20.0.200"


@pytest.fixture(name="cluster")
def cluster_fixture():
    """Three egress-capable workers (10.20.0.11-13/24) and one EgressIP assigned to one of them."""
    cluster = FakeCluster()
    for index, worker in enumerate(cluster.workers()):
        cluster.secondary(worker, "10.20.0.%d" % (11 + index))
    cluster.label_egress(*cluster.workers())
    cluster.create_egressip("eip", [IP])
    cluster.settle()
    return cluster


def _holder(cluster):
    return cluster.assignments("eip").get(IP)


def test_label_removed_moves_the_ip(cluster):
    before = _holder(cluster)
    cluster.label_egress(before, present=False)
    cluster.settle()
    assert _holder(cluster) not in (None, before)


def test_node_not_ready_moves_the_ip(cluster):
    before = _holder(cluster)
    cluster.set_ready(before, False)
    cluster.settle()
    assert _holder(cluster) not in (None, before)


def test_node_deleted_moves_the_ip(cluster):
    before = _holder(cluster)
    cluster.store.delete("nodes", before)
    cluster.settle()
    assert _holder(cluster) not in (None, before)


def test_subnet_gone_from_host_cidrs_moves_the_ip(cluster):
    before = _holder(cluster)
    mac = cluster.vm(before)["nics"][1]["mac"]
    # the interface absent and its gateway route with it (nmstate refuses a route via an absent interface)
    cluster.secondary_policy(before, mac, None, state="absent", routes=[{"destination": "0.0.0.0/0", "state": "absent"}])
    cluster.settle()
    assert _holder(cluster) not in (None, before)


def test_nic_removed_from_the_vm_moves_the_ip(cluster):
    before = _holder(cluster)
    cluster.remove_nic(before, cluster.vm(before)["nics"][1]["mac"])
    cluster.settle()
    assert _holder(cluster) not in (None, before)


def test_unreachable_node_is_acted_upon_at_the_next_probe_tick(cluster):
    before = _holder(cluster)
    cluster.runner.set_reachable(before, False)
    cluster.settle(probe=False)
    assert _holder(cluster) == before
    cluster.settle(probe=True)
    assert _holder(cluster) not in (None, before)


def test_powered_off_vm_fails_the_probe_at_the_next_tick(cluster):
    """Nothing answers OVN-K's probe on a powered-off VM; powered on again, the node is a candidate again (no failback)."""
    before = _holder(cluster)
    cluster.vm(before)["power_state"] = "poweredOff"
    cluster.settle(probe=False)
    assert _holder(cluster) == before
    cluster.settle(probe=True)
    after = _holder(cluster)
    assert after not in (None, before)
    cluster.vm(before)["power_state"] = "poweredOn"
    cluster.settle(probe=True)
    assert _holder(cluster) == after


def test_reachability_check_disabled_by_zero_timeout(cluster):
    cluster.store.patch(NETWORK_OPERATOR, "cluster", {"spec": {"defaultNetwork": {"ovnKubernetesConfig": {
        "egressIPConfig": {"reachabilityTotalTimeoutSeconds": 0}}}}})
    before = _holder(cluster)
    cluster.runner.set_reachable(before, False)
    cluster.settle(probe=True)
    assert _holder(cluster) == before


def test_cordon_does_not_move_the_ip(cluster):
    before = _holder(cluster)
    cluster.store.patch("nodes", before, {"spec": {"unschedulable": True}})
    cluster.settle(probe=True)
    assert _holder(cluster) == before


def test_no_failback(cluster):
    before = _holder(cluster)
    cluster.set_ready(before, False)
    cluster.settle()
    after = _holder(cluster)
    cluster.set_ready(before, True)
    cluster.settle(probe=True)
    assert _holder(cluster) == after != before


def test_disconnected_nic_does_not_move_the_ip(cluster):
    """DOMAIN.md section 6: the probe runs over the primary network, the blackhole goes unnoticed."""
    before = _holder(cluster)
    cluster.nic(before, cluster.vm(before)["nics"][1]["mac"])["connected"] = False
    cluster.settle(probe=True)
    assert _holder(cluster) == before


def test_last_capable_node_gone_leaves_the_ip_unassigned(cluster):
    for worker in cluster.workers():
        cluster.label_egress(worker, present=False)
    cluster.settle()
    assert cluster.assignments("eip") == {}
    assert cluster.egressip("eip")["status"] == {"items": []}
    assert cluster.events("eip", "NoMatchingNodeFound")


def test_unassigned_ip_lands_when_a_node_becomes_capable():
    cluster = FakeCluster()
    worker = cluster.workers()[0]
    cluster.secondary(worker, "10.20.0.11")
    cluster.create_egressip("eip", [IP])
    cluster.settle()
    assert cluster.assignments("eip") == {}
    cluster.label_egress(worker)
    cluster.settle()
    assert cluster.assignments("eip") == {IP: worker}
