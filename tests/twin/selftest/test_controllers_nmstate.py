"""Simulated NMState (DOMAIN.md section 8, kubernetes-nmstate): NNS, NNCP, NNCE."""

from twin.controllers.hostnet import SlotMap, kernel_names
from twin.controllers.nmstate import NNCE, NNCP, NNS
from twin.controllers.testing import FakeCluster

WORKER = "ocp1-worker-0"
# cluster: conftest.py (a settled FakeCluster)


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
    mac = cluster.secondary(WORKER, "10.20.0.11", gateway=False)  # no route via the interface made absent
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


GATEWAY_ROUTE = {"destination": "0.0.0.0/0", "next-hop-address": "10.20.0.1", "metric": 200, "table-id": 254}
OLD, NEW = "2.2.38", "2.2.43"


def _enactment(cluster, node, policy):
    return cluster.store.get(NNCE, "%s.%s" % (node, policy))


def test_routes_naming_the_kernel_interface_work_on_every_release():
    for version in (OLD, NEW):
        cluster = FakeCluster(nmstate={"version": version})
        mac = cluster.add_nic(WORKER)
        cluster.settle()
        cluster.secondary_policy(WORKER, mac, "10.20.0.11", routes=[dict(GATEWAY_ROUTE, **{"next-hop-interface": "ens224"})])
        cluster.settle()
        config = cluster.store.get(NNS, WORKER)["status"]["currentState"]["routes"]["config"]
        assert config == [dict(GATEWAY_ROUTE, **{"next-hop-interface": "ens224"})], version


def test_old_nmstate_rolls_back_a_route_naming_a_profile():
    """nmstate before 2.2.43 (PR #2841): the route lands on no interface, verification fails, all rolls back."""
    cluster = FakeCluster(nmstate={"version": OLD})
    mac = cluster.add_nic(WORKER)
    cluster.secondary_policy(WORKER, mac, "10.20.0.11", routes=[dict(GATEWAY_ROUTE, **{"next-hop-interface": "secondary0"})])
    cluster.settle()
    failing = _conditions(_enactment(cluster, WORKER, "egress-" + WORKER))["Failing"]
    assert failing["status"] == "True" and failing["reason"] == "FailedToConfigure"
    assert ("VerificationError: Desired route destination: 0.0.0.0/0 next-hop-interface: secondary0 next-hop-address: 10.20.0.1 "
            "metric: 200 table-id: 254 not found after apply") in failing["message"]
    assert _conditions(cluster.store.get(NNCP, "egress-" + WORKER))["Degraded"]["status"] == "True"
    # the whole apply rolled back: the base address is not there either
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"] == {"enabled": False}
    assert cluster.store.get(NNS, WORKER)["status"]["currentState"]["routes"]["config"] == []


def test_new_nmstate_resolves_a_profile_name_to_its_kernel_interface():
    cluster = FakeCluster(nmstate={"version": NEW})
    mac = cluster.add_nic(WORKER)
    cluster.secondary_policy(WORKER, mac, "10.20.0.11", routes=[dict(GATEWAY_ROUTE, **{"next-hop-interface": "secondary0"})])
    cluster.settle()
    config = cluster.store.get(NNS, WORKER)["status"]["currentState"]["routes"]["config"]
    assert config == [dict(GATEWAY_ROUTE, **{"next-hop-interface": "ens224"})]


def test_node_network_state_reports_the_handler_versions():
    for version in (OLD, NEW):
        cluster = FakeCluster(nmstate={"version": version})
        cluster.settle()
        status = cluster.store.get(NNS, WORKER)["status"]
        assert status["handlerNmstateVersion"] == "nmstatectl " + version
        assert status["hostNetworkManagerVersion"]


def test_disabling_ipv4_removes_the_routes_of_that_interface(cluster):
    mac = cluster.add_nic(WORKER)
    route = dict(GATEWAY_ROUTE, **{"next-hop-interface": "ens224"})
    cluster.secondary_policy(WORKER, mac, "10.20.0.11", routes=[route])
    cluster.settle()
    policy = cluster.store.get(NNCP, "egress-" + WORKER)
    iface = dict(policy["spec"]["desiredState"]["interfaces"][0], ipv4={"enabled": False})
    cluster.store.patch(NNCP, "egress-" + WORKER, {"spec": {"desiredState": {"interfaces": [iface], "routes": {"config": []}}}})
    cluster.settle()
    assert cluster.store.get(NNS, WORKER)["status"]["currentState"]["routes"]["config"] == []


def test_old_handler_fails_at_once_new_handler_retries_then_fails():
    """kubernetes-nmstate c8b1bcf6c: Failing=True and Progressing=True (Retrying) until NNCP_MAX_RETRIES (5)."""
    old = FakeCluster(nmstate={"version": OLD})
    old.secondary_policy(WORKER, "00:50:56:ff:ff:01", "10.20.0.11")
    old.settle()
    conditions = _conditions(_enactment(old, WORKER, "egress-" + WORKER))
    assert (conditions["Failing"]["status"], conditions["Progressing"]["status"]) == ("True", "False")

    clock = [0.0]
    new = FakeCluster(nmstate={"version": NEW, "clock": lambda: clock[0]})
    new.secondary_policy(WORKER, "00:50:56:ff:ff:01", "10.20.0.11")
    new.settle()
    seen, messages = [], []
    for _attempt in range(8):
        enactment = _enactment(new, WORKER, "egress-" + WORKER)
        conditions = _conditions(enactment)
        seen.append((conditions["Failing"]["status"], conditions["Progressing"]["status"], conditions["Failing"]["reason"]))
        messages.append(conditions["Failing"]["message"])
        clock[0] += 31.0
        new.settle()
    assert seen[0] == ("True", "True", "Retrying")
    assert messages[0] == "failed to reconcile NodeNetworkConfigurationPolicy on node %s. Retrying 2/5" % WORKER
    assert seen.count(("True", "True", "Retrying")) == 4
    assert seen[-1] == ("True", "False", "FailedToConfigure")
    final = _conditions(_enactment(new, WORKER, "egress-" + WORKER))["Failing"]["message"]
    assert "no interface is holding that MAC address" in final
    # the policy reads Degraded while its enactment is still retrying: clients must look at the enactment
    assert _conditions(new.store.get(NNCP, "egress-" + WORKER))["Degraded"]["status"] == "True"


def test_a_policy_matching_no_node_is_ignored_on_the_new_handler():
    old, new = FakeCluster(nmstate={"version": OLD}), FakeCluster(nmstate={"version": NEW})
    for cluster in (old, new):
        cluster.secondary_policy("no-such-node", "00:50:56:ff:ff:01", "10.20.0.11")
        cluster.settle()
    old_conditions = _conditions(old.store.get(NNCP, "egress-no-such-node"))
    new_conditions = _conditions(new.store.get(NNCP, "egress-no-such-node"))
    assert old_conditions["Available"]["status"] == "True" and "Ignored" not in old_conditions
    assert new_conditions["Available"]["status"] == "False"
    assert new_conditions["Ignored"]["status"] == "True" and new_conditions["Ignored"]["reason"] == "NoMatchingNode"


def test_node_network_state_is_refreshed_on_the_handler_schedule():
    """pkg/node/refresh.go: a minute between refreshes; at once after an apply (forceNNSRefresh)."""
    clock = [0.0]
    cluster = FakeCluster(nmstate={"refresh": 60.0, "clock": lambda: clock[0]})
    cluster.settle()
    mac = cluster.add_nic(WORKER)
    clock[0] += 30.0
    cluster.settle()
    assert "ens224" not in _ethernet(cluster, WORKER)
    clock[0] += 31.0
    cluster.settle()
    assert _ethernet(cluster, WORKER)["ens224"]["mac-address"] == mac.upper()
    clock[0] += 1.0
    cluster.secondary_policy(WORKER, mac, "10.20.0.11")
    cluster.settle()
    assert _ethernet(cluster, WORKER)["ens224"]["ipv4"]["address"] == [{"ip": "10.20.0.11", "prefix-length": 24}]


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
