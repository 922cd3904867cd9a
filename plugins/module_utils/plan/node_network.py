# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node side of the secondary network, as pure functions (no I/O): what the node steps share.

- The NodeNetworkConfigurationPolicy for one node (DOMAIN.md section 8): NIC matched by MAC
  (`identifier: mac-address`, the `name` is only the NetworkManager profile name), one static
  base address per family, a gateway route with a metric above the primary default route
  (br-ex stays the default-route interface, section 5 item 5), no DNS, no DHCP, no router
  advertisements. The allocation is recorded on the policy so the next run reads it back;
  parked claims settle which of two writers keeps an address.
- Progress of a policy on its node from the policy and its enactment (`<node>.<policy>`).
- The kernel name of the NIC from NodeNetworkState `status.currentState.interfaces[]`, matched by MAC.
- Merge patches and diffs built by one function for both sides.

The plans of the steps build on it: nic_addresses.py (node_nic_address), hand_made.py (replacing a hand-made
policy of the same NIC), forwarding.py (ip_forwarding), egress_labels.py (egress_nodes). Each module loads only the
plans it runs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json

from ansible_collections.ocp.egressip.plugins.module_utils.core import kinds
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.names import (
    ADDRESSES_ANNOTATION,
    HOSTNAME_LABEL,
    MANAGED_BY_LABEL,
    MANAGED_BY_VALUE,
    NODE_ANNOTATION,
    is_managed,
)


POLICY_API_VERSION = kinds.api_version(kinds.NNCPS)
POLICY_KIND = kinds.NNCPS.kind
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
    is IPv6 only). gateways: {4: 'ip', 6: 'ip'} for the same families. route_metric: one metric, or
    {version: metric} (the route metric per family, SecondaryNetwork.route_metrics()).
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
                       'next-hop-interface': route_interface, 'metric': metric_of(route_metric, version), 'table-id': MAIN_ROUTE_TABLE})
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


def unparked(policy):
    """The policy as it is once activated: `parked` undone."""
    result = copy.deepcopy(policy)
    ((result.get('spec') or {}).get('nodeSelector') or {}).pop(CLAIM_SELECTOR_KEY, None)
    return result


def activation_patch():
    return {'spec': {'nodeSelector': {CLAIM_SELECTOR_KEY: None}}}


def pointer(*keys):
    """The JSON pointer (RFC 6901) of a path of object keys."""
    return ''.join('/' + str(key).replace('~', '~0').replace('/', '~1') for key in keys)


def claim_guard(listed):
    """RFC 6902 ``test`` operations that hold while the policy is parked with the allocation it had when listed: a patch
    that starts with them applies only to that claim, whatever else (its status) changed since."""
    annotations = (listed.get('metadata') or {}).get('annotations') or {}
    return [{'op': 'test', 'path': pointer('metadata', 'annotations', ADDRESSES_ANNOTATION), 'value': annotations.get(ADDRESSES_ANNOTATION)},
            {'op': 'test', 'path': pointer('spec', 'nodeSelector', CLAIM_SELECTOR_KEY), 'value': CLAIM_SELECTOR_VALUE}]


def json_patch_of(current, merge, prefix=()):
    """RFC 6902 operations that do what the merge patch (RFC 7386) `merge` does to `current`."""
    operations = []
    for key in sorted(merge):
        value, path = merge[key], prefix + (key,)
        if value is None:
            if isinstance(current, dict) and key in current:
                operations.append({'op': 'remove', 'path': pointer(*path)})
        elif isinstance(value, dict) and isinstance(current, dict) and isinstance(current.get(key), dict):
            operations += json_patch_of(current[key], value, path)
        else:
            operations.append({'op': 'add', 'path': pointer(*path), 'value': _without_nulls(value)})
    return operations


def _without_nulls(value):
    """A merge patch's new member as a value: null members of a new object mean nothing there."""
    if isinstance(value, dict):
        return dict((key, _without_nulls(item)) for key, item in value.items() if item is not None)
    return value


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


def owned_view(obj, desired, copied=True):
    """The part of `obj` the collection manages: the labels/annotations it sets, and the spec keys it sets (copies of the
    spec values; `copied=False` shares them, for a view that is only read)."""
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
        view['spec'] = dict((key, copy.deepcopy(spec[key]) if copied else spec[key]) for key in desired['spec'] if key in spec)
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
    """Merge patch for the managed part only: never removes labels, annotations or spec keys it did not set (the views are
    only read: merge_patch copies what it puts in the patch)."""
    return merge_patch(owned_view(current, desired, copied=False), owned_view(desired, desired, copied=False))


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


def metric_of(route_metric, version):
    """The metric of the family `version` from one metric or {version: metric}."""
    return int(route_metric[version] if isinstance(route_metric, dict) else route_metric)


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
            metric = metric_of(route_metric, version)
            if metric <= primary:
                field = 'ipv6.route_metric' if isinstance(route_metric, dict) and version == 6 and 4 in route_metric else 'route_metric'
                findings.append(catalogue_finding(
                    'node_route_metric_too_low',
                    '%s %s is not above the metric %s of the primary IPv%s default route of node %s.' % (field, metric, primary, version, node),
                    objects=[{'kind': 'Node', 'name': node}, {'kind': 'option', 'name': field}],
                    remedy='set %s to %d or more so br-ex stays the default-route interface.' % (field, primary + 1)))
    return findings


def _without_routes_of(nns, interface):
    if not interface:
        return nns
    nns = copy.deepcopy(nns)
    routes = (((nns or {}).get('status') or {}).get('currentState') or {}).get('routes') or {}
    routes['running'] = [route for route in routes.get('running') or [] if route.get('next-hop-interface') != interface]
    return nns


# --- shared by the plans of the node steps ---------------------------------------------------------

def input_invalid(field, value, problem, fix):
    """The node_network_input_invalid finding of one option value."""
    return catalogue_finding('node_network_input_invalid', '%s %r %s.' % (field, value, problem),
                             objects=[{'kind': 'option', 'name': field}], remedy=fix)


def by_name(objects):
    """{metadata.name: object}."""
    return dict((obj['metadata']['name'], obj) for obj in objects or [])


# --- diffs -----------------------------------------------------------------------------------------

def diff_entry(objects):
    """One side of a diff: {name: owned view} sorted by name, as JSON-friendly data."""
    return dict((name, objects[name]) for name in sorted(objects))


def to_json(value):
    return json.loads(json.dumps(value, sort_keys=True))
