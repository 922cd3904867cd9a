# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node side of the secondary network, as pure functions (no I/O).

- The NodeNetworkConfigurationPolicy for one node (DOMAIN.md section 8): NIC matched by MAC
  (`identifier: mac-address`, the `name` is only the NetworkManager profile name), one static
  base address per family, a gateway route with a metric above the primary default route
  (br-ex stays the default-route interface, section 5 item 5), no DNS, no DHCP, no router
  advertisements. The allocation is recorded on the policy so the next run reads it back.
- Progress of a policy on its node from the policy and its enactment (`<node>.<policy>`).
- The kernel name of the NIC from NodeNetworkState `status.currentState.interfaces[]`,
  matched by MAC, and the Node Tuning Operator `Tuned` that sets
  `net.ipv4.conf.<if>.forwarding=1` on exactly those interfaces (section 5 item 3).
- Which nodes can host secondary-network egress IPs, why the others cannot, and the label
  changes (with the guard against stranding egress IPs).
- Merge patches and diffs built by one function for both sides.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json

try:
    import netaddr
except ImportError:  # the modules report it through _address_plan.NETADDR_IMPORT_ERROR
    netaddr = None

from ansible_collections.ocp.egressip.plugins.module_utils._catalogue import catalogue_finding

MANAGED_BY_LABEL = 'egressip.ocp/managed-by'
MANAGED_BY_VALUE = 'ocp.egressip'
NODE_ANNOTATION = 'egressip.ocp/node'
ADDRESSES_ANNOTATION = 'egressip.ocp/addresses'
EGRESS_ASSIGNABLE_LABEL = 'k8s.ovn.org/egress-assignable'
HOSTNAME_LABEL = 'kubernetes.io/hostname'

POLICY_API_VERSION = 'nmstate.io/v1'
POLICY_KIND = 'NodeNetworkConfigurationPolicy'
POLICY_PREFIX = 'egressip-'
ENACTMENT_POLICY_LABEL = 'nmstate.io/policy'
MAIN_ROUTE_TABLE = 254

TUNED_API_VERSION = 'tuned.openshift.io/v1'
TUNED_NAMESPACE = 'openshift-cluster-node-tuning-operator'
TUNED_NAME = 'egressip-forwarding'
CONTROL_PLANE_LABELS = ('node-role.kubernetes.io/master', 'node-role.kubernetes.io/control-plane')

AVAILABLE = 'available'
DEGRADED = 'degraded'
PROGRESSING = 'progressing'

DNS_LABEL_MAX = 253


def managed_metadata(extra_annotations=None):
    """The label (and annotations) every object this collection creates carries."""
    metadata = {'labels': {MANAGED_BY_LABEL: MANAGED_BY_VALUE}}
    if extra_annotations:
        metadata['annotations'] = dict(extra_annotations)
    return metadata


def is_managed(obj):
    return ((obj or {}).get('metadata') or {}).get('labels', {}).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE


def normalize_mac(mac):
    """MACs compare case-insensitively with ':' separators (vSphere and nmstate differ in case)."""
    text = str(mac or '').strip().lower().replace('-', ':')
    return text


def valid_mac(mac):
    parts = normalize_mac(mac).split(':')
    return len(parts) == 6 and all(len(part) == 2 and all(char in '0123456789abcdef' for char in part) for part in parts)


# --- NodeNetworkConfigurationPolicy ---------------------------------------------------------------

def policy_name(node):
    """`egressip-<node>`, shortened with a hash when the node name is very long."""
    name = POLICY_PREFIX + node
    if len(name) <= DNS_LABEL_MAX:
        return name
    digest = hashlib.sha256(node.encode('utf-8')).hexdigest()[:10]
    return (name[:DNS_LABEL_MAX - 11].rstrip('.-') + '-' + digest)


def desired_policy(node, hostname, mac, addresses, gateways, route_metric, profile_name):
    """The policy for one node.

    addresses: {4: 'ip/prefix', 6: 'ip/prefix'} (IPv6 optional; IPv4 optional when the network
    is IPv6 only). gateways: {4: 'ip', 6: 'ip'} for the same families.
    """
    interface = {
        'name': profile_name,
        'type': 'ethernet',
        'state': 'up',
        'identifier': 'mac-address',
        'mac-address': normalize_mac(mac).upper(),
    }
    routes = []
    for version, key, default in ((4, 'ipv4', '0.0.0.0/0'), (6, 'ipv6', '::/0')):
        address = addresses.get(version)
        if not address:
            # a family without a secondary network stays off: no DHCP, no SLAAC, no RA default route
            interface[key] = {'enabled': False}
            continue
        ip, prefix = address.split('/')
        family = {'enabled': True, 'dhcp': False, 'address': [{'ip': ip, 'prefix-length': int(prefix)}]}
        if version == 6:
            family['autoconf'] = False
        interface[key] = family
        routes.append({'destination': default, 'next-hop-address': gateways[version],
                       'next-hop-interface': profile_name, 'metric': int(route_metric), 'table-id': MAIN_ROUTE_TABLE})
    annotations = {NODE_ANNOTATION: node, ADDRESSES_ANNOTATION: ','.join(addresses[v] for v in (4, 6) if addresses.get(v))}
    policy = {
        'apiVersion': POLICY_API_VERSION,
        'kind': POLICY_KIND,
        'metadata': dict(managed_metadata(annotations), name=policy_name(node)),
        'spec': {
            'nodeSelector': {HOSTNAME_LABEL: hostname},
            'desiredState': {'interfaces': [interface], 'routes': {'config': routes}},
        },
    }
    return policy


def policy_allocation(policy):
    """What a policy of this collection records: {'node', 'addresses': {4: .., 6: ..}, 'mac'}, or None."""
    if not is_managed(policy):
        return None
    annotations = policy['metadata'].get('annotations') or {}
    node = annotations.get(NODE_ANNOTATION)
    if not node:
        return None
    addresses = {}
    for text in (annotations.get(ADDRESSES_ANNOTATION) or '').split(','):
        text = text.strip()
        if text:
            addresses[6 if ':' in text else 4] = text
    interfaces = (((policy.get('spec') or {}).get('desiredState') or {}).get('interfaces') or [{}])
    return {'node': node, 'addresses': addresses, 'mac': normalize_mac(interfaces[0].get('mac-address')),
            'name': policy['metadata']['name']}


def owned_view(obj, desired):
    """The part of `obj` the collection manages: the labels/annotations it sets, and the spec keys it sets."""
    obj = obj or {}
    metadata = obj.get('metadata') or {}
    view = {'metadata': {}}
    for key in ('labels', 'annotations'):
        wanted = (desired.get('metadata') or {}).get(key)
        if wanted:
            present = metadata.get(key) or {}
            view['metadata'][key] = dict((name, present[name]) for name in wanted if name in present)
    if 'spec' in desired:
        spec = obj.get('spec') or {}
        view['spec'] = dict((key, copy.deepcopy(spec[key])) for key in desired['spec'] if key in spec)
    return view


def merge_patch(before, after):
    """RFC 7386 merge patch turning `before` into `after` ({} when equal). Lists are replaced whole."""
    patch = {}
    for key in set(before) | set(after):
        if key not in after:
            patch[key] = None
        elif key not in before or not isinstance(after[key], dict) or not isinstance(before[key], dict):
            if before.get(key) != after[key] or key not in before:
                patch[key] = copy.deepcopy(after[key])
        else:
            nested = merge_patch(before[key], after[key])
            if nested:
                patch[key] = nested
    return patch


def owned_patch(current, desired):
    """Merge patch for the managed part only: never removes labels, annotations or spec keys it did not set."""
    return merge_patch(owned_view(current, desired), owned_view(desired, desired))


def condition(obj, condition_type):
    for item in ((obj or {}).get('status') or {}).get('conditions') or []:
        if item.get('type') == condition_type:
            return item
    return None


def _is_true(item):
    return bool(item) and str(item.get('status')) == 'True'


def policy_progress(policy, enactment):
    """(state, message) of a policy on its node: available, degraded or progressing.

    The enactment `<node>.<policy>` carries the node's own result and the nmstate error; its
    `status.policyGeneration` says which version of the policy it is about, so a result left
    from before an update is not taken for the new one.
    """
    generation = (policy.get('metadata') or {}).get('generation')
    fresh = enactment is not None
    if fresh and generation and (enactment.get('status') or {}).get('policyGeneration') not in (None, 0, generation):
        fresh = False
    if fresh:
        failing = condition(enactment, 'Failing')
        if _is_true(failing):
            return DEGRADED, failing.get('message') or failing.get('reason') or 'the enactment reports Failing'
        if _is_true(condition(enactment, 'Available')):
            return AVAILABLE, (condition(enactment, 'Available') or {}).get('message') or ''
        for name in ('Aborted', 'Pending', 'Progressing'):
            item = condition(enactment, name)
            if _is_true(item):
                return (DEGRADED if name == 'Aborted' else PROGRESSING), item.get('message') or name
        return PROGRESSING, 'the enactment has no result yet'
    degraded = condition(policy, 'Degraded')
    if _is_true(degraded) and enactment is not None:
        return DEGRADED, degraded.get('message') or degraded.get('reason') or 'the policy reports Degraded'
    return PROGRESSING, 'no enactment for this node and policy version yet'


def enactment_name(node, policy):
    return '%s.%s' % (node, policy)


# --- NodeNetworkState: the kernel view of the NIC ---------------------------------------------------

def nns_interfaces(nns):
    return (((nns or {}).get('status') or {}).get('currentState') or {}).get('interfaces') or []


def interface_by_mac(nns, mac):
    """The NodeNetworkState interface whose MAC is `mac` (the kernel `name`, `state`, addresses), or None."""
    wanted = normalize_mac(mac)
    for interface in nns_interfaces(nns):
        if normalize_mac(interface.get('mac-address')) == wanted and interface.get('type', 'ethernet') == 'ethernet':
            return interface
    return None


def interface_addresses(interface):
    """'ip/prefix' strings of both families on one NodeNetworkState interface."""
    addresses = []
    for key in ('ipv4', 'ipv6'):
        family = (interface or {}).get(key) or {}
        for entry in family.get('address') or []:
            if entry.get('ip') is not None and entry.get('prefix-length') is not None:
                addresses.append('%s/%s' % (entry['ip'], entry['prefix-length']))
    return addresses


def primary_default_route_metric(nns, version=4):
    """The lowest metric of the running default routes of the main table (the primary's), or None."""
    destination = '0.0.0.0/0' if version == 4 else '::/0'
    metrics = []
    for route in (((nns or {}).get('status') or {}).get('currentState') or {}).get('routes', {}).get('running') or []:
        if route.get('destination') == destination and route.get('table-id', MAIN_ROUTE_TABLE) in (MAIN_ROUTE_TABLE, 0):
            if route.get('metric') is not None:
                metrics.append(int(route['metric']))
    return min(metrics) if metrics else None


def route_metric_findings(nns_by_node, route_metric, secondary_interfaces, versions=(4,)):
    """Refuse a route metric that is not above a node's primary default route (DOMAIN.md section 5 item 5).

    secondary_interfaces: {node: kernel name of the secondary NIC} so that a default route this
    collection already put on the secondary NIC is not taken for the primary's.
    """
    findings = []
    for node in sorted(nns_by_node):
        for version in versions:
            nns = _without_routes_of(nns_by_node[node], secondary_interfaces.get(node))
            primary = primary_default_route_metric(nns, version)
            if primary is not None and int(route_metric) <= primary:
                findings.append(catalogue_finding(
                    'node_route_metric_too_low',
                    'route_metric %s is not above the metric %d of the primary IPv%d default route of node %s.' % (route_metric, primary, version, node),
                    objects=[{'kind': 'Node', 'name': node}, {'kind': 'option', 'name': 'route_metric'}],
                    remedy='set route_metric to %d or more so br-ex stays the default-route interface.' % (primary + 1)))
    return findings


def _without_routes_of(nns, interface):
    if not interface:
        return nns
    nns = copy.deepcopy(nns)
    routes = (((nns or {}).get('status') or {}).get('currentState') or {}).get('routes') or {}
    routes['running'] = [route for route in routes.get('running') or [] if route.get('next-hop-interface') != interface]
    return nns


# --- IP forwarding on the secondary NIC (Node Tuning Operator) -------------------------------------

def sysctl_interface(name):
    """Kernel interface name as it appears in a sysctl key ('.' of VLAN names becomes '/')."""
    return name.replace('.', '/')


def parent_profile(node):
    """The stock Tuned profile the node gets today, kept through `include=` so no tuning is lost."""
    labels = (node.get('metadata') or {}).get('labels') or {}
    return 'openshift-control-plane' if any(label in labels for label in CONTROL_PLANE_LABELS) else 'openshift-node'


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
                 'include=%s' % parent, '', '[sysctl]', 'net.ipv4.conf.%s.forwarding=1' % sysctl_interface(interface)]
        if ipv6:
            lines.append('net.ipv6.conf.%s.forwarding=1' % sysctl_interface(interface))
        profiles.append({'name': name, 'data': '\n'.join(lines) + '\n'})
        recommend.append({'profile': name, 'priority': int(priority),
                          'match': [{'label': HOSTNAME_LABEL, 'value': hostname} for hostname in sorted(set(hostnames))]})
    return {
        'apiVersion': TUNED_API_VERSION,
        'kind': 'Tuned',
        'metadata': dict(managed_metadata(), name=TUNED_NAME, namespace=TUNED_NAMESPACE),
        'spec': {'profile': profiles, 'recommend': recommend},
    }


def forwarded_interfaces(tuned):
    """{hostname: set(kernel interface names)} that a Tuned sets IPv4 forwarding on."""
    result = {}
    if not tuned:
        return result
    keys_by_profile = {}
    for profile in (tuned.get('spec') or {}).get('profile') or []:
        interfaces = set()
        for line in (profile.get('data') or '').splitlines():
            key, _sep, value = line.partition('=')
            key = key.strip()
            if key.startswith('net.ipv4.conf.') and key.endswith('.forwarding') and value.strip() == '1':
                interfaces.add(key[len('net.ipv4.conf.'):-len('.forwarding')].replace('/', '.'))
        keys_by_profile[profile.get('name')] = interfaces
    for item in (tuned.get('spec') or {}).get('recommend') or []:
        for match in item.get('match') or []:
            if match.get('label') == HOSTNAME_LABEL and match.get('value'):
                result.setdefault(match['value'], set()).update(keys_by_profile.get(item.get('profile'), set()))
    return result


def cluster_ip_forwarding(network_operator):
    """`gatewayConfig.ipForwarding` of networks.operator.openshift.io/cluster ('' when unset = Restricted)."""
    spec = (network_operator or {}).get('spec') or {}
    gateway = ((spec.get('defaultNetwork') or {}).get('ovnKubernetesConfig') or {}).get('gatewayConfig') or {}
    return gateway.get('ipForwarding') or ''


def ip_forwarding_patch(mode_value):
    return {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': mode_value}}}}}


# --- egress-assignable nodes --------------------------------------------------------------------

def selector_matches(selector, labels):
    """A LabelSelector ({matchLabels, matchExpressions}) or a plain {label: value} map against labels."""
    selector = selector or {}
    labels = labels or {}
    if 'matchLabels' in selector or 'matchExpressions' in selector:
        match_labels = selector.get('matchLabels') or {}
        expressions = selector.get('matchExpressions') or []
    else:
        match_labels, expressions = selector, []
    for key, value in match_labels.items():
        if labels.get(key) != ('' if value is None else str(value)):
            return False
    for expression in expressions:
        if not _expression_matches(expression, labels):
            return False
    return True


def _expression_matches(expression, labels):
    key, operator = expression.get('key'), expression.get('operator')
    values = [str(value) for value in expression.get('values') or []]
    if operator == 'In':
        return key in labels and labels[key] in values
    if operator == 'NotIn':
        return key not in labels or labels[key] not in values
    if operator == 'Exists':
        return key in labels
    if operator == 'DoesNotExist':
        return key not in labels
    raise ValueError('unknown selector operator %r of key %r' % (operator, key))


def in_network(address, networks):
    """Whether 'ip/prefix' is a base address inside one of `networks` (same prefix length: not a /32 egress IP)."""
    entry = netaddr.IPNetwork(address)
    for network in networks:
        network = netaddr.IPNetwork(network)
        if entry.version == network.version and entry.ip in network and entry.prefixlen == network.prefixlen:
            return True
    return False


def node_capability(host_cidrs, nns, networks, mac=None):
    """Why a node cannot host secondary-network egress IPs ([] when it can).

    host_cidrs: the node's `k8s.ovn.org/host-cidrs` entries (what OVN-K places by, DOMAIN.md
    section 3). nns: its NodeNetworkState (host-cidrs include links that are down, so the NIC
    must also be up there). networks: the secondary cidrs. mac: the NIC's MAC when known.
    """
    reasons = []
    if not any(in_network(entry, networks) for entry in host_cidrs or []):
        reasons.append('k8s.ovn.org/host-cidrs has no address in %s' % ', '.join(str(n) for n in networks))
    if nns is None:
        reasons.append('no NodeNetworkState (Kubernetes NMState not running on the node)')
        return reasons
    if mac:
        interface = interface_by_mac(nns, mac)
        if interface is None:
            reasons.append('no interface with MAC %s (NIC not attached)' % normalize_mac(mac))
            return reasons
        candidates = [interface]
    else:
        candidates = [item for item in nns_interfaces(nns) if any(in_network(entry, networks) for entry in interface_addresses(item))]
    if not candidates:
        reasons.append('no interface holds an address in %s' % ', '.join(str(n) for n in networks))
    elif not any(item.get('state') == 'up' for item in candidates):
        reasons.append('interface %s is %s' % (candidates[0].get('name'), candidates[0].get('state') or 'not up'))
    elif mac and not any(in_network(entry, networks) for entry in interface_addresses(candidates[0])):
        reasons.append('interface %s has no address in %s' % (candidates[0].get('name'), ', '.join(str(n) for n in networks)))
    return reasons


def hosted_egress_ips(egressips):
    """{node: [(egressip object, ip)]} from `status.items` of every EgressIP object."""
    hosted = {}
    for obj in egressips or []:
        name = obj['metadata']['name']
        for item in (obj.get('status') or {}).get('items') or []:
            if item.get('node') and item.get('egressIP'):
                hosted.setdefault(item['node'], []).append((name, item['egressIP']))
    return hosted


def plan_labels(labelled, capable, matching, egressips, exclusive=True, force=False):
    """Label changes for the egress-assignable label.

    labelled: nodes that carry the label now. capable: nodes that match the selector and can host
    secondary egress IPs. matching: nodes that match the selector. egressips: EgressIP objects
    (status.items says which node hosts which IP). Returns (add, remove, findings): removing the
    label from a node that hosts egress IPs is refused unless every such IP has a capable
    replacement (a labelled capable node that does not host another IP of the same object), or force.
    """
    labelled, capable, matching = set(labelled), set(capable), set(matching)
    add = sorted(capable - labelled)
    candidates = labelled - capable
    if not exclusive:
        candidates &= matching
    remove = sorted(candidates)
    final_capable = capable  # after the change exactly the capable nodes are labelled (among those considered)
    hosted = hosted_egress_ips(egressips)
    findings = []
    if force:
        return add, remove, findings
    by_object = {}
    for obj in egressips or []:
        by_object[obj['metadata']['name']] = set(item.get('node') for item in (obj.get('status') or {}).get('items') or [])
    for node in remove:
        for object_name, egress_ip in hosted.get(node, []):
            moving = [n for n in remove if any(o == object_name for o, _ip in hosted.get(n, []))]
            needed = sum(1 for n in moving for o, _ip in hosted.get(n, []) if o == object_name)
            spare = final_capable - by_object.get(object_name, set())
            if len(spare) < needed:
                findings.append(catalogue_finding(
                    'node_hosts_egress_ips',
                    'removing %s from node %s would strand egress IP %s of EgressIP %s: %d capable replacement node(s) for %d IP(s) of that object.'
                    % (EGRESS_ASSIGNABLE_LABEL, node, egress_ip, object_name, len(spare), needed),
                    objects=[{'kind': 'Node', 'name': node}, {'kind': 'EgressIP', 'name': object_name}]))
    return add, remove, findings


# --- diffs -----------------------------------------------------------------------------------------

def diff_entry(objects):
    """One side of a diff: {name: owned view} sorted by name, as JSON-friendly data."""
    return dict((name, objects[name]) for name in sorted(objects))


def to_json(value):
    return json.loads(json.dumps(value, sort_keys=True))
