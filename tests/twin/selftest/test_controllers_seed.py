"""Seed state (tests/twin/README.md "Seed state"): objects mirror the vcsim inventory and pass the CRD schemas."""

import pytest

from twin.controllers import seed
from twin.controllers.testing import FakeCluster, vcsim_state
from twin.kube.store import Store


@pytest.fixture(name="cluster")
def cluster_fixture():
    return FakeCluster()


def test_one_node_per_vm_with_provider_id_roles_and_addresses(cluster):
    nodes = {n["metadata"]["name"]: n for n in cluster.store.list("nodes")}
    assert sorted(nodes) == sorted(vm["name"] for vm in cluster.state["vms"])
    for index, vm in enumerate(cluster.state["vms"]):
        node = nodes[vm["name"]]
        assert node["spec"]["providerID"] == "vsphere://" + vm["uuid"]
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == vm["name"]
        assert labels["kubernetes.io/os"] == "linux" and labels["kubernetes.io/arch"] == "amd64"
        if vm["role"] == "master":
            assert "node-role.kubernetes.io/master" in labels and "node-role.kubernetes.io/control-plane" in labels
        else:
            assert "node-role.kubernetes.io/worker" in labels
        assert {"type": "InternalIP", "address": "192.168.10.%d" % (11 + index)} in node["status"]["addresses"]
        assert {"type": "Hostname", "address": vm["name"]} in node["status"]["addresses"]
        ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["status"] == "True"
        assert node["spec"]["podCIDR"] == "10.128.%d.0/23" % (2 * index)


def test_cluster_configuration_objects(cluster):
    store = cluster.store
    infra = store.get("infrastructures.config.openshift.io", "cluster")
    assert infra["status"]["platformStatus"]["type"] == "VSphere" and infra["status"]["platform"] == "VSphere"
    vsphere = infra["spec"]["platformSpec"]["vsphere"]
    assert "nodeNetworking" not in vsphere
    domain = vsphere["failureDomains"][0]["topology"]
    assert domain["networks"] == ["VM Network"] and domain["datacenter"] == "DC0"
    assert domain["computeCluster"] == "/DC0/host/DC0_C0"
    assert store.get("networks.config.openshift.io", "cluster")["status"]["networkType"] == "OVNKubernetes"
    ovn = store.get("networks.operator.openshift.io", "cluster")["spec"]["defaultNetwork"]["ovnKubernetesConfig"]
    assert ovn["gatewayConfig"] == {"ipForwarding": "Restricted", "routingViaHost": False}
    assert ovn["egressIPConfig"]["reachabilityTotalTimeoutSeconds"] == 1
    version = store.get("clusterversions.config.openshift.io", "version")
    assert version["status"]["desired"]["version"] == "4.16.21"
    assert version["status"]["history"][0]["state"] == "Completed"
    assert store.get("nmstates.nmstate.io", "nmstate") is not None
    assert store.get("tuneds.tuned.openshift.io", "default", namespace="openshift-cluster-node-tuning-operator")
    names = {ns["metadata"]["name"] for ns in store.list("namespaces")}
    assert set(seed.NAMESPACES) <= names


def _contains(stored, wanted):
    """Every field of `wanted` is in `stored` (the server may add defaults, it must not prune)."""
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and all(k in stored and _contains(stored[k], v) for k, v in wanted.items())
    return stored == wanted


def test_seed_objects_keep_their_fields_through_the_schemas(cluster):
    """The CRD schemas prune unknown fields: every field the seed wrote must still be there."""
    for resource, wanted in seed.objects(cluster.state):
        stored = cluster.store.get(resource, wanted["metadata"]["name"], namespace=wanted["metadata"].get("namespace"))
        for field in ("spec", "status"):
            if field in wanted and resource != "namespaces":
                assert _contains(stored.get(field), wanted[field]), (resource, field, stored.get(field))


def test_seed_twice_changes_nothing():
    store = Store()
    state = vcsim_state()
    seed.seed(store, state)
    version = store.resource_version()
    assert seed.seed(store, state) == []
    assert store.resource_version() == version
