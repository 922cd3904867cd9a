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
import ipaddress
import json

try:
    import netaddr
except ImportError:  # the modules report it through _address_plan.NETADDR_IMPORT_ERROR
    netaddr = None

from ansible_collections.ocp.egressip.plugins.module_utils.plan import address_plan as _address_plan
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import node_networks_from_node
from ansible_collections.ocp.egressip.plugins.module_utils.model.ip_networks import hosted_egress_ips
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import host_cidr_holds
from ansible_collections.ocp.egressip.plugins.module_utils.core.selectors import selector_matches

MANAGED_BY_LABEL = 'egressip.ocp/managed-by'
MANAGED_BY_VALUE = 'ocp.egressip'
NODE_ANNOTATION = 'egressip.ocp/node'
ADDRESSES_ANNOTATION = 'egressip.ocp/addresses'
EGRESS_ASSIGNABLE_LABEL = 'k8s.ovn.org/egress-assignable'
LABEL_RECORD_ANNOTATION = 'egressip.ocp/egress-assignable'  # beside the label: this collection set it (value MANAGED_BY_VALUE)
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


def desired_policy(node, hostname, mac, addresses, gateways, route_metric, profile_name, route_interface):
    """The policy for one node.

    addresses: {4: 'ip/prefix', 6: 'ip/prefix'} (IPv6 optional; IPv4 optional when the network
    is IPv6 only). gateways: {4: 'ip', 6: 'ip'} for the same families.
    route_interface: the NIC's kernel name (NodeNetworkState, by MAC). The interface is matched by
    MAC, but routes must name the kernel interface: nmstate before 2.2.43 does not resolve a profile
    name in next-hop-interface and rolls the whole apply back (DOMAIN.md section 8).
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
                       'next-hop-interface': route_interface, 'metric': int(route_metric), 'table-id': MAIN_ROUTE_TABLE})
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


# A new policy is created parked (its nodeSelector also needs a label no node has) until its addresses are known to be
# claimed by no other policy: two writers that ignore the cluster lock then never configure one address on two nodes.
CLAIM_SELECTOR_KEY = 'egressip.ocp/address-claim'
CLAIM_SELECTOR_VALUE = 'pending'


def parked(policy):
    """The policy with a nodeSelector that matches no node (the handler ignores it until it is activated)."""
    result = copy.deepcopy(policy)
    result['spec']['nodeSelector'][CLAIM_SELECTOR_KEY] = CLAIM_SELECTOR_VALUE
    return result


def activation_patch():
    return {'spec': {'nodeSelector': {CLAIM_SELECTOR_KEY: None}}}


def is_parked(policy):
    return CLAIM_SELECTOR_KEY in (((policy or {}).get('spec') or {}).get('nodeSelector') or {})


def unsettled_claims(policies):
    """Parked policies whose address another policy claimed first: their writer is re-allocating them (or was killed).

    Their allocation is not fixed yet (a parked policy configures no node), so it neither reserves the address nor
    conflicts with the policy that holds it.
    """
    policies = list(policies)
    return losing_claims(policies, [item['metadata']['name'] for item in policies if is_parked(item)])


def losing_claims(policies, ours, yielding=()):
    """Names in `ours` (parked policies) whose address another policy of the collection holds first.

    A claim is first when every writer reading the list would agree that it was made before the other's, so that two
    writers never both keep one address: an active policy holds its address before any parked one; between parked
    ones the older creationTimestamp is first, and the same timestamp (the API server stamps whole seconds) makes both
    lose, since a writer that checked before the other's claim existed may already be activating its own. A name in
    `yielding` is a claim this writer re-allocated: its creationTimestamp is older than its new address's claim, so it
    loses to any other holder of that address.
    """
    holders = {}
    for policy in policies:
        allocation = policy_allocation(policy)
        if allocation is None:
            continue
        claim = {'name': allocation['name'], 'parked': is_parked(policy),
                 'created': (policy.get('metadata') or {}).get('creationTimestamp') or ''}
        for address in allocation['addresses'].values():
            holders.setdefault(address.split('/')[0], []).append(claim)
    losers = set()
    for claims in holders.values():
        for claim in claims:
            if claim['name'] not in ours:
                continue
            others = [other for other in claims if other['name'] != claim['name']]
            if any(not other['parked'] for other in others) or (others and claim['name'] in yielding) \
                    or any(other['created'] <= claim['created'] for other in others):
                losers.add(claim['name'])
    return sorted(losers)


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
        if _is_true(failing) and _is_true(condition(enactment, 'Progressing')):
            # newer kubernetes-nmstate retries a failing apply (Failing and Progressing both True, reason Retrying);
            # the policy already reads Degraded then, so only the enactment tells it is not final
            return PROGRESSING, 'retrying: %s' % (failing.get('message') or failing.get('reason') or 'the enactment is retrying')
        if _is_true(failing):
            return DEGRADED, failing.get('message') or failing.get('reason') or 'the enactment reports Failing'
        if _is_true(condition(enactment, 'Available')):
            return AVAILABLE, (condition(enactment, 'Available') or {}).get('message') or ''
        for name in ('Aborted', 'Pending', 'Progressing'):
            item = condition(enactment, name)
            if _is_true(item):
                return (DEGRADED if name == 'Aborted' else PROGRESSING), item.get('message') or name
        return PROGRESSING, 'the enactment has no result yet'
    ignored = condition(policy, 'Ignored')
    if _is_true(ignored):
        return PROGRESSING, 'the policy matches no node yet (%s)' % (ignored.get('message') or 'Ignored')
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


def handler_versions(states):
    """{node: nmstate release or None} from NodeNetworkState `status.handlerNmstateVersion` ('nmstatectl 2.2.38')."""
    versions = {}
    for nns in states or []:
        text = str(((nns or {}).get('status') or {}).get('handlerNmstateVersion') or '').strip()
        versions[((nns or {}).get('metadata') or {}).get('name')] = text.split()[-1] if text else None
    return versions


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
            if primary is None:
                continue
            if int(route_metric) <= primary:
                findings.append(catalogue_finding(
                    'node_route_metric_too_low',
                    'route_metric %s is not above the metric %s of the primary IPv%s default route of node %s.' % (route_metric, primary, version, node),
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
        return FORWARDING_PENDING, 'the node has no Profile in %s yet' % TUNED_NAMESPACE
    recommended = (((profile.get('spec') or {}).get('config') or {}).get('tunedProfile'))
    status = profile.get('status') or {}
    if recommended != expected:
        return FORWARDING_PENDING, ('the Node Tuning Operator recommends profile %s, not %s (a Tuned with a lower priority number may '
                                    'target the node)' % (recommended, expected))
    if status.get('tunedProfile') != expected:
        return FORWARDING_PENDING, 'TuneD still runs profile %s (%s not applied yet)' % (status.get('tunedProfile'), expected)
    applied, degraded = condition(profile, 'Applied') or {}, condition(profile, 'Degraded') or {}
    if degraded.get('status') == 'True':
        return FORWARDING_DEGRADED, degraded.get('message') or degraded.get('reason') or 'Degraded'
    if applied.get('status') == 'True':
        return FORWARDING_APPLIED, applied.get('message') or 'applied'
    return FORWARDING_PENDING, applied.get('message') or 'Applied is %s' % (applied.get('status') or 'not reported')


def forwarding_removals(nodes, before, after):
    """{node name: sorted interfaces} whose IPv4 forwarding a change of the collection's Tuned from `before` to `after` removes."""
    hostnames = dict((((node.get('metadata') or {}).get('labels') or {}).get(HOSTNAME_LABEL) or node['metadata']['name'],
                      node['metadata']['name']) for node in nodes)
    now, later = forwarded_interfaces(before), forwarded_interfaces(after)
    removed = {}
    for hostname, interfaces in now.items():
        gone = sorted(interfaces - later.get(hostname, set()))
        if gone:
            removed[hostnames.get(hostname, hostname)] = gone
    return removed


def forwarding_stranded(removed, states, egressips, networks):
    """[(node, interfaces, [(EgressIP, ip)])]: egress IPs a forwarding removal would blackhole.

    An IP counts when it is inside `networks` (the cidr options) or, without them, inside the subnet of an address
    the node's NodeNetworkState shows on one of those interfaces (the only traffic forwarding carries).
    """
    hosted = hosted_egress_ips(egressips)
    stranded = []
    for node, interfaces in sorted(removed.items()):
        ips = hosted.get(node, [])
        if networks is None:
            on_link = [entry for item in nns_interfaces(states.get(node)) if item.get('name') in interfaces
                       for entry in interface_addresses(item)]
            ips = [pair for pair in ips if any(_in_subnet(pair[1], entry) for entry in on_link)]
        else:
            ips = [pair for pair in ips if any(_in_subnet(pair[1], str(network)) for network in networks)]
        if ips:
            stranded.append((node, interfaces, ips))
    return stranded


def _in_subnet(ip, cidr):
    """Whether `ip` lies in the network of `cidr` ('ip/prefix'); standard library, so ip_forwarding needs no netaddr."""
    try:
        address, network = ipaddress.ip_address(str(ip).strip()), ipaddress.ip_interface(str(cidr).strip()).network
    except ValueError:
        return False
    return address.version == network.version and address in network


def _profile_sections(data):
    """(includes, {sysctl key: value}) of one TuneD profile text (ini: [main] include=, [sysctl] key=value)."""
    section, includes, sysctls = None, [], {}
    for raw in (data or '').splitlines():
        line = raw.strip()
        if not line or line.startswith('#'):
            continue
        if line.startswith('[') and line.endswith(']'):
            section = line[1:-1].strip()
            continue
        key, sep, value = line.partition('=')
        if not sep:
            continue
        if section == 'main' and key.strip() == 'include':
            includes += [name.strip().lstrip('-') for name in value.split(',') if name.strip()]
        elif section == 'sysctl':
            sysctls[key.strip()] = value.strip()
    return includes, sysctls


def _resolved_sysctls(name, texts, seen=()):
    """Sysctls of a profile with its includes (the including profile wins); stock profiles set no forwarding."""
    if name not in texts or name in seen:
        return {}
    includes, own = _profile_sections(texts[name])
    merged = {}
    for include in includes:
        merged.update(_resolved_sysctls(include, texts, seen + (name,)))
    merged.update(own)
    return merged


def forwarding_in_profile(name, tuneds, interface):
    """Whether TuneD profile `name` (its text in the Tuned objects) sets IPv4 forwarding on `interface`."""
    texts = dict((item.get('name'), item.get('data')) for tuned in tuneds or [] for item in (tuned.get('spec') or {}).get('profile') or [])
    sysctls = _resolved_sysctls(name, texts)
    for key in ('net.ipv4.conf.%s.forwarding' % sysctl_interface(interface), 'net/ipv4/conf/%s/forwarding' % interface):
        if key in sysctls:
            return sysctls[key] == '1'
    return any(sysctls.get(key) == '1' for key in ('net.ipv4.ip_forward', 'net.ipv4.conf.all.forwarding'))


def cluster_ip_forwarding(network_operator):
    """`gatewayConfig.ipForwarding` of networks.operator.openshift.io/cluster ('' when unset = Restricted)."""
    spec = (network_operator or {}).get('spec') or {}
    gateway = ((spec.get('defaultNetwork') or {}).get('ovnKubernetesConfig') or {}).get('gatewayConfig') or {}
    return gateway.get('ipForwarding') or ''


def ip_forwarding_patch(mode_value):
    return {'spec': {'defaultNetwork': {'ovnKubernetesConfig': {'gatewayConfig': {'ipForwarding': mode_value}}}}}


# --- egress-assignable nodes --------------------------------------------------------------------

def in_network(address, networks):
    """Whether 'ip/prefix' is a base address inside one of `networks` (same prefix length: not a /32 egress IP)."""
    return any(host_cidr_holds(address, network) for network in networks)


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


def label_recorded(obj):
    """Whether a Node (or MachineSet template metadata holder) carries the record that this collection set its label."""
    return (((obj or {}).get('metadata') or {}).get('annotations') or {}).get(LABEL_RECORD_ANNOTATION) == MANAGED_BY_VALUE


def unowned_egress_ips(hosted, owned_objects, networks=None):
    """The (object, IP) pairs of `hosted` this collection does not own: of an object without its label, or outside
    the secondary `networks` (a primary-network egress IP)."""
    parsed = [netaddr.IPNetwork(network) for network in networks or []]

    def in_secondary(ip):
        try:
            address = netaddr.IPAddress(str(ip).strip())
        except (netaddr.AddrFormatError, ValueError, TypeError):
            return False
        return not parsed or any(address.version == network.version and address in network for network in parsed)
    return [(name, ip) for name, ip in hosted if name not in owned_objects or not in_secondary(ip)]


def plan_labels(labelled, capable, matching, egressips, exclusive=True, force=False, recorded=(), networks=None):
    """Label changes for the egress-assignable label.

    labelled: nodes that carry the label now. capable: nodes that match the selector and can host
    secondary egress IPs. matching: nodes that match the selector. egressips: EgressIP objects
    (status.items says which node hosts which IP). recorded: labelled nodes whose label this collection
    set (LABEL_RECORD_ANNOTATION); the others were labelled by hand (or by a release before the record) and
    keep their label unless force. networks: the secondary cidrs (an egress IP outside them is a primary-network one).
    Returns (add, remove, findings): removing a label is refused (unless force) when the node hosts an egress IP this
    collection does not own (it would move), or one of its own without a capable replacement (a labelled capable
    node that does not host another IP of the same object).
    """
    labelled, capable, matching = set(labelled), set(capable), set(matching)
    recorded = set(recorded) & labelled
    add = sorted(capable - labelled)
    candidates = labelled - capable
    if not exclusive:
        candidates &= matching
    findings = hand_made_findings(sorted(candidates - recorded), sorted((labelled & capable) - recorded), matching, force)
    remove = sorted(candidates if force else candidates & recorded)
    if force:
        return add, remove, findings
    owned_objects = set(obj['metadata']['name'] for obj in egressips or [] if is_managed(obj))
    hosted = hosted_egress_ips(egressips)
    for node in remove:
        findings += [_moves_unowned(node, name, ip) for name, ip in unowned_egress_ips(hosted.get(node, []), owned_objects, networks)]
    findings += _strands(remove, capable, egressips, dict(
        (node, [pair for pair in pairs if pair not in unowned_egress_ips(pairs, owned_objects, networks)]) for node, pairs in hosted.items()))
    return add, remove, findings


def hand_made_findings(kept, labelled_capable, matching, force):
    """One finding per label this collection did not set: kept (warning; removed with force) or left as it is (info)."""
    fix = ('Fix: to hand it over (later runs and disable then manage it), run egress_nodes with adopt: true (egress_nodes_adopt) or '
           '`oc annotate node %s %s=%s`; to remove it, `oc label node %s %s-` (or force: true).')
    findings = []
    for node in kept:
        where = 'matches' if node in matching else 'is outside'
        findings.append(catalogue_finding(
            'egress_label_set_by_hand', 'node %s %s the egress node selector and carries %s without the record %s=%s: the label was '
            'not set by this collection (by hand, or by a release before the record), so it %s. %s'
            % (node, where, EGRESS_ASSIGNABLE_LABEL, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE,
               'is removed (force)' if force else 'is kept', fix % (node, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE, node, EGRESS_ASSIGNABLE_LABEL)),
            objects=[{'kind': 'Node', 'name': node}]))
    for node in labelled_capable:
        findings.append(catalogue_finding(
            'egress_label_set_by_hand', 'node %s carries %s without the record %s=%s (set by hand, or by a release before the record): '
            'it stays, and disable will not remove it. %s'
            % (node, EGRESS_ASSIGNABLE_LABEL, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE,
               fix % (node, LABEL_RECORD_ANNOTATION, MANAGED_BY_VALUE, node, EGRESS_ASSIGNABLE_LABEL)),
            objects=[{'kind': 'Node', 'name': node}], severity='info'))
    return findings


def _moves_unowned(node, name, ip):
    return catalogue_finding(
        'node_hosts_unowned_egress_ips',
        'removing %s from node %s would move egress IP %s of EgressIP %s, which this collection does not own (a primary-network '
        'egress IP, or an object without the label %s=%s).' % (EGRESS_ASSIGNABLE_LABEL, node, ip, name, MANAGED_BY_LABEL, MANAGED_BY_VALUE),
        objects=[{'kind': 'Node', 'name': node}, {'kind': 'EgressIP', 'name': name}])


def _strands(remove, capable, egressips, hosted):
    """node_hosts_egress_ips for each owned egress IP on a node losing its label without a capable replacement."""
    by_object = {}
    for obj in egressips or []:
        by_object[obj['metadata']['name']] = set(item.get('node') for item in (obj.get('status') or {}).get('items') or [])
    findings = []
    for node in remove:
        for object_name, egress_ip in hosted.get(node, []):
            needed = sum(1 for other in remove for name, _ip in hosted.get(other, []) if name == object_name)
            spare = set(capable) - by_object.get(object_name, set())  # after the change exactly the capable nodes are labelled
            if len(spare) < needed:
                findings.append(catalogue_finding(
                    'node_hosts_egress_ips',
                    'removing %s from node %s would strand egress IP %s of EgressIP %s: %d capable replacement node(s) for %d IP(s) of that object.'
                    % (EGRESS_ASSIGNABLE_LABEL, node, egress_ip, object_name, len(spare), needed),
                    objects=[{'kind': 'Node', 'name': node}, {'kind': 'EgressIP', 'name': object_name}]))
    return findings


# --- diffs -----------------------------------------------------------------------------------------

def diff_entry(objects):
    """One side of a diff: {name: owned view} sorted by name, as JSON-friendly data."""
    return dict((name, objects[name]) for name in sorted(objects))


def to_json(value):
    return json.loads(json.dumps(value, sort_keys=True))


# --- node_nic_address: the plan ------------------------------------------------------------------

NIC_ENTRY_KEYS = ('node', 'mac', 'address', 'ipv6_address')


def nic_entries(raw, keys=NIC_ENTRY_KEYS):
    """The `nodes` option as [{node, mac, ...}] and the refusals for entries that are not mappings.

    Keys other than `keys` are ignored, so the `vms` list that vsphere_vm_nic returns (node, mac,
    uuid, action, ...) can be passed as it is. Values are stripped strings or None.
    """
    entries, findings = [], []
    for index, item in enumerate(raw or []):
        if not isinstance(item, dict):
            findings.append(_input_invalid('nodes[%d]' % index, item, 'is not a mapping', 'give {node: <name>, mac: <MAC>}.'))
            continue
        entry = {}
        for key in keys:
            value = item.get(key)
            entry[key] = str(value).strip() or None if value is not None else None
        entries.append(entry)
    return entries, findings


def check_interface_name(name):
    """The NetworkManager profile name of the secondary NIC (interface_name): at most 15 characters, no spaces or /."""
    if not name or len(name) > 15 or '/' in name or ' ' in name:
        return [catalogue_finding('node_network_input_invalid', 'interface_name %r is not a valid interface name.' % name,
                                  objects=[{'kind': 'option', 'name': 'interface_name'}],
                                  remedy='use at most 15 characters without spaces or /, e.g. egressip0.')]
    return []


def validate_nic_entries(entries, need_mac=True):
    """Refusals for the `nodes` option: missing or repeated node names, malformed or repeated MACs."""
    findings = []
    seen_nodes, seen_macs = {}, {}
    for index, entry in enumerate(entries):
        field = 'nodes[%d]' % index
        node, mac = entry.get('node'), entry.get('mac')
        if not node:
            findings.append(_input_invalid('%s.node' % field, node, 'is empty', 'give the name of the Node.'))
        elif node in seen_nodes:
            findings.append(_input_invalid('%s.node' % field, node, 'repeats nodes[%d]' % seen_nodes[node], 'list each node once.'))
        else:
            seen_nodes[node] = index
        if not mac:
            if need_mac:
                findings.append(_input_invalid('%s.mac' % field, mac, 'is empty',
                                               'give the MAC of the secondary NIC (vsphere_vm_nic returns it per node).'))
            continue
        if not valid_mac(mac):
            findings.append(_input_invalid('%s.mac' % field, mac, 'is not a MAC address', 'write it as 00:50:56:aa:bb:cc.'))
        elif normalize_mac(mac) in seen_macs:
            findings.append(_input_invalid('%s.mac' % field, mac, 'is also the MAC of nodes[%d]' % seen_macs[normalize_mac(mac)],
                                           'each node has its own NIC; check the NIC list.'))
        else:
            seen_macs[normalize_mac(mac)] = index
    return findings


def _input_invalid(field, value, problem, fix):
    return catalogue_finding('node_network_input_invalid', '%s %r %s.' % (field, value, problem),
                             objects=[{'kind': 'option', 'name': field}], remedy=fix)


def _by_name(objects):
    return dict((obj['metadata']['name'], obj) for obj in objects or [])


def address_uses(node_networks, egressips):
    """Every address held by a node (host-cidrs, primary) or claimed by an EgressIP object."""
    uses = []
    for node in node_networks:
        for cidr in tuple(node.host_cidrs) + tuple(node.primary_ifaddrs):
            uses.append(_address_plan.AddressUse(str(cidr.ip), 'node', node.name))
    for obj in egressips or []:
        for address in (obj.get('spec') or {}).get('egressIPs') or []:
            uses.append(_address_plan.AddressUse(address, 'egressip', obj['metadata']['name']))
    return uses


def host_subnet_inputs(node_networks):
    """(primary, host) lists of (subnet text, owner) for check_host_subnets."""
    primary, host = [], []
    for node in node_networks:
        for cidr in node.primary_ifaddrs:
            primary.append((str(cidr), 'node %s primary address' % node.name))
        for cidr in node.host_cidrs:
            if not any(cidr.ip == other.ip for other in node.primary_ifaddrs):
                host.append((str(cidr), 'node %s' % node.name))
    return primary, host


def _input_findings(entries, nodes, policies, networks, node_networks):
    """Refusals of the input against the cluster: unknown nodes, host subnets in the way, policies not ours."""
    findings = []
    for index, entry in enumerate(entries):
        if entry['node'] not in nodes:
            findings.append(_input_invalid('nodes[%d].node' % index, entry['node'], 'is not a Node of the cluster',
                                           'give the name of an existing Node (oc get nodes).'))
    primary, host = host_subnet_inputs(node_networks)
    for network in networks:
        findings += _address_plan.check_host_subnets(network, primary, host)
    for name in [entry['node'] for entry in entries if entry['node'] in nodes]:
        existing_policy = policies.get(policy_name(name))
        if existing_policy is not None and not is_managed(existing_policy):
            findings.append(catalogue_finding(
                'node_object_not_owned',
                'NodeNetworkConfigurationPolicy %s exists without the label %s=%s; it was not created by this collection.'
                % (policy_name(name), MANAGED_BY_LABEL, MANAGED_BY_VALUE),
                objects=[{'kind': POLICY_KIND, 'name': policy_name(name)}, {'kind': 'Node', 'name': name}]))
    return findings


def _settled_allocations(policies, unsettled, nodes):
    """(allocations of the policies that settled their claim, findings for those whose node is gone)."""
    allocations = [policy_allocation(policy) for name, policy in policies.items() if name not in unsettled]
    allocations = [item for item in allocations if item]
    findings = []
    for item in allocations:
        if item['node'] not in nodes:
            findings.append(catalogue_finding(
                'node_policy_orphaned',
                'NodeNetworkConfigurationPolicy %s keeps %s reserved for node %s, which no longer exists.'
                % (item['name'], ', '.join(item['addresses'][v] for v in sorted(item['addresses'])), item['node']),
                objects=[{'kind': POLICY_KIND, 'name': item['name']}]))
    return allocations, findings


def _plan_families(networks, names, entry_by_node, allocations_by_policy, node_networks, uses):
    """(planned {node: {version: address}}, sources {node: {version: source}}, findings): one address plan per family."""
    networks_by_name = dict((node.name, node) for node in node_networks)
    planned = dict((name, {}) for name in names)
    sources = dict((name, {}) for name in names)
    findings = []
    for network in networks:
        existing = dict((item['node'], item['addresses'][network.version]) for item in allocations_by_policy
                        if network.version in item['addresses'])
        key = 'address' if network.version == 4 or len(networks) == 1 else 'ipv6_address'
        requested = dict((name, entry_by_node[name].get(key)) for name in names if entry_by_node[name].get(key))
        current = {}
        for name in names:
            held = [str(cidr) for cidr in networks_by_name[name].host_cidrs if network.held_by(cidr)]
            if held:
                current[name] = held
        allocations, plan_findings = _address_plan.plan_addresses(network, names, existing, requested, current, uses)
        findings += plan_findings
        for item in allocations:
            planned[item['node']][network.version] = item['address']
            sources[item['node']][network.version] = item['source']
    return planned, sources, findings


def _secondary_interfaces(names, entry_by_node, states):
    """({node: kernel name of the NIC with the entry's MAC}, [pending: nodes whose NodeNetworkState lacks that NIC])."""
    ifnames, pending = {}, []
    for name in names:
        interface = interface_by_mac(states.get(name), entry_by_node[name]['mac'])
        if interface is not None:
            ifnames[name] = interface.get('name')
        else:
            pending.append(pending_interface(name, entry_by_node[name]['mac'], states.get(name)))
    return ifnames, pending


def _allocation(entry, name, plan_inputs, current, desired):
    """The allocation row of one node: its addresses, policy, interface and the policy's progress."""
    planned, sources, ifnames, enactments = plan_inputs
    progress, message = (PROGRESSING, 'policy not created yet')
    if current is not None and not owned_patch(current, desired):
        progress, message = policy_progress(current, enactments.get(enactment_name(name, current['metadata']['name'])))
    return {'node': name, 'mac': normalize_mac(entry['mac']), 'policy': desired['metadata']['name'],
            'address': planned[name].get(4) or planned[name].get(6),
            'ipv6_address': planned[name].get(6) if 4 in planned[name] else None,
            'source': sources[name].get(4) or sources[name].get(6),
            'interface': ifnames.get(name), 'status': progress, 'message': message}


def plan_nic_addresses(entries, networks, route_metric, profile_name, snapshot):
    """Desired policies for `entries` ([{node, mac, address, ipv6_address}]) on the secondary `networks`.

    networks: validated model/network.py Family objects, one per family (IPv4 first when both).
    snapshot: {'nodes', 'nncps', 'nnces', 'nns', 'egressips'} as listed from the API (snapshot/kubernetes.py).
    Returns a dict: findings, allocations (per entry), writes ({'create'|'patch': ...}), diff sides.
    """
    nodes = _by_name(snapshot['nodes'])
    policies = _by_name(snapshot['nncps'])
    states = _by_name(snapshot['nns'])
    node_networks = [node_networks_from_node(node) for node in snapshot['nodes']]
    findings = _input_findings(entries, nodes, policies, networks, node_networks)
    names = [entry['node'] for entry in entries if entry['node'] in nodes]
    unsettled = set(unsettled_claims(policies.values()))
    allocations_by_policy, orphaned = _settled_allocations(policies, unsettled, nodes)
    findings += orphaned
    entry_by_node = dict((entry['node'], entry) for entry in entries)
    planned, sources, family_findings = _plan_families(networks, names, entry_by_node, allocations_by_policy, node_networks,
                                                       address_uses(node_networks, snapshot.get('egressips')))
    findings += family_findings
    secondary_ifnames, pending = _secondary_interfaces(names, entry_by_node, states)
    findings += route_metric_findings(dict((name, states[name]) for name in names if name in states), route_metric,
                                      secondary_ifnames, versions=[network.version for network in networks])

    gateways = dict((network.version, str(network.gateway)) for network in networks)
    plan_inputs = (planned, sources, secondary_ifnames, _by_name(snapshot.get('nnces')))
    plan = {'findings': findings, 'allocations': [], 'create': [], 'patch': [], 'before': {}, 'after': {}, 'pending': pending,
            'reclaim': [policy_name(name) for name in names if policy_name(name) in unsettled]}
    for entry in entries:
        name = entry['node']
        if name not in planned or len(planned[name]) != len(networks):
            continue
        hostname = ((nodes[name].get('metadata') or {}).get('labels') or {}).get(HOSTNAME_LABEL) or name
        route_interface = secondary_ifnames.get(name) or unknown_interface(entry['mac'])
        desired = desired_policy(name, hostname, entry['mac'], planned[name], gateways, route_metric, profile_name, route_interface)
        current = policies.get(desired['metadata']['name'])
        _add_write(plan, current, desired, park=desired['metadata']['name'] in plan['reclaim'])
        plan['allocations'].append(_allocation(entry, name, plan_inputs, current, desired))
    return plan


def _add_write(plan, current, desired, park=False):
    """A create or a patch of the owned part; `park` keeps a re-allocated policy parked until its claim is checked."""
    name = desired['metadata']['name']
    if current is None:
        plan['create'].append(desired)
    else:
        patch = owned_patch(current, parked(desired) if park else desired)
        if not patch:
            return
        plan['patch'].append((name, patch))
        plan['before'][name] = owned_view(current, desired)
    plan['after'][name] = owned_view(desired, desired)


def pending_interface(node, mac, nns):
    """A node whose NodeNetworkState lists no NIC with `mac` yet: what it lists instead, for the message."""
    listed = ['%s %s' % (item.get('name'), normalize_mac(item.get('mac-address'))) for item in nns_interfaces(nns)
              if item.get('type', 'ethernet') == 'ethernet' and item.get('mac-address')]
    return {'node': node, 'mac': normalize_mac(mac), 'state_found': nns is not None, 'listed': listed}


def unknown_interface(mac):
    """Stands for the kernel name in a policy shown before NodeNetworkState lists the NIC (check mode only)."""
    return '<kernel name of %s>' % normalize_mac(mac)


def pending_findings(pending, waited, severity='error'):
    """node_nic_not_in_state for each node whose NodeNetworkState has not listed the NIC (after `waited` s)."""
    findings = []
    for item in pending:
        seen = ('it lists %s' % ', '.join(item['listed'])) if item['listed'] else (
            'it lists no ethernet interface' if item['state_found'] else 'the node has no NodeNetworkState')
        findings.append(catalogue_finding(
            'node_nic_not_in_state',
            'The NodeNetworkState of node %s lists no interface with MAC %s%s (%s). The gateway route must name the NIC\'s '
            'kernel interface, which only NodeNetworkState tells.' % (
                item['node'], item['mac'], ' after waiting %d s' % waited if waited else '', seen),
            objects=[{'kind': 'Node', 'name': item['node']}, {'kind': 'NodeNetworkState', 'name': item['node']}],
            severity=severity))
    return findings


def cleanup_state(allocation, profile_name, route_interface=None):
    """desiredState that removes the secondary addresses and gateway routes before the policy is deleted.

    Deleting a policy never rolls a node back (nmstate keeps the configuration), so the
    address goes first: the NIC stays up with IP disabled (deleting its profile would let
    NetworkManager start DHCP on it), the routes of the policy are marked absent. An absent
    route matches by its next-hop interface's kernel name (no release resolves a profile name
    there); disabling IP removes the NIC's routes anyway when the kernel name is not known.
    """
    interface = {'name': profile_name, 'type': 'ethernet', 'state': 'up', 'identifier': 'mac-address',
                 'mac-address': normalize_mac(allocation['mac']).upper(),
                 'ipv4': {'enabled': False}, 'ipv6': {'enabled': False}}
    routes = [{'destination': '0.0.0.0/0' if version == 4 else '::/0', 'next-hop-interface': route_interface or profile_name,
               'state': 'absent'}
              for version in sorted(allocation['addresses'])]
    return {'interfaces': [interface], 'routes': {'config': routes}}


def egress_ips_in(hosted, addresses):
    """The (object, ip) pairs of `hosted` inside the subnets of `addresses` ('ip/prefix')."""
    subnets = [netaddr.IPNetwork(text).cidr for text in addresses]
    inside = []
    for name, ip in hosted:
        address = netaddr.IPAddress(ip)
        if any(subnet.version == address.version and address in subnet for subnet in subnets):
            inside.append((name, ip))
    return inside


def plan_nic_release(node_names, snapshot, force):
    """Policies to remove for `node_names` (state: absent) and whether each needs the address cleanup first.

    Returns {'findings', 'release': [{'node', 'policy', 'allocation', 'cleanup': bool, 'interface'}], 'before'}
    (interface: the NIC's kernel name when the NodeNetworkState lists it).
    A node that hosts egress IPs in the released subnets is refused unless force.
    """
    nodes = _by_name(snapshot['nodes'])
    states = _by_name(snapshot['nns'])
    hosted = hosted_egress_ips(snapshot.get('egressips'))
    plan = {'findings': [], 'release': [], 'before': {}}
    for policy in snapshot['nncps']:
        allocation = policy_allocation(policy)
        if allocation is None or allocation['node'] not in node_names:
            continue
        stranded = egress_ips_in(hosted.get(allocation['node'], []), allocation['addresses'].values())
        if stranded and not force:
            plan['findings'].append(catalogue_finding(
                'node_hosts_egress_ips',
                'releasing the secondary address of node %s would strand egress IP(s) %s it hosts.'
                % (allocation['node'], ', '.join('%s (EgressIP %s)' % (ip, name) for name, ip in stranded)),
                objects=[{'kind': 'Node', 'name': allocation['node']}]))
            continue
        interface = interface_by_mac(states.get(allocation['node']), allocation['mac']) if allocation['node'] in nodes else None
        plan['release'].append({'node': allocation['node'], 'policy': policy['metadata']['name'], 'allocation': allocation,
                                'cleanup': interface is not None, 'current': policy,
                                'interface': (interface or {}).get('name')})
        plan['before'][policy['metadata']['name']] = owned_view(policy, {'metadata': {'labels': {MANAGED_BY_LABEL: None},
                                                                                      'annotations': {NODE_ANNOTATION: None,
                                                                                                      ADDRESSES_ANNOTATION: None}},
                                                                         'spec': {'nodeSelector': None, 'desiredState': None}})
    return plan


# --- hand-made policies of the same NIC (node_nic_address replace_hand_made, migrate) -------------

REPLACEABLE_SPEC_KEYS = ('nodeSelector', 'desiredState', 'maxUnavailable')
REPLACEABLE_STATE_KEYS = ('interfaces', 'routes')
REPLACEABLE_INTERFACE_KEYS = ('name', 'type', 'state', 'identifier', 'mac-address', 'profile-name', 'ipv4', 'ipv6')
REPLACEABLE_FAMILY_KEYS = ('enabled', 'dhcp', 'autoconf', 'address')


def names_nic(interface, mac, kernel_name):
    """Whether one desiredState interface names this NIC: by MAC (`identifier: mac-address`), else by its kernel name."""
    if not isinstance(interface, dict):
        return False
    if interface.get('identifier') == 'mac-address':
        return bool(mac) and normalize_mac(interface.get('mac-address')) == normalize_mac(mac)
    return bool(kernel_name) and interface.get('name') == kernel_name


def policy_nic_interface(policy, labels, mac, kernel_name):
    """The interface of `policy` that configures this NIC of the node with `labels`, or None.

    The policy's nodeSelector must match the node (an empty one matches every node) and one of its
    interfaces must name the NIC (names_nic).
    """
    spec = (policy or {}).get('spec') or {}
    if not selector_matches(spec.get('nodeSelector') or {}, labels or {}):
        return None
    for interface in (spec.get('desiredState') or {}).get('interfaces') or []:
        if names_nic(interface, mac, kernel_name):
            return interface
    return None


def _address_key(text):
    entry = netaddr.IPNetwork(str(text))
    return (entry.version, int(entry.ip), entry.prefixlen)


def _family_blockers(interface, addresses):
    """Why the NIC's IP settings in a hand-made interface differ from the collection's ([] when they are the same)."""
    reasons = []
    for version, key in ((4, 'ipv4'), (6, 'ipv6')):
        family = interface.get(key)
        wanted = addresses.get(version)
        if not wanted:
            if isinstance(family, dict) and family.get('enabled'):
                reasons.append('it enables %s, which the collection\'s policy leaves off' % key)
            continue
        if not isinstance(family, dict) or not family.get('enabled'):
            reasons.append('it does not give the NIC the %s address %s' % (key, wanted))
            continue
        for flag in ('dhcp', 'autoconf'):
            if family.get(flag):
                reasons.append('it turns %s %s on' % (key, flag))
        extra = sorted(set(family) - set(REPLACEABLE_FAMILY_KEYS))
        if extra:
            reasons.append('it also sets %s' % ', '.join('%s.%s' % (key, name) for name in extra))
        held = []
        for entry in family.get('address') or []:
            entry = entry if isinstance(entry, dict) else {}
            held.append('%s/%s' % (entry.get('ip'), entry.get('prefix-length')))
        try:
            same = sorted(_address_key(text) for text in held) == [_address_key(wanted)]
        except (netaddr.AddrFormatError, ValueError, TypeError):
            same = False
        if not same:
            reasons.append('its %s address(es) %s differ from the collection\'s %s' % (key, ', '.join(held) or 'none', wanted))
    return reasons


def replace_blockers(policy, hostname, mac, kernel_name, addresses):
    """Why deleting a hand-made policy could change what configures the node ([] when it only duplicates the collection's).

    Replaceable means: no ownership label; nodeSelector exactly {kubernetes.io/hostname: hostname};
    a desiredState of exactly one interface, this NIC (names_nic), up, of type ethernet, holding exactly
    the base address(es) `addresses` ({4: 'ip/prefix', 6: ...}) with no DHCP or autoconf and no other
    setting, plus optionally routes through that interface; nothing else (no other interface, no
    dns-resolver, no route-rules, no capture). Once the collection's policy is Available on the node,
    deleting such a policy changes nothing there (nmstate never rolls back on deletion).
    """
    reasons = []
    metadata = (policy or {}).get('metadata') or {}
    labels = metadata.get('labels') or {}
    if MANAGED_BY_LABEL in labels:
        reasons.append('it carries the label %s=%s' % (MANAGED_BY_LABEL, labels[MANAGED_BY_LABEL]))
    spec = (policy or {}).get('spec') or {}
    selector = spec.get('nodeSelector') or {}
    if selector != {HOSTNAME_LABEL: hostname}:
        reasons.append('its nodeSelector %s selects more than this node (%s=%s)' % (json.dumps(selector, sort_keys=True), HOSTNAME_LABEL, hostname))
    extra = sorted(set(spec) - set(REPLACEABLE_SPEC_KEYS))
    if extra:
        reasons.append('it also sets spec.%s' % ', spec.'.join(extra))
    state = spec.get('desiredState') or {}
    extra = sorted(set(state) - set(REPLACEABLE_STATE_KEYS))
    if extra:
        reasons.append('its desiredState also configures %s' % ', '.join(extra))
    interfaces = state.get('interfaces') or []
    nic = [item for item in interfaces if names_nic(item, mac, kernel_name)]
    others = [item for item in interfaces if not names_nic(item, mac, kernel_name)]
    if others:
        reasons.append('it also configures the interface(s) %s' % ', '.join(
            str(item.get('name')) if isinstance(item, dict) else repr(item) for item in others))
    if not nic:
        reasons.append('it does not configure the secondary NIC')
        return reasons
    interface = nic[0]
    if len(nic) > 1:
        reasons.append('it lists the secondary NIC %d times' % len(nic))
    if interface.get('type', 'ethernet') != 'ethernet':
        reasons.append('it gives the NIC the type %s' % interface.get('type'))
    if interface.get('state', 'up') != 'up':
        reasons.append('it sets the NIC %s' % interface.get('state'))
    extra = sorted(set(interface) - set(REPLACEABLE_INTERFACE_KEYS))
    if extra:
        reasons.append('it also sets %s on the NIC' % ', '.join(extra))
    reasons += _family_blockers(interface, addresses)
    routes = state.get('routes') or {}
    if not isinstance(routes, dict):
        reasons.append('its routes are not a mapping')
        return reasons
    extra = sorted(set(routes) - set(['config']))
    if extra:
        reasons.append('it also sets routes.%s' % ', routes.'.join(extra))
    through = set(name for name in (interface.get('name'), interface.get('profile-name'), kernel_name) if name)
    elsewhere = [route for route in routes.get('config') or [] if not isinstance(route, dict) or route.get('next-hop-interface') not in through]
    if elsewhere:
        reasons.append('it has route(s) not through the NIC: %s' % ', '.join(
            '%s via %s' % (route.get('destination'), route.get('next-hop-interface')) if isinstance(route, dict) else repr(route)
            for route in elsewhere))
    return reasons


def plan_hand_made_replacement(allocations, snapshot):
    """Hand-made policies that the collection's policy of each node makes redundant, and the others that configure the NIC.

    allocations: the allocations of plan_nic_addresses (node, mac, policy, address, ipv6_address, interface).
    snapshot: {'nodes', 'nncps'}. Returns {'delete': [{'name', 'node'}], 'keep': [{'name', 'node', 'reason'}],
    'before': {name: view}}: a policy without the ownership label that configures this NIC (policy_nic_interface)
    is deleted when replace_blockers finds nothing, else kept with the reasons.
    """
    nodes = _by_name(snapshot['nodes'])
    policies = sorted(snapshot['nncps'] or [], key=lambda item: item['metadata']['name'])
    plan = {'delete': [], 'keep': [], 'before': {}}
    for allocation in allocations:
        node = nodes.get(allocation['node'])
        if node is None:
            continue
        labels = (node.get('metadata') or {}).get('labels') or {}
        hostname = labels.get(HOSTNAME_LABEL) or allocation['node']
        addresses = {}
        for text in (allocation.get('address'), allocation.get('ipv6_address')):
            if text:
                addresses[6 if ':' in text else 4] = text
        for policy in policies:
            name = policy['metadata']['name']
            if is_managed(policy) or name == allocation['policy']:
                continue
            if policy_nic_interface(policy, labels, allocation['mac'], allocation.get('interface')) is None:
                continue
            reasons = replace_blockers(policy, hostname, allocation['mac'], allocation.get('interface'), addresses)
            if reasons:
                plan['keep'].append({'name': name, 'node': allocation['node'], 'reason': '; '.join(reasons)})
            else:
                plan['delete'].append({'name': name, 'node': allocation['node']})
                plan['before'][name] = owned_view(policy, {'spec': {'nodeSelector': None, 'desiredState': None}})
    return plan


# --- ip_forwarding: the plan ---------------------------------------------------------------------

PER_INTERFACE = 'per_interface'
GLOBAL = 'global'


def forwarding_targets(entries, snapshot):
    """[{'node', 'hostname', 'interface', 'parent'}] for the NICs of `entries`, and the refusals.

    The kernel name comes from the node's NodeNetworkState, the interface whose MAC is the NIC's
    (DOMAIN.md section 8): with `identifier: mac-address` the policy never names it.
    """
    nodes = _by_name(snapshot['nodes'])
    states = _by_name(snapshot['nns'])
    targets, findings = [], []
    for index, entry in enumerate(entries):
        name = entry['node']
        if name not in nodes:
            findings.append(_input_invalid('nodes[%d].node' % index, name, 'is not a Node of the cluster',
                                           'give the name of an existing Node (oc get nodes).'))
            continue
        if name not in states:
            findings.append(catalogue_finding('node_network_state_missing', 'node %s has no NodeNetworkState.' % name,
                                              objects=[{'kind': 'Node', 'name': name}]))
            continue
        interface = interface_by_mac(states[name], entry['mac'])
        if interface is None:
            findings.append(catalogue_finding(
                'node_nic_not_found', 'NodeNetworkState of node %s lists no interface with MAC %s, so the kernel name of '
                'the secondary NIC (needed for net.ipv4.conf.<if>.forwarding) is unknown.' % (name, normalize_mac(entry['mac'])),
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


# --- egress_nodes: the plan ----------------------------------------------------------------------

def validate_selector(selector):
    """Refusals for a selector that is neither a label map nor a LabelSelector."""
    try:
        selector_matches(selector, {})
    except (ValueError, AttributeError, TypeError) as exc:
        return [_input_invalid('selector', selector, 'is not a label selector (%s)' % exc,
                               'give {label: value, ...} or {matchLabels: ..., matchExpressions: [{key, operator: In|NotIn|Exists|DoesNotExist, values}]}.')]
    return []


def plan_egress_nodes(selector, networks, macs, snapshot, present=True, exclusive=True, force=False, adopt=False, deleted=()):
    """Which nodes get or lose the egress-assignable label (and the record that this collection set it).

    networks: the secondary cidrs (text). macs: {node: MAC} of the secondary NICs when known.
    snapshot: {'nodes', 'nns', 'egressips'}. Capable = matches the selector, the NIC is up
    with an address in every secondary network (NodeNetworkState) and host-cidrs shows it.
    adopt: record as set by this collection the hand-made labels of capable nodes (present only).
    deleted: EgressIP objects an earlier step of the same run deletes (their IPs hold no label back).
    """
    states = _by_name(snapshot['nns'])
    labelled, recorded, matching, capable, not_capable = [], [], [], [], []
    for node in sorted(snapshot['nodes'], key=lambda item: item['metadata']['name']):
        name = node['metadata']['name']
        labels = node['metadata'].get('labels') or {}
        if EGRESS_ASSIGNABLE_LABEL in labels:
            labelled.append(name)
        if label_recorded(node):
            recorded.append(name)
        if not selector_matches(selector, labels):
            continue
        matching.append(name)
        host_cidrs = [str(cidr) for cidr in node_networks_from_node(node).host_cidrs]
        reasons = []
        for network in networks:
            reasons += node_capability(host_cidrs, states.get(name), [network], macs.get(name))
        reasons = sorted(set(reasons), key=reasons.index)
        if reasons:
            not_capable.append({'node': name, 'reasons': reasons})
        else:
            capable.append(name)
    egressips = [obj for obj in snapshot.get('egressips') or [] if obj['metadata']['name'] not in set(deleted)]
    wanted = capable if present else []
    owned = set(recorded) & set(labelled)
    adopted = sorted(set(wanted) & set(labelled) - owned) if adopt and present else []
    add, remove, findings = plan_labels(labelled, wanted, matching, egressips, exclusive, force, owned | set(adopted), networks)
    for item in not_capable:
        if present:
            findings.append(catalogue_finding(
                'node_not_capable', 'node %s matches the egress node selector but cannot host egress IPs of %s: %s.'
                % (item['node'], ', '.join(networks), '; '.join(item['reasons'])), objects=[{'kind': 'Node', 'name': item['node']}]))
    after = sorted((set(labelled) - set(remove)) | set(add))
    stale = sorted(set(recorded) - set(labelled) - set(add))  # a record without its label (removed by hand): dropped
    return {'findings': findings, 'add': add, 'remove': remove, 'adopt': adopted, 'forget': stale, 'capable': capable,
            'not_capable': not_capable, 'matching': matching, 'before': labelled, 'after': after,
            'hand_made': sorted(set(after) - owned - set(adopted) - set(add)),
            'recorded_before': sorted(recorded), 'recorded_after': sorted((set(recorded) - set(remove) - set(stale)) | set(add) | set(adopted))}


def label_changes(plan):
    """[(node, merge patch)] of an egress_nodes plan: label with its record, label removal with it, record alone."""
    return ([(name, label_patch(True)) for name in plan['add']] + [(name, label_patch(False)) for name in plan['remove']]
            + [(name, record_patch(True)) for name in plan['adopt']] + [(name, record_patch(False)) for name in plan['forget']])


def label_patch(add):
    """Merge patch of a Node: the egress-assignable label ('') with the record that this collection set it, or both removed (null)."""
    return {'metadata': {'labels': {EGRESS_ASSIGNABLE_LABEL: '' if add else None},
                         'annotations': {LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE if add else None}}}


def record_patch(add):
    """Merge patch of a Node: the record alone (a hand-made label handed over, or a record whose label is gone)."""
    return {'metadata': {'annotations': {LABEL_RECORD_ANNOTATION: MANAGED_BY_VALUE if add else None}}}


def _template_metadata(machineset):
    return (((machineset.get('spec') or {}).get('template') or {}).get('spec') or {}).get('metadata') or {}


def machineset_template_labels(machineset):
    """The labels a MachineSet puts on the Nodes of its new Machines (spec.template.spec.metadata.labels)."""
    return _template_metadata(machineset).get('labels') or {}


def plan_machineset_labels(capable, rows, machinesets, present=True, force=False):
    """MachineSets whose template gets (present) or loses (absent) the egress-assignable label.

    capable: the capable nodes. rows: _machine_api.node_machines() output (node -> MachineSet).
    Present: the MachineSets that build capable nodes, so their next Machines arrive labelled;
    absent: every MachineSet whose template carries the label with this collection's record (the
    template's annotations, which Machine API passes on to the Nodes with the label); a template
    labelled by hand keeps it unless force. Returns ([(name, add)], before, after).
    """
    labelled = sorted(item['metadata']['name'] for item in machinesets
                      if EGRESS_ASSIGNABLE_LABEL in machineset_template_labels(item))
    if present:
        wanted = sorted(set(row['machineset'] for row in rows if row['node'] in set(capable) and row['machineset']))
        changes = [(name, True) for name in wanted if name not in labelled]
        after = sorted(set(labelled) | set(wanted))
    else:
        ours = [item['metadata']['name'] for item in machinesets if force or label_recorded({'metadata': _template_metadata(item)})]
        changes = [(name, False) for name in labelled if name in ours]
        after = sorted(set(labelled) - set(ours))
    return changes, labelled, after


def machineset_label_patch(add):
    """Merge patch of a MachineSet template: the label with its record (Machine API copies both to new Nodes), or both removed."""
    return {'spec': {'template': {'spec': {'metadata': label_patch(add)['metadata']}}}}
