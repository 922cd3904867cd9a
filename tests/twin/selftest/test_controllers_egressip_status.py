"""How the simulated cluster manager writes an EgressIP: as patchEgressIP does (ovn-kubernetes
go-controller/pkg/clustermanager/egressip_controller.go, generateEgressIPPatches): one JSON patch, the mark
annotation added while there is none (an add that replaces every other annotation), then `replace /status`."""

from twin.controllers.cluster_manager import EGRESSIPS, MARK_ANNOTATION
from twin.controllers.testing import FakeCluster


def egress_cluster():
    cluster = FakeCluster(rng_seed=1)
    for index, worker in enumerate(cluster.workers()):
        cluster.secondary(worker, "10.20.0.%d" % (11 + index))
    cluster.label_egress(*cluster.workers())
    cluster.settle()
    return cluster


def recorded_patches(cluster):
    """Every store.patch call of the controllers on EgressIPs: (patch_type, patch)."""
    calls, patch = [], cluster.store.patch

    def recording(resource, name, body, patch_type="merge", **kwargs):
        if resource == EGRESSIPS:
            calls.append((patch_type, body))
        return patch(resource, name, body, patch_type=patch_type, **kwargs)
    cluster.store.patch = recording
    return calls


def test_first_assignment_is_one_json_patch_with_the_mark_and_the_status():
    cluster = egress_cluster()
    calls = recorded_patches(cluster)
    cluster.store.create(EGRESSIPS, {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP",
                                     "metadata": {"name": "eip", "annotations": {"team.example.com/owner": "payments"}},
                                     "spec": {"egressIPs": ["10.20.0.200"], "namespaceSelector": {"matchLabels": {"a": "b"}}}})
    cluster.settle()
    [(patch_type, ops)] = calls
    node = cluster.assignments("eip")["10.20.0.200"]
    assert patch_type == "json" and ops == [
        {"op": "add", "path": "/metadata/annotations", "value": {MARK_ANNOTATION: "50000"}},
        {"op": "replace", "path": "/status", "value": {"items": [{"egressIP": "10.20.0.200", "node": node}]}}]
    # the add replaced the annotations object: the user's annotation is gone, as on a real cluster
    assert cluster.egressip("eip")["metadata"]["annotations"] == {MARK_ANNOTATION: "50000"}


def test_later_status_writes_replace_the_status_only():
    cluster = egress_cluster()
    cluster.create_egressip("eip", ["10.20.0.200"])
    cluster.settle()
    cluster.store.patch(EGRESSIPS, "eip", {"metadata": {"annotations": {"team.example.com/owner": "payments"}}})
    calls = recorded_patches(cluster)
    node = cluster.assignments("eip")["10.20.0.200"]
    cluster.label_egress(node, present=False)
    cluster.settle()
    assert calls and all(t == "json" and [op["path"] for op in ops] == ["/status"] for t, ops in calls)
    assert cluster.egressip("eip")["metadata"]["annotations"]["team.example.com/owner"] == "payments"
    assert cluster.assignments("eip") and node not in cluster.assignments("eip").values()


def test_egressips_without_a_mark_get_one_at_start_in_a_patch_of_their_own():
    cluster = FakeCluster(rng_seed=1)
    calls = recorded_patches(cluster)
    cluster.create_egressip("idle", ["10.99.0.5"])  # no node can host it: never a status write
    cluster.settle()
    assert calls == [("json", [{"op": "add", "path": "/metadata/annotations", "value": {MARK_ANNOTATION: "50000"}}])]
    assert cluster.egressip("idle")["metadata"]["annotations"] == {MARK_ANNOTATION: "50000"}


def test_releases_without_marks_patch_the_status_only():
    cluster = egress_cluster()
    cluster.runner.cluster_manager.marks = False
    calls = recorded_patches(cluster)
    cluster.store.create(EGRESSIPS, {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP",
                                     "metadata": {"name": "eip", "annotations": {"team.example.com/owner": "payments"}},
                                     "spec": {"egressIPs": ["10.20.0.200"], "namespaceSelector": {"matchLabels": {"a": "b"}}}})
    cluster.settle()
    assert [[op["path"] for op in ops] for _t, ops in calls] == [["/status"]]
    assert cluster.egressip("eip")["metadata"]["annotations"] == {"team.example.com/owner": "payments"}
