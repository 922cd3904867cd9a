"""Simulated Node Tuning Operator: which TuneD profile each node runs, hence IP forwarding per link.

DOMAIN.md section 5.3: since 4.14 OVN-K's gatewayConfig.ipForwarding defaults to Restricted and
forwarding is off on a secondary NIC unless `ipForwarding: Global` or a per-interface
`net.ipv4.conf.<if>.forwarding=1` sysctl (a Tuned profile here) turns it on; OVN-K never checks.

NTO semantics (OpenShift docs "Using the Node Tuning Operator"): the recommend[] items of every
Tuned in openshift-cluster-node-tuning-operator are merged and ordered by priority (lower number
first); a node gets the profile of the first item whose match[] is true. A match list is true
when any of its items is; an item is true when the node (type node, default) or a pod on the
node (type pod) has the label (with that value, when given) and its nested match[] is true.
An item without match[] matches every node. A profile's `[main] include=` profiles are loaded
first and overridden by the including profile.

Asynchronous (issue 12 section 4): `NodeTuning` writes each node's Profile at once, and applies it
(sysctls, status) only `delay` seconds later, as the node's TuneD daemon does; the wire reads what
was applied, never the Tuned objects directly.
"""

import configparser
import dataclasses
import time

NAMESPACE = "openshift-cluster-node-tuning-operator"
RESOURCE = "tuneds.tuned.openshift.io"
# Profiles shipped in the TuneD package of RHCOS (openshift, openshift-node, ...): none of them
# sets per-interface forwarding, so an include of an unknown profile contributes nothing.
BUILTIN_PROFILES = ("openshift", "openshift-node", "openshift-control-plane")


@dataclasses.dataclass
class Forwarding:
    """IP forwarding on one node: which profile is applied and what it sets (IPv4; IPv6 in the *6 fields).

    IPv4 forwards per link (`net.ipv4.conf.<if>.forwarding`, the link the packet came in on). IPv6 does not: Linux
    forwards IPv6 only by `net.ipv6.conf.all.forwarding` (ip6_forward; `net.ipv6.conf.<if>.forwarding` only switches the
    link's host/router behaviour), and ovnkube-node sets it to 1 at start on a cluster with IPv6 (`ipv6_mode`, its
    config.IPv6Mode) and restricts forwarding by the FORWARD chain instead, whose ACCEPT rules for the cluster network
    let the egress IP's pod traffic through. A profile that sets `net.ipv6.conf.all.forwarding` overrides it (TuneD
    applies it after ovnkube-node started; whether ovnkube-node sets it again later is unconfirmed).
    """
    profile: str = None
    global_forwarding: bool = False
    all_interfaces: bool = None
    interfaces: dict = dataclasses.field(default_factory=dict)
    all_interfaces6: bool = None
    interfaces6: dict = dataclasses.field(default_factory=dict)
    ipv6_mode: bool = False

    def is_on(self, ifname, version=4):
        """Whether the kernel forwards the egress traffic of link `ifname` for IP family `version`; Global: both families."""
        if self.global_forwarding:
            return True
        if version == 6:
            return bool(self.all_interfaces6) if self.all_interfaces6 is not None else bool(self.ipv6_mode)
        if ifname in self.interfaces:
            return self.interfaces[ifname]
        return bool(self.all_interfaces)

    def router_mode6(self, ifname):
        """net.ipv6.conf.<if>.forwarding as the node has it (host/router behaviour of the link; forwards nothing by itself)."""
        if ifname in self.interfaces6:
            return self.interfaces6[ifname]
        return bool(self.all_interfaces6) if self.all_interfaces6 is not None else bool(self.ipv6_mode)

    def source(self, ifname, version=4):
        """Why forwarding is on for a link (for wire reasons)."""
        if self.global_forwarding:
            return "gatewayConfig.ipForwarding Global"
        if version == 6 and self.all_interfaces6 is None:
            return "net.ipv6.conf.all.forwarding=1 of ovnkube-node"
        return "Tuned profile %s" % self.profile


def ipv6_mode(node):
    """Whether ovnkube-node runs with IPv6 on this node (config.IPv6Mode): the node has an IPv6 InternalIP."""
    return any(":" in str(address.get("address")) for address in (node.get("status") or {}).get("addresses") or []
               if address.get("type") == "InternalIP")


def parse_profile(data):
    """(includes, sysctls) of one TuneD profile text (ini)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False, inline_comment_prefixes=None)
    parser.optionxform = str
    try:
        parser.read_string(data or "")
    except configparser.Error:
        return [], {}
    includes = []
    if parser.has_option("main", "include"):
        includes = [name.strip().lstrip("-") for name in parser.get("main", "include").split(",") if name.strip()]
    sysctls = dict(parser.items("sysctl")) if parser.has_section("sysctl") else {}
    return includes, sysctls


def resolve_sysctls(name, profiles, seen=()):
    """Sysctls of a profile with its includes applied (including profile wins)."""
    if name not in profiles or name in seen:
        return {}
    includes, own = profiles[name]
    merged = {}
    for include in includes:
        merged.update(resolve_sysctls(include, profiles, seen + (name,)))
    merged.update(own)
    return merged


def _sysctl_target(key):
    """(("all" | interface name | None), IP version) for a forwarding sysctl key, dotted or slash form."""
    key = key.strip()
    if key.startswith("net/"):
        parts = key.split("/")
    else:
        # in the dotted form a '/' inside a component stands for a '.' of an interface name
        parts = [part.replace("/", ".") for part in key.split(".")]
    if parts == ["net", "ipv4", "ip_forward"]:
        return "all", 4
    if len(parts) == 5 and parts[:1] == ["net"] and parts[1] in ("ipv4", "ipv6") and parts[2] == "conf" and parts[4] == "forwarding":
        return (None if parts[3] == "default" else parts[3]), 4 if parts[1] == "ipv4" else 6
    return None, 4


def _value_on(value):
    return str(value).strip().lstrip("<>").strip() == "1"


def _match_item(item, node_labels, pod_labels):
    label, value = item.get("label"), item.get("value")
    sources = pod_labels if item.get("type") == "pod" else [node_labels]
    found = any(label in labels and (value is None or labels[label] == value) for labels in sources)
    return found and _match_list(item.get("match"), node_labels, pod_labels)


def _match_list(items, node_labels, pod_labels):
    if not items:
        return True
    return any(_match_item(item, node_labels, pod_labels) for item in items)


def _pool_matches(machine_config_labels, node_labels):
    """machineConfigLabels selects a MachineConfigPool; the default pools select nodes by role label."""
    role = (machine_config_labels or {}).get("machineconfiguration.openshift.io/role")
    return role is not None and "node-role.kubernetes.io/" + role in node_labels


def recommended_profile(tuneds, node_labels, pod_labels):
    """Profile name NTO recommends for a node, or None."""
    items = []
    for tuned in sorted(tuneds, key=lambda t: t["metadata"]["name"]):
        for index, item in enumerate((tuned.get("spec") or {}).get("recommend") or []):
            items.append((item.get("priority", 0), tuned["metadata"]["name"], index, item))
    for entry in sorted(items, key=lambda entry: entry[:3]):
        item = entry[3]
        if item.get("machineConfigLabels"):
            if _pool_matches(item["machineConfigLabels"], node_labels):
                return item.get("profile")
        elif _match_list(item.get("match"), node_labels, pod_labels):
            return item.get("profile")
    return None


def is_global(network_operator):
    """gatewayConfig.ipForwarding is Global in networks.operator.openshift.io/cluster."""
    gateway = ((((network_operator or {}).get("spec") or {}).get("defaultNetwork") or {})
               .get("ovnKubernetesConfig") or {}).get("gatewayConfig") or {}
    return gateway.get("ipForwarding") == "Global"


def forwarding_by_node(tuneds, nodes, pods, network_operator):
    """{node name: Forwarding} from the Tuned objects, node/pod labels and the network operator."""
    tuneds = [t for t in tuneds if t["metadata"].get("namespace") == NAMESPACE]
    profiles = {name: ([], {}) for name in BUILTIN_PROFILES}
    for tuned in tuneds:
        for profile in (tuned.get("spec") or {}).get("profile") or []:
            profiles[profile.get("name")] = parse_profile(profile.get("data"))
    global_forwarding = is_global(network_operator)
    result = {}
    for node in nodes:
        name = node["metadata"]["name"]
        pod_labels = [p["metadata"].get("labels") or {} for p in pods if (p.get("spec") or {}).get("nodeName") == name]
        profile = recommended_profile(tuneds, node["metadata"].get("labels") or {}, pod_labels)
        result[name] = _with_sysctls(Forwarding(profile=profile, global_forwarding=global_forwarding, ipv6_mode=ipv6_mode(node)),
                                     resolve_sysctls(profile, profiles))
    return result


def _with_sysctls(forwarding, sysctls):
    """The Forwarding with the IPv4 and IPv6 forwarding sysctls of a profile set (net.ipv6.conf.all.forwarding: every link)."""
    for key, value in sysctls.items():
        target, version = _sysctl_target(key)
        if target == "all" and version == 4:
            forwarding.all_interfaces = _value_on(value)
        elif target == "all":
            forwarding.all_interfaces6 = _value_on(value)
        elif target:
            (forwarding.interfaces if version == 4 else forwarding.interfaces6)[target] = _value_on(value)
    return forwarding


# --- Profiles: the operator's per-node object and the TuneD daemon's asynchronous status ----------
# cluster-node-tuning-operator (d2394aa8): pkg/operator/controller.go syncProfile writes one Profile per
# node (named after it) with spec.config.tunedProfile and every profile; the node's TuneD daemon
# (pkg/tuned/controller.go updateTunedProfileStatus) applies it later and reports status.tunedProfile,
# the conditions Applied/Degraded (pkg/tuned/status.go computeStatusConditions) and observedGeneration,
# and writes status only when tunedProfile or a condition changed.

PROFILES = "profiles.tuned.openshift.io"
DEFAULT_DELAY = 3.0
APPLIED_MESSAGE = "TuneD profile applied."
NOT_APPLIED_MESSAGE = "The TuneD daemon profile not yet applied, or application failed."
NO_ERROR_MESSAGE = "No warning or error messages observed applying the TuneD daemon profile."
ERROR_PREFIX = "TuneD daemon issued one or more error message(s) during profile application. TuneD stderr: "


def default_failure(interface="<if>"):
    """The stderr line TuneD's sysctl plugin logs when it cannot write a forwarding sysctl (inferred, unconfirmed)."""
    return " ERROR    tuned.plugins.plugin_sysctl: Failed to set sysctl parameter 'net.ipv4.conf.%s.forwarding' to '1'" % interface


def _status_conditions(old, failure, timestamp, applied=True):
    """Applied/Degraded as computeStatusConditions sets them; an unchanged condition keeps its lastTransitionTime.

    applied=False: TuneD never logged "static tuning from profile ... applied" (Applied False, reason Failed).
    """
    wanted = [("Applied", "True", "AsExpected", APPLIED_MESSAGE) if applied else ("Applied", "False", "Failed", NOT_APPLIED_MESSAGE),
              ("Degraded", "True", "TunedError", ERROR_PREFIX + failure) if failure else
              ("Degraded", "False", "AsExpected", NO_ERROR_MESSAGE)]
    previous = {item.get("type"): item for item in old or []}
    result = []
    for kind, status, reason, message in wanted:
        item = {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": timestamp}
        before = previous.get(kind) or {}
        if all(before.get(key) == item[key] for key in ("status", "reason", "message")):
            item["lastTransitionTime"] = before.get("lastTransitionTime", timestamp)
        result.append(item)
    return result


def _provider_name(node):
    provider_id = (node.get("spec") or {}).get("providerID") or ""
    return provider_id.split("://", 1)[0] if "://" in provider_id else ""


class NodeTuning:
    """The operator (Profile spec, at once) and each node's TuneD daemon (applied `delay` seconds after a change).

    `failures`: {node: (TuneD stderr line, applied)}; such a node reports Degraded True (TunedError) and Applied
    `applied` (whether TuneD still logs the profile applied after a plugin error is unconfirmed: both are modelled),
    and its forwarding sysctls stay as the kernel had them. Profiles seen in the first round are applied at
    once (the cluster ran before the twin started).
    """

    def __init__(self, delay=DEFAULT_DELAY, clock=time.monotonic):
        self.delay = float(delay)
        self.clock = clock
        self.failures = {}
        self._applied = {}   # node: {"fingerprint", "profile", "sysctls"}
        self._pending = {}   # node: (fingerprint, since)
        self._first = True

    def set_failure(self, node, message, applied=True):
        if message:
            self.failures[node] = (message, bool(applied))
        else:
            self.failures.pop(node, None)

    def reconcile(self, ctx):
        store = ctx.store
        tuneds = store.list(RESOURCE, namespace=NAMESPACE)
        nodes = store.list("nodes")
        pods = store.list("pods")
        existing = {item["metadata"]["name"]: item for item in store.list(PROFILES, namespace=NAMESPACE)}
        all_profiles = [profile for tuned in sorted(tuneds, key=lambda t: t["metadata"]["name"])
                        for profile in (tuned.get("spec") or {}).get("profile") or []]
        for node in nodes:
            name = node["metadata"]["name"]
            recommended = recommended_profile(tuneds, node["metadata"].get("labels") or {},
                                              [p["metadata"].get("labels") or {} for p in pods if (p.get("spec") or {}).get("nodeName") == name])
            if recommended is None:
                continue
            spec = {"config": {"tunedProfile": recommended, "providerName": _provider_name(node)}, "profile": all_profiles}
            profile = self._sync_spec(ctx, existing.get(name), name, spec)
            if profile is not None:
                self._daemon(ctx, name, profile)
        for name, profile in existing.items():
            if name not in {node["metadata"]["name"] for node in nodes}:
                ctx.writer.delete(PROFILES, name, namespace=NAMESPACE)
                self._applied.pop(name, None)
        self._first = False

    def _sync_spec(self, ctx, current, name, spec):
        if current is None:
            return ctx.writer.create(PROFILES, {"apiVersion": "tuned.openshift.io/v1", "kind": "Profile",
                                                "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec})
        if current.get("spec") == spec:
            return current
        return ctx.writer.patch(PROFILES, current, {"spec": spec})

    def _daemon(self, ctx, name, profile):
        """TuneD on the node: the Profile's spec takes effect `delay` seconds after it changed."""
        wanted = profile["spec"]["config"]["tunedProfile"]
        texts = {name_: ([], {}) for name_ in BUILTIN_PROFILES}
        texts.update((item.get("name"), parse_profile(item.get("data"))) for item in profile["spec"].get("profile") or [])
        sysctls = resolve_sysctls(wanted, texts)
        failure = self.failures.get(name)
        fingerprint = repr((wanted, sorted(sysctls.items()), failure))
        applied = self._applied.get(name)
        if applied is not None and applied["fingerprint"] == fingerprint:
            self._pending.pop(name, None)
            return
        now = self.clock()
        pending = self._pending.get(name)
        if pending is None or pending[0] != fingerprint:
            self._pending[name] = pending = (fingerprint, now)
        if not self._first and now - pending[1] < self.delay:
            return
        kept = (applied or {}).get("sysctls", {}) if failure else sysctls
        self._applied[name] = {"fingerprint": fingerprint, "profile": wanted, "sysctls": kept}
        self._pending.pop(name, None)
        self._write_status(ctx, profile, wanted, failure)

    def _write_status(self, ctx, profile, wanted, failure):
        status = profile.get("status") or {}
        message, applied = failure or (None, True)
        conditions = _status_conditions(status.get("conditions"), message, ctx.timestamp, applied)
        if status.get("tunedProfile") == wanted and status.get("conditions") == conditions:
            return  # updateTunedProfileStatus: "no need to update status" (observedGeneration stays as it was)
        profile = dict(profile, status={"tunedProfile": wanted, "conditions": conditions,
                                        "observedGeneration": profile["metadata"].get("generation")})
        ctx.writer.update_status(PROFILES, profile)

    def forwarding(self, nodes, network_operator):
        """{node name: Forwarding} as the kernels have it: what TuneD applied, or Global forwarding."""
        global_forwarding = is_global(network_operator)
        result = {}
        for node in nodes:
            name = node["metadata"]["name"]
            applied = self._applied.get(name) or {}
            result[name] = _with_sysctls(Forwarding(profile=applied.get("profile"), global_forwarding=global_forwarding,
                                                    ipv6_mode=ipv6_mode(node)), applied.get("sysctls") or {})
        return result
