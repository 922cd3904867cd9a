"""Simulated Node Tuning Operator: profile choice and IP forwarding per link (DOMAIN.md section 5.3)."""

import pytest

from twin.controllers import tuned
from twin.controllers.testing import FakeCluster, TunedClock

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
    clock = TunedClock(cluster)
    cluster.store.create(tuned.RESOURCE, FORWARDING)
    cluster.settle()
    assert cluster.runner.wire("app", "p")["source_ip"] is None  # TuneD has not applied it yet
    clock.advance(tuned.DEFAULT_DELAY)
    cluster.settle()
    assert cluster.runner.wire("app", "p")["source_ip"] == "10.20.0.200"


# --- Profiles (cluster-node-tuning-operator pkg/operator syncProfile, pkg/tuned updateTunedProfileStatus) ---

def _profile(cluster, node):
    return cluster.store.get(tuned.PROFILES, node, namespace=NS)


def _conditions(profile):
    return {item["type"]: item for item in (profile.get("status") or {}).get("conditions") or []}


def _forwarding_tuned(worker):
    return _tuned("egress-forwarding", {"egress-fw": "[main]\ninclude=openshift-node\n[sysctl]\nnet.ipv4.conf.ens224.forwarding=1\n"},
                  [{"profile": "egress-fw", "priority": 20, "match": [{"label": "kubernetes.io/hostname", "value": worker}]}])


def _settle_past_the_delay(cluster, clock):
    """Let the operator write the profiles, then TuneD apply them once its delay has passed."""
    cluster.settle()
    clock.advance(tuned.DEFAULT_DELAY)
    cluster.settle()


def _failing_application(worker_index, **failure):
    """A cluster whose TuneD on one worker fails (set_tuned_failure with `failure`) to apply the forwarding profile created for
    that worker: (cluster, worker, clock, the conditions of the worker's profile once the delay has passed)."""
    cluster = FakeCluster()
    worker = cluster.workers()[worker_index]
    clock = TunedClock(cluster)
    cluster.settle()
    cluster.runner.set_tuned_failure(worker, tuned.default_failure("ens224"), **failure)
    cluster.store.create(tuned.RESOURCE, _forwarding_tuned(worker))
    _settle_past_the_delay(cluster, clock)
    return cluster, worker, clock, _conditions(_profile(cluster, worker))


def test_one_profile_per_node_applied_from_the_start():
    cluster = FakeCluster()
    cluster.settle()
    for node in cluster.workers():
        profile = _profile(cluster, node)
        assert profile["spec"]["config"] == {"tunedProfile": "openshift-node", "providerName": "vsphere"}
        assert profile["status"]["tunedProfile"] == "openshift-node"
        conditions = _conditions(profile)
        assert conditions["Applied"]["status"] == "True" and conditions["Applied"]["message"] == "TuneD profile applied."
        assert conditions["Degraded"]["status"] == "False" and conditions["Degraded"]["reason"] == "AsExpected"
    assert _profile(cluster, "ocp1-master-0")["status"]["tunedProfile"] == "openshift-control-plane"


def test_a_changed_profile_is_applied_after_the_delay():
    cluster = FakeCluster()
    worker = cluster.workers()[0]
    clock = TunedClock(cluster)
    cluster.settle()
    cluster.store.create(tuned.RESOURCE, _forwarding_tuned(worker))
    cluster.settle()
    profile = _profile(cluster, worker)
    assert profile["spec"]["config"]["tunedProfile"] == "egress-fw"   # the operator at once
    assert profile["status"]["tunedProfile"] == "openshift-node"      # the daemon not yet
    assert not cluster.runner.tuned.forwarding([cluster.node(worker)], None)[worker].is_on("ens224")
    clock.advance(tuned.DEFAULT_DELAY - 0.5)
    cluster.settle()
    assert _profile(cluster, worker)["status"]["tunedProfile"] == "openshift-node"
    clock.advance(0.5)
    cluster.settle()
    profile = _profile(cluster, worker)
    assert profile["status"]["tunedProfile"] == "egress-fw" and _conditions(profile)["Applied"]["status"] == "True"
    assert profile["status"]["observedGeneration"] == profile["metadata"]["generation"]
    assert cluster.runner.tuned.forwarding([cluster.node(worker)], None)[worker].is_on("ens224")


def test_a_failing_application_is_degraded_with_the_daemon_message_and_forwards_nothing():
    cluster, worker, clock, conditions = _failing_application(1)
    assert conditions["Degraded"]["status"] == "True" and conditions["Degraded"]["reason"] == "TunedError"
    assert conditions["Degraded"]["message"] == tuned.ERROR_PREFIX + tuned.default_failure("ens224")
    assert conditions["Applied"]["status"] == "True"  # TuneD still logs "static tuning from profile ... applied"
    assert not cluster.runner.tuned.forwarding([cluster.node(worker)], None)[worker].is_on("ens224")
    cluster.runner.set_tuned_failure(worker, None)
    _settle_past_the_delay(cluster, clock)
    assert _conditions(_profile(cluster, worker))["Degraded"]["status"] == "False"
    assert cluster.runner.tuned.forwarding([cluster.node(worker)], None)[worker].is_on("ens224")


def test_status_is_not_rewritten_when_nothing_it_reports_changed():
    cluster = FakeCluster()
    worker = cluster.workers()[0]
    clock = TunedClock(cluster)
    cluster.store.create(tuned.RESOURCE, _forwarding_tuned(worker))
    cluster.settle()
    before = _profile(cluster, worker)
    updated = _forwarding_tuned(worker)
    updated["spec"]["profile"][0]["data"] += "net.ipv6.conf.ens224.forwarding=1\n"
    current = cluster.store.get(tuned.RESOURCE, "egress-forwarding", namespace=NS)
    cluster.store.patch(tuned.RESOURCE, "egress-forwarding", {"spec": updated["spec"]}, namespace=NS)
    assert current["metadata"]["generation"] < cluster.store.get(tuned.RESOURCE, "egress-forwarding", namespace=NS)["metadata"]["generation"]
    _settle_past_the_delay(cluster, clock)
    after = _profile(cluster, worker)
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1
    # same profile name, same conditions: updateTunedProfileStatus writes nothing, observedGeneration stays behind
    assert after["status"] == before["status"]


def test_a_failure_without_the_applied_line_reports_applied_false():
    _cluster, _worker, _clock, conditions = _failing_application(0, applied=False)
    assert conditions["Applied"]["status"] == "False" and conditions["Applied"]["reason"] == "Failed"
    assert conditions["Applied"]["message"] == tuned.NOT_APPLIED_MESSAGE and conditions["Degraded"]["status"] == "True"
