"""Simulated NMState (DOMAIN.md section 8, kubernetes-nmstate): NNS, NNCP, NNCE."""

import pytest

from twin.controllers.hostnet import SlotMap, kernel_names
from twin.controllers.nmstate import NNCE, NNCP, NNS
from twin.controllers.testing import FakeCluster

WORKER = "ocp1-worker-0"


@pytest.fixture(name="cluster")
def cluster_fixture():
    cluster = FakeCluster()
    cluster.settle()
    return cluster


def _ethernet(cluster, node):
    state = cluster.store.get(NNS, node)["status"]["currentState"]
    return {i["name"]: i for i in state["interfaces"] if i["type"] == "ethernet"}


def _conditions(obj):
    return {c["type"]: c for c in obj["status"]["conditions"]}


def test_kernel_names_follow_vmxnet3_pci_slots():
    assert kernel_names(8) == ["ens192", "ens224", "ens256", "ens161", "ens193", "ens225", "ens257", "ens162"]


def test_removed_nic_frees_its_slot_for_the_next_one():
    slots = SlotMap()
    assert slots.refresh(["a", "b", "c"]) == {"A": "ens192", "B": "ens224", "C": "ens256"}
    assert slots.refresh(["a", "c", "d"]) == {"A": "ens192", "C": "ens256", "D": "ens224"}


def test_node_network_state_reports_nics_by_kernel_name_and_upper_case_mac(cluster):
    mac = cluster.add_nic(WORKER, connected=False)
    cluster.settle()
    interfaces = _ethernet(cluster, WORKER)
    primary_mac = cluster.vm(WORKER)["nics"][0]["mac"]
    assert interfaces["ens192"]["mac-address"] == primary_mac.upper()
    assert interfaces["ens192"]["controller"] == "br-ex"
    assert interfaces["ens224"]["mac-address"] == mac.upper()
    assert interfaces["ens224"]["state"] == "down"
    state = cluster.store.get(NNS, WORKER)["status"]["currentState"]
    bridge = [i for i in state["interfaces"] if i["name"] == "br-ex" and i["type"] == "ovs-interface"][0]
    assert bridge["ipv4"]["address"] == [{"ip": "192.168.10.14", "prefix-length": 24}]
    cluster.nic(WORKER, mac)["connected"] = True
    cluster.settle()
    assert _ethernet(cluster, WORKER)["ens224"]["state"] == "up"


def test_policy_matching_by_mac_configures_the_nic(cluster):
    mac = cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    ens224 = _ethernet(cluster, WORKER)["ens224"]
    assert ens224["ipv4"]["address"] == [{"ip": "10.20.0.11", "prefix-length": 24}]
    assert ens224["profile-name"] == "secondary0" and ens224["mac-address"] == mac.upper()
    enactment = cluster.store.get(NNCE, "%s.egress-%s" % (WORKER, WORKER))
    assert enactment["metadata"]["labels"] == {"nmstate.io/node": WORKER, "nmstate.io/policy": "egress-" + WORKER}
    conditions = _conditions(enactment)
    assert conditions["Available"]["status"] == "True"
    assert conditions["Available"]["reason"] == "SuccessfullyConfigured"
    assert conditions["Failing"]["status"] == "False"
    assert enactment["status"]["policyGeneration"] == 1
    policy = _conditions(cluster.store.get(NNCP, "egress-" + WORKER))
    assert policy["Available"]["status"] == "True"
    assert policy["Available"]["message"] == "1/1 nodes successfully configured"
    assert policy["Degraded"]["status"] == "False"


def test_mac_matching_is_case_insensitive(cluster):
    mac = cluster.add_nic(WORKER)
    cluster.secondary_policy(WORKER, mac.upper(), "10.20.0.11")
    cluster.settle()
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"]["address"][0]["ip"] == "10.20.0.11"


def test_unknown_mac_fails_the_enactment_and_degrades_the_policy(cluster):
    cluster.secondary_policy(WORKER, "00:50:56:ff:ff:ff", "10.20.0.11")
    cluster.settle()
    enactment = _conditions(cluster.store.get(NNCE, "%s.egress-%s" % (WORKER, WORKER)))
    assert enactment["Failing"]["status"] == "True"
    assert enactment["Failing"]["reason"] == "FailedToConfigure"
    assert WORKER in enactment["Failing"]["message"]
    assert "00:50:56:FF:FF:FF" in enactment["Failing"]["message"]
    assert "secondary0" in enactment["Failing"]["message"]
    policy = _conditions(cluster.store.get(NNCP, "egress-" + WORKER))
    assert policy["Degraded"]["status"] == "True"
    assert policy["Degraded"]["reason"] == "FailedToConfigure"
    assert policy["Degraded"]["message"] == "1/1 nodes failed to configure"
    assert policy["Available"]["status"] == "False"


def test_policy_over_several_nodes_aborts_after_a_failure(cluster):
    """kubernetes-nmstate: a node seeing a failed enactment of the policy aborts instead of applying."""
    cluster.add_nic(cluster.workers()[1])
    cluster.store.create(NNCP, {
        "apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy", "metadata": {"name": "all-workers"},
        "spec": {"nodeSelector": {"node-role.kubernetes.io/worker": ""}, "desiredState": {"interfaces": [
            {"name": "ens224", "type": "ethernet", "state": "up",
             "ipv4": {"enabled": True, "address": [{"ip": "10.20.0.50", "prefix-length": 24}]}}]}}})
    cluster.settle()
    policy = _conditions(cluster.store.get(NNCP, "all-workers"))
    assert policy["Degraded"]["status"] == "True"
    assert policy["Degraded"]["message"] == "1/3 nodes failed to configure, 2 nodes aborted configuration"
    aborted = _conditions(cluster.store.get(NNCE, "%s.all-workers" % cluster.workers()[1]))
    assert aborted["Aborted"]["status"] == "True"


def test_no_matching_node(cluster):
    cluster.store.create(NNCP, {"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy",
                                "metadata": {"name": "nobody"},
                                "spec": {"nodeSelector": {"kubernetes.io/hostname": "nope"}, "desiredState": {}}})
    cluster.settle()
    policy = _conditions(cluster.store.get(NNCP, "nobody"))
    assert policy["Available"]["reason"] == "NoMatchingNode"
    assert policy["Available"]["message"] == "Policy does not match any node"


def test_failed_policy_is_not_retried_until_it_changes(cluster):
    """Policies are reconciled on create/generation change/node label change, not when a NIC appears."""
    cluster.secondary_policy(WORKER, "00:50:56:b1:00:01", "10.20.0.11")
    cluster.settle()
    cluster.add_nic(WORKER)  # gets 00:50:56:b1:00:01
    cluster.settle()
    assert _conditions(cluster.store.get(NNCP, "egress-" + WORKER))["Degraded"]["status"] == "True"
    cluster.secondary_policy(WORKER, "00:50:56:b1:00:01", "10.20.0.12")
    cluster.settle()
    assert _conditions(cluster.store.get(NNCP, "egress-" + WORKER))["Available"]["status"] == "True"
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"]["address"][0]["ip"] == "10.20.0.12"


def test_absent_state_removes_the_configuration(cluster):
    mac = cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    cluster.secondary_policy(WORKER, mac, None, state="absent")
    cluster.settle()
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"] == {"enabled": False}


def test_deleting_the_policy_keeps_the_node_configuration(cluster):
    """nmstate never rolls back on NNCP delete: the enactment goes, the address stays."""
    cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    cluster.store.delete(NNCP, "egress-" + WORKER)
    cluster.settle()
    assert cluster.store.get(NNCE, "%s.egress-%s" % (WORKER, WORKER)) is None
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"]["address"][0]["ip"] == "10.20.0.11"


def test_node_leaving_the_selector_loses_the_enactment_not_the_address(cluster):
    cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    cluster.store.patch(NNCP, "egress-" + WORKER, {"spec": {"nodeSelector": {"kubernetes.io/hostname": "other"}}})
    cluster.settle()
    assert cluster.store.get(NNCE, "%s.egress-%s" % (WORKER, WORKER)) is None
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"]["address"][0]["ip"] == "10.20.0.11"


def test_profile_follows_the_mac_when_the_nic_comes_back(cluster):
    """The NetworkManager profile matches the MAC: a NIC re-added with that MAC gets its address back."""
    mac = cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    nic = cluster.nic(WORKER, mac)
    cluster.remove_nic(WORKER, mac)
    cluster.settle()
    assert "ens224" not in _ethernet(cluster, WORKER)
    cluster.vm(WORKER)["nics"].append(nic)
    cluster.settle()
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"]["address"][0]["ip"] == "10.20.0.11"


def test_routes_follow_their_interface(cluster):
    routes = [{"destination": "0.0.0.0/0", "next-hop-address": "10.20.0.1", "next-hop-interface": "secondary0",
               "metric": 200, "table-id": 254}]
    mac = cluster.add_nic(WORKER)
    cluster.secondary_policy(WORKER, mac, "10.20.0.11", routes=routes)
    cluster.settle()
    config = cluster.store.get(NNS, WORKER)["status"]["currentState"]["routes"]["config"]
    assert config == [dict(routes[0], **{"next-hop-interface": "ens224"})]


def test_route_to_an_unknown_interface_fails(cluster):
    mac = cluster.add_nic(WORKER)
    cluster.secondary_policy(WORKER, mac, "10.20.0.11", routes=[{"destination": "0.0.0.0/0", "next-hop-interface": "nope"}])
    cluster.settle()
    assert _conditions(cluster.store.get(NNCP, "egress-" + WORKER))["Degraded"]["status"] == "True"
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"] == {"enabled": False}


def test_a_quiet_cluster_writes_nothing(cluster):
    cluster.secondary(WORKER, "10.20.0.11")
    cluster.settle()
    version = cluster.store.resource_version()
    assert cluster.runner.reconcile_once(probe=True) == 0
    assert cluster.store.resource_version() == version
