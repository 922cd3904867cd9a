# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The search behind placement.py: every outcome of the cluster manager's choices for the pending egress IPs.

Pure code: no I/O. ``Model`` parses the nodes of one placement snapshot (their networks, addresses and whether they
are assignable, optionally with one node failed), ``assignments`` says which assignments OVN-Kubernetes keeps and
what each object still needs, and ``outcomes`` explores every order and every tie (symmetric nodes once) or, past its
budget, falls back to a sound over-approximation from load bounds. An outcome is a set of tokens per (object, IP): a
node name, or ``'!'`` + the reason of the event OVN-K gives when the IP stays unassigned (``describe`` splits them).
The rules modelled are in placement.py's docstring.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.libraries import netaddr

from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip

# Reasons OVN-K gives in its Warning events on the EgressIP (DOMAIN.md section 9).
NO_MATCHING_NODE = 'NoMatchingNodeFound'
CONFLICT = 'EgressIPConflict'
UNSUPPORTED = 'UnsupportedRequest'
UNASSIGNED = 'UnassignedRequest'
INVALID = 'InvalidEgressIP'

# Triggers after which the failed node can no longer keep or get egress IPs (placement.TRIGGERS says what each is).
MOVING = ('unlabel', 'not_ready', 'unreachable', 'power_off', 'deleted', 'subnet_gone')
_UNASSIGNED_MARK = '!'  # outcome tokens: a node name, or '!' + the reason the IP stays unassigned


class BudgetExceeded(Exception):
    """The exhaustive search would take too long; the caller falls back to bounds."""


# --- the model the search works on ------------------------------------------------------------


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


class Model:
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
            if usable and not (name == failed and trigger in MOVING and trigger != 'subnet_gone'):
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


def assignments(model, snap):
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


def outcomes(model, assigned, pending, invalid, budget):
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


def describe(tokens):
    nodes = sorted(token for token in tokens if not token.startswith(_UNASSIGNED_MARK))
    reasons = sorted(token[1:] for token in tokens if token.startswith(_UNASSIGNED_MARK))
    return nodes, reasons
