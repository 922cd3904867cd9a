"""Self-tests of the Kubernetes API emulator (twin.kube) through the real, unmodified kubernetes client.

The emulator runs as a subprocess with --no-controllers; clients load the kubeconfig it
writes, so CA verification and the bearer token are exercised on every call.
"""

import json
import os
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402
from kubernetes.dynamic import DynamicClient  # noqa: E402

from _kube import failure  # noqa: E402

EIP = ("k8s.ovn.org", "v1", "egressips")
NNCP = ("nmstate.io", "v1", "nodenetworkconfigurationpolicies")


# emu, api, core, custom: conftest.py

@pytest.fixture(scope="module")
def dyn(api, tmp_path_factory):
    return DynamicClient(api, cache_file=str(tmp_path_factory.mktemp("dyn") / "discovery.json"))


@pytest.fixture(scope="module")
def namespace(core):
    core.create_namespace({"metadata": {"name": "selftest"}})
    return "selftest"


def egressip(name, ips=("192.168.20.10",), **spec):
    body = {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": name},
            "spec": {"egressIPs": list(ips), "namespaceSelector": {"matchLabels": {"env": "prod"}}}}
    body["spec"].update(spec)
    return body


def node(name, labels=None):
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"providerID": "vsphere://4237-" + name},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"},
                                      {"type": "MemoryPressure", "status": "False"}],
                       "addresses": [{"type": "InternalIP", "address": "192.168.10.11"},
                                     {"type": "Hostname", "address": name}]}}


# ---------------------------------------------------------------- start-up, discovery

def test_startup_writes_state(emu):
    # start-up time is a benchmark figure (docs/benchmarks.md), never a timed assertion: CI machines are shared
    assert emu.startup_seconds > 0
    assert emu.info["url"].startswith("https://127.0.0.1:")
    for name in ("ca.crt", "server.crt", "kubeconfig", "kube.json"):
        assert os.path.exists(os.path.join(emu.state_dir, name))


def test_version_matches_openshift_416(dyn, api):
    assert dyn.version["kubernetes"]["gitVersion"].startswith("v1.29.")
    assert client.VersionApi(api).get_code().minor == "29"


def test_dynamic_discovery_of_builtin_and_custom_kinds(dyn):
    eip = dyn.resources.get(api_version="k8s.ovn.org/v1", kind="EgressIP")
    assert (eip.name, eip.namespaced, eip.short_names) == ("egressips", False, ["eip"])
    assert "status" not in (eip.subresources or {})
    pods = dyn.resources.get(api_version="v1", kind="Pod")
    assert pods.namespaced and {"log", "status"} <= set(pods.subresources)
    assert "status" in dyn.resources.get(api_version="v1", kind="Node").subresources
    for version in ("v1", "v1beta1"):
        nncp = dyn.resources.get(api_version="nmstate.io/" + version, kind="NodeNetworkConfigurationPolicy")
        assert "status" in nncp.subresources and not nncp.namespaced
    assert dyn.resources.get(api_version="nmstate.io/v1", kind="NMState").name == "nmstates"
    assert dyn.resources.get(api_version="operator.openshift.io/v1", kind="Network").name == "networks"
    assert dyn.resources.get(api_version="machine.openshift.io/v1beta1", kind="Machine").namespaced
    for kind in ("Namespace", "Event", "ConfigMap"):
        assert dyn.resources.get(api_version="v1", kind=kind)


def test_api_groups_carry_preferred_versions(api):
    groups = {g.name: g for g in client.ApisApi(api).get_api_versions().groups}
    assert groups["nmstate.io"].preferred_version.version == "v1"
    assert [v.version for v in groups["nmstate.io"].versions] == ["v1", "v1beta1"]
    resources = client.CoreV1Api(api).get_api_resources()
    names = {r.name: r for r in resources.resources}
    assert names["pods"].short_names == ["po"] and names["nodes"].namespaced is False
    assert "pods/log" in names and "nodes/status" in names


def test_unknown_path_is_not_found(emu):
    status, _headers, payload = emu.raw("GET", "/apis/nope.example.com/v1/things")
    assert status == 404 and json.loads(payload)["reason"] == "NotFound"


# ---------------------------------------------------------------- built-in kinds

def test_namespace_crud(core):
    created = core.create_namespace({"metadata": {"name": "ns-crud", "labels": {"team": "a"}}})
    assert created.status.phase == "Active" and created.metadata.uid and created.metadata.resource_version
    core.patch_namespace("ns-crud", {"metadata": {"labels": {"extra": "1"}}})
    got = core.read_namespace("ns-crud")
    assert got.metadata.labels == {"team": "a", "extra": "1"}
    assert "ns-crud" in [n.metadata.name for n in core.list_namespace().items]
    deleted = core.delete_namespace("ns-crud")
    # a real apiserver answers with the Terminating Namespace; the client types it V1Status and hands back a dict
    assert deleted["kind"] == "Namespace" and deleted["status"]["phase"] == "Terminating"
    assert failure(core.read_namespace, "ns-crud")[0] == 404


def test_node_patch_types(core):
    core.create_node(node("node-patch", {"a": "1", "b": "2"}))
    # strategic merge (the client's default for a dict body): conditions merge by `type`
    patch = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}}
    core.patch_node_status("node-patch", patch)
    status = core.read_node_status("node-patch").status
    conditions = {c.type: c.status for c in status.conditions}
    assert conditions == {"Ready": "False", "MemoryPressure": "False"}
    assert len(status.addresses) == 2
    # JSON merge patch: null deletes a label, lists are replaced whole
    core.patch_node("node-patch", {"metadata": {"labels": {"a": None, "c": "3"}}}, _content_type="application/merge-patch+json")
    assert core.read_node("node-patch").metadata.labels == {"b": "2", "c": "3"}
    core.patch_node_status("node-patch", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
                           _content_type="application/merge-patch+json")
    assert [c.type for c in core.read_node_status("node-patch").status.conditions] == ["Ready"]
    # JSON patch (a list body)
    core.patch_node("node-patch", [{"op": "add", "path": "/metadata/annotations", "value": {"k8s.ovn.org/x": "y"}},
                                   {"op": "remove", "path": "/metadata/labels/b"}])
    got = core.read_node("node-patch")
    assert got.metadata.annotations == {"k8s.ovn.org/x": "y"} and got.metadata.labels == {"c": "3"}


def test_node_status_subresource_semantics(core):
    core.create_node(node("node-status"))
    current = core.read_node("node-status")
    current.status.conditions[0].status = "Unknown"
    current.metadata.labels = {"k8s.ovn.org/egress-assignable": ""}
    replaced = core.replace_node("node-status", current)
    assert replaced.metadata.labels == {"k8s.ovn.org/egress-assignable": ""}
    assert replaced.status.conditions[0].status == "True", "a main-resource write must not change status"
    patched = core.patch_node("node-status", {"spec": {"unschedulable": True},
                                              "status": {"conditions": [{"type": "Ready", "status": "False"}]}})
    assert patched.spec.unschedulable and patched.status.conditions[0].status == "True"
    current = core.read_node_status("node-status")
    current.status.conditions[0].status = "False"
    current.spec.unschedulable = False
    replaced = core.replace_node_status("node-status", current)
    assert replaced.status.conditions[0].status == "False" and replaced.spec.unschedulable, \
        "a status write must change status only"


def test_pod_lifecycle_and_log(core, namespace):
    pod = {"metadata": {"name": "curl", "labels": {"app": "probe"}},
           "spec": {"nodeName": "worker-0", "restartPolicy": "Never",
                    "containers": [{"name": "curl", "image": "registry.example/curl:1", "command": ["curl", "-s"]}]}}
    created = core.create_namespaced_pod(namespace, pod)
    assert created.status.phase == "Pending" and created.spec.dns_policy == "ClusterFirst"
    status, body = failure(core.read_namespaced_pod_log, "curl", namespace)
    assert status == 400 and "waiting to start" in body["message"]
    on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=worker-0").items
    assert [p.metadata.name for p in on_node] == ["curl"]
    assert core.list_namespaced_pod(namespace, field_selector="spec.nodeName=worker-9").items == []
    core.patch_namespaced_pod_status("curl", namespace, {"status": {"phase": "Succeeded"}})
    assert core.read_namespaced_pod_log("curl", namespace) == ""
    assert core.read_namespaced_pod_status("curl", namespace).status.phase == "Succeeded"
    status, body = failure(core.patch_namespaced_pod, "curl", namespace, {"spec": {"nodeName": "worker-1"}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec"
    deleted = core.delete_namespaced_pod("curl", namespace)
    assert deleted.metadata.name == "curl" and deleted.kind == "Pod", "pods answer DELETE with the object"
    assert failure(core.read_namespaced_pod, "curl", namespace)[0] == 404


def test_create_in_missing_namespace_is_not_found(core):
    status, body = failure(core.create_namespaced_config_map, "no-such-ns", {"metadata": {"name": "x"}})
    assert status == 404 and body["reason"] == "NotFound" and body["message"] == 'namespaces "no-such-ns" not found'
    assert body["details"] == {"kind": "namespaces", "name": "no-such-ns"}


def _namespaces_of_a_cluster(core):
    """default and kube-system, which every cluster has (the bare emulator of these tests starts empty)."""
    existing = set(item.metadata.name for item in core.list_namespace().items)
    for name in ("default", "kube-system"):
        if name not in existing:
            core.create_namespace({"metadata": {"name": name}})


def test_events_with_generate_name_and_field_selector(core):
    # an EgressIP is cluster-scoped: its Events live in "default" (legacyValidateEvent, below)
    _namespaces_of_a_cluster(core)
    event = {"metadata": {"generateName": "egressip-"}, "type": "Warning", "reason": "NoMatchingNodeFound",
             "message": "no assignable nodes", "involvedObject": {"kind": "EgressIP", "name": "eip-a"}}
    created = core.create_namespaced_event("default", event)
    assert created.metadata.name.startswith("egressip-") and len(created.metadata.name) == len("egressip-") + 5
    core.create_namespaced_event("default", dict(event, involvedObject={"kind": "EgressIP", "name": "eip-b"}))
    found = core.list_namespaced_event("default", field_selector="involvedObject.name=eip-a,involvedObject.kind=EgressIP")
    assert [e.involved_object.name for e in found.items] == ["eip-a"]
    assert len(core.list_event_for_all_namespaces(field_selector="reason=NoMatchingNodeFound").items) == 2


def test_events_follow_legacy_validate_event(core, namespace):
    """pkg/apis/core/validation/events.go legacyValidateEvent: the Event's namespace must match its object's."""
    _namespaces_of_a_cluster(core)
    cluster_scoped = {"metadata": {"name": "eip-c.1"}, "reason": "Observed", "type": "Normal", "message": "m",
                      "involvedObject": {"kind": "EgressIP", "name": "eip-c"}}
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_event(namespace, cluster_scoped)
    assert refused.value.status == 422
    cause = json.loads(refused.value.body)["details"]["causes"][0]
    assert (cause["field"], cause["message"]) == ("involvedObject.namespace", 'Invalid value: "": does not match event.namespace')
    mismatched = dict(cluster_scoped, metadata={"name": "pod.1"}, involvedObject={"kind": "Pod", "name": "p", "namespace": "other"})
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_event(namespace, mismatched)
    assert refused.value.status == 422
    core.create_namespaced_event(namespace, dict(mismatched, involvedObject={"kind": "Pod", "name": "p", "namespace": namespace}))
    # a "new" Event (eventTime set) needs reportingController (reportingComponent in core/v1), reportingInstance and action
    new_style = dict(cluster_scoped, metadata={"name": "eip-c.2"}, eventTime="2026-12-03T07:00:00.000000Z")
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_event("default", new_style)
    assert refused.value.status == 422
    causes = [(cause["field"], cause["message"]) for cause in json.loads(refused.value.body)["details"]["causes"]]
    for field in ("reportingController", "reportingInstance", "action"):
        assert (field, "Required value") in causes, causes
    core.create_namespaced_event("kube-system", dict(new_style, reportingComponent="ocp.egressip/guard", reportingInstance="pod-1",
                                                     action="Verify"))


def test_list_shape(emu, core, namespace):
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "shape"}, "data": {"k": "v"}})
    status, _headers, payload = emu.raw("GET", "/api/v1/namespaces/%s/configmaps" % namespace)
    listed = json.loads(payload)
    assert status == 200 and listed["kind"] == "ConfigMapList" and listed["apiVersion"] == "v1"
    assert int(listed["metadata"]["resourceVersion"]) >= int(listed["items"][0]["metadata"]["resourceVersion"])
    # typed (built-in) lists do not repeat kind/apiVersion in items, as a real apiserver
    assert "kind" not in listed["items"][0]
    status, _headers, payload = emu.raw("GET", "/api/v1/configmaps?limit=1&continue=")
    assert status == 200 and json.loads(payload)["kind"] == "ConfigMapList"


# ---------------------------------------------------------------- selectors

@pytest.fixture(scope="module")
def labelled(core, namespace):
    for name, labels in (("sel-a", {"tier": "web", "env": "prod"}), ("sel-b", {"tier": "db", "env": "prod"}),
                         ("sel-c", {"tier": "web"}), ("sel-d", {})):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "labels": labels}})
    return namespace


@pytest.mark.parametrize("selector, expected", [
    ("tier=web", ["sel-a", "sel-c"]),
    ("tier==web", ["sel-a", "sel-c"]),
    ("tier!=web", ["sel-b", "sel-d"]),
    ("tier in (web,db),env=prod", ["sel-a", "sel-b"]),
    ("tier notin (web)", ["sel-b", "sel-d"]),
    ("env", ["sel-a", "sel-b"]),
    ("!env", ["sel-c", "sel-d"]),
])
def test_label_selector_operators(core, labelled, selector, expected):
    found = core.list_namespaced_config_map(labelled, label_selector=selector).items
    assert sorted(c.metadata.name for c in found if c.metadata.name.startswith("sel-")) == expected


def test_field_selectors(core, labelled):
    found = core.list_config_map_for_all_namespaces(field_selector="metadata.name=sel-b").items
    assert [(c.metadata.namespace, c.metadata.name) for c in found] == [(labelled, "sel-b")]
    found = core.list_config_map_for_all_namespaces(field_selector="metadata.namespace=%s,metadata.name!=sel-b" % labelled)
    assert "sel-b" not in [c.metadata.name for c in found.items] and "sel-a" in [c.metadata.name for c in found.items]
    status, body = failure(core.list_namespaced_config_map, labelled, field_selector="data.k=v")
    assert status == 400 and body["message"] == "field label not supported: data.k"
    status, body = failure(core.list_namespaced_config_map, labelled, label_selector="tier in web")
    assert status == 400 and body["reason"] == "BadRequest"


# ---------------------------------------------------------------- errors

def test_already_exists_not_found_and_conflict(core, custom):
    custom.create_cluster_custom_object(*EIP, egressip("eip-errors"))
    status, body = failure(custom.create_cluster_custom_object, *EIP, egressip("eip-errors"))
    assert status == 409 and body["reason"] == "AlreadyExists"
    assert body["message"] == 'egressips.k8s.ovn.org "eip-errors" already exists'
    assert body["details"] == {"name": "eip-errors", "group": "k8s.ovn.org", "kind": "egressips"}
    status, body = failure(custom.get_cluster_custom_object, *EIP, "eip-missing")
    assert status == 404 and body["reason"] == "NotFound" and body["kind"] == "Status"
    assert failure(custom.delete_cluster_custom_object, *EIP, "eip-missing")[0] == 404
    assert failure(core.delete_node, "node-missing")[0] == 404
    assert failure(custom.replace_cluster_custom_object, *EIP, "eip-missing", egressip("eip-missing"))[0] == 404
    current = custom.get_cluster_custom_object(*EIP, "eip-errors")
    custom.patch_cluster_custom_object(*EIP, "eip-errors", {"spec": {"egressIPs": ["192.168.20.11"]}})
    status, body = failure(custom.replace_cluster_custom_object, *EIP, "eip-errors", current)
    assert status == 409 and body["reason"] == "Conflict"
    assert "the object has been modified" in body["message"]
    stale = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"]}, "spec": {"egressIPs": ["192.168.20.12"]}}
    assert failure(custom.patch_cluster_custom_object, *EIP, "eip-errors", stale)[1]["reason"] == "Conflict"


def test_invalid_names_are_refused(core):
    status, body = failure(core.create_node, {"metadata": {"name": "Bad_Name"}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["message"].startswith('Node "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123')
    status, body = failure(core.create_node, {"metadata": {}})
    assert status == 422 and "name or generateName is required" in body["message"]


# ---------------------------------------------------------------- custom resources

# one valid object per CRD kind: (group, version, plural, namespaced, body, merge patch)
CR_CASES = [
    ("k8s.ovn.org", "v1", "egressips", False, {"spec": {"egressIPs": ["192.168.20.10"], "namespaceSelector": {}}},
     {"spec": {"podSelector": {"matchLabels": {"app": "x"}}}}),
    ("nmstate.io", "v1", "nodenetworkconfigurationpolicies", False,
     {"spec": {"nodeSelector": {"node-role.kubernetes.io/worker": ""}, "desiredState": {"interfaces": []}}},
     {"spec": {"maxUnavailable": 1}}),
    ("nmstate.io", "v1beta1", "nodenetworkconfigurationenactments", False, {}, {"metadata": {"labels": {"a": "b"}}}),
    ("nmstate.io", "v1beta1", "nodenetworkstates", False, {}, {"metadata": {"labels": {"a": "b"}}}),
    ("nmstate.io", "v1", "nmstates", False, {"spec": {"nodeSelector": {}}}, {"spec": {"x": 1}}),
    ("config.openshift.io", "v1", "infrastructures", False, {"spec": {"platformSpec": {"type": "VSphere"}}},
     {"spec": {"cloudConfig": {"name": "cloud-provider-config"}}}),
    ("config.openshift.io", "v1", "networks", False, {"spec": {"networkType": "OVNKubernetes"}},
     {"spec": {"serviceNetwork": ["172.30.0.0/16"]}}),
    ("config.openshift.io", "v1", "clusterversions", False, {"spec": {"clusterID": "0b6bb1a4-6a1e-4b4e-9f1b-3c1b2d3e4f50"}},
     {"spec": {"channel": "stable-4.16"}}),
    ("operator.openshift.io", "v1", "networks", False, {"spec": {"managementState": "Managed"}},
     {"spec": {"disableMultiNetwork": False}}),
    ("machine.openshift.io", "v1beta1", "machines", True, {"spec": {"providerID": "vsphere://x"}},
     {"spec": {"providerSpec": {"value": {"numCPUs": 4}}}}),
    ("machine.openshift.io", "v1beta1", "machinesets", True, {"spec": {"replicas": 1}}, {"spec": {"replicas": 2}}),
    ("tuned.openshift.io", "v1", "tuneds", True, {"spec": {"profile": [{"name": "p", "data": "[main]"}]}},
     {"spec": {"managementState": "Managed"}}),
]


@pytest.mark.parametrize("group, version, plural, namespaced, body, patch", CR_CASES, ids=[c[2] + "." + c[0] for c in CR_CASES])
def test_custom_resource_crud(custom, dyn, namespace, group, version, plural, namespaced, body, patch):
    kind = dyn.resources.get(api_version="%s/%s" % (group, version), name=plural).kind
    name = "cr-" + plural[:20]
    obj = dict(body, apiVersion="%s/%s" % (group, version), kind=kind, metadata={"name": name})
    scope = (group, version, namespace, plural) if namespaced else (group, version, plural)
    verb = "namespaced" if namespaced else "cluster"
    created = getattr(custom, "create_%s_custom_object" % verb)(*scope, obj)
    assert created["metadata"]["generation"] == 1 and created["kind"] == kind
    listed = getattr(custom, "list_%s_custom_object" % verb)(*scope)
    assert listed["kind"] == kind + "List" and {i["kind"] for i in listed["items"]} == {kind}
    assert name in [i["metadata"]["name"] for i in listed["items"]]
    patched = getattr(custom, "patch_%s_custom_object" % verb)(*scope, name, patch)
    current = getattr(custom, "get_%s_custom_object" % verb)(*scope, name)
    assert current == patched and int(current["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    current.setdefault("metadata", {}).setdefault("annotations", {})["replaced"] = "yes"
    replaced = getattr(custom, "replace_%s_custom_object" % verb)(*scope, name, current)
    assert replaced["metadata"]["annotations"] == {"replaced": "yes"}
    assert replaced["metadata"]["generation"] == patched["metadata"]["generation"], "metadata changes keep generation"
    deleted = getattr(custom, "delete_%s_custom_object" % verb)(*scope, name)
    # custom resources answer DELETE with a Status naming the resource, as the apiextensions apiserver does
    assert deleted["kind"] == "Status" and deleted["status"] == "Success"
    assert deleted["details"] == {"name": name, "group": group, "kind": plural, "uid": created["metadata"]["uid"]}
    assert failure(getattr(custom, "get_%s_custom_object" % verb), *scope, name)[0] == 404


def test_custom_resources_through_the_dynamic_client(dyn):
    eips = dyn.resources.get(api_version="k8s.ovn.org/v1", kind="EgressIP")
    eips.create(body=egressip("eip-dyn"))
    got = eips.get(name="eip-dyn")
    assert got.spec.egressIPs == ["192.168.20.10"]
    eips.patch(name="eip-dyn", body={"spec": {"egressIPs": ["192.168.20.20"]}}, content_type="application/merge-patch+json")
    assert "eip-dyn" in [i.metadata.name for i in eips.get().items]
    eips.delete(name="eip-dyn")


def test_strategic_merge_patch_is_refused_for_custom_resources(dyn, custom):
    custom.create_cluster_custom_object(*EIP, egressip("eip-smp"))
    eips = dyn.resources.get(api_version="k8s.ovn.org/v1", kind="EgressIP")
    with pytest.raises(ApiException) as info:
        eips.patch(name="eip-smp", body={"spec": {"egressIPs": ["192.168.20.30"]}})  # strategic by default
    body = json.loads(info.value.body)
    assert info.value.status == 415 and body["reason"] == "UnsupportedMediaType"
    assert body["message"] == ("the body of the request was in an unknown format - accepted media types include: "
                               "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


def test_json_patch_on_a_custom_resource(custom):
    custom.create_cluster_custom_object(*EIP, egressip("eip-jp"))
    patched = custom.patch_cluster_custom_object(*EIP, "eip-jp", [
        {"op": "test", "path": "/spec/egressIPs/0", "value": "192.168.20.10"},
        {"op": "add", "path": "/spec/egressIPs/-", "value": "192.168.20.11"},
        {"op": "copy", "from": "/spec/namespaceSelector", "path": "/spec/podSelector"},
        {"op": "move", "from": "/spec/egressIPs/0", "path": "/spec/egressIPs/1"},
        {"op": "replace", "path": "/spec/namespaceSelector/matchLabels/env", "value": "dev"},
    ], _content_type="application/json-patch+json")
    assert patched["spec"] == {"egressIPs": ["192.168.20.11", "192.168.20.10"],
                               "namespaceSelector": {"matchLabels": {"env": "dev"}},
                               "podSelector": {"matchLabels": {"env": "prod"}}}
    status, body = failure(custom.patch_cluster_custom_object, *EIP, "eip-jp",
                           [{"op": "test", "path": "/spec/egressIPs/0", "value": "10.0.0.1"},
                            {"op": "remove", "path": "/spec/podSelector"}],
                           _content_type="application/json-patch+json")
    assert status == 422 and body["reason"] == "Invalid"
    assert "podSelector" in custom.get_cluster_custom_object(*EIP, "eip-jp")["spec"]


def test_schema_violations_are_422_with_field_paths(custom):
    status, body = failure(custom.create_cluster_custom_object, *EIP,
                           {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": "eip-bad"},
                            "spec": {"egressIPs": ["192.168.20.10"]}})
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == 'EgressIP.k8s.ovn.org "eip-bad" is invalid: spec.namespaceSelector: Required value'
    assert body["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value",
                                          "field": "spec.namespaceSelector"}]
    status, body = failure(custom.create_cluster_custom_object, *EIP, egressip("eip-bad2", ips=[]) | {
        "spec": {"egressIPs": "192.168.20.10", "namespaceSelector": {}}})
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.egressIPs"
    assert 'spec.egressIPs in body must be of type array: "string"' in body["message"]
    status, body = failure(custom.create_cluster_custom_object, *EIP, egressip("eip-bad3", ips=["192.168.20.10", 7]))
    assert status == 422 and body["details"]["causes"][0]["field"] == "spec.egressIPs[1]"
    assert failure(custom.get_cluster_custom_object, *EIP, "eip-bad")[0] == 404


def test_enum_and_bounds_from_the_real_schemas(custom):
    network = {"apiVersion": "operator.openshift.io/v1", "kind": "Network", "metadata": {"name": "bounds"},
               "spec": {"logLevel": "Verbose", "defaultNetwork": {"ovnKubernetesConfig": {
                   "egressIPConfig": {"reachabilityTotalTimeoutSeconds": 61}}}}}
    status, body = failure(custom.create_cluster_custom_object, "operator.openshift.io", "v1", "networks", network)
    fields = {c["field"]: c for c in body["details"]["causes"]}
    assert status == 422
    ovn = "spec.defaultNetwork.ovnKubernetesConfig."
    assert fields["spec.logLevel"]["reason"] == "FieldValueNotSupported"
    assert fields["spec.logLevel"]["message"] == 'Unsupported value: "Verbose": supported values: "", "Normal", "Debug", "Trace", "TraceAll"'
    assert fields[ovn + "egressIPConfig.reachabilityTotalTimeoutSeconds"]["message"].endswith(
        "should be less than or equal to 60")


def test_unknown_fields_are_pruned_and_strict_refuses_them(emu, custom):
    body = egressip("eip-prune")
    body["spec"]["bogus"] = {"x": 1}
    body["extra"] = True
    created = custom.create_cluster_custom_object(*EIP, body)
    assert "bogus" not in created["spec"] and "extra" not in created
    assert "bogus" not in custom.get_cluster_custom_object(*EIP, "eip-prune")["spec"]
    status, headers, _payload = emu.raw("POST", "/apis/k8s.ovn.org/v1/egressips", dict(body, metadata={"name": "eip-warn"}))
    assert status == 201 and 'unknown field \\"spec.bogus\\"' in headers["Warning"]
    status, _headers, payload = emu.raw("POST", "/apis/k8s.ovn.org/v1/egressips?fieldValidation=Strict",
                                        dict(body, metadata={"name": "eip-strict"}))
    assert status == 400 and 'unknown field "spec.bogus"' in json.loads(payload)["message"]


def test_defaults_from_the_schema_are_applied(custom):
    created = custom.create_cluster_custom_object(*NNCP, {
        "apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy", "metadata": {"name": "nncp-defaults"},
        "spec": {"desiredState": {"interfaces": [{"name": "ens224", "type": "ethernet", "state": "up"}]}}})
    # desiredState is preserve-unknown-fields: kept as written
    assert created["spec"]["desiredState"]["interfaces"][0]["name"] == "ens224"


def test_status_subresource_of_a_crd_that_declares_it(custom):
    body = {"apiVersion": "nmstate.io/v1", "kind": "NodeNetworkConfigurationPolicy", "metadata": {"name": "nncp-status"},
            "spec": {"desiredState": {"interfaces": []}}, "status": {"conditions": [{"type": "Available", "status": "True"}]}}
    created = custom.create_cluster_custom_object(*NNCP, body)
    assert "status" not in created, "create drops status when the status subresource is enabled"
    conditions = [{"type": "Available", "status": "True", "reason": "SuccessfullyConfigured"}]
    after_status = custom.patch_cluster_custom_object_status(*NNCP, "nncp-status", {"status": {"conditions": conditions}})
    assert after_status["status"]["conditions"] == conditions and after_status["metadata"]["generation"] == 1
    current = dict(after_status, status={"conditions": []})
    current["spec"] = dict(current["spec"], maxUnavailable=2)
    replaced = custom.replace_cluster_custom_object(*NNCP, "nncp-status", current)
    assert replaced["status"]["conditions"] == conditions, "main-resource writes ignore status"
    assert replaced["spec"]["maxUnavailable"] == 2 and replaced["metadata"]["generation"] == 2
    status_write = dict(replaced, status={"conditions": []}, spec={"desiredState": {}})
    written = custom.replace_cluster_custom_object_status(*NNCP, "nncp-status", status_write)
    assert written["status"] == {"conditions": []} and written["spec"]["maxUnavailable"] == 2, "status writes ignore spec"
    assert written["metadata"]["generation"] == 2


def test_egressip_has_no_status_subresource(custom):
    created = custom.create_cluster_custom_object(*EIP, dict(egressip("eip-status"), status={
        "items": [{"node": "worker-0", "egressIP": "192.168.20.10"}]}))
    assert created["status"]["items"][0]["node"] == "worker-0", "without a status subresource, create keeps status"
    status = failure(custom.patch_cluster_custom_object_status, *EIP, "eip-status", {"status": {"items": []}})[0]
    assert status == 404
    replaced = custom.replace_cluster_custom_object(*EIP, "eip-status", dict(created, status={"items": []}))
    assert replaced["status"] == {"items": []}, "a PUT of the whole object replaces status (DOMAIN.md 2)"
    assert replaced["metadata"]["generation"] == 2, "without a status subresource any non-metadata change bumps generation"
    status, body = failure(custom.replace_cluster_custom_object, *EIP, "eip-status", dict(replaced, status={}))
    assert status == 422 and body["details"]["causes"][0]["field"] == "status.items"


def test_multiple_served_versions(custom):
    body = {"apiVersion": "nmstate.io/v1beta1", "kind": "NodeNetworkConfigurationPolicy", "metadata": {"name": "nncp-beta"},
            "spec": {"desiredState": {}}}
    created = custom.create_cluster_custom_object("nmstate.io", "v1beta1", "nodenetworkconfigurationpolicies", body)
    assert created["apiVersion"] == "nmstate.io/v1beta1"
    assert custom.get_cluster_custom_object(*NNCP, "nncp-beta")["apiVersion"] == "nmstate.io/v1"


def test_finalizers_hold_deletion(custom):
    custom.create_cluster_custom_object(*EIP, dict(egressip("eip-final"), metadata={
        "name": "eip-final", "finalizers": ["example.com/hold"]}))
    deleted = custom.delete_cluster_custom_object(*EIP, "eip-final")
    assert deleted["metadata"]["deletionTimestamp"]
    assert custom.get_cluster_custom_object(*EIP, "eip-final")["metadata"]["deletionTimestamp"]
    custom.patch_cluster_custom_object(*EIP, "eip-final", {"metadata": {"finalizers": None}})
    assert failure(custom.get_cluster_custom_object, *EIP, "eip-final")[0] == 404


def test_server_side_apply_minimal(emu):
    body = json.dumps(egressip("eip-ssa")).encode()
    path = "/apis/k8s.ovn.org/v1/egressips/eip-ssa"
    status, _headers, payload = emu.raw("PATCH", path, body, content_type="application/apply-patch+yaml")
    assert status == 400 and "fieldManager" in json.loads(payload)["message"]
    status, _headers, payload = emu.raw("PATCH", path + "?fieldManager=selftest", body, content_type="application/apply-patch+yaml")
    assert status == 201 and json.loads(payload)["metadata"]["name"] == "eip-ssa"
    again = json.dumps(egressip("eip-ssa", ips=["192.168.20.40"])).encode()
    status, _headers, payload = emu.raw("PATCH", path + "?fieldManager=selftest", again, content_type="application/apply-patch+yaml")
    assert status == 200 and json.loads(payload)["spec"]["egressIPs"] == ["192.168.20.40"]


# ---------------------------------------------------------------- dry run

def test_dry_run_stores_nothing(emu, custom, core):
    emu.twin("DELETE", "/_twin/requests")
    created = custom.create_cluster_custom_object(*EIP, egressip("eip-dry"), dry_run="All")
    assert created["metadata"]["name"] == "eip-dry" and created["metadata"]["uid"]
    assert failure(custom.get_cluster_custom_object, *EIP, "eip-dry")[0] == 404
    invalid = {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": "eip-dry"}, "spec": {}}
    status = failure(custom.create_cluster_custom_object, *EIP, invalid, dry_run="All")[0]
    assert status == 422, "dry run validates fully"
    custom.create_cluster_custom_object(*EIP, egressip("eip-dry"))
    before = custom.get_cluster_custom_object(*EIP, "eip-dry")
    patched = custom.patch_cluster_custom_object(*EIP, "eip-dry", {"spec": {"egressIPs": ["192.168.20.99"]}}, dry_run="All")
    assert patched["spec"]["egressIPs"] == ["192.168.20.99"]
    replaced = custom.replace_cluster_custom_object(*EIP, "eip-dry", dict(before, spec=dict(before["spec"], egressIPs=[])),
                                                    dry_run="All")
    assert replaced["spec"]["egressIPs"] == []
    custom.delete_cluster_custom_object(*EIP, "eip-dry", dry_run="All")
    core.delete_namespace("selftest", dry_run="All")
    assert custom.get_cluster_custom_object(*EIP, "eip-dry") == before
    assert core.read_namespace("selftest").status.phase == "Active"
    log = emu.twin("GET", "/_twin/requests")[1]
    dry = [r for r in log["requests"] if r["dry_run"]]
    assert [r["verb"] for r in dry] == ["create", "create", "patch", "update", "delete", "delete"]
    assert log["writes"] == 1, "only the real create counts as a write"


# ---------------------------------------------------------------- authentication and TLS

@pytest.mark.parametrize("path", ["/version", "/api/v1/nodes", "/apis/k8s.ovn.org/v1/egressips", "/nope", "/_twin/requests"])
@pytest.mark.parametrize("token", [False, "wrong-token"], ids=["no-token", "bad-token"])
def test_every_path_needs_the_bearer_token(emu, path, token):
    status, _headers, payload = emu.raw("GET", path, token=token)
    body = json.loads(payload)
    assert status == 401 and body["kind"] == "Status" and body["reason"] == "Unauthorized" and body["code"] == 401


def test_client_with_a_bad_token_gets_401(emu):
    configuration = client.Configuration()
    config.load_kube_config(config_file=emu.kubeconfig, client_configuration=configuration)
    configuration.refresh_api_key_hook = None  # else the kubeconfig token is put back before each request
    configuration.api_key = {"BearerToken": "Bearer wrong"}
    status, body = failure(client.CoreV1Api(client.ApiClient(configuration)).list_node)
    assert status == 401 and body["reason"] == "Unauthorized"


def test_certificate_verification_fails_with_another_ca(emu, tmp_path):
    import ssl
    import urllib3
    from twin.kube.tls import make_certificates
    other = make_certificates(str(tmp_path))
    with pytest.raises(Exception) as info:
        emu.raw("GET", "/version", context=ssl.create_default_context(cafile=other["ca_file"]))
    assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
    configuration = client.Configuration()
    config.load_kube_config(config_file=emu.kubeconfig, client_configuration=configuration)
    configuration.ssl_ca_cert = other["ca_file"]
    configuration.retries = 0
    with pytest.raises(urllib3.exceptions.MaxRetryError) as info:
        client.CoreV1Api(client.ApiClient(configuration)).list_node()
    assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
    # the server certificate names 127.0.0.1 and localhost
    status = emu.raw("GET", "/version")[0]
    assert status == 200


# ---------------------------------------------------------------- request log and faults

def test_request_log_counts_verbs_and_writes(emu, core, custom):
    assert emu.twin("DELETE", "/_twin/requests")[0] == 200
    custom.create_cluster_custom_object(*EIP, egressip("eip-log"))
    custom.get_cluster_custom_object(*EIP, "eip-log")
    custom.list_cluster_custom_object(*EIP)
    custom.patch_cluster_custom_object(*EIP, "eip-log", {"metadata": {"labels": {"a": "b"}}})
    current = custom.get_cluster_custom_object(*EIP, "eip-log")
    custom.replace_cluster_custom_object(*EIP, "eip-log", current)
    custom.delete_cluster_custom_object(*EIP, "eip-log")
    failure(custom.get_cluster_custom_object, *EIP, "eip-log")
    emu.twin("GET", "/_twin/faults")
    status, log = emu.twin("GET", "/_twin/requests")
    assert status == 200
    assert log["counts"] == {"get": 3, "list": 1, "create": 1, "update": 1, "patch": 1, "delete": 1}
    assert log["writes"] == 4
    first = log["requests"][0]
    assert first == {"verb": "create", "method": "POST", "path": "/apis/k8s.ovn.org/v1/egressips",
                     "resource": "egressips.k8s.ovn.org", "namespace": None, "name": None, "subresource": None,
                     "dry_run": False, "code": 201}
    assert log["requests"][-1]["code"] == 404 and log["requests"][-1]["name"] == "eip-log"
    assert not any(r["path"].startswith("/_twin") for r in log["requests"]), "twin endpoints are not logged"
    emu.twin("DELETE", "/_twin/requests")
    assert emu.twin("GET", "/_twin/requests")[1] == {"requests": [], "writes": 0, "counts": dict.fromkeys(
        ("get", "list", "create", "update", "patch", "delete"), 0)}


def test_fault_injection_then_recovery(emu, core, custom):
    custom.create_cluster_custom_object(*EIP, egressip("eip-fault"))
    emu.twin("DELETE", "/_twin/requests")
    status = emu.twin("POST", "/_twin/faults", {"verb": "patch", "path": "/egressips/eip-fault$", "code": 409, "count": 2})[0]
    assert status == 201
    for attempt in range(2):
        status, body = failure(custom.patch_cluster_custom_object, *EIP, "eip-fault", {"metadata": {"labels": {"x": "1"}}})
        assert status == 409 and body["reason"] == "Conflict"
    patched = custom.patch_cluster_custom_object(*EIP, "eip-fault", {"metadata": {"labels": {"x": "1"}}})
    assert patched["metadata"]["labels"] == {"x": "1"}, "the fault is spent after `count` requests"
    emu.twin("POST", "/_twin/faults", {"verb": "list", "code": 500})
    status, body = failure(core.list_node)
    assert status == 500 and body["reason"] == "InternalError"
    assert core.list_node().kind == "NodeList"
    emu.twin("POST", "/_twin/faults", {"path": "^/api/v1/nodes$", "code": "timeout", "seconds": 0.2})
    started = time.monotonic()
    status, body = failure(core.list_node)
    assert status == 504 and body["reason"] == "Timeout" and time.monotonic() - started >= 0.2
    # urllib3 retries a read timeout 3 times: 4 hanging answers make the client give up
    emu.twin("POST", "/_twin/faults", {"path": "^/api/v1/nodes$", "code": "timeout", "seconds": 1, "count": 4})
    with pytest.raises(Exception) as info:
        core.list_node(_request_timeout=0.2)
    assert "timed out" in str(info.value).lower()
    emu.twin("POST", "/_twin/faults", {"verb": "get", "code": 500, "count": 5})
    assert len(emu.twin("GET", "/_twin/faults")[1]["faults"]) == 1
    emu.twin("DELETE", "/_twin/faults")
    assert core.read_node("node-patch").metadata.name == "node-patch"
    log = emu.twin("GET", "/_twin/requests")[1]
    # entries are recorded when answered: the four hanging requests may still be running
    assert [r["code"] for r in log["requests"]][:6] == [409, 409, 200, 500, 200, 504]
    assert log["writes"] == 1
    assert emu.twin("POST", "/_twin/faults", {"code": 418})[0] == 400


def test_controller_endpoints_answer_503_without_controllers(emu):
    status, body = emu.twin("POST", "/_twin/nodes/node-patch", {"reachable": False})
    assert status == 503 and "controllers" in body["error"]
    status, body = emu.twin("GET", "/_twin/wire?namespace=selftest&pod=curl")
    assert status == 503
    assert emu.twin("GET", "/_twin/nope")[0] == 404


# ---------------------------------------------------------------- watch

def test_watch_streams_events(core, namespace):
    from kubernetes import watch
    import threading
    listed = core.list_namespaced_config_map(namespace)

    def writer():
        time.sleep(0.2)
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "watched", "labels": {"w": "1"}}})
        core.patch_namespaced_config_map("watched", namespace, {"data": {"k": "v"}})
        core.patch_namespaced_config_map("watched", namespace, {"metadata": {"labels": {"w": "2"}}})
        core.delete_namespaced_config_map("watched", namespace)
    thread = threading.Thread(target=writer)
    thread.start()
    seen = []
    stream = watch.Watch().stream(core.list_namespaced_config_map, namespace, label_selector="w=1",
                                  resource_version=listed.metadata.resource_version, timeout_seconds=2)
    for event in stream:
        seen.append((event["type"], event["object"].metadata.name))
    thread.join()
    # leaving the selection (label w=1 -> w=2) shows as DELETED, as the watch cache does
    assert seen == [("ADDED", "watched"), ("MODIFIED", "watched"), ("DELETED", "watched")]


def test_watch_without_resource_version_starts_with_existing_objects(dyn, namespace, core):
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "pre-existing"}})
    configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
    names = [e["object"].metadata.name for e in configmaps.watch(namespace=namespace, timeout=1)]
    assert "pre-existing" in names
