"""The dual-stack twin (`--dual-stack`): seed, NMState applying IPv6, the ovnkube-node annotations, IPv6 egress IP
placement by the rules of IPv4, IP forwarding per family and the wire over IPv6 (tests/twin/README.md "Dual stack")."""

import json

import pytest

from twin.controllers import wire
from twin.controllers.cluster_manager import NETWORK_OPERATOR
from twin.controllers.inventory import Inventory
from twin.controllers.nmstate import NNCP, NNS
from twin.controllers.ovnkube_node import HOST_CIDRS, PRIMARY_IFADDR, SECONDARY_EGRESS_IPS
from twin.controllers.testing import FakeCluster, TunedClock
from twin.controllers import tuned
from twin.controllers.tuned import Forwarding, _with_sysctls

IPV4, IPV6 = "10.20.0.200", "fd00:20::200"
ECHO4 = ["curl", "-s", "--max-time", "5", "http://192.0.2.10:8080"]
ECHO6 = ["curl", "-s", "--max-time", "5", "http://[2001:db8::10]:8080"]


def _route(cluster, node, mac, destination, gateway):
    link = cluster.gateway_route(node, mac, "10.20.0.11")["next-hop-interface"]
    return {"destination": destination, "next-hop-address": gateway, "next-hop-interface": link, "metric": 200, "table-id": 254}


def dual_secondary(cluster, node, host, prefix6=64, routes=True):
    """A secondary NIC with 10.20.0.<host>/24 and fd00:20::<host>/<prefix6>, a default route per family."""
    mac = cluster.add_nic(node)
    routes = [_route(cluster, node, mac, "0.0.0.0/0", "10.20.0.1"), _route(cluster, node, mac, "::/0", "fd00:20::1")] if routes else None
    cluster.secondary_policy(node, mac, "10.20.0.%d" % host, routes=routes, address6="fd00:20::%x" % host, prefix6=prefix6)
    return mac


@pytest.fixture(name="cluster")
def cluster_fixture():
    cluster = FakeCluster(dual_stack=True)
    for index, worker in enumerate(cluster.workers()[:2]):
        dual_secondary(cluster, worker, 11 + index)
    cluster.label_egress(*cluster.workers())
    cluster.settle()
    yield cluster
    FakeCluster()  # back to the default stack for the tests that follow in this process


def _annotations(cluster, node):
    return cluster.node(node)["metadata"].get("annotations") or {}


def test_seed_lists_both_families():
    cluster = FakeCluster(dual_stack=True)
    node = cluster.node(cluster.workers()[0])
    assert [a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP"] == ["192.168.10.14", "fd00:10::e"]
    assert node["spec"]["podCIDRs"][1].startswith("fd01:0:0:") and node["spec"]["podCIDRs"][1].endswith("::/64")
    config = cluster.store.get("networks.config.openshift.io", "cluster")["status"]
    assert [n["cidr"] for n in config["clusterNetwork"]] == ["10.128.0.0/14", "fd01::/48"]
    assert config["serviceNetwork"] == ["172.30.0.0/16", "fd02::/112"]
    single = FakeCluster()
    assert [a["address"] for a in single.node(single.workers()[0])["status"]["addresses"] if a["type"] == "InternalIP"] == ["192.168.10.14"]


def test_nmstate_applies_ipv6_and_reports_br_ex_in_both_families(cluster):
    worker = cluster.workers()[0]
    state = cluster.store.get(NNS, worker)["status"]["currentState"]
    ens224 = next(i for i in state["interfaces"] if i["name"] == "ens224")
    assert ens224["ipv4"]["address"] == [{"ip": "10.20.0.11", "prefix-length": 24}]
    assert ens224["ipv6"] == {"enabled": True, "dhcp": False, "autoconf": False, "address": [{"ip": "fd00:20::b", "prefix-length": 64}]}
    bridge = next(i for i in state["interfaces"] if i["name"] == "br-ex" and i["type"] == "ovs-interface")
    assert bridge["ipv6"]["address"] == [{"ip": "fd00:10::e", "prefix-length": 64}]
    running = [(r["destination"], r["next-hop-interface"], r["metric"]) for r in state["routes"]["running"]]
    assert ("::/0", "br-ex", 48) in running and ("::/0", "ens224", 200) in running and ("0.0.0.0/0", "ens224", 200) in running


def test_disabling_ipv6_removes_its_addresses_and_routes_only(cluster):
    worker = cluster.workers()[0]
    policy = cluster.store.get(NNCP, "egress-" + worker)
    iface = dict(policy["spec"]["desiredState"]["interfaces"][0], ipv6={"enabled": False})
    routes = [r for r in policy["spec"]["desiredState"]["routes"]["config"] if r["destination"] == "0.0.0.0/0"]
    cluster.store.patch(NNCP, "egress-" + worker, {"spec": {"desiredState": {"interfaces": [iface], "routes": {"config": routes}}}})
    cluster.settle()
    state = cluster.store.get(NNS, worker)["status"]["currentState"]
    ens224 = next(i for i in state["interfaces"] if i["name"] == "ens224")
    assert ens224["ipv6"] == {"enabled": False} and ens224["ipv4"]["address"] == [{"ip": "10.20.0.11", "prefix-length": 24}]
    assert [r["destination"] for r in state["routes"]["config"]] == ["0.0.0.0/0"]
    assert "fd00:20::b/64" not in json.loads(_annotations(cluster, worker)[HOST_CIDRS])


def test_annotations_carry_both_families(cluster):
    worker = cluster.workers()[0]
    annotations = _annotations(cluster, worker)
    assert json.loads(annotations[PRIMARY_IFADDR]) == {"ipv4": "192.168.10.14/24", "ipv6": "fd00:10::e/64"}
    assert json.loads(annotations[HOST_CIDRS]) == sorted(["192.168.10.14/24", "fd00:10::e/64", "10.20.0.11/24", "fd00:20::b/64"])


def test_ipv6_egress_ips_are_placed_by_the_ipv4_rules(cluster):
    workers = cluster.workers()
    cluster.create_egressip("eip", [IPV4, IPV6])
    cluster.settle()
    assignments = cluster.assignments("eip")
    assert set(assignments) == {IPV4, IPV6} and set(assignments.values()) == set(workers[:2])
    # worker-2 holds no address in either secondary subnet: never a candidate; the IPv6 IP sits on a secondary link
    holder = assignments[IPV6]
    assert json.loads(_annotations(cluster, holder)[SECONDARY_EGRESS_IPS]) == [IPV6]
    # an IPv6 egress IP in the primary IPv6 network is a primary-network IP (node-primary-ifaddr ipv6)
    cluster.create_egressip("primary", ["fd00:10::200"])
    cluster.settle()
    assert list(cluster.assignments("primary")) == ["fd00:10::200"]


def test_a_128_base_address_does_not_make_a_node_capable():
    cluster = FakeCluster(dual_stack=True)
    worker = cluster.workers()[0]
    dual_secondary(cluster, worker, 11, prefix6=128, routes=False)
    cluster.label_egress(worker)
    cluster.create_egressip("eip", [IPV6])
    cluster.settle()
    assert cluster.assignments("eip") == {}
    assert cluster.events("eip", "NoMatchingNodeFound")
    FakeCluster()


def test_the_wire_answers_over_ipv6_with_the_ipv6_egress_ip(cluster):
    cluster.create_egressip("eip", [IPV4, IPV6], namespace_labels={"team": "a"})
    cluster.namespace("app", {"team": "a"})
    cluster.store.patch(NETWORK_OPERATOR, "cluster", {"spec": {"defaultNetwork": {"ovnKubernetesConfig": {
        "gatewayConfig": {"ipForwarding": "Global"}}}}})
    cluster.settle()
    cluster.pod("app", "four", command=ECHO4)
    cluster.pod("app", "six", command=ECHO6)
    cluster.settle()
    assert cluster.store.get_log("app", "four") == IPV4
    assert cluster.store.get_log("app", "six") == IPV6
    # an EgressIP with no IPv6 egress IP: IPv6 traffic leaves with the node's IPv6 address
    cluster.create_egressip("v4only", ["10.20.0.201"], namespace_labels={"team": "b"})
    cluster.namespace("other", {"team": "b"})
    cluster.settle()
    cluster.pod("other", "six", command=ECHO6)
    cluster.settle()
    node = cluster.store.get("pods", "six", namespace="other")["spec"]["nodeName"]
    ipv6 = [a["address"] for a in cluster.node(node)["status"]["addresses"] if a["type"] == "InternalIP" and ":" in a["address"]]
    assert cluster.store.get_log("other", "six") == ipv6[0]


def test_ipv6_egress_traffic_needs_global_ipv6_forwarding_not_the_per_link_sysctl(cluster):
    """Linux forwards IPv6 only by net.ipv6.conf.all.forwarding (ip6_forward), which ovnkube-node sets on an IPv6 cluster."""
    cluster.create_egressip("eip", [IPV4, IPV6])
    cluster.settle()
    assignments = cluster.assignments("eip")
    inventory = Inventory(cluster.inventory)
    hosts = cluster.runner.nmstate.hosts([cluster.node(node) for node in cluster.workers()], inventory)
    holder6 = assignments[IPV6]
    item = {"egressIP": IPV6, "node": holder6}
    no_ipv6 = {holder6: Forwarding(interfaces={"ens224": True})}  # a node without IPv6 in ovnkube-node, no all switch
    seen = wire.through_egress_node(item, hosts, no_ipv6, inventory, "2001:db8::10")
    assert seen["source_ip"] is None and "net.ipv6.conf.all.forwarding is 0" in seen["reason"]
    per_link_only = {holder6: Forwarding(interfaces6={"ens224": True})}
    assert wire.through_egress_node(item, hosts, per_link_only, inventory, "2001:db8::10")["source_ip"] is None
    ovnkube = {holder6: Forwarding(ipv6_mode=True, interfaces6={"ens224": False})}
    seen = wire.through_egress_node(item, hosts, ovnkube, inventory, "2001:db8::10")
    assert seen["source_ip"] == IPV6 and "net.ipv6.conf.all.forwarding=1 of ovnkube-node" in seen["reason"]
    switched_off = {holder6: Forwarding(ipv6_mode=True, all_interfaces6=False, interfaces6={"ens224": True})}
    assert wire.through_egress_node(item, hosts, switched_off, inventory, "2001:db8::10")["source_ip"] is None
    assert Forwarding(all_interfaces6=True).is_on("ens224", 6) and not Forwarding(all_interfaces=True).is_on("ens224", 6)
    assert Forwarding(global_forwarding=True).is_on("ens224", 6)


def test_tuned_ipv6_forwarding_sysctls():
    forwarding = _with_sysctls(Forwarding(), {"net.ipv6.conf.ens224.forwarding": "1", "net.ipv4.conf.ens224.forwarding": "0"})
    assert not forwarding.is_on("ens224", 4) and not forwarding.is_on("ens224", 6) and forwarding.router_mode6("ens224")
    assert _with_sysctls(Forwarding(), {"net/ipv6/conf/all/forwarding": "1"}).is_on("ens256", 6)
    assert not _with_sysctls(Forwarding(ipv6_mode=True), {"net.ipv6.conf.all.forwarding": "0"}).is_on("ens224", 6)


def _tuned_for(workers, sysctls):
    data = "[main]\ninclude=openshift-node\n[sysctl]\n" + "".join("%s\n" % line for line in sysctls)
    return {"apiVersion": "tuned.openshift.io/v1", "kind": "Tuned", "metadata": {"name": "egress-forwarding", "namespace": tuned.NAMESPACE},
            "spec": {"profile": [{"name": "egress-fw", "data": data}],
                     "recommend": [{"profile": "egress-fw", "priority": 20,
                                    "match": [{"label": "kubernetes.io/hostname", "value": worker} for worker in workers]}]}}


def _echo_pair(cluster, suffix):
    """The sources an IPv4 and an IPv6 echo target see for two new pods of namespace app (or None: the curl timed out)."""
    cluster.pod("app", "four" + suffix, command=ECHO4)
    cluster.pod("app", "six" + suffix, command=ECHO6)
    cluster.settle()
    seen = [cluster.store.get_log("app", name + suffix) for name in ("four", "six")]
    return [text if text in (IPV4, IPV6) else None for text in seen]


def test_the_applied_profile_drives_the_wire_per_family(cluster):
    """Through the store: TuneD applies the profile after its delay; IPv4 follows the per-link sysctl, IPv6 the all switch."""
    clock = TunedClock(cluster)
    cluster.create_egressip("eip", [IPV4, IPV6], namespace_labels={"team": "a"})
    cluster.namespace("app", {"team": "a"})
    cluster.settle()
    # the stock profile: no IPv4 forwarding on ens224 (a blackhole), IPv6 forwarded by ovnkube-node's all switch
    assert _echo_pair(cluster, "-stock") == [None, IPV6]
    workers = cluster.workers()[:2]
    cluster.store.create(tuned.RESOURCE, _tuned_for(workers, ["net.ipv4.conf.ens224.forwarding=1", "net.ipv6.conf.all.forwarding=0"]))
    assert _echo_pair(cluster, "-early") == [None, IPV6]  # TuneD has not applied it yet
    clock.advance(tuned.DEFAULT_DELAY)
    cluster.settle()
    assert _echo_pair(cluster, "-applied") == [IPV4, None]
    applied = cluster.runner.tuned.forwarding([cluster.node(worker) for worker in workers], None)
    assert all(applied[worker].is_on("ens224", 4) and not applied[worker].is_on("ens224", 6) for worker in workers)
