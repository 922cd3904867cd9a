# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""IP forwarding on the secondary NIC, as pure functions (no I/O): the Node Tuning Operator ``Tuned`` that sets
``net.ipv4.conf.<if>.forwarding=1`` (and ``net.ipv6.conf.<if>.forwarding=1`` for IPv6) on exactly those interfaces
(DOMAIN.md section 5 item 3), its progress per node, the global mode of the Network operator, and the plan of ocp.egressip.ip_forwarding.
"""


from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import HOSTNAME_LABEL, is_managed
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.plan import node_network as nn


# --- IP forwarding on the secondary NIC (Node Tuning Operator) -------------------------------------

def sysctl_interface(name):
    """Kernel interface name as it appears in a sysctl key ('.' of VLAN names becomes '/')."""
    return name.replace('.', '/')


def parent_profile(node):
    """The stock Tuned profile the node gets today, kept through `include=` so no tuning is lost."""
    labels = (node.get('metadata') or {}).get('labels') or {}
    return 'openshift-control-plane' if any(label in labels for label in nn.CONTROL_PLANE_LABELS) else 'openshift-node'


def forwarding_profile_name(parent, interface):
    return 'egressip-forwarding-%s-%s' % (parent.replace('openshift-', ''), interface.replace('.', '-').replace('/', '-'))


def desired_tuned(targets, priority, ipv6=False):
    """The one Tuned of this collection, or None when there is nothing to forward.

    targets: [{'node', 'hostname', 'interface', 'parent'}]. Nodes are grouped by (parent
    profile, kernel interface name): one profile per group, recommended to exactly those
    nodes by `kubernetes.io/hostname` (top-level match entries are alternatives).
    """
    groups = {}
    for target in targets:
        groups.setdefault((target['parent'], target['interface']), []).append(target['hostname'])
    if not groups:
        return None
    profiles, recommend = [], []
    for (parent, interface), hostnames in sorted(groups.items()):
        name = forwarding_profile_name(parent, interface)
        lines = ['[main]', 'summary=ocp.egressip: IP forwarding on the secondary NIC %s for EgressIP' % interface,
                 'include=%s' % parent, '', '[sysctl]', forwarding_sysctl(interface) + '=1']
        if ipv6:
            lines.append(forwarding_sysctl(interface, 6) + '=1')
        profiles.append({'name': name, 'data': '\n'.join(lines) + '\n'})
        recommend.append({'profile': name, 'priority': int(priority),
                          'match': [{'label': HOSTNAME_LABEL, 'value': hostname} for hostname in sorted(set(hostnames))]})
    return {
        'apiVersion': nn.TUNED_API_VERSION,
        'kind': 'Tuned',
        'metadata': dict(nn.managed_metadata(), name=nn.TUNED_NAME, namespace=nn.TUNED_NAMESPACE),
        'spec': {'profile': profiles, 'recommend': recommend},
    }


FAMILIES = (4, 6)


def family_name(version):
    return 'IPv6' if version == 6 else 'IPv4'


def forwarded_interfaces(tuned, version=4):
    """{hostname: set(kernel interface names)} that a Tuned sets forwarding of IP family `version` (4 or 6) on."""
    result = {}
    if not tuned:
        return result
    prefix = 'net.ipv%d.conf.' % (6 if version == 6 else 4)
    keys_by_profile = {}
    for profile in (tuned.get('spec') or {}).get('profile') or []:
        interfaces = set()
        for line in (profile.get('data') or '').splitlines():
            key, _sep, value = line.partition('=')
            key = key.strip()
            if key.startswith(prefix) and key.endswith('.forwarding') and value.strip() == '1':
                interfaces.add(key[len(prefix):-len('.forwarding')].replace('/', '.'))
        keys_by_profile[profile.get('name')] = interfaces
    for item in (tuned.get('spec') or {}).get('recommend') or []:
        for match in item.get('match') or []:
            if match.get('label') == HOSTNAME_LABEL and match.get('value'):
                result.setdefault(match['value'], set()).update(keys_by_profile.get(item.get('profile'), set()))
    return result


# The Node Tuning Operator's per-node Profile (cluster-node-tuning-operator pkg/apis/tuned/v1 Profile): the operator
# writes spec.config.tunedProfile at once, the node's TuneD daemon reports status.tunedProfile and Applied/Degraded later.
FORWARDING_APPLIED = 'applied'
FORWARDING_PENDING = 'pending'
FORWARDING_DEGRADED = 'degraded'


def expected_profiles(targets):
    """{node: the collection's profile name the Node Tuning Operator should give it} for forwarding targets."""
    return dict((target['node'], forwarding_profile_name(target['parent'], target['interface'])) for target in targets)


def forwarding_progress(profile, expected):
    """(applied | pending | degraded, message) of one node's Profile against the collection's profile name.

    Applied: status.tunedProfile is the expected profile, Applied True, Degraded not True (both must be read, as
    the API says). observedGeneration is not required: NTO releases before it (2025-03) lack it, and the daemon
    rewrites status only when tunedProfile or a condition changes, so it can stay behind after an in-place edit.
    """
    if not profile:
        return FORWARDING_PENDING, 'the node has no Profile in %s yet' % nn.TUNED_NAMESPACE
    recommended = (((profile.get('spec') or {}).get('config') or {}).get('tunedProfile'))
    status = profile.get('status') or {}
    if recommended != expected:
        return FORWARDING_PENDING, ('the Node Tuning Operator recommends profile %s, not %s (a Tuned with a lower priority number may '
                                    'target the node)' % (recommended, expected))
    if status.get('tunedProfile') != expected:
        return FORWARDING_PENDING, 'TuneD still runs profile %s (%s not applied yet)' % (status.get('tunedProfile'), expected)
    applied, degraded = nn.condition(profile, 'Applied') or {}, nn.condition(profile, 'Degraded') or {}
    if degraded.get('status') == 'True':
        return FORWARDING_DEGRADED, degraded.get('message') or degraded.get('reason') or 'Degraded'
    if applied.get('status') == 'True':
        return FORWARDING_APPLIED, applied.get('message') or 'applied'
    return FORWARDING_PENDING, applied.get('message') or 'Applied is %s' % (applied.get('status') or 'not reported')


def forwarding_removals(nodes, before, after):
    """{node name: {IP version: sorted interfaces}} whose forwarding of that family (IPv4 and IPv6 each count) a change
    of the collection's Tuned from `before` to `after` removes; a family that loses nothing is left out."""
    hostnames = dict((((node.get('metadata') or {}).get('labels') or {}).get(HOSTNAME_LABEL) or node['metadata']['name'],
                      node['metadata']['name']) for node in nodes)
    removed = {}
    for version in FAMILIES:
        now, later = forwarded_interfaces(before, version), forwarded_interfaces(after, version)
        for hostname, interfaces in now.items():
            gone = sorted(interfaces - later.get(hostname, set()))
            if gone:
                removed.setdefault(hostnames.get(hostname, hostname), {})[version] = gone
    return removed


def forwarding_stranded(removed, states, egressips, networks):
    """[(node, IP version, interfaces, [(EgressIP, ip)])]: egress IPs of that family a forwarding removal would blackhole.

    Only IPs of the family whose forwarding goes count. An IP counts when it is inside the `networks` (the cidr options)
    of its family or, when they hold none of that family (or are None), inside the subnet of an address the node's
    NodeNetworkState shows on one of those interfaces (the only traffic forwarding carries).
    """
    hosted = hosted_egress_ips(egressips)
    stranded = []
    for node, families in sorted(removed.items()):
        for version, interfaces in sorted(families.items()):
            ips = [pair for pair in hosted.get(node, []) if _version(pair[1]) == version]
            given = [str(network) for network in networks or [] if network.version == version]
            if not given:
                given = [entry for item in nn.nns_interfaces(states.get(node)) if item.get('name') in interfaces
                         for entry in nn.interface_addresses(item)]
            ips = [pair for pair in ips if any(_in_subnet(pair[1], cidr) for cidr in given)]
            if ips:
                stranded.append((node, version, interfaces, ips))
    return stranded


def _version(ip):
    try:
        return ipaddress.ip_address(str(ip).strip()).version
    except ValueError:
        return None


def _in_subnet(ip, cidr):
    """Whether `ip` lies in the network of `cidr` ('ip/prefix'); standard library, so ip_forwarding needs no netaddr."""
    try:
        address, network = ipaddress.ip_address(str(ip).strip()), ipaddress.ip_interface(str(cidr).strip()).network
    except ValueError:
        return False
    return address.version == network.version and address in network


def profile_sections(data):
    """{section: [(key, value)]} of a TuneD profile text (ini: [section], key=value; comments and lines before the first
    section left out)."""
    sections, current = {}, None
    for line in (data or '').splitlines():
        text = line.strip()
        if not text or text.startswith('#'):
            continue
        if text.startswith('[') and text.endswith(']'):
            current = text[1:-1].strip()
            sections.setdefault(current, [])
            continue
        key, sep, value = text.partition('=')
        if sep and current is not None:
            sections[current].append((key.strip(), value.strip()))
    return sections


def profile_includes(value):
    """The profile names of a `[main]` `include=` value (comma-separated; a leading '-' marks an optional one)."""
    return [name.strip().lstrip('-') for name in value.split(',') if name.strip()]


def _resolved_sysctls(name, texts, seen=()):
    """Sysctls of a profile with its includes (the including profile wins); stock profiles set no forwarding."""
    if name not in texts or name in seen:
        return {}
    sections = profile_sections(texts[name])
    merged = {}
    for key, value in sections.get('main') or []:
        if key == 'include':
            for include in profile_includes(value):
                merged.update(_resolved_sysctls(include, texts, seen + (name,)))
    merged.update(sections.get('sysctl') or [])
    return merged


def forwarding_sysctl(interface, version=4):
    """The sysctl key that turns forwarding of IP family `version` (4 or 6) on for `interface` (what desired_tuned writes)."""
    return 'net.ipv%d.conf.%s.forwarding' % (6 if version == 6 else 4, sysctl_interface(interface))


# Keys that turn forwarding on for every interface of a family (the kernel's all/ip_forward switches).
GLOBAL_FORWARDING_SYSCTLS = {4: ('net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding'), 6: ('net.ipv6.conf.all.forwarding',)}


def forwarding_in_profile(name, tuneds, interface, version=4):
    """Whether TuneD profile `name` (its text in the Tuned objects) sets forwarding of IP family `version` on `interface`."""
    texts = dict((item.get('name'), item.get('data')) for tuned in tuneds or [] for item in (tuned.get('spec') or {}).get('profile') or [])
    sysctls = _resolved_sysctls(name, texts)
    family = 'ipv6' if version == 6 else 'ipv4'
    for key in (forwarding_sysctl(interface, version), 'net/%s/conf/%s/forwarding' % (family, interface)):
        if key in sysctls:
            return sysctls[key] == '1'
    return any(sysctls.get(key) == '1' for key in GLOBAL_FORWARDING_SYSCTLS[6 if version == 6 else 4])


def ipv6_all_forwarding_in_profile(name, tuneds):
    """What TuneD profile `name` (with its includes) sets ``net.ipv6.conf.all.forwarding`` to: True (1), False (any other
    value), or None when it does not set it. That switch alone decides IPv6 forwarding in Linux (``ip6_forward``)."""
    texts = dict((item.get('name'), item.get('data')) for tuned in tuneds or [] for item in (tuned.get('spec') or {}).get('profile') or [])
    sysctls = _resolved_sysctls(name, texts)
    for key in ('net.ipv6.conf.all.forwarding', 'net/ipv6/conf/all/forwarding'):
        if key in sysctls:
            return sysctls[key].strip('<> ') == '1'
    return None


def cluster_ip_forwarding(network_operator):
    """`gatewayConfig.ipForwarding` of networks.operator.openshift.io/cluster ('' when unset = Restricted)."""
    spec = (network_operator or {}).get('spec') or {}
    gateway = ((spec.get('defaultNetwork') or {}).get('ovnKubernetesConfig') or {}).get('gatewayConfig') or {}
    return gateway.get('ipForwarding') or ''


def ip_forwarding_patch(mode_value):
    return {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': mode_value}}}}}


# --- ip_forwarding: the plan ---------------------------------------------------------------------

PER_INTERFACE = 'per_interface'
GLOBAL = 'global'


def forwarding_targets(entries, snapshot):
    """[{'node', 'hostname', 'interface', 'parent'}] for the NICs of `entries`, and the refusals.

    The kernel name comes from the node's NodeNetworkState, the interface whose MAC is the NIC's
    (DOMAIN.md section 8): with `identifier: mac-address` the policy never names it.
    """
    nodes = nn.by_name(snapshot['nodes'])
    states = nn.by_name(snapshot['nns'])
    targets, findings = [], []
    for index, entry in enumerate(entries):
        name = entry['node']
        if name not in nodes:
            findings.append(nn.input_invalid('nodes[%d].node' % index, name, 'is not a Node of the cluster',
                                             'give the name of an existing Node (oc get nodes).'))
            continue
        if name not in states:
            findings.append(catalogue_finding('node_network_state_missing', 'node %s has no NodeNetworkState.' % name,
                                              objects=[{'kind': 'Node', 'name': name}]))
            continue
        interface = nn.interface_by_mac(states[name], entry['mac'])
        if interface is None:
            findings.append(catalogue_finding(
                'node_nic_not_found', 'NodeNetworkState of node %s lists no interface with MAC %s, so the kernel name of '
                'the secondary NIC (needed for net.ipv4.conf.<if>.forwarding) is unknown.' % (name, nn.normalize_mac(entry['mac'])),
                objects=[{'kind': 'Node', 'name': name}]))
            continue
        node = nodes[name]
        targets.append({'node': name, 'hostname': ((node.get('metadata') or {}).get('labels') or {}).get(HOSTNAME_LABEL) or name,
                        'interface': interface['name'], 'parent': parent_profile(node)})
    return targets, findings


def forwarding_mode(cluster_value, targets, tuned):
    """The mode the cluster is in for these NICs: global, per_interface, partial or off."""
    if cluster_value == 'Global':
        return GLOBAL
    if not targets:
        return 'off'
    forwarded = forwarded_interfaces(tuned if is_managed(tuned) else None)
    on = [target for target in targets if target['interface'] in forwarded.get(target['hostname'], set())]
    if len(on) == len(targets):
        return PER_INTERFACE
    return 'partial' if on else 'off'


def forwarding_report(targets, cluster_value, before, after):
    """Per node: the kernel name of its NIC and whether forwarding is on before and after a run."""
    cluster_wide = cluster_value == 'Global'
    before_on = forwarded_interfaces(before if is_managed(before) else None)
    after_on = forwarded_interfaces(after)
    return [dict(node=target['node'], interface=target['interface'],
                 forwarding_before=cluster_wide or target['interface'] in before_on.get(target['hostname'], set()),
                 forwarding_after=cluster_wide or target['interface'] in after_on.get(target['hostname'], set()))
            for target in targets]
