"""Simulated ovnkube-cluster-manager: EgressIP placement and failover (DOMAIN.md sections 3 and 7).

Follows ovn-kubernetes go-controller/pkg/clustermanager/egressip_controller.go
(reconcileEgressIP, validateEgressIPStatus, assignEgressIPs):

- A node is a candidate when labelled `k8s.ovn.org/egress-assignable`, Ready and reachable;
  candidates are ordered by how many egress IPs they host, ties in random order (Go's unstable
  sort over a map: placement among equals is not deterministic; seedable here).
- An IP in a node's node-primary-ifaddr subnet (`ipv4`, or `ipv6` on a dual-stack cluster) is a primary-network IP;
  otherwise the node must hold it by longest-prefix match over the host-cidrs of the IP's family minus the
  node-primary-ifaddr entries, global unicast only (util.GetEgressIPNetwork, GetSecondaryHostNetworkContainingIP):
  IPv6 egress IPs by the same rules as IPv4.
- Hard rules: never two IPs of one EgressIP on a node; an IP equal to a node address is refused
  (EgressIPConflict); an IP held by another EgressIP is refused (UnsupportedRequest); too few
  capable nodes leave IPs unassigned (NoMatchingNodeFound / UnassignedRequest).
- Failover: an assignment stays while its node stays labelled, Ready, reachable and holding the
  subnet. Cordon (spec.unschedulable) is not looked at. No failback: a valid assignment never moves.
- Reachability is probed on the probe tick (OVN-K: every 5 s) for labelled Ready nodes, and at
  once when a node becomes labelled and Ready; reachabilityTotalTimeoutSeconds 0 disables it.
- Like the event-driven original, an EgressIP is reconciled when it or the egress nodes change,
  not on every round, so events are not repeated by a quiet cluster.
- Status is written as patchEgressIP does: one JSON patch, `replace /status` with the items to
  keep; while the object has no `k8s.ovn.org/egressip-mark` it starts with `add /metadata/annotations`
  `{mark}` (generateEgressIPPatches), and an add of an existing member replaces it (RFC 6902): every
  other annotation of the object goes. At start (syncEgressIPMarkAllocator) the marks in use are
  reserved and every EgressIP without one gets that add alone. Marks are the lowest free in
  50000-55000 (the upstream id allocator's order: unconfirmed). Upstream since 4cc860151 (Dec 2024);
  `marks=False` models the releases before it (status-only patches, no mark).
"""

import dataclasses
import ipaddress
import json

from . import k8s
from .events import EventRecorder

EGRESSIPS = "egressips.k8s.ovn.org"
NETWORK_OPERATOR = "networks.operator.openshift.io"
EGRESS_LABEL = "k8s.ovn.org/egress-assignable"
MARK_ANNOTATION = "k8s.ovn.org/egressip-mark"
MARK_BASE, MARK_MAX = 50000, 55000


@dataclasses.dataclass
class EgressNode:
    """The allocator's view of one node (egressNode in the original)."""
    name: str
    primary: object
    cidrs: list
    assignable: bool
    ready: bool
    reachable: bool
    allocations: dict = dataclasses.field(default_factory=dict)
    primary6: object = None

    @property
    def primaries(self):
        return [address for address in (self.primary, self.primary6) if address is not None]

    @property
    def eligible(self):
        return self.assignable and self.ready and self.reachable

    def in_primary(self, ip):
        return any(ip.version == address.version and ip in address.network for address in self.primaries)

    def secondary_network(self, ip):
        """Longest-prefix match over host-cidrs outside the primary network (non-OVN networks)."""
        best = None
        for cidr in self.cidrs:
            network = cidr.network
            if cidr.version != ip.version or not k8s.is_global_unicast(cidr.ip) or cidr in self.primaries:
                continue
            if ip in network and (best is None or network.prefixlen > best.prefixlen):
                best = network
        return best

    def network_for(self, ip):
        """GetEgressIPNetwork: the network of this node that can host the IP, or None."""
        primary = next((address.network for address in self.primaries if ip.version == address.version and ip in address.network), None)
        return primary if primary is not None else self.secondary_network(ip)

    def view(self):
        return (self.name, str(self.primary), str(self.primary6), tuple(str(c) for c in self.cidrs), self.assignable, self.ready,
                self.reachable)


def reachability_timeout(network_operator):
    config = ((((network_operator or {}).get("spec") or {}).get("defaultNetwork") or {})
              .get("ovnKubernetesConfig") or {}).get("egressIPConfig") or {}
    value = config.get("reachabilityTotalTimeoutSeconds")
    return 1 if value is None else value


def _parse_node(node):
    """(primary, cidrs, IPv6 primary or None) from the ovnkube-node annotations, or None when not usable for egress."""
    annotations = k8s.annotations_of(node)
    try:
        ifaddr = json.loads(annotations.get("k8s.ovn.org/node-primary-ifaddr", ""))
        primary = k8s.parse_interface(ifaddr.get("ipv4"))
        primary6 = k8s.parse_interface(ifaddr.get("ipv6")) if ifaddr.get("ipv6") else None
        cidrs = [k8s.parse_interface(c) for c in json.loads(annotations.get("k8s.ovn.org/host-cidrs", "[]"))]
    except (ValueError, AttributeError, TypeError):
        return None
    if primary is None:
        return None
    return primary, [c for c in cidrs if c is not None], primary6


def _free_mark(egressips):
    """The lowest mark no EgressIP carries."""
    used = {int(m) for m in (k8s.annotations_of(e).get(MARK_ANNOTATION, "") for e in egressips) if m.isdigit()}
    return next((m for m in range(MARK_BASE, MARK_MAX + 1) if m not in used), None)


def _mark_op(mark):
    # "add" of an existing member replaces it: the object keeps the mark as its only annotation
    return {"op": "add", "path": "/metadata/annotations", "value": {MARK_ANNOTATION: str(mark)}}


def _go_list(values):
    return "[%s]" % " ".join(values)


class ClusterManager:
    """EgressIP allocator; `probe(node) -> bool` is the reachability probe."""

    def __init__(self, rng, probe, marks=True):
        self.rng = rng
        self.probe = probe
        # releases before ovn-kubernetes 4cc860151 (Dec 2024) write no mark: status-only patches (which OpenShift
        # release has the mark is unconfirmed; both are modelled)
        self.marks = marks
        self.reachable = {}
        self._eligible_before = set()
        self._fingerprints = {}
        self._marks_synced = False
        self.recorder = EventRecorder()

    def reconcile(self, ctx, probe_due):
        operator = ctx.store.get(NETWORK_OPERATOR, "cluster")
        cache = self._egress_nodes(ctx.store.list("nodes"), reachability_timeout(operator), probe_due)
        egressips = sorted(ctx.store.list(EGRESSIPS), key=lambda e: (e["metadata"].get("creationTimestamp") or "", k8s.name_of(e)))
        if self.marks and not self._marks_synced:
            self._sync_marks(ctx, egressips)
        for egressip in egressips:
            for item in (egressip.get("status") or {}).get("items") or []:
                node = cache.get(item.get("node"))
                if node is not None and node.eligible:
                    node.allocations[item.get("egressIP")] = k8s.name_of(egressip)
        host_addresses = {str(c.ip): n.name for n in cache.values() for c in n.cidrs + n.primaries}
        nodes_view = tuple(sorted(n.view() for n in cache.values()))
        for egressip in egressips:
            name = k8s.name_of(egressip)
            fingerprint = (json.dumps([egressip.get("spec"), egressip.get("status")], sort_keys=True), nodes_view)
            if self._fingerprints.get(name) != fingerprint:
                self._fingerprints[name] = fingerprint
                self._reconcile_egressip(ctx, egressip, cache, host_addresses)
        live = {k8s.name_of(e) for e in egressips}
        self._fingerprints = {k: v for k, v in self._fingerprints.items() if k in live}
        self.recorder.flush(ctx)

    def _egress_nodes(self, nodes, timeout, probe_due):
        cache, eligible_now = {}, set()
        for node in nodes:
            parsed = _parse_node(node)
            if parsed is None:
                continue
            name = k8s.name_of(node)
            assignable, ready = EGRESS_LABEL in k8s.labels_of(node), k8s.node_ready(node)
            if assignable and ready:
                eligible_now.add(name)
                # probed on the tick, and at once when the node becomes labelled and Ready
                if timeout and (probe_due or name not in self._eligible_before or name not in self.reachable):
                    self.reachable[name] = bool(self.probe(name))
            reachable = True if not timeout else self.reachable.get(name, True)
            cache[name] = EgressNode(name, parsed[0], parsed[1], assignable, ready, reachable, primary6=parsed[2])
        self._eligible_before = eligible_now
        return cache

    def _sync_marks(self, ctx, egressips):
        """syncEgressIPMarkAllocator: every EgressIP without a mark gets one, in a JSON patch of its own."""
        self._marks_synced = True
        for egressip in egressips:
            if MARK_ANNOTATION not in k8s.annotations_of(egressip):
                mark = _free_mark(ctx.store.list(EGRESSIPS))
                if mark is not None:
                    ctx.writer.patch(EGRESSIPS, egressip, [_mark_op(mark)], patch_type="json")

    def _write_status(self, ctx, egressip, items):
        """patchEgressIP(generateEgressIPPatches(...)): the mark first while there is none, then the status."""
        ops = []
        if self.marks and MARK_ANNOTATION not in k8s.annotations_of(egressip):
            mark = _free_mark(ctx.store.list(EGRESSIPS))
            if mark is not None:
                ops.append(_mark_op(mark))
        ops.append({"op": "replace", "path": "/status", "value": {"items": items}})
        ctx.writer.patch(EGRESSIPS, egressip, ops, patch_type="json")

    def _reconcile_egressip(self, ctx, egressip, cache, host_addresses):
        name = k8s.name_of(egressip)
        spec_ips = []
        for text in (egressip.get("spec") or {}).get("egressIPs") or []:
            address = k8s.parse_ip(text)
            if address is None:
                self.recorder.warning("EgressIP", name, "InvalidEgressIP",
                                      "egress IP: %s for object EgressIP: %s is not a valid IP address" % (text, name))
                return
            if str(address) not in spec_ips:
                spec_ips.append(str(address))
        items = (egressip.get("status") or {}).get("items") or []
        valid, invalid = self._validate_status(name, items, cache, spec_ips)
        to_assign = [ip for ip in spec_ips if ip not in {item["egressIP"] for item in valid}]
        removed = {item.get("egressIP") for item in invalid}
        if removed:
            # the original first removes, then re-assigns only the IPs it removed (cloud ordering)
            to_assign = [ip for ip in to_assign if ip in removed]
        for item in invalid:
            if item.get("node") in cache:
                cache[item["node"]].allocations.pop(item.get("egressIP"), None)
        added = self._assign(name, to_assign, cache, host_addresses) if to_assign else []
        keep = valid + added
        for item in keep:
            cache[item["node"]].allocations[item["egressIP"]] = name
        if (added or invalid) and keep != items:
            self._write_status(ctx, egressip, keep)

    def _validate_status(self, name, items, cache, spec_ips):
        per_node = {}
        for item in items:
            per_node[item.get("node")] = per_node.get(item.get("node"), 0) + 1
        valid, invalid = [], []
        for item in items:
            node = cache.get(item.get("node"))
            address = k8s.parse_ip(item.get("egressIP"))
            ok = (node is not None and node.eligible and per_node[item.get("node")] <= 1 and address is not None
                  and node.network_for(address) is not None and str(address) in spec_ips)
            (valid if ok else invalid).append({"egressIP": item.get("egressIP"), "node": item.get("node")})
        return valid, invalid

    def _assign(self, name, ips, cache, host_addresses):
        assignable = [node for node in cache.values() if node.eligible]
        if not assignable:
            self.recorder.warning("EgressIP", name, "NoMatchingNodeFound",
                                  "no assignable nodes for EgressIP: %s, please tag at least one node with label: %s"
                                  % (name, EGRESS_LABEL))
            return []
        # random order among equally loaded nodes, then least loaded first (stable sort)
        assignable.sort(key=lambda node: node.name)
        self.rng.shuffle(assignable)
        assignable.sort(key=lambda node: len(node.allocations))
        existing = {ip: (node.name, owner) for node in cache.values() for ip, owner in node.allocations.items()}
        assignments = []
        for text in ips:
            address = ipaddress.ip_address(text)
            if text in host_addresses:
                self.recorder.warning("EgressIP", name, "EgressIPConflict",
                                      "Egress IP %s with IP %s is conflicting with a host (%s) IP address and will not "
                                      "be assigned" % (name, text, host_addresses[text]))
                return assignments
            if text in existing:
                holder, owner = existing[text]
                if owner != name:
                    self.recorder.warning("EgressIP", name, "UnsupportedRequest",
                                          "IP: \"%s\" for EgressIP: %s is already allocated for EgressIP: %s on %s"
                                          % (text, name, owner, holder))
                    return assignments
                if cache[holder].network_for(address) is not None:
                    assignments.append({"egressIP": text, "node": holder})
                continue
            candidates = [n for n in assignable if not n.in_primary(address) and n.secondary_network(address)] or assignable
            for node in candidates:
                if name in node.allocations.values() or node.network_for(address) is None:
                    continue
                assignments.append({"egressIP": text, "node": node.name})
                node.allocations[text] = name
                break
        if not assignments:
            self.recorder.warning("EgressIP", name, "NoMatchingNodeFound",
                                  "No matching nodes found, which can host any of the egress IPs: %s for object "
                                  "EgressIP: %s" % (_go_list(ips), name))
        elif len(assignments) < len(ips):
            self.recorder.warning("EgressIP", name, "UnassignedRequest",
                                  "Not all egress IPs for EgressIP: %s could be assigned, please tag more nodes" % name)
        return assignments
