# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where OVN-Kubernetes' cluster manager will put each egress IP, now and when a node fails.

Pure code: no I/O. Every argument and result is plain JSON-serialisable data, so modules can
return it, roles can keep it as a fact and the failover drill can compare it with what it
observes later.

The model follows ovn-kubernetes go-controller/pkg/clustermanager/egressip_controller.go
(DOMAIN.md section 3):

- candidates for an IP are the nodes that are labelled ``k8s.ovn.org/egress-assignable``,
  Ready and reachable, and that can host the IP: inside the node's primary subnet
  (``node-primary-ifaddr``), or by longest-prefix match over the node's other
  ``host-cidrs``; when any candidate holds the IP on a secondary network, only those do;
- the least loaded candidate wins (load = egress IPs it already hosts, of any object);
  equally loaded nodes are picked in an arbitrary order (Go map iteration), so a prediction is
  a SET of candidate nodes, never one guessed node;
- hard rules: one node never hosts two IPs of the same EgressIP object; an IP equal to a
  node address is refused (``EgressIPConflict``, the rest of that object's assignment pass is
  abandoned); an IP already held by another EgressIP object is refused
  (``UnsupportedRequest``, same); no capable node left means the IP stays unassigned
  (``NoMatchingNodeFound`` when nothing was assigned, ``UnassignedRequest`` otherwise);
- valid assignments are kept (no rebalancing, no failback); an assignment becomes invalid
  when its node loses the label, Ready, reachability, or the network that hosts the IP;
- objects are reconciled one at a time in an order the prediction does not assume, and the
  IPs of one object in an arbitrary order (Go set iteration).

The search explores every order and every tie (with symmetric nodes explored once) and
reports for each IP the union of its outcomes. When the search exceeds its budget, the
result is a sound over-approximation built from load bounds and says so (``exact: false``).
The search and the model it works on are in placement_search.py; this file holds the snapshot, the
predictions built on the search and the checks on observed state.

Not modelled: per-node capacity (clouds only, DOMAIN.md section 3); the upstream loop keeps
the secondary-network restriction of one IP for the next IPs of the same pass, which only
matters for an object mixing primary- and secondary-network IPs (the collection manages
secondary-network objects only); reachability, which the API does not show (pass
``unreachable``).

API
---

``snapshot(nodes, egressips, unreachable=(), owner_label=None) -> snapshot``
    Build the snapshot from the Node and EgressIP objects as the API lists them. Node
    reachability (OVN-K's gRPC probe) is not visible through the API: pass the names of
    nodes known to be unreachable. A snapshot is
    ``{'nodes': {name: {'labelled', 'ready', 'reachable', 'cordoned', 'addresses',
    'primary', 'secondary'}}, 'egressips': {name: {'egress_ips', 'status', 'owned'}}}``.

``with_objects(snapshot, objects, removed=()) -> snapshot``
    The snapshot after applying EgressIP specs ``[{'name', 'egress_ips'}]`` (status of IPs
    still requested is kept) and deleting the objects named in ``removed``.

``predict(snapshot, budget=BUDGET) -> {'placements': [...], 'exact': bool, 'egress_nodes': [...]}``
    One placement per (object, IP) in spec order: ``{'egressip', 'ip', 'node'`` (current
    valid assignment or None), ``'state'`` (``kept`` or ``pending``), ``'candidates'`` (sorted
    node names it is or will be on), ``'may_be_unassigned'``, ``'reasons'`` (event reasons
    that could leave it unassigned)``}``.

``what_if(snapshot, node, trigger='unlabel', budget=BUDGET, carrier_loss=None) -> dict``
    What happens when ``node`` fails: ``{'node', 'trigger', 'effect'`` (``moves``, ``none``
    or ``blackhole``)``, 'moved': [{'egressip', 'ip', 'from', 'candidates',
    'may_be_unassigned', 'reasons'}], 'unassigned': [{'egressip', 'ip', 'certain',
    'reasons'}], 'blackholed': [{'egressip', 'ip'}], 'exact', 'notes'}``; for
    ``disconnect_nic`` also ``'carrier_loss'`` (``remove`` or ``keep``, see ``CARRIER_LOSS``;
    None means ``DEFAULT_CARRIER_LOSS``, said in ``notes``).
    Triggers: see ``TRIGGERS``. Pending IPs of the snapshot whose placement is certain are
    placed first; uncertain ones stay pending (and are named in ``notes``).

``what_if_all(snapshot, trigger='unlabel', nodes=None) -> [what_if, ...]``
    ``what_if`` for every egress node (labelled nodes), or for the named ones.

``single_points_of_failure(what_ifs) -> [{'node', 'ips': [{'egressip', 'ip', 'certain'}]}]``
    Nodes whose failure may leave an IP unassigned.

``plan(snapshot, trigger='unlabel', budget=BUDGET) -> dict``
    ``predict`` + ``what_if_all`` + ``single_points_of_failure`` in one result.

``hosting_nodes(snapshot, ip, require_ready=True) -> [names]``
    Labelled (and Ready, reachable) nodes that can host ``ip``: the capable nodes.

``holds_network(snapshot, node, ip) -> 'primary' | 'secondary' | None``
    Which of the node's networks would host ``ip``.

``assignment_gaps(snapshot, names=None, network=None) -> [{'egressip', 'ip', 'node', 'problem'}]``
    Requested IPs not assigned (``unassigned``), or assigned to a node that is gone
    (``node_missing``) or whose ``host-cidrs`` do not hold ``network``
    (``node_lacks_network``). Empty when every IP is where it should be.

``compare(prediction, after) -> [{'egressip', 'ip', 'predicted', 'actual', 'ok'}]``
    Check a ``what_if`` result against a snapshot read after the failure: each moved IP
    must be on one of its candidates, or unassigned where that was predicted possible.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import EGRESS_ASSIGNABLE_LABEL
from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import egressip_facts as _egressip_facts
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement_search as ps
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip

BUDGET = 200000  # work units (nodes + IPs per search step): well under a second
EGRESS_LABEL = EGRESS_ASSIGNABLE_LABEL

# Failure triggers: what the cluster manager sees, and what it does about the node's IPs.
TRIGGERS = {
    'unlabel': 'the node loses the egress-assignable label: its egress IPs move',
    'not_ready': 'the node is not Ready: its egress IPs move',
    'unreachable': "OVN-K's reachability probe fails: its egress IPs move",
    'power_off': 'the node VM is powered off (not Ready, unreachable): its egress IPs move',
    'deleted': 'the Node object is deleted: its egress IPs move',
    'subnet_gone': "the secondary networks disappear from the node's host-cidrs: IPs on them move",
    'cordon': 'cordon/drain is ignored by egress IP placement: nothing moves',
    'disconnect_nic': ('the secondary vNIC is disconnected (its carrier is lost): what follows depends on NetworkManager '
                       '(CARRIER_LOSS)'),
}

# NetworkManager on carrier loss (DOMAIN.md section 6): without ignore-carrier it deactivates the device a few
# seconds later, the address leaves host-cidrs and the IPs move as for subnet_gone; with ignore-carrier the address
# stays, OVN-K notices nothing (its probe uses the primary network) and the IPs are blackholed.
CARRIER_LOSS = {
    'remove': ('without ignore-carrier (NetworkManager default) the address goes a few seconds after the carrier: the '
               "subnet leaves the node's host-cidrs and its egress IPs move (a failover, with less capacity left)"),
    'keep': ('with ignore-carrier the address stays in host-cidrs, OVN-K does not notice (its probe uses the primary '
             'network), nothing moves and traffic is blackholed'),
}
DEFAULT_CARRIER_LOSS = 'remove'  # NetworkManager's own default; whether RHCOS sets ignore-carrier is unconfirmed


# --- snapshot ------------------------------------------------------------------------------


def node_networks(node):
    """(addresses, primary subnets, secondary subnets) of a Node, read by _egress_network.

    Addresses: every address OVN-K sees on the node (``host-cidrs``, ``node-primary-ifaddr``)
    plus the node's InternalIP/ExternalIP. Primary: the subnets of ``node-primary-ifaddr``
    (br-ex). Secondary: the other ``host-cidrs`` subnets with a global unicast address.
    """
    networks = _egress_network.node_networks_from_node(node)
    addresses = sorted(str(address) for address in _egress_network.node_addresses(networks))
    for item in (node.get('status') or {}).get('addresses') or []:
        normal = normal_ip(item.get('address')) if item.get('type') in ('InternalIP', 'ExternalIP') else None
        if normal and normal not in addresses:
            addresses.append(normal)
    primary = [str(subnet) for subnet in _egress_network.primary_subnets(networks)]
    secondary = [str(subnet) for subnet in _egress_network.secondary_subnets(networks) if str(subnet) not in primary]
    return addresses, primary, secondary


def snapshot(nodes, egressips, unreachable=(), owner_label=None):
    """The placement snapshot of a cluster from its Node and EgressIP objects (API dicts)."""
    result = {'nodes': {}, 'egressips': {}}
    for node in nodes:
        meta = node.get('metadata') or {}
        addresses, primary, secondary = node_networks(node)
        result['nodes'][meta['name']] = {
            'labelled': _egressip_facts.is_egress_assignable(node),
            'ready': _egressip_facts.is_ready(node),
            'reachable': meta['name'] not in unreachable,
            'cordoned': bool((node.get('spec') or {}).get('unschedulable')),
            'addresses': addresses,
            'primary': primary,
            'secondary': secondary,
        }
    for egressip in egressips:
        meta = egressip.get('metadata') or {}
        owner_key, owner_value = owner_label or (None, None)
        result['egressips'][meta['name']] = {
            'egress_ips': list((egressip.get('spec') or {}).get('egressIPs') or []),
            'status': [{'node': item.get('node'), 'egressIP': item.get('egressIP')}
                       for item in (egressip.get('status') or {}).get('items') or []],
            'owned': owner_key is not None and (meta.get('labels') or {}).get(owner_key) == owner_value,
        }
    return result


def with_objects(current, objects, removed=()):
    """The snapshot after applying these specs and deleting the objects named in `removed`."""
    result = copy.deepcopy(current)
    for name in removed:
        result['egressips'].pop(name, None)
    for item in objects:
        spec_ips = [normal_ip(ip) for ip in item.get('egress_ips') or []]
        entry = result['egressips'].setdefault(item['name'], {'egress_ips': [], 'status': [], 'owned': True})
        entry['egress_ips'] = list(item.get('egress_ips') or [])
        entry['status'] = [status for status in entry['status'] if normal_ip(status.get('egressIP')) in spec_ips]
    return result


# --- predictions --------------------------------------------------------------------------------


def predict(snap, budget=BUDGET):
    """Where every requested egress IP is or will be, as a set of candidate nodes per IP."""
    model = ps.Model(snap)
    assigned, pending, invalid = ps.assignments(model, snap)
    outcomes, exact = ps.outcomes(model, assigned, pending, invalid, budget)
    placements = []
    for name, entry in sorted(snap['egressips'].items()):
        for raw in entry['egress_ips']:
            ip = normal_ip(raw) or raw
            if (name, ip) in assigned:
                node = assigned[(name, ip)]
                placements.append({'egressip': name, 'ip': ip, 'node': node, 'state': 'kept',
                                   'candidates': [node], 'may_be_unassigned': False, 'reasons': []})
                continue
            nodes, reasons = ps.describe(outcomes.get((name, ip), set()))
            placements.append({'egressip': name, 'ip': ip, 'node': None, 'state': 'pending',
                               'candidates': nodes, 'may_be_unassigned': bool(reasons) or not nodes,
                               'reasons': reasons})
    load = dict((name, 0) for name in model.order)
    for node in assigned.values():
        load[node] += 1
    return {'placements': placements, 'exact': exact,
            'egress_nodes': [{'node': name, 'load': load[name]} for name in model.order]}


def settle(snap, budget=BUDGET):
    """The snapshot with every pending IP whose placement is certain written into its status.

    Returns (snapshot, uncertain placements).
    """
    prediction = predict(snap, budget)
    result = copy.deepcopy(snap)
    uncertain = []
    for placement in prediction['placements']:
        if placement['state'] != 'pending':
            continue
        if len(placement['candidates']) == 1 and not placement['may_be_unassigned']:
            result['egressips'][placement['egressip']]['status'].append(
                {'node': placement['candidates'][0], 'egressIP': placement['ip']})
        else:
            uncertain.append(placement)
    return result, uncertain


def what_if(snap, node, trigger='unlabel', budget=BUDGET, carrier_loss=None):
    """What the cluster manager does with the egress IPs of `node` when it fails this way."""
    what_if_checks(snap, node, trigger, carrier_loss)
    settled_snap, uncertain = settle(snap, budget)
    return _what_if(settled_snap, uncertain, node, trigger, budget, carrier_loss)


def what_if_checks(snap, node, trigger, carrier_loss=None):
    """Raise ValueError for an unknown trigger, carrier-loss behaviour or node (modules turn it into a message)."""
    if carrier_loss is not None and carrier_loss not in CARRIER_LOSS:
        raise ValueError('carrier_loss must be one of %s, not %r' % (', '.join(sorted(CARRIER_LOSS)), carrier_loss))
    if trigger not in TRIGGERS:
        raise ValueError('trigger must be one of %s, not %r' % (', '.join(sorted(TRIGGERS)), trigger))
    if node not in snap['nodes']:
        raise ValueError('node %s is not in the snapshot (nodes: %s)' % (node, ', '.join(sorted(snap['nodes']))))


def _what_if(settled_snap, uncertain, node, trigger, budget, carrier_loss=None, kept_before=None):
    """kept_before: ps.assignments of the settled snapshot (the same for every node; what_if_all computes it once)."""
    if kept_before is None:
        kept_before = ps.assignments(ps.Model(settled_snap), settled_snap)[0]
    on_node = sorted(item for item, host in kept_before.items() if host == node)
    result = {'node': node, 'trigger': trigger, 'effect': 'none', 'moved': [], 'unassigned': [],
              'blackholed': [], 'exact': not uncertain, 'notes': [TRIGGERS[trigger]]}
    if uncertain:
        result['notes'].append('not yet placed, left out of this prediction: %s'
                               % ', '.join('%s %s' % (item['egressip'], item['ip']) for item in uncertain))
    model_trigger = trigger
    if trigger == 'disconnect_nic':
        result['carrier_loss'] = carrier_loss or DEFAULT_CARRIER_LOSS
        result['notes'].append(CARRIER_LOSS[result['carrier_loss']] + (
            '' if carrier_loss else ' (assumed: NetworkManager default; not read from the node)'))
        if result['carrier_loss'] == 'keep':
            before = ps.Model(settled_snap)
            secondary = [item for item in on_node if before.kind(node, item[1]) == 'secondary']
            result['blackholed'] = [{'egressip': name, 'ip': ip} for name, ip in secondary]
            result['effect'] = 'blackhole' if secondary else 'none'
            return result
        model_trigger = 'subnet_gone'
    if model_trigger not in ps.MOVING or not on_node:
        # a node that hosts no egress IP moves none when it fails: OVN-K reassigns only the IPs of the failed node
        return result
    after = ps.Model(settled_snap, failed=node, trigger=model_trigger)
    still = _still_valid(after, settled_snap, node)
    kept = dict((item, host) for item, host in kept_before.items() if host != node or item in still)
    moving = dict((item, None) for item in on_node if item not in kept)
    outcomes, exact = ps.outcomes(after, kept, moving, {}, budget)
    result['exact'] = result['exact'] and exact
    result['effect'] = 'moves' if moving else 'none'
    for name, ip in sorted(moving):
        nodes, reasons = ps.describe(outcomes.get((name, ip), set()))
        unassigned = bool(reasons) or not nodes
        result['moved'].append({'egressip': name, 'ip': ip, 'from': node, 'candidates': nodes,
                                'may_be_unassigned': unassigned, 'reasons': reasons})
        if unassigned:
            result['unassigned'].append({'egressip': name, 'ip': ip, 'certain': not nodes, 'reasons': reasons or [ps.UNASSIGNED]})
    return result


def _still_valid(model, snap, node):
    assigned, _pending, _invalid = ps.assignments(model, snap)
    return set(item for item, host in assigned.items() if host == node)


def egress_nodes(snap):
    """Names of the labelled nodes: the ones whose failure moves egress IPs."""
    return sorted(name for name, node in snap['nodes'].items() if node['labelled'])


def what_if_all(snap, trigger='unlabel', nodes=None, budget=BUDGET, carrier_loss=None):
    """what_if for every labelled node (or the named ones), settling the snapshot once.

    carrier_loss: one behaviour for all, or {node: behaviour} (nodes left out: the default, said in notes).
    """
    names = nodes if nodes is not None else egress_nodes(snap)
    per_node = carrier_loss if isinstance(carrier_loss, dict) else dict((name, carrier_loss) for name in names)
    for name in names:
        what_if_checks(snap, name, trigger, per_node.get(name))
    settled_snap, uncertain = settle(snap, budget)
    kept_before = ps.assignments(ps.Model(settled_snap), settled_snap)[0]
    return [_what_if(settled_snap, uncertain, name, trigger, budget, per_node.get(name), kept_before) for name in names]


def single_points_of_failure(what_ifs):
    """Nodes whose failure may leave an egress IP unassigned."""
    result = []
    for item in what_ifs:
        if item['unassigned']:
            result.append({'node': item['node'], 'trigger': item['trigger'],
                           'ips': [{'egressip': gap['egressip'], 'ip': gap['ip'], 'certain': gap['certain']}
                                   for gap in item['unassigned']]})
    return result


def plan(snap, trigger='unlabel', budget=BUDGET):
    """Prediction for the current state, what-if for each egress node, single points of failure."""
    prediction = predict(snap, budget)
    what_ifs = what_if_all(snap, trigger, budget=budget)
    return {'placements': prediction['placements'], 'egress_nodes': prediction['egress_nodes'],
            'what_if': what_ifs, 'single_points_of_failure': single_points_of_failure(what_ifs),
            'exact': prediction['exact'] and all(item['exact'] for item in what_ifs)}


# --- checks on observed state ------------------------------------------------------------------


def hosting_nodes(snap, ip, require_ready=True):
    """Capable nodes for an IP: labelled, (Ready and reachable,) holding a network that hosts it."""
    address = normal_ip(ip)
    result = []
    for name, node in sorted(snap['nodes'].items()):
        if not node['labelled'] or (require_ready and not (node['ready'] and node['reachable'])):
            continue
        if address and holds_network(snap, name, address):
            result.append(name)
    return result


def holds_network(snap, node, ip):
    """'primary', 'secondary' or None: which of the node's networks would host the IP."""
    entry = snap['nodes'].get(node)
    address = normal_ip(ip)
    if entry is None or address is None:
        return None
    address = netaddr.IPAddress(address)
    if any(address in netaddr.IPNetwork(cidr) for cidr in entry['primary']):
        return 'primary'
    if any(address in netaddr.IPNetwork(cidr) for cidr in entry['secondary']):
        return 'secondary'
    return None


def assignment_gaps(snap, names=None, network=None):
    """Requested IPs that are not assigned, or not on a node whose host-cidrs hold their network.

    network: the secondary network's cidr, or a list of them (one per family of a dual-stack network), or None."""
    gaps = []
    cidrs = [network] if isinstance(network, str) else list(network or [])
    wanted = [netaddr.IPNetwork(cidr).cidr for cidr in cidrs] or None
    for name, entry in sorted(snap['egressips'].items()):
        if names is not None and name not in names:
            continue
        status = dict((normal_ip(item.get('egressIP')), item.get('node')) for item in entry['status'])
        for raw in entry['egress_ips']:
            ip = normal_ip(raw) or raw
            node = status.get(ip)
            problem = None
            if node is None:
                problem = 'unassigned'
            elif node not in snap['nodes']:
                problem = 'node_missing'
            elif not _hosts(holds_network(snap, node, ip), ip, wanted):
                problem = 'node_lacks_network'
            if problem:
                gaps.append({'egressip': name, 'ip': ip, 'node': node, 'problem': problem})
    return gaps


def _hosts(kind, ip, wanted):
    if wanted is None:
        return kind is not None
    address = netaddr.IPAddress(ip)
    return kind == 'secondary' and any(address.version == cidr.version and address in cidr for cidr in wanted)


def compare(prediction, after):
    """Each moved IP of a what_if result against where it really went in a later snapshot."""
    actual = {}
    for name, entry in after['egressips'].items():
        for item in entry['status']:
            actual[(name, normal_ip(item.get('egressIP')))] = item.get('node')
    result = []
    for moved in prediction['moved']:
        node = actual.get((moved['egressip'], moved['ip']))
        ok = node in moved['candidates'] if node is not None else moved['may_be_unassigned']
        result.append({'egressip': moved['egressip'], 'ip': moved['ip'], 'predicted': moved['candidates'],
                       'may_be_unassigned': moved['may_be_unassigned'], 'actual': node, 'ok': ok})
    return result
