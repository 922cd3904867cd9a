"""What an echo target off the cluster sees as the source of a pod's traffic (DOMAIN.md 3, 4, 6).

- No EgressIP selects the pod, or the one that does has nothing assigned: OVN SNATs to the
  address of the pod's node (br-ex).
- Host-networked pods: the node address; EgressIP does not apply (DOMAIN.md 5.8).
- Primary-network egress IP: OVN SNATs to the egress IP on the egress node's br-ex.
- Secondary-network egress IP: the egress node sends from the vNIC holding the subnet. That
  works only if the vNIC is connected, its port group exists on the ESXi host the VM runs on
  now with the VLAN the network has on the other hosts, the standard vSwitch of that port group
  there has a physical uplink whose link is up, the base address is applied and IP forwarding
  is on for that link, and the link's routes reach the destination through a gateway
  (without one, ovnkube-node's `default dev <link>` ARPs for the destination: dropped unless
  the router does proxy ARP, `configure_onlink`); otherwise the packets are dropped while the IP stays
  "assigned" (the blackhole of DOMAIN.md section 6). A disconnected vNIC is a blackhole only
  while the node keeps its address (NetworkManager `ignore-carrier`); without it the address
  goes and the cluster manager moves the IP (hostnet.CarrierPolicy).
- An EgressIP with several assigned IPs balances flows over its egress nodes (ECMP); the twin
  picks one per pod with a stable hash.
- Families: traffic to an IPv6 destination leaves with an egress IP of that family (OVN's SNAT and reroute are per
  family: an EgressIP with IPv4 and IPv6 IPs gives each family its own); with none of that family assigned, SNAT to the
  node's address of that family. An IPv6 egress IP needs the node's global IPv6 forwarding (`net.ipv6.conf.all.forwarding`,
  which ovnkube-node turns on on a cluster with IPv6; a profile may turn it off) or Global forwarding: Linux does not
  forward IPv6 per link (tuned.Forwarding).
  On a dual-stack twin an IPv6 echo target answers too (runner.DEFAULT_ECHO_TARGET_V6).
"""

import ipaddress
import zlib

from twin.kube.selectors import selector_matches

from . import k8s
from .selectors import namespace_labels


# Whether the router of the secondary subnet answers ARP for addresses off the subnet (proxy ARP): **unconfirmed**
# per site; off (the default) is what makes an on-link `default dev <link>` route drop the traffic (DOMAIN.md 4).
ONLINK = {"proxy_arp": False}


def configure_onlink(proxy_arp=False):
    """Set whether the secondary subnet's router answers ARP for off-subnet destinations (self-tests model both)."""
    ONLINK["proxy_arp"] = bool(proxy_arp)
    return dict(ONLINK)


def result(source_ip, via_node, egress_ip, reason):
    return {"source_ip": source_ip, "via_node": via_node, "egress_ip": egress_ip, "reason": reason}


def selecting_egressips(egressips, namespace, pod):
    """EgressIPs whose namespaceSelector (and podSelector, when set) select the pod, oldest first."""
    ns_labels, pod_labels = namespace_labels(namespace), k8s.labels_of(pod)
    chosen = []
    for egressip in sorted(egressips, key=lambda e: (e["metadata"].get("creationTimestamp") or "", k8s.name_of(e))):
        spec = egressip.get("spec") or {}
        if not selector_matches(spec.get("namespaceSelector"), ns_labels):
            continue
        if spec.get("podSelector") is not None and not selector_matches(spec.get("podSelector"), pod_labels):
            continue
        chosen.append(egressip)
    return chosen


def trace(pod, namespace, egressips, nodes, hosts, forwarding, inventory, destination=None):
    """The wire view of one pod: {"source_ip", "via_node", "egress_ip", "reason"}."""
    if pod is None:
        return result(None, None, None, "pod not found")
    node_name = (pod.get("spec") or {}).get("nodeName")
    node = nodes.get(node_name)
    if node is None or not (pod.get("status") or {}).get("podIP"):
        return result(None, None, None, "pod is not running on a node (no node or no pod IP yet)")
    target = k8s.parse_ip(destination) if destination else None
    version = target.version if target is not None else 4
    node_ip = k8s.node_internal_ip(node, version)
    if node_ip is None:
        return result(None, None, None, "node %s has no IPv%d address: no route to %s" % (node_name, version, destination))
    if (pod.get("spec") or {}).get("hostNetwork"):
        return result(node_ip, node_name, None, "host-networked pod: EgressIP does not apply, the node address is seen")
    matches = selecting_egressips(egressips, namespace or {"metadata": {"name": pod["metadata"].get("namespace")}}, pod)
    if not matches:
        return result(node_ip, node_name, None, "no EgressIP selects the pod: SNAT to the address of node %s" % node_name)
    egressip = matches[0]
    items = [item for item in (egressip.get("status") or {}).get("items") or []
             if (k8s.parse_ip(item.get("egressIP")) or target or ipaddress.ip_address("0.0.0.0")).version == version]
    if not items:
        return result(node_ip, node_name, None, "EgressIP %s has no assigned IPv%d egress IP: SNAT to the address of node %s"
                      % (k8s.name_of(egressip), version, node_name))
    key = "%s/%s" % (pod["metadata"].get("namespace"), pod["metadata"]["name"])
    item = items[zlib.crc32(key.encode()) % len(items)]
    return through_egress_node(item, hosts, forwarding, inventory, destination)


def _network(value):
    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError:
        return None


def route_problem(host, link, address, destination=None):
    """Why the egress IP's routing table on `link` cannot reach `destination` (an IP off the cluster), or None.

    ovnkube-node copies the link's main-table routes into the egress IP's table and adds `default dev <link>`
    when none of them is a default route (egressip.go generateRoutesForLink, ensureAtLeastOneDefaultRoute). The
    most specific route covering the destination decides: one through a gateway works; the on-link default makes
    the node ARP for the destination itself, which only a router with proxy ARP answers. `destination` None
    stands for an address off every subnet of the node.
    """
    target = k8s.parse_ip(destination) if destination else None
    subnet = address.network
    if target is not None and target in subnet:
        return None  # on the subnet itself: delivered on-link
    routes = []
    for route in host.routes:
        network = _network(route.get("destination"))
        if route.get("next-hop-interface") != link.name or network is None or network.version != subnet.version:
            continue
        if int(route.get("table-id") or 254) != 254:
            continue
        if (target is None and network.prefixlen == 0) or (target is not None and target in network):
            routes.append((network.prefixlen, route))
    best = max(routes, key=lambda item: item[0])[1] if routes else None
    if (best is not None and best.get("next-hop-address")) or ONLINK["proxy_arp"]:
        return None
    what = "its route to %s is on-link" % best.get("destination") if best is not None else (
        "it has no route via a gateway in the main table, so ovnkube-node adds `default dev %s`" % link.name)
    return "%s: the node ARPs for %s itself and no router answers" % (what, destination or "the destination")


def through_egress_node(item, hosts, forwarding, inventory, destination=None):
    """Source seen for traffic leaving through one status item {egressIP, node}."""
    egress_ip, via = item.get("egressIP"), item.get("node")
    address = k8s.parse_ip(egress_ip)
    host = hosts.get(via)
    if host is None or host.vm is None or address is None:
        return result(None, via, egress_ip, "blackhole: egress node %s has no VM in vCenter" % via)
    vm_name = host.vm.get("name")
    if host.vm.get("power_state") not in (None, "poweredOn"):
        return result(None, via, egress_ip, "blackhole: VM %s of egress node %s is %s" % (vm_name, via, host.vm.get("power_state")))
    if host.in_primary(address):
        primary = next((link for link in host.links if link.primary), None)
        if primary is None or not primary.connected:
            return result(None, via, egress_ip, "blackhole: primary vNIC of VM %s is disconnected" % vm_name)
        return result(egress_ip, via, egress_ip, "primary-network egress IP: OVN SNAT on br-ex of node %s" % via)
    match = host.link_for(address)
    if match is None:
        return result(None, via, egress_ip, "blackhole: node %s holds no base address in a subnet of %s, the egress IP "
                      "is not configured on any link" % (via, egress_ip))
    link = match[0]
    if not link.connected:
        return result(None, via, egress_ip, "blackhole: vNIC %s (%s) of VM %s is disconnected" % (link.mac, link.name, vm_name))
    if not link.admin_up:
        return result(None, via, egress_ip, "blackhole: link %s of node %s is down" % (link.name, via))
    if not inventory.backing_present(host.vm, link.nic):
        return result(None, via, egress_ip, "blackhole: port group %s of vNIC %s (%s) does not exist on host %s where VM %s "
                      "runs" % (link.nic.get("network"), link.mac, link.name, host.vm.get("host"), vm_name))
    mismatch = inventory.vlan_mismatch(host.vm, link.nic)
    if mismatch:
        where = (link.nic.get("network"), mismatch[0], host.vm.get("host"), vm_name, mismatch[1])
        return result(None, via, egress_ip, "blackhole: port group %s has VLAN %s on host %s where VM %s runs, VLAN %s on the other "
                      "hosts: frames leave on the wrong segment" % where)
    uplink = inventory.uplink_problem(host.vm, link.nic)
    if uplink:
        return result(None, via, egress_ip, "blackhole: %s on host %s where VM %s runs: frames of port group %s never leave the "
                      "host" % (uplink, host.vm.get("host"), vm_name, link.nic.get("network")))
    routing = route_problem(host, link, match[1], destination)
    if routing:
        return result(None, via, egress_ip, "blackhole: link %s of node %s: %s" % (link.name, via, routing))
    node_forwarding = forwarding.get(via)
    if address.version == 6 and (node_forwarding is None or not node_forwarding.is_on(link.name, 6)):
        return result(None, via, egress_ip, "blackhole: IPv6 forwarding is off on node %s (gatewayConfig.ipForwarding is not Global "
                      "and net.ipv6.conf.all.forwarding is 0: Linux forwards IPv6 only by that switch, "
                      "net.ipv6.conf.%s.forwarding does not forward)" % (via, link.name))
    if node_forwarding is None or not node_forwarding.is_on(link.name, address.version):
        return result(None, via, egress_ip, "blackhole: IP forwarding is off on %s of node %s (gatewayConfig.ipForwarding "
                      "is not Global and the profile TuneD applied does not set net.ipv%d.conf.%s.forwarding=1)"
                      % (link.name, via, address.version, link.name))
    return result(egress_ip, via, egress_ip, "secondary-network egress IP on %s of node %s (forwarding by %s)"
                  % (link.name, via, node_forwarding.source(link.name, address.version)))
