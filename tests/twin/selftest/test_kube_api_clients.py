"""The emulator against real clients nobody here wrote: `kubectl` and the `kubernetes` Python package.

kubectl is Debian 12's `kubernetes-client` (1.20) as scripts/bootstrap.sh installs it, or any `kubectl` on
PATH (TWIN_KUBECTL names another binary). These tests skip only when no kubectl is installed.
"""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from kubernetes import client  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from _kube import KUBECTL, NO_KUBECTL, failure  # noqa: E402

EIP = ("k8s.ovn.org", "v1", "egressips")


# emu, api, core, custom: conftest.py

@pytest.fixture
def kubectl(emu, tmp_path):
    """Run kubectl against the emulator: (exit status, stdout, stderr); `stdin` text is sent as the input."""
    if not KUBECTL:
        pytest.skip(NO_KUBECTL)
    env = dict(os.environ, KUBECONFIG=emu.kubeconfig, HOME=str(tmp_path))

    def run(*args, stdin=None):
        done = subprocess.run([KUBECTL, "--request-timeout=20s"] + list(args), input=stdin, env=env, capture_output=True,
                              text=True, timeout=60, check=False)
        return done.returncode, done.stdout, done.stderr
    return run


def egressip(name, ips=("192.168.20.10",)):
    return {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": name},
            "spec": {"egressIPs": list(ips), "namespaceSelector": {"matchLabels": {"env": "prod"}}}}


def requests(emu, verb=None):
    entries = emu.twin("GET", "/_twin/requests")[1]["requests"]
    return [e for e in entries if verb is None or e["verb"] == verb]


# ---------------------------------------------------------------- PUT without resourceVersion

UNCONDITIONAL = 'egressips.k8s.ovn.org "%s" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update'


def test_put_of_a_custom_resource_without_resource_version_is_422(custom):
    custom.create_cluster_custom_object(*EIP, egressip("eip-put"))
    status, body = failure(custom.replace_cluster_custom_object, *EIP, "eip-put", egressip("eip-put", ["192.168.20.11"]))
    assert status == 422 and body["reason"] == "Invalid"
    assert body["message"] == UNCONDITIONAL % "eip-put"
    assert body["details"] == {"name": "eip-put", "group": "k8s.ovn.org", "kind": "egressips", "causes": [
        {"reason": "FieldValueInvalid", "message": "Invalid value: 0x0: must be specified for an update", "field": "metadata.resourceVersion"}]}
    assert custom.get_cluster_custom_object(*EIP, "eip-put")["spec"]["egressIPs"] == ["192.168.20.10"]
    current = custom.get_cluster_custom_object(*EIP, "eip-put")
    current["spec"]["egressIPs"] = ["192.168.20.11"]
    assert custom.replace_cluster_custom_object(*EIP, "eip-put", current)["spec"]["egressIPs"] == ["192.168.20.11"]


def test_put_of_a_built_in_kind_without_resource_version_is_unconditional(core):
    # nodeStrategy.AllowUnconditionalUpdate() is true
    core.create_node({"metadata": {"name": "node-put"}})
    replaced = core.replace_node("node-put", {"metadata": {"name": "node-put", "labels": {"a": "b"}}})
    assert replaced.metadata.labels == {"a": "b"}


def test_kubectl_replace_reads_the_version_first_and_raw_put_is_refused(kubectl, emu, custom, tmp_path):
    custom.create_cluster_custom_object(*EIP, egressip("eip-kubectl-put"))
    manifest = tmp_path / "eip.json"
    manifest.write_text(json.dumps(egressip("eip-kubectl-put", ["192.168.20.12"])))
    code, out, err = kubectl("replace", "-f", str(manifest))
    assert code == 0, err
    assert custom.get_cluster_custom_object(*EIP, "eip-kubectl-put")["spec"]["egressIPs"] == ["192.168.20.12"]
    manifest.write_text(json.dumps(egressip("eip-kubectl-put", ["192.168.20.13"])))
    code, out, err = kubectl("replace", "--raw", "/apis/k8s.ovn.org/v1/egressips/eip-kubectl-put", "-f", str(manifest))
    assert code != 0 and "must be specified for an update" in err and "0x0" in err


# ---------------------------------------------------------------- limit / continue

def test_lists_page_with_limit_and_continue(core):
    for i in range(5):
        core.create_node({"metadata": {"name": "page-%d" % i, "labels": {"paging": "yes"}}})
    first = core.list_node(limit=2)
    total = len(core.list_node().items)
    assert len(first.items) == 2 and first.metadata._continue
    assert first.metadata.remaining_item_count == total - 2
    names = [n.metadata.name for n in first.items]
    token = first.metadata._continue
    core.create_node({"metadata": {"name": "page-late"}})  # after the first page: not in this list's snapshot
    while token:
        page = core.list_node(limit=2, _continue=token)
        assert page.metadata.resource_version == first.metadata.resource_version  # one consistent snapshot
        names += [n.metadata.name for n in page.items]
        token = page.metadata._continue
    assert len(names) == total and "page-late" not in names and names == sorted(names)
    selected = core.list_node(limit=2, label_selector="paging=yes")
    assert selected.metadata._continue and selected.metadata.remaining_item_count is None  # not counted when filtered


def test_continue_tokens_that_are_bad_or_too_old(core, emu):
    assert failure(core.list_node, limit=1, _continue="not-a-token")[0] == 400
    first = core.list_node(limit=1)
    status, body = failure(core.list_node, limit=1, _continue=first.metadata._continue, resource_version="5")
    assert status == 400 and body["message"] == "specifying resource version is not allowed when using continue"
    core.create_node({"metadata": {"name": "page-after-compaction"}})
    emu.twin("POST", "/_twin/compact")
    status, body = failure(core.list_node, limit=1, _continue=first.metadata._continue)
    assert status == 410 and body["reason"] == "Expired"
    assert body["message"].startswith("The provided continue parameter is too old to display a consistent list result. "
                                      "You can start a new list without the continue parameter, or use the continue token")
    rest = core.list_node(_continue=body["metadata"]["continue"])  # goes on at the latest revision
    assert rest.items and rest.items[0].metadata.name > first.items[0].metadata.name


def test_resource_version_zero_ignores_limit(core):
    # served from the watch cache, which has no paging (cacher.GetList)
    listed = core.list_node(limit=1, resource_version="0")
    assert len(listed.items) > 1 and not listed.metadata._continue


def test_kubectl_get_pages_with_chunk_size(kubectl, emu, core):
    expected = sorted("node/" + n.metadata.name for n in core.list_node().items)
    emu.twin("DELETE", "/_twin/requests")
    code, out, err = kubectl("get", "nodes", "--chunk-size=2", "-o", "name")
    assert code == 0, err
    assert sorted(out.split()) == expected
    assert len(requests(emu, "list")) == (len(expected) + 1) // 2


# ---------------------------------------------------------------- OpenAPI v2 / v3

def test_openapi_v2_json_and_protobuf(emu):
    status, headers, body = emu.raw("GET", "/openapi/v2")
    assert status == 200 and headers["Content-Type"] == "application/json"
    definitions = json.loads(body)["definitions"]
    eip = definitions["org.ovn.k8s.v1.EgressIP"]
    assert eip["x-kubernetes-group-version-kind"] == [{"group": "k8s.ovn.org", "kind": "EgressIP", "version": "v1"}]
    assert eip["properties"]["metadata"]["$ref"] == "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert eip["required"] == ["spec"] and "egressIPs" in eip["properties"]["spec"]["properties"]
    assert definitions["io.k8s.api.core.v1.Node"]["x-kubernetes-group-version-kind"][0]["kind"] == "Node"
    assert "org.ovn.k8s.v1.EgressIPList" in definitions and "io.k8s.api.core.v1.PodList" in definitions
    # ToStructuralOpenAPIV2: no junctors or nullable anywhere
    text = json.dumps(definitions)
    assert '"nullable"' not in text and '"anyOf"' not in text and '"oneOf"' not in text
    status, headers, body = emu.raw_accept("/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert status == 200 and headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert body.startswith(b"\n\x032.0")  # Document.swagger = "2.0"


def test_openapi_v3_index_and_group_version_documents(emu):
    status, _headers, body = emu.raw("GET", "/openapi/v3")
    paths = json.loads(body)["paths"]
    assert {"api/v1", "apis/k8s.ovn.org/v1", "apis/nmstate.io/v1", "apis/nmstate.io/v1beta1"} <= set(paths)
    status, headers, body = emu.raw("GET", paths["apis/k8s.ovn.org/v1"]["serverRelativeURL"])
    assert status == 200 and "immutable" in headers["Cache-Control"]
    doc = json.loads(body)
    assert doc["openapi"] == "3.0.0"
    eip = doc["components"]["schemas"]["org.ovn.k8s.v1.EgressIP"]
    assert eip["properties"]["metadata"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    patch = doc["paths"]["/apis/k8s.ovn.org/v1/egressips/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "k8s.ovn.org", "kind": "EgressIP", "version": "v1"}
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]
    assert emu.raw("GET", "/openapi/v3/apis/nothing.example.com/v1")[0] == 404


def test_kubectl_explain_reads_the_crd_schema(kubectl):
    code, out, err = kubectl("explain", "egressip.spec")
    assert code == 0, err
    assert "egressIPs" in out and "namespaceSelector" in out and "EgressIP" in out
    code, out, err = kubectl("explain", "nodenetworkconfigurationpolicies.spec.desiredState")
    assert code == 0, err


def test_kubectl_apply_validates_against_the_schema(kubectl, emu, custom, tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text(json.dumps(egressip("eip-apply")))
    code, out, err = kubectl("apply", "-f", str(good))
    assert code == 0, err
    assert "eip-apply" in out and custom.get_cluster_custom_object(*EIP, "eip-apply")["spec"]["egressIPs"]
    bad = egressip("eip-apply-bad")
    bad["spec"]["bogus"] = 1
    (tmp_path / "bad.yaml").write_text(json.dumps(bad))
    code, out, err = kubectl("apply", "-f", str(tmp_path / "bad.yaml"))
    # kubectl < 1.27 validates on the client from /openapi/v2; later ones ask the server (fieldValidation=Strict)
    assert code != 0 and 'unknown field "bogus"' in err or 'unknown field "spec.bogus"' in err, err
    assert failure(custom.get_cluster_custom_object, *EIP, "eip-apply-bad")[0] == 404
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-applied", "labels": {"a": "b"}}}
    (tmp_path / "node.yaml").write_text(json.dumps(node))
    code, out, err = kubectl("apply", "-f", str(tmp_path / "node.yaml"))
    assert code == 0, err


# ---------------------------------------------------------------- server-side apply

def apply(emu, name, body, manager, force=False):
    query = "?fieldManager=%s%s" % (manager, "&force=true" if force else "")
    status, _headers, payload = emu.raw("PATCH", "/apis/k8s.ovn.org/v1/egressips/%s%s" % (name, query), body,
                                        content_type="application/apply-patch+yaml")
    return status, json.loads(payload)


def managers(obj):
    return {(m["manager"], m["operation"]): m["fieldsV1"] for m in obj["metadata"]["managedFields"]}


def test_apply_records_managed_fields_per_manager(emu, custom):
    status, obj = apply(emu, "eip-ssa", egressip("eip-ssa"), "alice")
    assert status == 201
    [entry] = obj["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"], entry["fieldsType"]) == ("alice", "Apply", "k8s.ovn.org/v1", "FieldsV1")
    assert entry["fieldsV1"] == {"f:spec": {".": {}, "f:egressIPs": {}, "f:namespaceSelector": {".": {}, "f:matchLabels": {".": {}, "f:env": {}}}}}
    custom.patch_cluster_custom_object(*EIP, "eip-ssa", {"metadata": {"labels": {"team": "a"}}})
    updated = custom.get_cluster_custom_object(*EIP, "eip-ssa")
    # a merge patch is an Update by the client's User-Agent prefix, owning only what it added
    assert managers(updated)[("OpenAPI-Generator", "Update")] == {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}}


def test_a_conflicting_apply_is_409_unless_forced(emu, custom):
    apply(emu, "eip-conflict", egressip("eip-conflict"), "alice")
    status, body = apply(emu, "eip-conflict", egressip("eip-conflict", ["192.168.20.99"]), "bob")
    assert status == 409 and body["reason"] == "Conflict"
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "alice": .spec.egressIPs'
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.egressIPs"}]
    assert custom.get_cluster_custom_object(*EIP, "eip-conflict")["spec"]["egressIPs"] == ["192.168.20.10"]
    # the same value is no conflict: both own it
    status, body = apply(emu, "eip-conflict", egressip("eip-conflict"), "bob")
    assert status == 200 and "f:egressIPs" in managers(body)[("alice", "Apply")]["f:spec"]
    status, body = apply(emu, "eip-conflict", egressip("eip-conflict", ["192.168.20.99"]), "bob", force=True)
    assert status == 200 and body["spec"]["egressIPs"] == ["192.168.20.99"]
    assert "f:egressIPs" not in managers(body)[("alice", "Apply")]["f:spec"]  # force took it over
    # an Update that changed a field alice applied: alice's next apply of another value conflicts with it
    custom.patch_cluster_custom_object(*EIP, "eip-conflict", {"spec": {"namespaceSelector": {"matchLabels": {"env": "dev"}}}})
    status, body = apply(emu, "eip-conflict", egressip("eip-conflict", ["192.168.20.99"]), "alice")
    assert status == 409 and body["message"].startswith(
        'Apply failed with 1 conflict: conflict with "OpenAPI-Generator" using k8s.ovn.org/v1 at ')
    assert body["message"].endswith(": .spec.namespaceSelector.matchLabels.env")


def test_fields_dropped_from_an_applied_configuration_are_removed_unless_owned_elsewhere(emu, custom):
    first = egressip("eip-prune")
    first["metadata"]["labels"] = {"a": "1", "b": "2"}
    first["spec"]["podSelector"] = {"matchLabels": {"app": "web"}}
    apply(emu, "eip-prune", first, "alice")
    apply(emu, "eip-prune", {"apiVersion": "k8s.ovn.org/v1", "kind": "EgressIP", "metadata": {"name": "eip-prune", "labels": {"b": "2"}}}, "bob")
    second = egressip("eip-prune")
    status, body = apply(emu, "eip-prune", second, "alice")
    assert status == 200
    assert "podSelector" not in body["spec"]  # only alice had it
    assert body["metadata"]["labels"] == {"b": "2"}  # bob still applies b; a went with alice's configuration


def test_kubectl_apply_server_side(kubectl, emu, custom, tmp_path):
    manifest = tmp_path / "eip.json"
    manifest.write_text(json.dumps(egressip("eip-kubectl-ssa")))
    code, out, err = kubectl("apply", "--server-side", "-f", str(manifest))
    assert code == 0 and "serverside-applied" in out, err
    assert managers(custom.get_cluster_custom_object(*EIP, "eip-kubectl-ssa"))[("kubectl", "Apply")]
    manifest.write_text(json.dumps(egressip("eip-kubectl-ssa", ["192.168.20.77"])))
    code, out, err = kubectl("apply", "--server-side", "--field-manager=other", "-f", str(manifest))
    assert code != 0 and 'conflict with "kubectl": .spec.egressIPs' in err, err
    code, out, err = kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", str(manifest))
    assert code == 0, err
    assert custom.get_cluster_custom_object(*EIP, "eip-kubectl-ssa")["spec"]["egressIPs"] == ["192.168.20.77"]


# ---------------------------------------------------------------- field selectors, watches

def test_field_selectors_the_apiserver_supports(core, kubectl):
    core.create_node({"metadata": {"name": "fs-cordoned"}, "spec": {"unschedulable": True}})
    core.create_node({"metadata": {"name": "fs-schedulable"}})
    schedulable = [n.metadata.name for n in core.list_node(field_selector="spec.unschedulable=false").items]
    assert "fs-cordoned" not in schedulable and "fs-schedulable" in schedulable  # absent is "false" (strconv.FormatBool)
    assert [n.metadata.name for n in core.list_node(field_selector="spec.unschedulable=true").items] == ["fs-cordoned"]
    assert [n.metadata.name for n in core.list_node(field_selector="metadata.name=fs-cordoned").items] == ["fs-cordoned"]
    core.create_namespace({"metadata": {"name": "fs"}})
    core.create_namespaced_pod("fs", {"metadata": {"name": "p"}, "spec": {"nodeName": "fs-cordoned", "containers": [{"name": "c", "image": "i:1"}]}})
    pods = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=fs-cordoned,status.phase=Pending,metadata.namespace=fs")
    assert [p.metadata.name for p in pods.items] == ["p"]
    assert core.list_pod_for_all_namespaces(field_selector="spec.hostNetwork=false").items
    code, out, err = kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=fs-cordoned", "-o", "name")
    assert code == 0 and out.split() == ["pod/p"], err


def test_unsupported_field_selectors_are_400(core, custom, kubectl):
    for call, selector in ((core.list_node, "metadata.namespace=x"), (core.list_namespace, "metadata.namespace=x"),
                           (core.list_node, "spec.providerID=x")):
        status, body = failure(call, field_selector=selector)
        assert status == 400 and body["message"] == "field label not supported: %s" % selector.split("=", maxsplit=1)[0]
    # cluster-scoped custom resources know metadata.name only (crConverter.ConvertFieldLabel)
    status, body = failure(custom.list_cluster_custom_object, *EIP, field_selector="metadata.namespace=x")
    assert status == 400 and body["message"] == "field label not supported: metadata.namespace"
    custom.create_cluster_custom_object(*EIP, egressip("eip-fs"))
    assert custom.list_cluster_custom_object(*EIP, field_selector="metadata.name=eip-fs")["items"]
    code, out, err = kubectl("get", "nodes", "--field-selector", "spec.providerID=x")
    assert code != 0 and "field label not supported: spec.providerID" in err


def test_a_watch_from_a_compacted_resource_version_is_410(core, emu):
    old = core.list_node().metadata.resource_version
    core.create_node({"metadata": {"name": "watch-after-compaction"}})
    emu.twin("POST", "/_twin/compact")
    status, _headers, body = emu.raw("GET", "/api/v1/nodes?watch=true&timeoutSeconds=2&resourceVersion=" + old)
    event = json.loads(body.splitlines()[0])
    assert status == 200 and event["type"] == "ERROR"  # the cacher answers with an error watcher
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith("too old resource version: %s (" % old)
    from kubernetes import watch
    with pytest.raises(ApiException) as info:
        for _event in watch.Watch().stream(core.list_node, resource_version=old, timeout_seconds=2):
            pass
    assert info.value.status == 410


def test_bookmarks_when_asked(core, emu):
    rv = core.list_node().metadata.resource_version
    status, _headers, body = emu.raw("GET", "/api/v1/nodes?watch=true&timeoutSeconds=3&allowWatchBookmarks=true&resourceVersion=" + rv)
    events = [json.loads(line) for line in body.splitlines()]
    # nothing changed: one bookmark, 2 s before the deadline (cacheWatcher.nextBookmarkTime)
    assert events == [{"type": "BOOKMARK", "object": {"kind": "Node", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}}]
    status, _headers, body = emu.raw("GET", "/api/v1/nodes?watch=true&timeoutSeconds=3&resourceVersion=" + rv)
    assert body == b""  # not asked: none


# ---------------------------------------------------------------- access reviews, Table output

def test_self_subject_access_and_rules_reviews(api, kubectl):
    authz = client.AuthorizationV1Api(api)
    review = authz.create_self_subject_access_review({"spec": {"resourceAttributes": {
        "verb": "patch", "group": "k8s.ovn.org", "resource": "egressips"}}})
    assert review.status.allowed is True and review.kind == "SelfSubjectAccessReview"
    assert authz.create_self_subject_access_review({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}).status.allowed
    status, body = failure(authz.create_self_subject_access_review, {"spec": {}})
    assert status == 422 and body["message"] == ('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: '
                                                 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified')
    rules = authz.create_self_subject_rules_review({"spec": {"namespace": "default"}})
    assert rules.status.resource_rules[0].verbs == ["*"] and rules.status.incomplete is False
    code, out, err = kubectl("auth", "can-i", "patch", "egressips.k8s.ovn.org")
    assert code == 0 and out.strip() == "yes", err
    code, out, err = kubectl("auth", "can-i", "--list")
    assert code == 0 and "*.*" in out, err


def table_of(emu, path):
    status, _headers, body = emu.raw_accept(path, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    assert status == 200
    return json.loads(body)


def test_table_output_for_nodes_and_egressips(emu, core, custom, kubectl):
    info = {k: "" for k in ("architecture", "bootID", "containerRuntimeVersion", "kernelVersion", "kubeProxyVersion",
                            "machineID", "operatingSystem", "osImage", "systemUUID")}
    info["kubeletVersion"] = "v1.29.6"
    core.create_node({"metadata": {"name": "table-node", "labels": {"node-role.kubernetes.io/worker": ""}},
                      "spec": {"unschedulable": True},
                      "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": info,
                                 "addresses": [{"type": "InternalIP", "address": "192.168.10.30"}]}})
    nodes = table_of(emu, "/api/v1/nodes?fieldSelector=metadata.name%3Dtable-node")
    assert nodes["kind"] == "Table" and nodes["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in nodes["columnDefinitions"] if c["priority"] == 0] == ["Name", "Status", "Roles", "Age", "Version"]
    [row] = nodes["rows"]
    assert row["cells"][:3] == ["table-node", "Ready,SchedulingDisabled", "worker"] and row["cells"][4] == "v1.29.6"
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "table-node"
    code, out, err = kubectl("get", "node", "table-node", "-o", "wide")
    assert code == 0, err
    header, line = out.splitlines()
    assert header.split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"] and "INTERNAL-IP" in header
    assert line.split()[:3] == ["table-node", "Ready,SchedulingDisabled", "worker"] and "192.168.10.30" in line
    custom.create_cluster_custom_object(*EIP, egressip("eip-table", ["192.168.20.40", "192.168.20.41"]))
    custom.patch_cluster_custom_object(*EIP, "eip-table", {"status": {"items": [{"node": "table-node", "egressIP": "192.168.20.41"}]}})
    eips = table_of(emu, "/apis/k8s.ovn.org/v1/egressips/eip-table")
    assert [c["name"] for c in eips["columnDefinitions"]] == ["Name", "EgressIPs", "Assigned Node", "Assigned EgressIPs"]
    # the tableconvertor prints the first JSONPath result of each column
    assert eips["rows"][0]["cells"] == ["eip-table", "192.168.20.40", "table-node", "192.168.20.41"]
    code, out, err = kubectl("get", "egressip", "eip-table")
    assert code == 0, err
    assert out.splitlines()[0].split() == ["NAME", "EGRESSIPS", "ASSIGNED", "NODE", "ASSIGNED", "EGRESSIPS"]
    assert out.splitlines()[1].split() == ["eip-table", "192.168.20.40", "table-node", "192.168.20.41"]
