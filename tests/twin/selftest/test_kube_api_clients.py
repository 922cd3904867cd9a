"""The emulator against real clients nobody here wrote: `kubectl` and the `kubernetes` Python package.

kubectl is Debian 12's `kubernetes-client` (1.20) as scripts/bootstrap.sh installs it, or any `kubectl` on
PATH (TWIN_KUBECTL names another binary). These tests skip only when no kubectl is installed.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from kubernetes import client, config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from twin.kube.testing import Emulator  # noqa: E402

EIP = ("k8s.ovn.org", "v1", "egressips")
KUBECTL = os.environ.get("TWIN_KUBECTL") or shutil.which("kubectl")
NO_KUBECTL = "kubectl is not installed (scripts/bootstrap.sh installs Debian's kubernetes-client)"


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    emulator = Emulator(tmp_path_factory.mktemp("kube"), "--no-controllers")
    yield emulator
    assert emulator.stop() == 0


@pytest.fixture(scope="module")
def api(emu):
    return config.new_client_from_config(config_file=emu.kubeconfig)


@pytest.fixture(scope="module")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="module")
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture
def kubectl(emu, tmp_path):
    """Run kubectl against the emulator: (exit status, stdout, stderr); `stdin` text is sent as the input."""
    if not KUBECTL:
        pytest.skip(NO_KUBECTL)
    env = dict(os.environ, KUBECONFIG=emu.kubeconfig, HOME=str(tmp_path))

    def run(*args, stdin=None):
        done = subprocess.run([KUBECTL, "--request-timeout=20s"] + list(args), input=stdin, env=env, capture_output=True,
                              text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr
    return run


def failure(call, *args, **kwargs):
    with pytest.raises(ApiException) as info:
        call(*args, **kwargs)
    return info.value.status, json.loads(info.value.body)


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
    code, out, err = kubectl("replace", "--validate=false", "-f", str(manifest))
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
