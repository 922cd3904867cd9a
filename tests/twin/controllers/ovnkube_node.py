"""Simulated ovnkube-node: the node annotations OVN-Kubernetes writes (DOMAIN.md sections 2 and 4).

- `k8s.ovn.org/node-primary-ifaddr`: br-ex's address, `{"ipv4": "192.168.10.11/24"}`; on a dual-stack cluster
  both, `{"ipv4": "192.168.10.11/24", "ipv6": "fd00:10::b/64"}` (util.ParseNodePrimaryIfAddr reads both keys).
- `k8s.ovn.org/host-cidrs`: every host address with its mask (sorted JSON list): br-ex's plus
  each base address the node has now on a vNIC: a link without carrier keeps its address only
  when NetworkManager keeps it (`ignore-carrier`, twin option `--carrier-loss keep`); without it
  NetworkManager removes the address a few seconds after the carrier went, the subnet leaves
  host-cidrs and the cluster manager moves the IPs (DOMAIN.md sections 6 and 7). Egress IPs the
  node carries are not host addresses. A removed NIC or address drops out.
- keepalived's VIPs: on vSphere IPI the API VIP (`apiServerInternalIPs`) is held by one control-plane node and
  the ingress VIP (`ingressIPs`) by one worker, each as a /32 on br-ex, so they are host addresses in that
  node's host-cidrs (which list every address netlink reports). Which node holds a VIP is keepalived's VRRP
  election (priorities, arbitrary here): the twin gives the API VIP to the first Ready master by name and the
  ingress VIP to the last Ready worker by name; a VIP moves when its node is not Ready (VRRP failover).
- `k8s.ovn.org/secondary-host-egress-ips`: egress IPs assigned to this node that it placed on a
  non-OVS link: the link is chosen by longest-prefix match over the base addresses (/32 bases
  ignored) and must be administratively up (node/controllers/egressip getFilteredPrefixes reads the
  IFF_UP flag, not the carrier: a carrier-less link whose address NetworkManager keeps still gets
  the IP); otherwise the IP is not configured (and the annotation omits it).
"""

import json

from . import k8s
from .cluster_manager import EGRESSIPS

PRIMARY_IFADDR = "k8s.ovn.org/node-primary-ifaddr"
HOST_CIDRS = "k8s.ovn.org/host-cidrs"
SECONDARY_EGRESS_IPS = "k8s.ovn.org/secondary-host-egress-ips"


def placed_egress_ips(host, egress_ips):
    """Egress IPs (strings) this host carries on a secondary link, sorted."""
    placed = []
    for egress_ip in egress_ips:
        address = k8s.parse_ip(egress_ip)
        if address is None or host.in_primary(address):
            continue
        match = host.link_for(address)
        # IFF_UP (isLinkUp), not the carrier: ovnkube-node keeps the IP on a link that lost its carrier
        if match and match[0].admin_up:
            placed.append(str(address))
    return sorted(placed)


INFRASTRUCTURE = "infrastructures.config.openshift.io"
MASTER_ROLES = ("node-role.kubernetes.io/master", "node-role.kubernetes.io/control-plane")
WORKER_ROLE = "node-role.kubernetes.io/worker"


def vip_holders(nodes, infrastructure):
    """{node name: [VIP/32]}: keepalived's API VIP on the first Ready master, the ingress VIP on the last Ready worker."""
    platform = (((infrastructure or {}).get("status") or {}).get("platformStatus") or {}).get("vsphere") or {}
    ready = sorted((node for node in nodes if k8s.node_ready(node)), key=k8s.name_of)
    holders = {}
    for key, roles, order in (("apiServerInternalIPs", MASTER_ROLES, ready), ("ingressIPs", (WORKER_ROLE,), ready[::-1])):
        holder = next((node for node in order if any(role in k8s.labels_of(node) for role in roles)), None)
        for vip in platform.get(key) or []:
            if holder is not None and k8s.parse_ip(vip) is not None:
                holders.setdefault(k8s.name_of(holder), []).append("%s/%d" % (vip, 32 if ":" not in vip else 128))
    return holders


def node_annotations(host, assigned_ips, vips=()):
    """The three annotations for one node (None: the annotation is absent)."""
    if host.primary is None:
        return {PRIMARY_IFADDR: None, HOST_CIDRS: None, SECONDARY_EGRESS_IPS: None}
    cidrs = set(str(address) for address in host.primaries) | set(vips)
    cidrs.update(str(address) for _link, address in host.secondary_addresses())
    placed = placed_egress_ips(host, assigned_ips)
    return {
        PRIMARY_IFADDR: json.dumps(dict([("ipv4", str(host.primary))] + ([("ipv6", str(host.primary6))] if host.primary6 else [])),
                                   separators=(",", ":")),
        HOST_CIDRS: json.dumps(sorted(cidrs), separators=(",", ":")),
        SECONDARY_EGRESS_IPS: json.dumps(placed, separators=(",", ":")) if placed else None,
    }


def assigned_by_node(egressips):
    """{node: [egress IP]} from EgressIP status.items."""
    result = {}
    for egressip in egressips:
        for item in (egressip.get("status") or {}).get("items") or []:
            result.setdefault(item.get("node"), []).append(item.get("egressIP"))
    return result


class OvnkubeNode:
    """Writes the annotations of every node whose host state changed."""

    def reconcile(self, ctx, hosts):
        assigned = assigned_by_node(ctx.store.list(EGRESSIPS))
        nodes = ctx.store.list("nodes")
        vips = vip_holders(nodes, ctx.store.get(INFRASTRUCTURE, "cluster"))
        for node in nodes:
            name = k8s.name_of(node)
            if name not in hosts:
                continue
            wanted = node_annotations(hosts[name], assigned.get(name, []), vips.get(name, ()))
            current = k8s.annotations_of(node)
            changes = {key: value for key, value in wanted.items() if current.get(key) != value}
            if changes:
                ctx.writer.patch("nodes", node, {"metadata": {"annotations": changes}})
