"""Simulated ovnkube-node annotations (DOMAIN.md sections 2 and 4)."""

import json

from twin.controllers import hostnet
from twin.controllers.ovnkube_node import HOST_CIDRS, PRIMARY_IFADDR, SECONDARY_EGRESS_IPS

WORKER = "ocp1-worker-0"
# cluster: conftest.py (a settled FakeCluster)


def _annotation(cluster, key, node=WORKER):
    value = cluster.node(node)["metadata"].get("annotations", {}).get(key)
    return None if value is None else json.loads(value)


def test_primary_ifaddr_and_host_cidrs_of_a_fresh_node(cluster):
    assert _annotation(cluster, PRIMARY_IFADDR) == {"ipv4": "192.168.10.14/24"}
    assert _annotation(cluster, HOST_CIDRS) == ["192.168.10.14/24"]
    assert _annotation(cluster, SECONDARY_EGRESS_IPS) is None


def test_applied_secondary_address_joins_host_cidrs(cluster):
    cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    assert _annotation(cluster, HOST_CIDRS) == ["10.20.0.11/24", "192.168.10.14/24"]


def test_address_on_a_disconnected_nic_stays_in_host_cidrs(cluster):
    mac = cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    cluster.nic(WORKER, mac)["connected"] = False
    cluster.settle()
    assert _annotation(cluster, HOST_CIDRS) == ["10.20.0.11/24", "192.168.10.14/24"]


def test_removed_nic_or_address_leaves_host_cidrs(cluster):
    mac = cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    cluster.remove_nic(WORKER, mac)
    cluster.settle()
    assert _annotation(cluster, HOST_CIDRS) == ["192.168.10.14/24"]
    other = cluster.secondary(cluster.workers()[1], "10.20.0.12", gateway=False)  # no route via the interface made absent
    cluster.settle()
    cluster.secondary_policy(cluster.workers()[1], other, None, state="absent")
    cluster.settle()
    assert _annotation(cluster, HOST_CIDRS, cluster.workers()[1]) == ["192.168.10.15/24"]


def test_secondary_egress_ips_on_an_administratively_up_link_with_or_without_carrier(cluster):
    """ovnkube-node's getFilteredPrefixes keeps links whose flags say "up" (IFF_UP, not the carrier): on a disconnected vNIC
    whose address NetworkManager keeps (ignore-carrier) the egress IP stays configured (the blackhole); a link set down goes."""
    hostnet.configure_carrier("keep")
    try:
        mac = cluster.secondary(WORKER, "10.20.0.11")
        cluster.label_egress(WORKER)
        cluster.create_egressip("eip", ["10.20.0.200"])
        cluster.settle()
        assert cluster.assignments("eip") == {"10.20.0.200": WORKER}
        assert _annotation(cluster, SECONDARY_EGRESS_IPS) == ["10.20.0.200"]
        cluster.nic(WORKER, mac)["connected"] = False
        cluster.settle()
        assert cluster.assignments("eip") == {"10.20.0.200": WORKER}  # the blackhole: still "assigned"
        assert _annotation(cluster, SECONDARY_EGRESS_IPS) == ["10.20.0.200"]  # and still on the carrier-less link
        cluster.secondary_policy(WORKER, mac, "10.20.0.11", state="down")
        cluster.settle()
        assert _annotation(cluster, SECONDARY_EGRESS_IPS) is None
    finally:
        hostnet.configure_carrier()  # back to the default for the other self-tests


def test_primary_network_egress_ip_is_not_a_secondary_one(cluster):
    cluster.label_egress(WORKER)
    cluster.create_egressip("eip", ["192.168.10.200"])
    cluster.settle()
    assert cluster.assignments("eip") == {"192.168.10.200": WORKER}
    assert _annotation(cluster, SECONDARY_EGRESS_IPS) is None


def test_keepalived_vips_are_host_addresses_of_the_nodes_holding_them(cluster):
    """vSphere IPI: the API VIP on a control-plane node, the ingress VIP on a worker, each a /32 on br-ex."""
    assert _annotation(cluster, HOST_CIDRS, "ocp1-master-0") == ["192.168.10.11/24", "192.168.10.5/32"]
    assert _annotation(cluster, HOST_CIDRS, "ocp1-worker-2") == ["192.168.10.16/24", "192.168.10.6/32"]
    assert _annotation(cluster, PRIMARY_IFADDR, "ocp1-worker-2") == {"ipv4": "192.168.10.16/24"}
    assert _annotation(cluster, HOST_CIDRS, "ocp1-master-1") == ["192.168.10.12/24"]


def test_a_vip_moves_when_its_node_is_not_ready(cluster):
    node = cluster.node("ocp1-worker-2")
    conditions = [dict(c, status="False") if c["type"] == "Ready" else c for c in node["status"]["conditions"]]
    cluster.store.patch("nodes", "ocp1-worker-2", {"status": {"conditions": conditions}}, subresource="status")
    cluster.settle()
    assert _annotation(cluster, HOST_CIDRS, "ocp1-worker-2") == ["192.168.10.16/24"]
    assert _annotation(cluster, HOST_CIDRS, "ocp1-worker-1") == ["192.168.10.15/24", "192.168.10.6/32"]
