"""NetworkManager on carrier loss of a secondary vNIC (DOMAIN.md sections 6 and 7), and the wire's VLAN blackhole.

remove (default, no `ignore-carrier`): LINK_DISCONNECT_DELAY seconds after the carrier went, the device is
deactivated: its address leaves NodeNetworkState and host-cidrs, and the cluster manager moves the egress IP.
keep (`ignore-carrier`): the address stays, nothing moves, the wire answers no source (blackhole). Either way the
address is back when the carrier returns (autoconnect), and the IP does not move back (no failback).
"""

import json

import pytest

from twin.controllers import hostnet
from twin.controllers.cluster_manager import NETWORK_OPERATOR
from twin.controllers.testing import FakeCluster

IP = "10.20.0.200"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture(name="clock")
def clock_fixture():
    clock = Clock()
    yield clock
    hostnet.configure_carrier()  # back to the default for the other self-tests


def _cluster(clock, mode):
    hostnet.configure_carrier(mode, delay=4.0, clock=clock)
    cluster = FakeCluster()
    first, second = cluster.workers()[:2]
    cluster.secondary(first, "10.20.0.11")
    cluster.secondary(second, "10.20.0.12")
    cluster.label_egress(first, second)
    cluster.store.patch(NETWORK_OPERATOR, "cluster", {"spec": {"defaultNetwork": {"ovnKubernetesConfig": {
        "gatewayConfig": {"ipForwarding": "Global"}}}}})
    cluster.create_egressip("eip", [IP], namespace_labels={"team": "a"})
    cluster.namespace("app", {"team": "a"})
    cluster.settle(probe=True)
    return cluster


def _host_cidrs(cluster, node):
    return json.loads(cluster.node(node)["metadata"]["annotations"]["k8s.ovn.org/host-cidrs"])


def _nns_interface(cluster, node, mac):
    state = cluster.store.get("nodenetworkstates.nmstate.io", node)["status"]["currentState"]
    return next(item for item in state["interfaces"] if item.get("mac-address", "").upper() == mac.upper())


def _disconnect(cluster, node, connected=False):
    nic = cluster.vm(node)["nics"][1]
    nic["connected"] = connected
    return nic["mac"]


def _wire(cluster, name):
    cluster.pod("app", name)
    cluster.settle()
    return cluster.runner.wire("app", name)


def test_remove_takes_the_address_after_the_delay_and_the_ip_moves(clock):
    cluster = _cluster(clock, "remove")
    holder = cluster.assignments("eip")[IP]
    mac = _disconnect(cluster, holder)
    cluster.settle(probe=True)
    assert "10.20.0.1%d/24" % (cluster.workers().index(holder) + 1) in _host_cidrs(cluster, holder)  # within the delay
    assert cluster.assignments("eip") == {IP: holder}
    clock.now += 4.0
    cluster.settle(probe=True)
    assert not any(entry.startswith("10.20.0.") for entry in _host_cidrs(cluster, holder))
    interface = _nns_interface(cluster, holder, mac)
    assert interface["state"] == "down" and interface["ipv4"] == {"enabled": False}
    other = cluster.assignments("eip")[IP]
    assert other != holder  # a failover, not a blackhole
    assert _wire(cluster, "after")["source_ip"] == IP


def test_remove_restores_the_address_when_the_carrier_returns_without_failback(clock):
    cluster = _cluster(clock, "remove")
    holder = cluster.assignments("eip")[IP]
    address = "10.20.0.1%d/24" % (cluster.workers().index(holder) + 1)
    _disconnect(cluster, holder)
    cluster.settle()
    clock.now += 5.0
    cluster.settle(probe=True)
    moved_to = cluster.assignments("eip")[IP]
    _disconnect(cluster, holder, connected=True)
    cluster.settle(probe=True)
    assert address in _host_cidrs(cluster, holder)  # autoconnect
    assert cluster.assignments("eip") == {IP: moved_to}  # no failback


def test_keep_leaves_the_address_and_the_ip_is_blackholed(clock):
    cluster = _cluster(clock, "keep")
    holder = cluster.assignments("eip")[IP]
    address = "10.20.0.1%d/24" % (cluster.workers().index(holder) + 1)
    mac = _disconnect(cluster, holder)
    cluster.settle()
    clock.now += 60.0
    cluster.settle(probe=True)
    assert address in _host_cidrs(cluster, holder)
    interface = _nns_interface(cluster, holder, mac)
    assert interface["state"] == "down" and interface["ipv4"]["address"][0]["ip"] == address.split("/")[0]
    assert cluster.assignments("eip") == {IP: holder}
    seen = _wire(cluster, "p")
    assert seen["source_ip"] is None and "disconnected" in seen["reason"]
    _disconnect(cluster, holder, connected=True)
    assert _wire(cluster, "q")["source_ip"] == IP


def test_configure_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="remove, keep"):
        hostnet.configure_carrier("ignore")


def test_vlan_other_than_on_the_other_hosts_is_a_blackhole(clock):
    cluster = _cluster(clock, "remove")
    holder = cluster.assignments("eip")[IP]
    host = cluster.vm(holder)["host"]
    portgroup = next(pg for h in cluster.inventory["hosts"] if h["name"] == host for pg in h["portgroups"]
                     if pg["name"] == "secondary-pg")
    portgroup["vlan"] = 30
    seen = _wire(cluster, "p")
    assert seen["source_ip"] is None and "VLAN 30 on host %s" % host in seen["reason"] and "VLAN 20 on the other hosts" in seen["reason"]
    assert cluster.assignments("eip") == {IP: holder}  # OVN-K does not notice
