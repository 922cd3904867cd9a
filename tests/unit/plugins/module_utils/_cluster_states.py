"""Random cluster states for the placement tests, and two independent references.

- `random_state(rng)`: Node and EgressIP objects as the API lists them (annotations, labels,
  conditions, spec, status), small enough for exhaustive enumeration.
- `enumerate_outcomes(...)`: brute force over every reconcile order, IP order and tie, no
  memo and no symmetry reduction: what `_placement` must equal exactly.
- `simulate(...)`: one run of the cluster manager as upstream codes it (sort the assignable
  nodes once per pass with ties in random order, IPs in set order, abandon the pass on a
  refusal); what `_placement` must contain.

Uses the standard `ipaddress` module, not netaddr, so it shares no parsing with the code
under test.
"""

import ipaddress
import json

PRIMARY = '192.168.10.0/24'
SECONDARY = ('10.20.0.0/24', '10.30.0.0/24')
LABEL = 'k8s.ovn.org/egress-assignable'


def node_object(name, index, networks, labelled=True, ready=True):
    primary = '192.168.10.%d/24' % (11 + index)
    cidrs = [primary] + ['%s/%s' % (ipaddress.ip_network(net)[10 + index], net.split('/')[1]) for net in networks]
    return {
        'metadata': {'name': name, 'labels': {LABEL: ''} if labelled else {},
                     'annotations': {'k8s.ovn.org/node-primary-ifaddr': json.dumps({'ipv4': primary}),
                                     'k8s.ovn.org/host-cidrs': json.dumps(cidrs)}},
        'status': {'conditions': [{'type': 'Ready', 'status': 'True' if ready else 'False'}],
                   'addresses': [{'type': 'InternalIP', 'address': primary.split('/')[0]}]},
    }


def egressip_object(name, ips, status=()):
    return {'metadata': {'name': name}, 'spec': {'egressIPs': list(ips), 'namespaceSelector': {'matchLabels': {'team': name}}},
            'status': {'items': [{'node': node, 'egressIP': ip} for ip, node in status]}}


def random_state(rng, max_nodes=5, max_objects=3, max_ips=3, odd_ips=True):
    """(nodes, egressips, unreachable) with random labels, readiness, networks and status."""
    count = rng.randint(2, max_nodes)
    nodes, unreachable = [], set()
    for index in range(count):
        networks = [net for net, chance in zip(SECONDARY, (0.75, 0.3)) if rng.random() < chance]
        nodes.append(node_object('node-%d' % index, index, networks, labelled=rng.random() < 0.8, ready=rng.random() < 0.9))
        if rng.random() < 0.05:
            unreachable.add('node-%d' % index)
    pool = ['10.20.0.%d' % host for host in range(200, 206)] + ['10.30.0.%d' % host for host in range(200, 203)]
    if odd_ips:
        pool += ['10.20.0.11', '192.168.10.200', '10.99.0.1']  # a node address, primary network, no network
    used, egressips = set(), []
    for number in range(rng.randint(1, max_objects)):
        ips = rng.sample(pool, rng.randint(1, max_ips))
        if not odd_ips:
            ips = [ip for ip in ips if ip not in used] or [ip for ip in pool if ip not in used][:1]
        used.update(ips)
        status = []
        for ip in ips:
            if rng.random() < 0.6 and not any(ip == other for other_status in egressips for other, _node in other_status[2]):
                status.append((ip, 'node-%d' % rng.randrange(count)))
        egressips.append(('eip-%d' % number, ips, status))
    return nodes, [egressip_object(name, ips, status) for name, ips, status in egressips], unreachable


# --- an independent model of the cluster manager ------------------------------------------------


class World:
    """The facts the cluster manager uses, parsed with `ipaddress`."""

    def __init__(self, nodes, egressips, unreachable, failed=None, trigger=None):
        self.nodes = {}
        self.addresses = set()
        for node in nodes:
            name = node['metadata']['name']
            if name == failed and trigger == 'deleted':
                continue
            annotations = node['metadata']['annotations']
            primary = [ipaddress.ip_interface(value).network for value in json.loads(annotations['k8s.ovn.org/node-primary-ifaddr']).values()]
            cidrs = [ipaddress.ip_interface(value) for value in json.loads(annotations['k8s.ovn.org/host-cidrs'])]
            secondary = [cidr.network for cidr in cidrs if cidr.network not in primary]
            if name == failed and trigger == 'subnet_gone':
                secondary = []
            self.addresses.update(str(cidr.ip) for cidr in cidrs)
            self.addresses.update(item['address'] for item in node['status']['addresses'])
            ready = any(c['type'] == 'Ready' and c['status'] == 'True' for c in node['status']['conditions'])
            usable = LABEL in node['metadata']['labels'] and ready and name not in unreachable
            if name == failed and trigger in ('unlabel', 'not_ready', 'unreachable', 'power_off'):
                usable = False
            self.nodes[name] = {'primary': primary, 'secondary': secondary, 'usable': usable}
        self.egressips = [(item['metadata']['name'], list(item['spec']['egressIPs']),
                           [(status['egressIP'], status['node']) for status in item['status']['items']]) for item in egressips]

    def network(self, node, ip):
        address = ipaddress.ip_address(ip)
        facts = self.nodes.get(node)
        if facts is None:
            return None
        if any(address in net for net in facts['primary']):
            return 'primary'
        if any(address in net for net in facts['secondary']):
            return 'secondary'
        return None

    def hosts(self, ip):
        usable = sorted(name for name, facts in self.nodes.items() if facts['usable'])
        secondary = [name for name in usable if self.network(name, ip) == 'secondary']
        return secondary or [name for name in usable if self.network(name, ip) == 'primary']

    def valid(self):
        """Assignments that survive validation: {(object, ip): node}."""
        kept = {}
        for name, spec, status in self.egressips:
            for ip, node in status:
                same_node = sum(1 for _ip, other in status if other == node)
                if (ip in spec and node in self.nodes and self.nodes[node]['usable'] and same_node == 1
                        and self.network(node, ip) and (name, ip) not in kept):
                    kept[(name, ip)] = node
        return kept


def _start(world, kept):
    load = dict((name, 0) for name, facts in world.nodes.items() if facts['usable'])
    for node in kept.values():
        load[node] += 1
    return load, set((name, node) for (name, _ip), node in kept.items()), dict((ip, name) for (name, ip), _node in kept.items())


def enumerate_outcomes(world, kept, passes):
    """Every outcome per (object, ip): node names, or '!' + reason. passes: {object: [ips]}."""
    results = {}
    load, hosted, claimed = _start(world, kept)
    usable = any(facts['usable'] for facts in world.nodes.values())

    def record(item, token):
        results.setdefault(item, set()).add(token)

    def run(remaining, current, load, hosted, claimed):
        if current not in remaining:
            current = None
        todo = [(name, ip) for name, ips in remaining.items() for ip in ips if current is None or name == current]
        for name, ip in todo:
            rest = dict((key, [other for other in ips if (key, other) != (name, ip)]) for key, ips in remaining.items())
            rest = dict((key, ips) for key, ips in rest.items() if ips)
            if ip in world.addresses or claimed.get(ip, name) != name:
                reason = 'EgressIPConflict' if ip in world.addresses else 'UnsupportedRequest'
                record((name, ip), '!' + reason)
                for other in rest.get(name, []):  # the pass is abandoned ...
                    record((name, other), '!' + reason)
                run(dict((key, ips) for key, ips in rest.items() if key != name), None, load, hosted, claimed)
                run(rest, None, load, hosted, claimed)  # ... or retried by a later pass
                continue
            eligible = [node for node in world.hosts(ip) if (name, node) not in hosted]
            if not eligible:
                record((name, ip), '!UnassignedRequest' if world.hosts(ip) else '!NoMatchingNodeFound')
                run(rest, name, load, hosted, claimed)
                continue
            lowest = min(load[node] for node in eligible)
            for node in eligible:
                if load[node] != lowest:
                    continue
                record((name, ip), node)
                run(rest, name, dict(load, **{node: load[node] + 1}), hosted | set([(name, node)]), dict(claimed, **{ip: name}))

    if not usable:
        for name, ips in passes.items():
            for ip in ips:
                record((name, ip), '!NoMatchingNodeFound')
        return results
    run(dict((name, list(ips)) for name, ips in passes.items() if ips), None, load, hosted, claimed)
    return results


def simulate(world, kept, passes, rng):
    """One literal run: {(object, ip): node or None}."""
    load, hosted, claimed = _start(world, kept)
    result = dict(((name, ip), None) for name, ips in passes.items() for ip in ips)
    result.update(kept)
    order = list(passes)
    rng.shuffle(order)
    for name in order:
        ips = list(passes[name])
        rng.shuffle(ips)
        assignable = sorted(load, key=lambda node: (load[node], rng.random()))
        if not assignable:
            continue
        for ip in ips:
            if ip in world.addresses or claimed.get(ip, name) != name:
                break
            for node in assignable:
                if node in world.hosts(ip) and (name, node) not in hosted:
                    result[(name, ip)] = node
                    load[node] += 1
                    hosted.add((name, node))
                    claimed[ip] = name
                    break
    return result


def pending_passes(world, kept):
    passes = {}
    for name, spec, _status in world.egressips:
        passes[name] = [ip for ip in spec if (name, ip) not in kept]
    return passes
