"""Simulated Node Tuning Operator: profile choice and IP forwarding per link (DOMAIN.md section 5.3)."""

import pytest

from twin.controllers import tuned
from twin.controllers.testing import FakeCluster

NS = tuned.NAMESPACE


def _tuned(name, profiles, recommend):
    return {"apiVersion": "tuned.openshift.io/v1", "kind": "Tuned", "metadata": {"name": name, "namespace": NS},
            "spec": {"profile": [{"name": n, "data": d} for n, d in profiles.items()], "recommend": recommend}}


def _node(name, **labels):
    return {"metadata": {"name": name, "labels": labels}}


DEFAULT = _tuned("default", {}, [
    {"profile": "openshift-control-plane", "priority": 30,
     "match": [{"label": "node-role.kubernetes.io/master"}, {"label": "node-role.kubernetes.io/infra"}]},
    {"profile": "openshift-node", "priority": 40}])
FORWARDING = _tuned("egress-forwarding", {
    "egress-forwarding": "[main]\nsummary=forwarding\ninclude=openshift-node\n\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n"},
    [{"profile": "egress-forwarding", "priority": 20,
      "match": [{"label": "k8s.ovn.org/egress-assignable", "match": [{"label": "node-role.kubernetes.io/worker"}]}]}])


def test_default_profiles():
    nodes = [_node("m", **{"node-role.kubernetes.io/master": ""}), _node("w", **{"node-role.kubernetes.io/worker": ""})]
    result = tuned.forwarding_by_node([DEFAULT], nodes, [], None)
    assert result["m"].profile == "openshift-control-plane" and result["w"].profile == "openshift-node"
    assert not result["w"].is_on("ens224")


def test_lowest_priority_number_wins_and_nested_match_is_and():
    labelled = _node("w1", **{"node-role.kubernetes.io/worker": "", "k8s.ovn.org/egress-assignable": ""})
    unlabelled = _node("w2", **{"node-role.kubernetes.io/worker": ""})
    master = _node("m", **{"node-role.kubernetes.io/master": "", "k8s.ovn.org/egress-assignable": ""})
    result = tuned.forwarding_by_node([DEFAULT, FORWARDING], [labelled, unlabelled, master], [], None)
    assert result["w1"].profile == "egress-forwarding"
    assert result["w1"].is_on("ens224") and not result["w1"].is_on("ens256")
    assert result["w2"].profile == "openshift-node" and not result["w2"].is_on("ens224")
    assert result["m"].profile == "openshift-control-plane"


def test_a_weaker_priority_than_the_default_never_applies():
    weak = _tuned("weak", {"weak": "[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n"}, [{"profile": "weak", "priority": 50}])
    result = tuned.forwarding_by_node([DEFAULT, weak], [_node("w", **{"node-role.kubernetes.io/worker": ""})], [], None)
    assert result["w"].profile == "openshift-node" and not result["w"].is_on("ens224")


@pytest.mark.parametrize("key,ifname,expected", [
    ("net.ipv4.conf.ens224.forwarding", "ens224", True),
    ("net/ipv4/conf/ens224/forwarding", "ens224", True),
    ("net.ipv4.conf.ens224/100.forwarding", "ens224.100", True),
    ("net.ipv4.conf.all.forwarding", "ens256", True),
    ("net.ipv4.ip_forward", "ens256", True),
    ("net.ipv4.conf.default.forwarding", "ens224", False),
])
def test_sysctl_forms(key, ifname, expected):
    profile = _tuned("t", {"p": "[sysctl]\n%s=1\n" % key}, [{"profile": "p", "priority": 10}])
    assert tuned.forwarding_by_node([profile], [_node("w")], [], None)["w"].is_on(ifname) is expected


def test_included_profile_is_overridden_by_the_including_one():
    profile = _tuned("t", {"base": "[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n",
                           "top": "[main]\ninclude=base\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=0\n"},
                     [{"profile": "top", "priority": 10}])
    assert not tuned.forwarding_by_node([profile], [_node("w")], [], None)["w"].is_on("ens224")


def test_pod_label_match():
    profile = _tuned("t", {"p": "[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n"},
                     [{"profile": "p", "priority": 10, "match": [{"label": "app", "value": "router", "type": "pod"}]}])
    pods = [{"metadata": {"labels": {"app": "router"}}, "spec": {"nodeName": "w1"}}]
    result = tuned.forwarding_by_node([profile], [_node("w1"), _node("w2")], pods, None)
    assert result["w1"].profile == "p" and result["w2"].profile is None


def test_global_ip_forwarding_turns_every_link_on():
    operator = {"spec": {"defaultNetwork": {"ovnKubernetesConfig": {"gatewayConfig": {"ipForwarding": "Global"}}}}}
    assert tuned.forwarding_by_node([DEFAULT], [_node("w")], [], operator)["w"].is_on("ens224")


def test_tuned_from_the_store_drives_the_wire():
    cluster = FakeCluster()
    worker = cluster.workers()[0]
    cluster.secondary(worker, "10.20.0.11")
    cluster.label_egress(worker)
    cluster.create_egressip("eip", ["10.20.0.200"])
    cluster.namespace("app", {"egress": "eip"})
    cluster.pod("app", "p")
    cluster.settle()
    assert cluster.runner.wire("app", "p")["source_ip"] is None
    cluster.store.create(tuned.RESOURCE, FORWARDING)
    cluster.settle()
    assert cluster.runner.wire("app", "p")["source_ip"] == "10.20.0.200"
