"""The controller loop: background rounds on store changes and probe ticks, start/stop, the vcsim reader."""

import http.server
import json
import ssl
import threading
import time

import pytest

from twin.controllers import start
from twin.controllers.inventory import HttpInventory, StaticInventory
from twin.controllers.testing import FakeCluster
from twin.kube.tls import make_certificates

IP = "10.20.0.200"


def _wait(predicate, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


@pytest.fixture(name="running")
def running_fixture():
    cluster = FakeCluster(probe_interval=0.1)
    cluster.runner.start()
    yield cluster
    cluster.runner.stop()


def test_background_loop_reacts_to_store_changes(running):
    worker = running.workers()[0]
    running.secondary(worker, "10.20.0.11")
    running.label_egress(worker)
    running.create_egressip("eip", [IP])
    assert _wait(lambda: running.assignments("eip") == {IP: worker})


def test_unreachable_node_fails_over_on_the_probe_tick(running):
    for index, worker in enumerate(running.workers()[:2]):
        running.secondary(worker, "10.20.0.%d" % (11 + index))
    running.label_egress(*running.workers()[:2])
    running.create_egressip("eip", [IP])
    assert _wait(lambda: running.assignments("eip").get(IP) is not None)
    before = running.assignments("eip")[IP]
    running.runner.set_reachable(before, False)
    assert _wait(lambda: running.assignments("eip").get(IP) not in (None, before))


def test_a_quiet_cluster_is_not_rewritten(running):
    running.secondary(running.workers()[0], "10.20.0.11")
    assert _wait(lambda: "10.20.0.11/24" in running.node(running.workers()[0])["metadata"].get("annotations", {}).get(
        "k8s.ovn.org/host-cidrs", ""))
    time.sleep(0.3)
    version = running.store.resource_version()
    time.sleep(0.5)
    assert running.store.resource_version() == version


def test_vcsim_changes_are_picked_up_on_the_tick(running):
    worker = running.workers()[0]
    running.add_nic(worker)
    assert _wait(lambda: "ens224" in json.dumps(running.store.get("nodenetworkstates.nmstate.io", worker)))


def test_settle_reports_a_cluster_that_never_settles():
    cluster = FakeCluster()
    cluster.runner.reconcile_once = lambda probe=None: 1
    with pytest.raises(TimeoutError):
        cluster.runner.settle(timeout=0.05)


def test_start_without_vcsim_serves_an_empty_vcenter():
    cluster = FakeCluster()
    runner = start(cluster.store, vcsim_url=None, probe_interval=0.05)
    try:
        assert _wait(lambda: cluster.store.get("nodenetworkstates.nmstate.io", cluster.workers()[0]) is not None)
    finally:
        runner.stop()


def test_http_inventory_reads_vcsim_over_self_signed_tls(tmp_path):
    certs = make_certificates(str(tmp_path))
    document = {"hosts": [], "dvs": [], "vms": [{"name": "vm1", "uuid": "u"}]}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # pylint: disable=invalid-name
            body = json.dumps(document if self.path == "/_twin/inventory" else {}).encode()
            self.send_response(200 if self.path == "/_twin/inventory" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs["cert_file"], certs["key_file"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        reader = HttpInventory("https://127.0.0.1:%d/sdk" % server.server_address[1])
        assert reader() == document
    finally:
        server.shutdown()
        server.server_close()


def test_inventory_outage_keeps_the_last_inventory():
    cluster = FakeCluster()
    cluster.settle()
    calls = {"n": 0}
    good = StaticInventory(cluster.inventory)

    def flaky():
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError("connection refused")
        return good()

    cluster.runner.inventory_source = flaky
    cluster.runner.reconcile_once()
    cluster.runner.reconcile_once()
    state = cluster.store.get("nodenetworkstates.nmstate.io", cluster.workers()[0])
    assert any(i["name"] == "ens192" for i in state["status"]["currentState"]["interfaces"])
