"""The twin's RBAC authorizer against the real clients: the `kubernetes` package and `kubectl` (auth can-i, get).

Tokens minted by /_twin/tokens are authorized by the Roles/ClusterRoles and bindings in the store, as the
apiserver's RBAC authorizer does (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac); the admin token stays
all-powerful. Messages are compared with the exact text k8s.io/apiserver responsewriters.Forbidden sends.
"""

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from kubernetes import client, config  # noqa: E402

from twin.kube import authz  # noqa: E402
from _kube import KUBECTL, NO_KUBECTL, failure  # noqa: E402

RBAC = "rbac.authorization.k8s.io"
SA_USER = "system:serviceaccount:ops:runner"


# emu, api: conftest.py

@pytest.fixture(scope="module")
def admin(api):
    """The client on the emulator's admin token, which RBAC never restricts."""
    return api


@pytest.fixture(scope="module")
def roles(emu, admin):
    """ClusterRole reader (nodes list, pods/log get, egressips named 'a' get, */status get), bound to the SA cluster-wide;
    ClusterRole cm-writer bound by a RoleBinding in namespace ops only; a RoleBinding to a ClusterRole that does not exist."""
    custom = client.CustomObjectsApi(admin)
    core = client.CoreV1Api(admin)
    for name in ("ops", "other"):
        core.create_namespace({"metadata": {"name": name}})
    custom.create_cluster_custom_object(RBAC, "v1", "clusterroles", {"metadata": {"name": "reader"}, "rules": [
        {"verbs": ["list"], "apiGroups": [""], "resources": ["nodes"]},
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]},
        {"verbs": ["get"], "apiGroups": ["k8s.ovn.org"], "resources": ["egressips"], "resourceNames": ["a"]},
        {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*/status"]},
        {"verbs": ["get"], "nonResourceURLs": ["/metrics/*"]}]})
    custom.create_cluster_custom_object(RBAC, "v1", "clusterroles", {"metadata": {"name": "cm-writer"}, "rules": [
        {"verbs": ["*"], "apiGroups": [""], "resources": ["configmaps"]}]})
    subjects = [{"kind": "ServiceAccount", "name": "runner", "namespace": "ops"}]
    custom.create_cluster_custom_object(RBAC, "v1", "clusterrolebindings", {
        "metadata": {"name": "reader"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "reader"}, "subjects": subjects})
    custom.create_namespaced_custom_object(RBAC, "v1", "ops", "rolebindings", {
        "metadata": {"name": "cm"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "cm-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner"}]})  # the binding's namespace is the SA's
    custom.create_namespaced_custom_object(RBAC, "v1", "other", "rolebindings", {
        "metadata": {"name": "dangling"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "gone"}, "subjects": subjects})
    return emu.token_kubeconfig(emu.state_dir + "/runner.kubeconfig", serviceaccount="ops/runner")


@pytest.fixture(scope="module")
def runner(roles):
    return config.new_client_from_config(config_file=roles)


def test_a_request_no_rule_allows_is_403_with_the_apiservers_message(runner):
    status, body = failure(client.CoreV1Api(runner).list_namespaced_pod, "ops")
    assert status == 403 and body["reason"] == "Forbidden" and body["details"] == {"kind": "pods"}
    assert body["message"] == 'pods is forbidden: User "%s" cannot list resource "pods" in API group "" in the namespace "ops"' % SA_USER
    status, body = failure(client.CustomObjectsApi(runner).get_cluster_custom_object, "k8s.ovn.org", "v1", "egressips", "b")
    assert status == 403 and body["details"] == {"kind": "egressips", "group": "k8s.ovn.org", "name": "b"}
    assert body["message"] == ('egressips.k8s.ovn.org "b" is forbidden: User "%s" cannot get resource "egressips" in API group '
                               '"k8s.ovn.org" at the cluster scope' % SA_USER)


def test_rules_allow_by_verb_resource_subresource_and_name(runner, admin):
    client.CoreV1Api(admin).create_node({"metadata": {"name": "n1"}})
    core = client.CoreV1Api(runner)
    assert [n.metadata.name for n in core.list_node().items] == ["n1"]
    status, body = failure(core.read_node, "n1")  # list does not grant get
    assert status == 403 and 'cannot get resource "nodes" in API group "" at the cluster scope' in body["message"]
    assert core.read_node_status("n1").metadata.name == "n1"  # */status in any group
    status, _body = failure(core.read_namespaced_pod_log, "p", "ops")  # allowed: the pod does not exist
    assert status == 404
    custom = client.CustomObjectsApi(runner)
    status, _body = failure(custom.get_cluster_custom_object, "k8s.ovn.org", "v1", "egressips", "a")
    assert status == 404  # resourceNames: 'a' is allowed, so the request reaches the store


def test_a_rolebinding_grants_only_in_its_namespace_and_a_missing_role_is_the_reason(runner):
    core = client.CoreV1Api(runner)
    core.create_namespaced_config_map("ops", {"metadata": {"name": "c"}})
    status, body = failure(core.create_namespaced_config_map, "other", {"metadata": {"name": "c"}})
    assert status == 403
    assert body["message"] == ('configmaps is forbidden: User "%s" cannot create resource "configmaps" in API group "" in the '
                               'namespace "other": RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found' % SA_USER)


def test_access_and_rules_reviews_answer_from_the_same_rules(runner, admin):
    api = client.AuthorizationV1Api(runner)
    review = api.create_self_subject_access_review({"spec": {"resourceAttributes": {"verb": "list", "resource": "nodes"}}})
    assert review.status.allowed and review.status.reason == \
        'RBAC: allowed by ClusterRoleBinding "reader" of ClusterRole "reader" to ServiceAccount "runner/ops"'
    review = api.create_self_subject_access_review({"spec": {"resourceAttributes": {
        "verb": "delete", "resource": "configmaps", "namespace": "ops", "name": "c"}}})
    assert review.status.allowed and review.status.reason.startswith('RBAC: allowed by RoleBinding "cm/ops" of ClusterRole "cm-writer"')
    review = api.create_self_subject_access_review({"spec": {"resourceAttributes": {"verb": "patch", "resource": "nodes"}}})
    assert review.status.allowed is False and not review.status.reason
    review = api.create_self_subject_access_review({"spec": {"nonResourceAttributes": {"verb": "get", "path": "/metrics/x"}}})
    assert review.status.allowed
    rules = api.create_self_subject_rules_review({"spec": {"namespace": "ops"}}).status
    assert {"verbs": ["*"], "api_groups": [""], "resources": ["configmaps"], "resource_names": None} in [r.to_dict() for r in rules.resource_rules]
    other = api.create_self_subject_rules_review({"spec": {"namespace": "other"}}).status
    assert "configmaps" not in [res for r in other.resource_rules for res in r.resources]
    assert other.evaluation_error == 'clusterrole.rbac.authorization.k8s.io "gone" not found'
    status, body = failure(api.create_self_subject_rules_review, {"spec": {}})
    assert status == 400 and body["message"] == "no namespace on request"
    admin_review = client.AuthorizationV1Api(admin).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "patch", "resource": "nodes"}}})
    assert admin_review.status.allowed  # the admin token stays all-powerful


def test_non_resource_paths_need_a_rule_and_discovery_is_bound_to_everyone(emu, roles):
    with open(roles) as handle:
        token = json.load(handle)["users"][0]["user"]["token"]
    assert emu.raw("GET", "/apis", token=token)[0] == 200  # system:discovery
    status, _headers, payload = emu.raw("GET", "/metrics", token=token)
    assert status == 403 and json.loads(payload)["message"] == 'forbidden: User "%s" cannot get path "/metrics"' % SA_USER
    assert emu.raw("GET", "/_twin/requests", token=token)[0] == 401  # the twin-only endpoints take the admin token only
    assert [e["user"] for e in emu.twin("GET", "/_twin/requests")[1]["requests"] if e["path"] == "/metrics"] == [SA_USER]


def test_rule_allows_follows_evaluation_helpers():
    attrs = authz.Attributes("get", group="apps", resource="deployments", subresource="scale", name="d", namespace="n")
    assert authz.rule_allows(attrs, {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
    assert authz.rule_allows(attrs, {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["*/scale"]})
    assert not authz.rule_allows(attrs, {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]})
    assert not authz.rule_allows(attrs, {"verbs": ["get"], "apiGroups": [""], "resources": ["deployments/scale"]})
    assert not authz.rule_allows(attrs, {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments/scale"], "resourceNames": ["e"]})
    path = authz.Attributes("get", resource_request=False, path="/apis/apps/v1")
    assert authz.rule_allows(path, {"verbs": ["get"], "nonResourceURLs": ["/apis/*"]})
    assert not authz.rule_allows(path, {"verbs": ["get"], "nonResourceURLs": ["/apis"]})
    assert not authz.rule_allows(path, {"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]})  # resource rules never match paths


@pytest.mark.skipif(not KUBECTL, reason=NO_KUBECTL)
def test_kubectl_auth_can_i_and_forbidden_output(roles, tmp_path):
    env = dict(os.environ, KUBECONFIG=roles, HOME=str(tmp_path))

    def kubectl(*args):
        done = subprocess.run([KUBECTL, "--request-timeout=20s"] + list(args), env=env, capture_output=True, text=True, timeout=60, check=False)
        return done.returncode, done.stdout.strip(), done.stderr.strip()
    assert kubectl("auth", "can-i", "list", "nodes")[:2] == (0, "yes")
    code, out, _err = kubectl("auth", "can-i", "delete", "nodes")
    assert code == 1 and out == "no"
    assert kubectl("auth", "can-i", "create", "configmaps", "-n", "ops")[:2] == (0, "yes")
    assert kubectl("auth", "can-i", "create", "configmaps", "-n", "other")[:2] == (1, 'no - RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found')
    code, out, _err = kubectl("auth", "can-i", "--list", "-n", "ops")
    assert code == 0 and "configmaps" in out and "nodes" in out, out
    code, _out, err = kubectl("get", "pods", "-n", "ops")
    assert code == 1 and err == ('Error from server (Forbidden): pods is forbidden: User "%s" cannot list resource "pods" in API '
                                 'group "" in the namespace "ops"' % SA_USER), err


@pytest.fixture(scope="module")
def impersonation(emu, admin, roles):
    """ClusterRole impersonator (impersonate users alice, groups ops), bound to the SA; alice may list nodes via group ops."""
    custom = client.CustomObjectsApi(admin)
    custom.create_cluster_custom_object(RBAC, "v1", "clusterroles", {"metadata": {"name": "impersonator"}, "rules": [
        {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"], "resourceNames": ["alice"]},
        {"verbs": ["impersonate"], "apiGroups": [""], "resources": ["groups"], "resourceNames": ["ops"]}]})
    custom.create_cluster_custom_object(RBAC, "v1", "clusterrolebindings", {
        "metadata": {"name": "impersonator"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "impersonator"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": "ops"}]})
    custom.create_cluster_custom_object(RBAC, "v1", "clusterrolebindings", {
        "metadata": {"name": "ops-read-nodes"}, "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": "reader"},
        "subjects": [{"kind": "Group", "name": "ops", "apiGroup": RBAC}]})
    return roles


def _kubectl(kubeconfig, *args):
    return subprocess.run([KUBECTL, "--kubeconfig", kubeconfig] + list(args), capture_output=True, text=True, check=False)


def _acting_as(kubeconfig, user=None, groups=()):
    api = config.new_client_from_config(config_file=kubeconfig)
    if user:
        api.default_headers["Impersonate-User"] = user
    if groups:
        api.default_headers["Impersonate-Group"] = groups[0]  # one group: urllib3 sends one header per key
    return client.CoreV1Api(api)


def test_impersonation_needs_the_impersonate_verb_for_each_part(impersonation):
    """The impersonation filter (k8s.io/apiserver/pkg/endpoints/filters/impersonation.go): 403 naming the first part refused."""
    status, body = failure(_acting_as(impersonation, "bob").list_node)
    assert status == 403 and body["message"] == (
        'users "bob" is forbidden: User "%s" cannot impersonate resource "users" in API group "" at the cluster scope' % SA_USER)
    status, body = failure(_acting_as(impersonation, "alice", ["admins"]).list_node)
    assert status == 403 and body["message"].startswith(
        'groups "admins" is forbidden: User "%s" cannot impersonate resource "groups"' % SA_USER)
    # alice alone has no rule that lists nodes: the request itself is then authorized as alice
    status, body = failure(_acting_as(impersonation, "alice").list_node)
    assert status == 403 and 'User "alice" cannot list resource "nodes"' in body["message"]
    status, body = failure(_acting_as(impersonation, groups=["ops"]).list_node)
    assert status == 500 and "requested groups without impersonating a user" in body["message"]


@pytest.mark.skipif(not KUBECTL, reason="needs kubectl (Debian's kubernetes-client)")
def test_kubectl_as_and_as_group_act_as_that_user(emu, impersonation):
    grouped = _kubectl(impersonation, "get", "nodes", "--as", "alice", "--as-group", "ops", "-o", "name")
    assert grouped.returncode == 0 and grouped.stdout.startswith("node/"), grouped.stderr
