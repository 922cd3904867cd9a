"""Self-tests of coordination.k8s.io/v1 Lease in the emulator, through the real kubernetes client and kubectl.

What is pinned (tests/twin/FIDELITY.md, Kubernetes API server, Lease): discovery, LeaseList, MicroTime in
and out (RFC3339 with six fraction digits, UTC), create 409 AlreadyExists, PUT with a stale resourceVersion
409 Conflict, PUT without resourceVersion 422, PUT of a missing Lease creates it, ValidateLeaseSpec.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from kubernetes import client  # noqa: E402

from _kube import failure  # noqa: E402

NS = "lease-selftest"
UTC = datetime.timezone.utc


# emu, api, core: conftest.py

@pytest.fixture(scope="module")
def coordination(api, core):
    core.create_namespace({"metadata": {"name": NS}})
    return client.CoordinationV1Api(api)


def lease_body(name, holder="writer-a", duration=15, **spec):
    moment = datetime.datetime(2026, 12, 1, 19, 0, 0, 123456, tzinfo=UTC)
    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration,
                     "acquireTime": moment, "renewTime": moment, "leaseTransitions": 0}}
    body["spec"].update(spec)
    return body


def test_discovery_lists_leases(emu):
    status, _headers, payload = emu.raw("GET", "/apis/coordination.k8s.io/v1")
    assert status == 200
    resources = {r["name"]: r for r in json.loads(payload)["resources"]}
    assert resources["leases"]["kind"] == "Lease" and resources["leases"]["namespaced"] is True
    assert set(resources["leases"]["verbs"]) >= {"create", "get", "list", "update", "patch", "delete", "watch"}
    status, _headers, payload = emu.raw("GET", "/apis")
    assert "coordination.k8s.io" in [g["name"] for g in json.loads(payload)["groups"]]


def test_create_read_and_list_with_micro_times(emu, coordination):
    created = coordination.create_namespaced_lease(NS, lease_body("one"))
    assert created.spec.holder_identity == "writer-a"
    assert created.spec.renew_time == datetime.datetime(2026, 12, 1, 19, 0, 0, 123456, tzinfo=UTC)
    spec = json.loads(emu.raw("GET", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/one" % NS)[2])["spec"]
    assert spec["renewTime"] == "2026-12-01T19:00:00.123456Z"
    listed = coordination.list_namespaced_lease(NS)
    assert listed.kind == "LeaseList" and [item.metadata.name for item in listed.items] == ["one"]


def test_create_twice_is_already_exists(coordination):
    coordination.create_namespaced_lease(NS, lease_body("twice"))
    status, body = failure(coordination.create_namespaced_lease, NS, lease_body("twice", holder="writer-b"))
    assert (status, body["reason"]) == (409, "AlreadyExists")
    assert body["message"] == 'leases.coordination.k8s.io "twice" already exists'
    assert coordination.read_namespaced_lease("twice", NS).spec.holder_identity == "writer-a"


def test_update_with_a_stale_resource_version_is_a_conflict(coordination):
    lease = coordination.create_namespaced_lease(NS, lease_body("race"))
    first = coordination.read_namespaced_lease("race", NS)
    first.spec.holder_identity = "writer-b"
    coordination.replace_namespaced_lease("race", NS, first)
    lease.spec.holder_identity = "writer-c"  # still carries the resourceVersion of the create
    status, body = failure(coordination.replace_namespaced_lease, "race", NS, lease)
    assert (status, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]
    assert coordination.read_namespaced_lease("race", NS).spec.holder_identity == "writer-b"


def test_update_without_resource_version_is_invalid_and_put_creates(coordination, emu):
    coordination.create_namespaced_lease(NS, lease_body("norv"))
    body = lease_body("norv", holder="writer-b")
    body["spec"] = {k: v.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if isinstance(v, datetime.datetime) else v for k, v in body["spec"].items()}
    status, _headers, payload = emu.raw("PUT", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/norv" % NS, body)
    assert status == 422 and "must be specified for an update" in json.loads(payload)["message"]
    body["metadata"]["name"] = "created-by-put"
    status, _headers, payload = emu.raw("PUT", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/created-by-put" % NS, body)
    assert status == 201 and json.loads(payload)["spec"]["holderIdentity"] == "writer-b"


@pytest.mark.parametrize("field, value, message", [
    ("leaseDurationSeconds", 0, "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"),
    ("leaseDurationSeconds", -5, "spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0"),
    ("leaseTransitions", -1, "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"),
])
def test_validate_lease_spec(coordination, field, value, message):
    status, body = failure(coordination.create_namespaced_lease, NS, lease_body("bad-" + field.lower(), **{field: value}))
    assert (status, body["reason"]) == (422, "Invalid")
    assert message in body["message"]


@pytest.mark.parametrize("value", ["2026-12-01T19:00:00Z", "2026-12-01T19:00:00.123Z", "2026-12-01T19:00:00.123456", "yesterday"])
def test_micro_time_needs_six_fraction_digits_and_a_zone(emu, coordination, value):
    body = {"metadata": {"name": "badtime"}, "spec": {"holderIdentity": "x", "renewTime": value}}
    status, _headers, payload = emu.raw("POST", "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS, body)
    assert status == 400, payload
    assert '"2006-01-02T15:04:05.000000Z07:00"' in json.loads(payload)["message"]


def test_offsets_are_stored_in_utc_and_wrong_types_refused(emu, coordination):
    body = {"metadata": {"name": "offset"}, "spec": {"holderIdentity": "x", "renewTime": "2026-12-01T21:00:00.000001+02:00"}}
    status, _headers, payload = emu.raw("POST", "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS, body)
    assert status == 201 and json.loads(payload)["spec"]["renewTime"] == "2026-12-01T19:00:00.000001Z"
    body = {"metadata": {"name": "strduration"}, "spec": {"leaseDurationSeconds": "15"}}
    status, _headers, payload = emu.raw("POST", "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS, body)
    assert status == 400 and "int32" in json.loads(payload)["message"]


def test_unknown_spec_field_warns_and_is_dropped(emu, coordination):
    body = {"metadata": {"name": "unknown"}, "spec": {"holderIdentity": "x", "preferredHolder": "y"}}
    status, headers, payload = emu.raw("POST", "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS, body)
    assert status == 201 and 'unknown field \\"spec.preferredHolder\\"' in headers["Warning"]
    assert "preferredHolder" not in json.loads(payload)["spec"]


@pytest.mark.skipif(not shutil.which("kubectl"), reason="kubectl is not installed (scripts/bootstrap.sh installs it)")
def test_kubectl_applies_gets_and_deletes_a_lease(emu, coordination, tmp_path):
    manifest = tmp_path / "lease.yaml"
    manifest.write_text("apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: by-kubectl, namespace: %s}\n"
                        "spec: {holderIdentity: kubectl-user, leaseDurationSeconds: 30, renewTime: '2026-12-01T19:00:00.000000Z'}\n" % NS)
    env = dict(os.environ, KUBECONFIG=emu.kubeconfig)

    def kubectl(*args):
        return subprocess.run(["kubectl"] + list(args), env=env, capture_output=True, text=True, timeout=60, check=False)
    applied = kubectl("apply", "-f", str(manifest))
    assert applied.returncode == 0, applied.stderr
    got = kubectl("get", "lease", "by-kubectl", "-n", NS, "-o", "json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["spec"]["holderIdentity"] == "kubectl-user"
    manifest.write_text(manifest.read_text().replace("kubectl-user", "kubectl-other"))
    patched = kubectl("apply", "-f", str(manifest))
    assert patched.returncode == 0, patched.stderr
    assert coordination.read_namespaced_lease("by-kubectl", NS).spec.holder_identity == "kubectl-other"
    listed = kubectl("get", "leases", "-n", NS)
    assert listed.returncode == 0 and "by-kubectl" in listed.stdout, listed.stderr
    deleted = kubectl("delete", "lease", "by-kubectl", "-n", NS)
    assert deleted.returncode == 0, deleted.stderr
    assert kubectl("get", "lease", "by-kubectl", "-n", NS).returncode != 0
