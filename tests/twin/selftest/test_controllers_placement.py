"""Egress IP placement by the simulated cluster manager, rule by rule (DOMAIN.md section 3)."""

import pytest

from twin.controllers.cluster_manager import MARK_ANNOTATION
from twin.controllers.testing import FakeCluster


def egress_cluster(rng_seed=1, labelled=None, secondary=None):
    """Three workers, each with a secondary NIC in 10.20.0.0/24 (.11-.13), all egress-assignable."""
    cluster = FakeCluster(rng_seed=rng_seed)
    workers = cluster.workers()
    for index, worker in enumerate(workers if secondary is None else secondary):
        cluster.secondary(worker, "10.20.0.%d" % (11 + workers.index(worker) if secondary else 11 + index))
    cluster.label_egress(*(workers if labelled is None else labelled))
    cluster.settle()
    return cluster


@pytest.fixture(name="cluster")
def cluster_fixture():
    return egress_cluster()


def test_least_loaded_node_first(cluster):
    cluster.create_egressip("a", ["10.20.0.200"])
    cluster.settle()
    cluster.create_egressip("b", ["10.20.0.201"])
    cluster.settle()
    cluster.create_egressip("c", ["10.20.0.202"])
    cluster.settle()
    nodes = [cluster.assignments(name).popitem()[1] for name in "abc"]
    assert sorted(nodes) == sorted(cluster.workers())


def test_never_two_ips_of_one_egressip_on_a_node(cluster):
    cluster.create_egressip("eip", ["10.20.0.200", "10.20.0.201", "10.20.0.202", "10.20.0.203"])
    cluster.settle()
    assignments = cluster.assignments("eip")
    assert len(assignments) == 3
    assert sorted(assignments.values()) == sorted(cluster.workers())
    assert cluster.events("eip", "UnassignedRequest")


def test_fewer_capable_nodes_than_ips_leaves_ips_unassigned():
    cluster = egress_cluster(labelled=["ocp1-worker-0"])
    cluster.create_egressip("eip", ["10.20.0.200", "10.20.0.201"])
    cluster.settle()
    assert list(cluster.assignments("eip").values()) == ["ocp1-worker-0"]
    event = cluster.events("eip", "UnassignedRequest")[0]
    assert event["message"] == "Not all egress IPs for EgressIP: eip could be assigned, please tag more nodes"
    assert event["type"] == "Warning" and event["metadata"]["namespace"] == "default"
    assert event["involvedObject"] == {"kind": "EgressIP", "name": "eip"}
    assert event["source"]["component"] == "controlplane"


@pytest.mark.parametrize("address,holder", [("10.20.0.12", "ocp1-worker-1"), ("192.168.10.14", "ocp1-worker-0")])
def test_ip_equal_to_a_node_address_is_refused(cluster, address, holder):
    cluster.create_egressip("eip", [address])
    cluster.settle()
    assert cluster.assignments("eip") == {}
    event = cluster.events("eip", "EgressIPConflict")[0]
    assert address in event["message"] and holder in event["message"]


def test_ip_claimed_by_another_egressip_is_refused(cluster):
    cluster.create_egressip("first", ["10.20.0.200"])
    cluster.settle()
    cluster.create_egressip("second", ["10.20.0.200"])
    cluster.settle()
    assert cluster.assignments("second") == {}
    event = cluster.events("second", "UnsupportedRequest")[0]
    holder = cluster.assignments("first")["10.20.0.200"]
    assert event["message"] == 'IP: "10.20.0.200" for EgressIP: second is already allocated for EgressIP: first on %s' % holder


def test_no_node_holds_the_subnet(cluster):
    cluster.create_egressip("eip", ["10.99.0.5"])
    cluster.settle()
    assert cluster.assignments("eip") == {}
    event = cluster.events("eip", "NoMatchingNodeFound")[0]
    assert event["message"] == "No matching nodes found, which can host any of the egress IPs: [10.99.0.5] for object EgressIP: eip"


def test_no_labelled_node_at_all():
    cluster = egress_cluster(labelled=[])
    cluster.create_egressip("eip", ["10.20.0.200"])
    cluster.settle()
    event = cluster.events("eip", "NoMatchingNodeFound")[0]
    assert event["message"] == ("no assignable nodes for EgressIP: eip, please tag at least one node with label: "
                                "k8s.ovn.org/egress-assignable")


def test_invalid_ip_event():
    cluster = egress_cluster()
    cluster.create_egressip("eip", ["10.20.0.300"])
    cluster.settle()
    assert cluster.events("eip", "InvalidEgressIP")


def test_secondary_ip_goes_only_to_nodes_holding_the_subnet():
    cluster = egress_cluster(secondary=["ocp1-worker-2"])
    cluster.create_egressip("eip", ["10.20.0.200"])
    cluster.settle()
    assert cluster.assignments("eip") == {"10.20.0.200": "ocp1-worker-2"}


def test_primary_network_ip_goes_to_any_labelled_node():
    cluster = egress_cluster(secondary=[], labelled=["ocp1-worker-1"])
    cluster.create_egressip("eip", ["192.168.10.200"])
    cluster.settle()
    assert cluster.assignments("eip") == {"192.168.10.200": "ocp1-worker-1"}


def test_any_containing_subnet_qualifies_and_only_global_unicast_counts():
    cluster = egress_cluster(secondary=[], labelled=["ocp1-worker-0", "ocp1-worker-2"])
    cluster.secondary("ocp1-worker-0", "10.20.0.11", prefix=16)
    cluster.secondary("ocp1-worker-2", "169.254.20.13", prefix=16)
    cluster.create_egressip("wide", ["10.20.5.200"])
    cluster.create_egressip("linklocal", ["169.254.20.200"])
    cluster.settle()
    assert cluster.assignments("wide") == {"10.20.5.200": "ocp1-worker-0"}
    assert cluster.assignments("linklocal") == {}
    assert cluster.events("linklocal", "NoMatchingNodeFound")


def test_egressip_mark_annotation(cluster):
    cluster.create_egressip("a", ["10.20.0.200"])
    cluster.create_egressip("b", ["10.20.0.201"])
    cluster.settle()
    marks = sorted(cluster.egressip(n)["metadata"]["annotations"][MARK_ANNOTATION] for n in "ab")
    assert marks == ["50000", "50001"]


def test_events_are_counted_not_repeated(cluster):
    cluster.create_egressip("eip", ["10.99.0.5"])
    cluster.settle()
    cluster.settle(probe=True)
    assert len(cluster.events("eip")) == 1
    cluster.label_egress("ocp1-worker-0", present=False)  # a node change makes the allocator look again
    cluster.settle()
    events = cluster.events("eip")
    assert len(events) == 1 and events[0]["count"] == 2


def test_ties_are_random_but_seedable():
    def placement(seed):
        cluster = egress_cluster(rng_seed=seed)
        cluster.create_egressip("eip", ["10.20.0.200"])
        cluster.settle()
        return cluster.assignments("eip")["10.20.0.200"]

    assert placement(7) == placement(7)
    assert len({placement(seed) for seed in range(12)}) > 1
