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
"""

import configparser
import dataclasses

NAMESPACE = "openshift-cluster-node-tuning-operator"
RESOURCE = "tuneds.tuned.openshift.io"
# Profiles shipped in the TuneD package of RHCOS (openshift, openshift-node, ...): none of them
# sets per-interface forwarding, so an include of an unknown profile contributes nothing.
BUILTIN_PROFILES = ("openshift", "openshift-node", "openshift-control-plane")


@dataclasses.dataclass
class Forwarding:
    """IPv4 forwarding on one node: which profile is applied and what it sets."""
    profile: str = None
    global_forwarding: bool = False
    all_interfaces: bool = None
    interfaces: dict = dataclasses.field(default_factory=dict)

    def is_on(self, ifname):
        if self.global_forwarding:
            return True
        if ifname in self.interfaces:
            return self.interfaces[ifname]
        return bool(self.all_interfaces)

    def source(self, ifname):
        """Why forwarding is on for a link (for wire reasons)."""
        if self.global_forwarding:
            return "gatewayConfig.ipForwarding Global"
        return "Tuned profile %s" % self.profile


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
    """("all" | interface name | None) for an IPv4 forwarding sysctl key, dotted or slash form."""
    key = key.strip()
    if key.startswith("net/"):
        parts = key.split("/")
    else:
        # in the dotted form a '/' inside a component stands for a '.' of an interface name
        parts = [part.replace("/", ".") for part in key.split(".")]
    if parts == ["net", "ipv4", "ip_forward"]:
        return "all"
    if len(parts) == 5 and parts[:3] == ["net", "ipv4", "conf"] and parts[4] == "forwarding":
        return None if parts[3] == "default" else parts[3]
    return None


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


def forwarding_by_node(tuneds, nodes, pods, network_operator):
    """{node name: Forwarding} from the Tuned objects, node/pod labels and the network operator."""
    tuneds = [t for t in tuneds if t["metadata"].get("namespace") == NAMESPACE]
    profiles = {name: ([], {}) for name in BUILTIN_PROFILES}
    for tuned in tuneds:
        for profile in (tuned.get("spec") or {}).get("profile") or []:
            profiles[profile.get("name")] = parse_profile(profile.get("data"))
    gateway = ((((network_operator or {}).get("spec") or {}).get("defaultNetwork") or {})
               .get("ovnKubernetesConfig") or {}).get("gatewayConfig") or {}
    global_forwarding = gateway.get("ipForwarding") == "Global"
    result = {}
    for node in nodes:
        name = node["metadata"]["name"]
        pod_labels = [p["metadata"].get("labels") or {} for p in pods if (p.get("spec") or {}).get("nodeName") == name]
        profile = recommended_profile(tuneds, node["metadata"].get("labels") or {}, pod_labels)
        forwarding = Forwarding(profile=profile, global_forwarding=global_forwarding)
        for key, value in resolve_sysctls(profile, profiles).items():
            target = _sysctl_target(key)
            if target == "all":
                forwarding.all_interfaces = _value_on(value)
            elif target:
                forwarding.interfaces[target] = _value_on(value)
        result[name] = forwarding
    return result
