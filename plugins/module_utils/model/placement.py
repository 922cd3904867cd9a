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

try:
    import netaddr
except ImportError:  # pragma: no cover - the modules report the missing library (_egress_network.HAS_NETADDR)
    netaddr = None

from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import egressip_facts as _egressip_facts

BUDGET = 200000  # work units (nodes + IPs per search step): well under a second
EGRESS_LABEL = _egress_network.EGRESS_ASSIGNABLE_LABEL

# Reasons OVN-K gives in its Warning events on the EgressIP (DOMAIN.md section 9).
NO_MATCHING_NODE = 'NoMatchingNodeFound'
CONFLICT = 'EgressIPConflict'
UNSUPPORTED = 'UnsupportedRequest'
UNASSIGNED = 'UnassignedRequest'
INVALID = 'InvalidEgressIP'

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
_MOVING = ('unlabel', 'not_ready', 'unreachable', 'power_off', 'deleted', 'subnet_gone')
_UNASSIGNED_MARK = '!'  # outcome tokens: a node name, or '!' + the reason the IP stays unassigned


class BudgetExceeded(Exception):
    """The exhaustive search would take too long; the caller falls back to bounds."""


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


# --- the model the search works on ------------------------------------------------------------


_NORMALISED = {}


def normal_ip(ip):
    """Canonical text of an IP (as Go's net.IP.String()), or None when it does not parse."""
    if ip not in _NORMALISED:
        try:
            _NORMALISED[ip] = str(netaddr.IPAddress(ip))
        except (netaddr.AddrFormatError, ValueError, TypeError):
            return None
    return _NORMALISED[ip]


_PARSED = {}


def _parsed_network(cidr):
    """Parsed networks and addresses are cached: a what-if over every node reuses them."""
    if ('net', cidr) not in _PARSED:
        _PARSED[('net', cidr)] = netaddr.IPNetwork(cidr)
    return _PARSED[('net', cidr)]


def _parsed_address(ip):
    if ('ip', ip) not in _PARSED:
        _PARSED[('ip', ip)] = netaddr.IPAddress(ip)
    return _PARSED[('ip', ip)]


class _Model:
    """Parsed networks and eligibility of every node; which nodes can host which IP."""

    def __init__(self, snap, failed=None, trigger=None):
        self.networks = {}
        self.addresses = {}
        self.assignable = set()
        for name, node in sorted(snap['nodes'].items()):
            if name == failed and trigger == 'deleted':
                continue
            secondary = [] if name == failed and trigger == 'subnet_gone' else node['secondary']
            self.networks[name] = ([_parsed_network(cidr) for cidr in node['primary']],
                                   [_parsed_network(cidr) for cidr in secondary])
            for address in node['addresses']:
                self.addresses.setdefault(normal_ip(address), name)
            usable = node['labelled'] and node['ready'] and node['reachable']
            if usable and not (name == failed and trigger in _MOVING and trigger != 'subnet_gone'):
                self.assignable.add(name)
        self.order = sorted(self.assignable)
        self._hostable = {}

    def kind(self, name, ip):
        """'primary', 'secondary' or None: which network of the node would host the IP."""
        if name not in self.networks:
            return None
        address = _parsed_address(ip)
        primary, secondary = self.networks[name]
        if any(address in network for network in primary):
            return 'primary'
        if any(address in network for network in secondary):
            return 'secondary'
        return None

    def hostable(self, ip):
        """Assignable nodes that may host the IP, secondary holders first as OVN-K restricts."""
        if ip not in self._hostable:
            kinds = dict((name, self.kind(name, ip)) for name in self.order)
            secondary = frozenset(name for name, kind in kinds.items() if kind == 'secondary')
            self._hostable[ip] = secondary or frozenset(name for name, kind in kinds.items() if kind)
        return self._hostable[ip]


def _settled(model, snap):
    """Valid assignments kept by the cluster manager, and what each object still needs.

    Returns (assigned {(object, ip): node}, pending {(object, ip): None}, invalid {object: reason}).
    """
    assigned, pending, invalid = {}, {}, {}
    for name, entry in sorted(snap['egressips'].items()):
        spec = [normal_ip(ip) for ip in entry['egress_ips']]
        if None in spec:
            invalid[name] = INVALID
            pending.update(((name, normal_ip(ip) or ip), None) for ip in entry['egress_ips'])
            continue
        per_node = {}
        for item in entry['status']:
            per_node[item.get('node')] = per_node.get(item.get('node'), 0) + 1
        for item in entry['status']:
            ip, node = normal_ip(item.get('egressIP')), item.get('node')
            if (ip in spec and node in model.assignable and per_node[node] == 1 and model.kind(node, ip)
                    and (name, ip) not in assigned):
                assigned[(name, ip)] = node
        for ip in spec:
            if (name, ip) not in assigned:
                pending[(name, ip)] = None
    return assigned, pending, invalid


# --- the search --------------------------------------------------------------------------------


class _Search:
    """Every outcome of assigning the pending IPs, over all orders and ties.

    One object's pass is atomic (the cluster manager holds a lock while it reconciles one
    EgressIP); objects come in any order, an object's IPs in any order within its pass.
    """

    def __init__(self, model, assigned, pending, budget):
        self.model = model
        self.pending = sorted(pending)
        self.budget = budget
        self.steps = 0
        self.memo = {}
        self.load = dict((name, 0) for name in model.order)
        self.hosted = set()
        self.claimed = {}
        for (name, ip), node in assigned.items():
            self.load[node] += 1
            self.hosted.add((name, node))
            self.claimed[ip] = name

    def run(self):
        return self._explore(frozenset(self.pending), None)

    def _key(self, remaining, current):
        objects = frozenset(name for name, _ip in remaining)
        ips = frozenset(ip for _name, ip in remaining)
        return (remaining, current, tuple(self.load[name] for name in self.model.order),
                frozenset(pair for pair in self.hosted if pair[0] in objects),
                frozenset(item for item in self.claimed.items() if item[0] in ips))

    def _explore(self, remaining, current):
        if not remaining:
            return {}
        if current is not None and not any(name == current for name, _ip in remaining):
            current = None
        key = self._key(remaining, current)
        if key in self.memo:
            return self.memo[key]
        self.steps += len(self.model.order) + len(remaining)
        if self.steps > self.budget:
            raise BudgetExceeded()
        choices = sorted(item for item in remaining if current is None or item[0] == current)
        outcomes = {}
        for group in self._interchangeable(choices, remaining):
            branch = self._step(group[0], remaining - frozenset([group[0]]))
            # The other members lead to the same states with the IP labels swapped.
            tokens = set()
            for member in group:
                tokens.update(branch.get(member, ()))
            for member in group:
                branch[member] = set(tokens)
            _merge(outcomes, branch)
        self.memo[key] = outcomes
        return outcomes

    def _interchangeable(self, choices, remaining):
        """Choices grouped when the IPs are alike: same object and nodes, nothing to refuse."""
        contested = {}
        for name, ip in remaining:
            contested.setdefault(ip, set()).add(name)
        groups = {}
        for item in choices:
            name, ip = item
            if self._refusal(name, ip) or len(contested[ip]) > 1:
                groups[item] = [item]
            else:
                groups.setdefault((name, self.model.hostable(ip)), []).append(item)
        return sorted(groups.values())

    def _step(self, item, rest):
        name, ip = item
        refusal = self._refusal(name, ip)
        if refusal:
            # OVN-K abandons the rest of this object's pass; a later pass may retry them.
            outcomes = {item: set([_UNASSIGNED_MARK + refusal])}
            siblings = frozenset(other for other in rest if other[0] == name)
            aborted = dict((other, set([_UNASSIGNED_MARK + refusal])) for other in siblings)
            _merge(outcomes, _merged(aborted, self._explore(rest - siblings, None)))
            _merge(outcomes, self._explore(rest, None))
            return outcomes
        eligible = [node for node in self.model.order if node in self.model.hostable(ip) and (name, node) not in self.hosted]
        if not eligible:
            reason = UNASSIGNED if self.model.hostable(ip) else NO_MATCHING_NODE
            return _merged({item: set([_UNASSIGNED_MARK + reason])}, self._explore(rest, name))
        lowest = min(self.load[node] for node in eligible)
        outcomes = {}
        for members in self._classes([node for node in eligible if self.load[node] == lowest], rest):
            representative = members[0]
            self._assign(name, ip, representative, +1)
            future = self._explore(rest, name)
            self._assign(name, ip, representative, -1)
            _merge(outcomes, {item: set(members)})
            _merge(outcomes, _symmetric(future, representative, members))
        return outcomes

    def _refusal(self, name, ip):
        if ip in self.model.addresses:
            return CONFLICT
        if self.claimed.get(ip, name) != name:
            return UNSUPPORTED
        return None

    def _classes(self, tied, rest):
        """Tied nodes grouped by everything the rest of the search can tell apart."""
        objects = frozenset(name for name, _ip in rest)
        networks = list(set(self.model.hostable(ip) for _name, ip in rest))
        classes = {}
        for node in tied:
            signature = (tuple(index for index, hosts in enumerate(networks) if node in hosts),
                         frozenset(name for name in objects if (name, node) in self.hosted))
            classes.setdefault(signature, []).append(node)
        return sorted(classes.values())

    def _assign(self, name, ip, node, delta):
        self.load[node] += delta
        if delta > 0:
            self.hosted.add((name, node))
            self.claimed[ip] = name
        else:
            self.hosted.discard((name, node))
            self.claimed.pop(ip, None)


def _merge(into, outcomes):
    for item, tokens in outcomes.items():
        into.setdefault(item, set()).update(tokens)


def _merged(first, second):
    result = {}
    _merge(result, first)
    _merge(result, second)
    return result


def _symmetric(outcomes, representative, members):
    """Outcomes of the branches not explored: the same, with the representative swapped for a peer."""
    if len(members) == 1:
        return outcomes
    peers = set(members) - set([representative])
    result = {}
    for item, tokens in outcomes.items():
        extended = set(tokens)
        if representative in tokens:
            extended.update(peers)
        if tokens & peers:
            extended.add(representative)
        result[item] = extended
    return result


def _bounded(model, assigned, pending):
    """Sound over-approximation when the search is too large: loads only grow by one per step."""
    load = dict((name, 0) for name in model.order)
    hosted, claimed = set(), {}
    for (name, ip), node in assigned.items():
        load[node] += 1
        hosted.add((name, node))
        claimed[ip] = name
    contested = {}
    for name, ip in pending:
        contested.setdefault(ip, set()).add(name)
    refused = {}
    for name, ip in pending:
        if ip in model.addresses:
            refused[name] = CONFLICT
        elif claimed.get(ip, name) != name or len(contested[ip]) > 1:
            refused.setdefault(name, UNSUPPORTED)
    outcomes = {}
    for name, ip in pending:
        tokens = set()
        if name in refused:
            tokens.add(_UNASSIGNED_MARK + refused[name])
        if ip in model.addresses:
            outcomes[(name, ip)] = tokens
            continue
        siblings = len([other for other in pending if other[0] == name]) - 1
        eligible = sorted(node for node in model.hostable(ip) if (name, node) not in hosted)
        if len(eligible) <= siblings:
            tokens.add(_UNASSIGNED_MARK + (UNASSIGNED if model.hostable(ip) else NO_MATCHING_NODE))
        if eligible:
            loads = sorted(load[node] for node in eligible)
            ceiling = loads[min(siblings, len(loads) - 1)] + len(pending) - 1
            tokens.update(node for node in eligible if load[node] <= ceiling)
        outcomes[(name, ip)] = tokens
    return outcomes


def _outcomes(model, assigned, pending, invalid, budget):
    """(outcomes per pending (object, ip), exact) for everything the cluster manager will do."""
    outcomes = {}
    searchable = {}
    for item in pending:
        name = item[0]
        if name in invalid:
            outcomes[item] = set([_UNASSIGNED_MARK + invalid[name]])
        elif not model.assignable:
            outcomes[item] = set([_UNASSIGNED_MARK + NO_MATCHING_NODE])
        else:
            searchable[item] = None
    try:
        _merge(outcomes, _Search(model, assigned, searchable, budget).run())
        return outcomes, True
    except BudgetExceeded:
        _merge(outcomes, _bounded(model, assigned, searchable))
        return outcomes, False


def _describe(tokens):
    nodes = sorted(token for token in tokens if not token.startswith(_UNASSIGNED_MARK))
    reasons = sorted(token[1:] for token in tokens if token.startswith(_UNASSIGNED_MARK))
    return nodes, reasons


# --- predictions --------------------------------------------------------------------------------


def predict(snap, budget=BUDGET):
    """Where every requested egress IP is or will be, as a set of candidate nodes per IP."""
    model = _Model(snap)
    assigned, pending, invalid = _settled(model, snap)
    outcomes, exact = _outcomes(model, assigned, pending, invalid, budget)
    placements = []
    for name, entry in sorted(snap['egressips'].items()):
        for raw in entry['egress_ips']:
            ip = normal_ip(raw) or raw
            if (name, ip) in assigned:
                node = assigned[(name, ip)]
                placements.append({'egressip': name, 'ip': ip, 'node': node, 'state': 'kept',
                                   'candidates': [node], 'may_be_unassigned': False, 'reasons': []})
                continue
            nodes, reasons = _describe(outcomes.get((name, ip), set()))
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


def _what_if(settled_snap, uncertain, node, trigger, budget, carrier_loss=None):
    before = _Model(settled_snap)
    kept_before, _pending, _invalid = _settled(before, settled_snap)
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
            secondary = [item for item in on_node if before.kind(node, item[1]) == 'secondary']
            result['blackholed'] = [{'egressip': name, 'ip': ip} for name, ip in secondary]
            result['effect'] = 'blackhole' if secondary else 'none'
            return result
        model_trigger = 'subnet_gone'
    if model_trigger not in _MOVING:
        return result
    after = _Model(settled_snap, failed=node, trigger=model_trigger)
    still = _still_valid(after, settled_snap, node)
    kept = dict((item, host) for item, host in kept_before.items() if host != node or item in still)
    moving = dict((item, None) for item in on_node if item not in kept)
    outcomes, exact = _outcomes(after, kept, moving, {}, budget)
    result['exact'] = result['exact'] and exact
    result['effect'] = 'moves' if moving else 'none'
    for name, ip in sorted(moving):
        nodes, reasons = _describe(outcomes.get((name, ip), set()))
        unassigned = bool(reasons) or not nodes
        result['moved'].append({'egressip': name, 'ip': ip, 'from': node, 'candidates': nodes,
                                'may_be_unassigned': unassigned, 'reasons': reasons})
        if unassigned:
            result['unassigned'].append({'egressip': name, 'ip': ip, 'certain': not nodes, 'reasons': reasons or [UNASSIGNED]})
    return result


def _still_valid(model, snap, node):
    assigned, _pending, _invalid = _settled(model, snap)
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
    return [_what_if(settled_snap, uncertain, name, trigger, budget, per_node.get(name)) for name in names]


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
    """Requested IPs that are not assigned, or not on a node whose host-cidrs hold their network."""
    gaps = []
    wanted = netaddr.IPNetwork(network).cidr if network else None
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
    return kind == 'secondary' and netaddr.IPAddress(ip) in wanted


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
