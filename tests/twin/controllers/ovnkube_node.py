"""Simulated ovnkube-node: the node annotations OVN-Kubernetes writes (DOMAIN.md sections 2 and 4).

- `k8s.ovn.org/node-primary-ifaddr`: br-ex's address, `{"ipv4": "192.168.10.11/24"}`.
- `k8s.ovn.org/host-cidrs`: every host address with its mask (sorted JSON list): br-ex's plus
  each base address the node has now on a vNIC: a link without carrier keeps its address only
  when NetworkManager keeps it (`ignore-carrier`, twin option `--carrier-loss keep`); without it
  NetworkManager removes the address a few seconds after the carrier went, the subnet leaves
  host-cidrs and the cluster manager moves the IPs (DOMAIN.md sections 6 and 7). Egress IPs the
  node carries are not host addresses. A removed NIC or address drops out.
- `k8s.ovn.org/secondary-host-egress-ips`: egress IPs assigned to this node that it placed on a
  non-OVS link: the link is chosen by longest-prefix match over the base addresses (/32 bases
  ignored) and must be up; otherwise the IP is not configured (and the annotation omits it).
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
        if address is None or (host.primary and address in host.primary.network):
            continue
        match = host.link_for(address)
        if match and match[0].up:
            placed.append(str(address))
    return sorted(placed)


def node_annotations(host, assigned_ips):
    """The three annotations for one node (None: the annotation is absent)."""
    if host.primary is None:
        return {PRIMARY_IFADDR: None, HOST_CIDRS: None, SECONDARY_EGRESS_IPS: None}
    cidrs = {str(host.primary)}
    cidrs.update(str(address) for _link, address in host.secondary_addresses())
    placed = placed_egress_ips(host, assigned_ips)
    return {
        PRIMARY_IFADDR: json.dumps({"ipv4": str(host.primary)}, separators=(",", ":")),
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
        for node in ctx.store.list("nodes"):
            name = k8s.name_of(node)
            if name not in hosts:
                continue
            wanted = node_annotations(hosts[name], assigned.get(name, []))
            current = k8s.annotations_of(node)
            changes = {key: value for key, value in wanted.items() if current.get(key) != value}
            if changes:
                ctx.writer.patch("nodes", node, {"metadata": {"annotations": changes}})
