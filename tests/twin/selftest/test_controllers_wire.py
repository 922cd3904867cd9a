"""The wire: what an echo target off the cluster sees (DOMAIN.md sections 3, 4 and 6), and echo pods."""

import pytest

from twin.controllers import wire
from twin.controllers.cluster_manager import NETWORK_OPERATOR
from twin.controllers.inventory import Inventory
from twin.controllers.pods import CURL_TIMEOUT
from twin.controllers.testing import FakeCluster
from twin.controllers.tuned import Forwarding

IP = "10.20.0.200"
ECHO = ["curl", "-s", "--max-time", "5", "http://192.0.2.10:8080"]


def _global_forwarding(cluster):
    cluster.store.patch(NETWORK_OPERATOR, "cluster", {"spec": {"defaultNetwork": {"ovnKubernetesConfig": {
        "gatewayConfig": {"ipForwarding": "Global"}}}}})


@pytest.fixture(name="cluster")
def cluster_fixture():
    """worker-0 alone is egress-capable (10.20.0.11/24), forwarding Global, EgressIP for ns `app`."""
    cluster = FakeCluster()
    worker = cluster.workers()[0]
    cluster.secondary(worker, "10.20.0.11")
    cluster.label_egress(worker)
    _global_forwarding(cluster)
    cluster.create_egressip("eip", [IP], namespace_labels={"team": "a"})
    cluster.namespace("app", {"team": "a"})
    cluster.namespace("other")
    cluster.settle()
    return cluster


def _wire(cluster, namespace="app", pod="p", **pod_options):
    cluster.pod(namespace, pod, **pod_options)
    cluster.settle()
    return cluster.runner.wire(namespace, pod)


def _egress_nic(cluster):
    worker = cluster.workers()[0]
    return cluster.vm(worker)["nics"][1]


def test_secondary_egress_ip_is_seen(cluster):
    seen = _wire(cluster)
    assert seen["source_ip"] == IP and seen["egress_ip"] == IP and seen["via_node"] == cluster.workers()[0]


def test_unselected_namespace_leaves_with_its_node_address(cluster):
    seen = _wire(cluster, namespace="other")
    pod = cluster.store.get("pods", "p", namespace="other")
    node = cluster.node(pod["spec"]["nodeName"])
    assert seen["source_ip"] == node["status"]["addresses"][0]["address"]
    assert seen["egress_ip"] is None


def test_pod_selector_must_match_too(cluster):
    cluster.store.patch("egressips.k8s.ovn.org", "eip", {"spec": {"podSelector": {"matchLabels": {"egress": "yes"}}}})
    cluster.settle()
    assert _wire(cluster, pod="plain")["egress_ip"] is None
    assert _wire(cluster, pod="chosen", labels={"egress": "yes"})["source_ip"] == IP


def test_host_networked_pod_ignores_egressip(cluster):
    seen = _wire(cluster, host_network=True)
    assert seen["egress_ip"] is None and seen["source_ip"].startswith("192.168.10.")


def test_primary_network_egress_ip_is_seen():
    cluster = FakeCluster()
    cluster.label_egress(cluster.workers()[1])
    cluster.create_egressip("eip", ["192.168.10.200"], namespace_labels={"team": "a"})
    cluster.namespace("app", {"team": "a"})
    assert _wire(cluster)["source_ip"] == "192.168.10.200"


def test_forwarding_off_is_a_blackhole(cluster):
    cluster.store.patch(NETWORK_OPERATOR, "cluster", {"spec": {"defaultNetwork": {"ovnKubernetesConfig": {
        "gatewayConfig": {"ipForwarding": "Restricted"}}}}})
    seen = _wire(cluster)
    assert seen["source_ip"] is None and seen["egress_ip"] == IP
    assert "forwarding is off on ens224" in seen["reason"]


def test_disconnected_nic_is_a_blackhole(cluster):
    _egress_nic(cluster)["connected"] = False
    seen = _wire(cluster)
    assert seen["source_ip"] is None and "disconnected" in seen["reason"]
    assert cluster.assignments("eip") == {IP: cluster.workers()[0]}


def test_port_group_missing_on_the_new_host_is_a_blackhole(cluster):
    """A standard port group exists per host: a vMotion to a host without it cuts the NIC off."""
    worker = cluster.workers()[0]
    cluster.inventory["hosts"].append({"name": "DC0_C0_H9", "moid": "host-9", "cluster": "DC0_C0",
                                       "portgroups": [{"name": "VM Network", "vswitch": "vSwitch0", "vlan": 0}],
                                       "vswitches": ["vSwitch0"]})
    cluster.vm(worker)["host"] = "DC0_C0_H9"
    seen = _wire(cluster)
    assert seen["source_ip"] is None and "does not exist on host DC0_C0_H9" in seen["reason"]


def _vm_host(cluster):
    host = cluster.vm(cluster.workers()[0])["host"]
    return next(item for item in cluster.inventory["hosts"] if item["name"] == host)


def test_vswitch_without_uplink_on_the_vm_host_is_a_blackhole(cluster):
    """The port group's vSwitch on the VM's host bridges no physical NIC: frames never leave the host."""
    host = _vm_host(cluster)
    host["uplinks"]["vSwitch1"] = []
    seen = _wire(cluster)
    assert seen["source_ip"] is None and seen["egress_ip"] == IP
    assert "vSwitch vSwitch1 has no physical uplink on host %s" % host["name"] in seen["reason"]
    host["uplinks"]["vSwitch1"] = ["vmnic1"]
    assert cluster.runner.wire("app", "p")["source_ip"] == IP


def test_vswitch_whose_uplinks_are_all_down_is_a_blackhole_one_up_is_enough(cluster):
    host = _vm_host(cluster)
    host["uplinks"]["vSwitch1"] = ["vmnic1", "vmnic2"]
    host["pnics"] = [{"device": "vmnic0", "link_up": True}, {"device": "vmnic1", "link_up": False},
                     {"device": "vmnic2", "link_up": False}]
    seen = _wire(cluster)
    assert seen["source_ip"] is None and "every physical uplink of vSwitch vSwitch1 (vmnic1, vmnic2) has its link down" in seen["reason"]
    host["pnics"][2]["link_up"] = True  # teaming: one working uplink carries the traffic
    assert cluster.runner.wire("app", "p")["source_ip"] == IP


def test_uplinks_of_another_host_do_not_matter(cluster):
    other = next(item for item in cluster.inventory["hosts"] if item["name"] != _vm_host(cluster)["name"])
    other["uplinks"]["vSwitch1"] = []
    assert _wire(cluster)["source_ip"] == IP


def _set_routes(cluster, routes):
    worker = cluster.workers()[0]
    cluster.secondary_policy(worker, _egress_nic(cluster)["mac"], "10.20.0.11", routes=routes)
    cluster.settle()


def test_gateway_route_missing_is_a_blackhole_unless_the_router_does_proxy_arp(cluster):
    """ovnkube-node adds `default dev <link>` when the link has no default route: the node ARPs for the echo target."""
    _set_routes(cluster, [{"destination": "0.0.0.0/0", "state": "absent"}])
    seen = _wire(cluster)
    assert seen["source_ip"] is None and seen["egress_ip"] == IP
    assert "no route via a gateway in the main table, so ovnkube-node adds `default dev ens224`" in seen["reason"]
    assert "ARPs for 192.0.2.10 itself" in seen["reason"]
    wire.configure_onlink(proxy_arp=True)
    try:
        assert cluster.runner.wire("app", "p")["source_ip"] == IP
    finally:
        wire.configure_onlink()


def test_most_specific_route_to_the_destination_decides(cluster):
    gateway = {"next-hop-address": "10.20.0.1", "next-hop-interface": "ens224", "metric": 200, "table-id": 254}
    _wire(cluster)
    _set_routes(cluster, [{"destination": "0.0.0.0/0", "state": "absent"}, dict(gateway, destination="192.0.2.0/24")])
    assert cluster.runner.wire("app", "p")["source_ip"] == IP  # a route through the gateway covers the target
    _set_routes(cluster, [{"destination": "192.0.2.0/24", "state": "absent"},
                          {"destination": "192.0.2.0/24", "next-hop-interface": "ens224", "metric": 200, "table-id": 254}])
    assert "its route to 192.0.2.0/24 is on-link" in cluster.runner.wire("app", "p")["reason"]
    _set_routes(cluster, [{"destination": "192.0.2.0/24", "state": "absent"}, dict(gateway, destination="198.51.100.0/24")])
    assert cluster.runner.wire("app", "p")["source_ip"] is None  # a route elsewhere does not help


def test_route_of_another_table_does_not_count(cluster):
    _set_routes(cluster, [{"destination": "0.0.0.0/0", "state": "absent"},
                          {"destination": "0.0.0.0/0", "next-hop-address": "10.20.0.1", "next-hop-interface": "ens224", "table-id": 100}])
    assert _wire(cluster)["source_ip"] is None


def test_distributed_port_group_backing(cluster):
    nic = _egress_nic(cluster)
    nic.update({"network": "ocp-primary-dpg", "portgroup_key": "dvportgroup-22", "switch_uuid": "50 2a 11 22"})
    assert _wire(cluster)["source_ip"] == IP
    nic["portgroup_key"] = "dvportgroup-99"
    assert "does not exist" in cluster.runner.wire("app", "p")["reason"]


def test_address_not_applied_is_a_blackhole(cluster):
    """Between the address going away and the cluster manager moving the IP, the wire drops traffic."""
    worker = cluster.workers()[0]
    inventory = Inventory(cluster.inventory)
    cluster.runner.nmstate.nodenets[worker].profiles.clear()
    hosts = cluster.runner.nmstate.hosts([cluster.node(worker)], inventory)
    forwarding = {worker: Forwarding(global_forwarding=True)}
    seen = wire.through_egress_node({"egressIP": IP, "node": worker}, hosts, forwarding, inventory)
    assert seen["source_ip"] is None and "no base address" in seen["reason"]


def test_echo_pod_succeeds_with_the_source_address(cluster):
    cluster.pod("app", "echo", command=ECHO)
    cluster.settle()
    pod = cluster.store.get("pods", "echo", namespace="app")
    assert pod["status"]["phase"] == "Succeeded"
    assert cluster.store.get_log("app", "echo") == IP


def test_echo_pod_times_out_through_a_blackhole(cluster):
    _egress_nic(cluster)["connected"] = False
    cluster.pod("app", "echo", command=["sh", "-c", "curl -s http://192.0.2.10:8080/"])
    cluster.settle()
    pod = cluster.store.get("pods", "echo", namespace="app")
    assert pod["status"]["phase"] == "Failed"
    assert cluster.store.get_log("app", "echo") == CURL_TIMEOUT
    assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 28


def test_pods_round_robin_over_ready_schedulable_workers(cluster):
    workers = cluster.workers()
    cluster.store.patch("nodes", workers[2], {"spec": {"unschedulable": True}})
    cluster.set_ready(workers[1], False)
    for index in range(3):
        cluster.pod("other", "p%d" % index)
    cluster.settle()
    pods = [cluster.store.get("pods", "p%d" % index, namespace="other") for index in range(3)]
    assert {p["spec"]["nodeName"] for p in pods} == {workers[0]}
    assert all(p["status"]["phase"] == "Running" for p in pods)
    assert sorted(p["status"]["podIP"] for p in pods) == ["10.128.6.3", "10.128.6.4", "10.128.6.5"]
    assert pods[0]["status"]["hostIP"] == "192.168.10.14"


def test_unschedulable_pod_stays_pending(cluster):
    for worker in cluster.workers():
        cluster.store.patch("nodes", worker, {"spec": {"unschedulable": True}})
    cluster.pod("other", "p")
    cluster.settle()
    pod = cluster.store.get("pods", "p", namespace="other")
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["conditions"][0]["reason"] == "Unschedulable"
    assert cluster.runner.wire("other", "p")["source_ip"] is None


def test_missing_pod():
    assert FakeCluster().runner.wire("default", "nope")["reason"] == "pod not found"
