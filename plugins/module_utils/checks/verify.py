# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verification of egress IPs on the secondary network: one snapshot in, findings and per-IP rows out.

Pure code: no I/O. DOMAIN.md sections 3, 4, 6, 7 and 9. For every egress IP of the verified
EgressIP objects:

1. it is assigned (``status.items``) to a node that exists and whose ``host-cidrs`` hold its
   network (``_placement.assignment_gaps``: what OVN-Kubernetes itself requires);
2. that node is still Ready and egress-assignable (otherwise OVN-K is about to move it);
3. for a secondary-network IP, the node's secondary path works: its VM is powered on, has a
   vNIC backed by the egress port group, the vNIC is connected, a standard port group exists
   on the ESXi host the VM runs on **now** (DRS/vMotion may have moved it) with the network's VLAN,
   its standard vSwitch there has a physical uplink whose link is up, and the node holds
   its base address on that NIC, up (NodeNetworkState, through ``_node_network.node_capability``);
4. optionally, the wire: an echo target off the cluster saw an IP of the object as the source
   of a probe pod's traffic.

An IP that passes 1 and 2 but fails 3 is a **blackhole**: OVN-K keeps it where it is (its
reachability probe runs over the primary network), and its traffic is dropped. Remediation
removes the ``k8s.ovn.org/egress-assignable`` label of the broken nodes so OVN-K moves the IPs,
but only when ``_placement`` predicts that every moved IP still has a node to go to.
The wire's pure parts are in checks/wire.py, the remediation plan in checks/remediation.py.
The path of one node (point 3, and forwarding) is in checks/verify_path.py; this file judges each IP
and holds the findings, the summary and the report.

Snapshot (``build_snapshot``, from one list per kind and one batched vCenter read)::

    {'nodes': [Node], 'egressips': [EgressIP], 'placement': _placement.snapshot of both,
     'nns': {node name: NodeNetworkState} or None (not read),
     'vsphere': None (not read) or verify_path.vsphere_facts(...) of the preflight vCenter read:
         {'portgroup': name, 'switch_type': 'standard'|'distributed', 'switch': name,
          'network': {'type', 'name', 'portgroup_key', 'switch_uuid'} or None (not found),
          'hosts': {ESXi host name of the vSphere cluster: [standard port group names]},
          'portgroup_uplinks': {ESXi host name: {'vswitch', 'uplinks': [vmnic], 'down': [vmnic]}} of the port group's vSwitch,
          'switch_hosts': [member hosts of the distributed switch] or None,
          'vms': {node name: {'name', 'moid', 'host', 'power_state', 'nics': [nic facts]}},
          'findings': [findings of the vCenter read: port group missing, node without VM]}}
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.model import egress_network as _egress_network
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement as _placement
from ansible_collections.ocp.egressip.plugins.module_utils.model.egress_network import normal_ip
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import ERROR, INFO, WARNING, errors, summarize
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as vp

# Row status, worst first: the first problem found decides it.
OK = 'ok'
UNASSIGNED = 'unassigned'
NODE_MISSING = 'node_missing'
NODE_LACKS_NETWORK = 'node_lacks_network'
UNHEALTHY_NODE = 'unhealthy_node'
BLACKHOLE = 'blackhole'
WIRE_FAILED = 'wire_failed'
UNKNOWN = 'path_not_checked'


# --- per IP ---------------------------------------------------------------------------------------

def _node_index(nodes):
    return dict(((node.get('metadata') or {}).get('name'), node) for node in nodes)


def build_snapshot(nodes, egressips, nns=None, vsphere=None, owner_label=None):
    """The verify snapshot from the API lists (and the optional NodeNetworkStates and vCenter facts)."""
    return {'nodes': list(nodes), 'egressips': list(egressips), 'nns': nns, 'vsphere': vsphere,
            'placement': _placement.snapshot(nodes, egressips, owner_label=owner_label)}


def _wanted_objects(snapshot, names):
    if names is None:
        return sorted(snapshot['placement']['egressips'])
    return [name for name in names if name in snapshot['placement']['egressips']]


def _row(name, ip, node, snap):
    network = _placement.holds_network(snap, node, ip) if node else None
    if network is None and not node:
        network = _cluster_network(snap, ip)
    return {'egressip': name, 'ip': ip, 'node': node, 'network': network, 'status': OK, 'problems': [], 'wire': None}


def _cluster_network(snap, ip):
    kinds = set(_placement.holds_network(snap, name, ip) for name in snap['nodes'])
    for kind in ('primary', 'secondary'):
        if kind in kinds:
            return kind
    return None


def _subnet_of(node, ip):
    classification = _egress_network.classify_ip(ip, _egress_network.node_networks_from_node(node))
    return str(classification.subnet) if classification.network == _egress_network.SECONDARY else None


def evaluate(snapshot, cidr=None, names=None, expected=None, gateway=None):
    """Verify every egress IP of the objects named (all when None) against the snapshot.

    cidr: the secondary network (str, or a list: one cidr per family of a dual-stack network) or None (then each node is
    checked for the subnets of the IPs it hosts). expected: {object name: [IPs]} from the variables file, or None. gateway:
    the secondary network's router (or a list, one per family); given, each NIC must have a route via it in NodeNetworkState.
    Returns {'egress_ips': [row], 'nodes': [row], 'findings': [finding], 'broken_nodes': [names]}.
    """
    nodes = _node_index(snapshot['nodes'])
    snap = snapshot['placement']
    wanted = _wanted_objects(snapshot, names)
    findings = _missing_objects(snap, names, expected)
    cidrs = [str(item) for item in (cidr if isinstance(cidr, (list, tuple)) else [cidr]) if item]
    gaps = dict(((gap['egressip'], gap['ip']), gap) for gap in _placement.assignment_gaps(snap, wanted, cidrs))
    rows = []
    for name in wanted:
        entry = snap['egressips'][name]
        status = dict((normal_ip(item.get('egressIP')), item.get('node')) for item in entry['status'])
        for raw in entry['egress_ips']:
            ip = normal_ip(raw) or raw
            row = _row(name, ip, status.get(ip), snap)
            if (name, ip) in gaps:
                row['status'] = gaps[(name, ip)]['problem']
            rows.append(row)
    node_names = sorted(set([row['node'] for row in rows if row['node']] + [node for node, item in snap['nodes'].items() if item['labelled']]))
    node_rows, families = {}, {}
    for node_name in node_names:
        node = nodes.get(node_name)
        subnets = list(cidrs) if cidrs else sorted(set(
            subnet for subnet in (_subnet_of(node, row['ip']) for row in rows if row['node'] == node_name and node is not None) if subnet))
        node_rows[node_name] = vp.node_path(node_name, node, snapshot, subnets, gateway)
        families[node_name] = vp.subnet_families(subnets)
    vp.apply_forwarding(snapshot.get('forwarding'), node_rows, families)
    for row in rows:
        if row['node'] in node_rows:
            node_rows[row['node']]['egress_ips'].append(row['ip'])
        _judge(row, node_rows.get(row['node']), snap)
    findings += _row_findings(rows, node_rows)
    broken = sorted(name for name, row in node_rows.items() if row['exists'] and row['labelled'] and row['path'] == vp.PATH_BROKEN)
    findings += _broken_idle_findings(node_rows, broken)
    findings += blackhole_kind_findings(node_rows)
    findings += _vsphere_findings(snapshot, node_rows)
    findings += resilience_findings(snap, wanted)
    return {'egress_ips': rows, 'nodes': [node_rows[name] for name in node_names], 'findings': findings, 'broken_nodes': broken}


def resilience_findings(snap, names):
    """A warning per egress node whose failure may leave an IP of the verified objects unassigned (the prediction's view)."""
    findings = []
    for point in _placement.single_points_of_failure(_placement.what_if_all(snap, 'unlabel')):
        gaps = [gap for gap in point['ips'] if gap['egressip'] in names]
        if not gaps:
            continue
        findings.append(catalogue_finding(
            'egressip_single_point_of_failure', 'If node %s fails, %s.' % (point['node'], '; '.join(
                '%s %s %s unassigned' % (gap['egressip'], gap['ip'], 'stays' if gap['certain'] else 'may stay') for gap in gaps)),
            objects=[{'kind': 'Node', 'name': point['node']}] + [{'kind': 'EgressIP', 'name': name}
                                                                 for name in sorted(set(gap['egressip'] for gap in gaps))]))
    return findings


def _judge(row, node_row, snap):
    if row['status'] != OK:
        row['problems'].append(_gap_text(row))
        return
    node = snap['nodes'][row['node']]
    if not (node['labelled'] and node['ready']):
        row['status'] = UNHEALTHY_NODE
        row['problems'].append('node %s is %s' % (row['node'], ' and '.join(
            word for word, bad in (('not Ready', not node['ready']), ('not egress-assignable', not node['labelled'])) if bad)))
        return
    if row['network'] != 'secondary':
        return  # a primary-network egress IP rides br-ex: the secondary path does not matter
    if node_row['path'] == vp.PATH_BROKEN:
        row['status'] = BLACKHOLE
        row['problems'] += node_row['problems']
    elif node_row['path'] == vp.PATH_UNKNOWN:
        row['status'] = UNKNOWN


def _gap_text(row):
    if row['status'] == UNASSIGNED:
        return '%s is not assigned to any node' % row['ip']
    if row['status'] == NODE_MISSING:
        return '%s is assigned to node %s, which does not exist' % (row['ip'], row['node'])
    return "%s is assigned to node %s, whose host-cidrs do not hold its network" % (row['ip'], row['node'])


def _objects(row, node_row=None):
    objects = [{'kind': 'EgressIP', 'name': row['egressip']}]
    if row['node']:
        objects.append({'kind': 'Node', 'name': row['node']})
    if node_row and node_row.get('vm'):
        objects.append({'kind': 'VirtualMachine', 'name': node_row['vm']})
    return objects


def _row_findings(rows, node_rows):
    findings = []
    for row in rows:
        subject = 'EgressIP %s: %s' % (row['egressip'], row['ip'])
        node_row = node_rows.get(row['node'])
        if row['status'] in (UNASSIGNED, NODE_MISSING, NODE_LACKS_NETWORK):
            findings.append(catalogue_finding('egressip_unassigned', 'EgressIP %s: %s.' % (row['egressip'], row['problems'][0]),
                                              objects=_objects(row)))
        elif row['status'] == UNHEALTHY_NODE:
            findings.append(catalogue_finding('egressip_on_unhealthy_node', '%s is on %s.' % (subject, row['problems'][0]),
                                              objects=_objects(row)))
        elif row['status'] == BLACKHOLE:
            findings.append(catalogue_finding('egressip_blackhole', '%s is assigned to node %s, but its secondary path is broken: %s.'
                                              % (subject, row['node'], '; '.join(row['problems'])), objects=_objects(row, node_row)))
    return findings


def _broken_idle_findings(node_rows, broken):
    findings = []
    for name in broken:
        row = node_rows[name]
        if row['egress_ips']:
            continue
        objects = [{'kind': 'Node', 'name': name}] + ([{'kind': 'VirtualMachine', 'name': row['vm']}] if row['vm'] else [])
        findings.append(catalogue_finding('egressip_node_path_broken', 'node %s is egress-assignable but its secondary path is broken: %s.'
                                          % (name, '; '.join(row['problems'])), objects=objects))
    return findings


def blackhole_kind_findings(node_rows):
    """One finding per node and blackhole kind (error when the node hosts IPs, else warning); capacity losses as warnings."""
    findings = []
    for name, row in sorted(node_rows.items()):
        objects = [{'kind': 'Node', 'name': name}] + ([{'kind': 'VirtualMachine', 'name': row['vm']}] if row['vm'] else [])
        if row['path'] == vp.PATH_NO_ADDRESS and row['labelled']:
            findings.append(catalogue_finding('egressip_node_capacity_lost', 'node %s: its vNIC %s is disconnected and NetworkManager '
                                              'removed its address, so OVN-Kubernetes places no egress IP there (%s).'
                                              % (name, (row['nic'] or {}).get('mac'), row['notes'][-1]), objects=objects))
        if not (row['labelled'] or row['egress_ips']):
            continue
        hosting = ', hosting %s' % ', '.join(row['egress_ips']) if row['egress_ips'] else ' (no egress IP yet)'
        for kind in sorted(set(row['blackhole_kinds'])):
            findings.append(catalogue_finding(kind, 'node %s%s: %s.' % (name, hosting, '; '.join(row['problems'])), objects=objects,
                                              severity=None if row['egress_ips'] else WARNING))
    return findings


def _vsphere_findings(snapshot, node_rows):
    """The vCenter read's own findings (port group missing...), and node-without-VM only for nodes that matter here."""
    vsphere = snapshot.get('vsphere')
    if vsphere is None:
        return []
    findings = []
    for item in vsphere.get('findings') or []:
        nodes = [obj.get('name') for obj in item.get('objects') or [] if obj.get('kind') == 'Node']
        if nodes and not any(name in node_rows for name in nodes):
            continue
        findings.append(item)
    return findings


def _missing_objects(snap, names, expected):
    findings = []
    for name in names or []:
        if name not in snap['egressips']:
            findings.append(catalogue_finding('egressip_object_missing', 'EgressIP %s does not exist in the cluster.' % name,
                                              objects=[{'kind': 'EgressIP', 'name': name}]))
    for name, ips in sorted((expected or {}).items()):
        entry = snap['egressips'].get(name)
        if entry is None or not ips:
            continue
        have = set(normal_ip(ip) or ip for ip in entry['egress_ips'])
        lacking = [ip for ip in (normal_ip(ip) or ip for ip in ips) if ip not in have]
        if lacking:
            findings.append(catalogue_finding('egressip_object_missing', 'EgressIP %s lacks %s in spec.egressIPs (it has %s).'
                                              % (name, ', '.join(lacking), ', '.join(sorted(have)) or 'none'),
                                              objects=[{'kind': 'EgressIP', 'name': name}]))
    return findings


# --- summary and report ------------------------------------------------------------------------------

def summary(result):
    rows = result['egress_ips']
    counts = summarize(result['findings'])
    counted = {'ok': not errors(result['findings']), 'egress_ips': len(rows), 'assigned': len([row for row in rows if row['node']]),
               'healthy': len([row for row in rows if row['status'] == OK]),
               'blackholed': len([row for row in rows if row['status'] == BLACKHOLE]),
               'errors': counts[ERROR], 'warnings': counts[WARNING], 'info': counts[INFO]}
    if 'wire' in result:  # the wire probe's own API writes (pods, namespaces): a changed=0 run is not a 0-write run
        counted['wire_writes'] = sum(probe.get('writes') or 0 for probe in result['wire'])
    return counted


def report(result, network=None, portgroup=None, remediation=None, initial=None):
    """The verify report (kind ``verify``) for _report: JSON as is, Markdown through render_markdown."""
    # probe pod names are random: left out so that an unchanged cluster gives an unchanged report
    wire = [dict((key, value) for key, value in probe.items() if key != 'pod') for probe in result['wire']] if 'wire' in result else None
    findings = [dict(item, objects=[obj for obj in item['objects'] if obj.get('kind') != 'Pod']) for item in result['findings']]
    return {'kind': 'verify', 'summary': summary(result), 'network': {'cidr': str(network) if network else None, 'portgroup': portgroup},
            'egress_ips': result['egress_ips'], 'nodes': result['nodes'], 'findings': findings,
            'wire': wire, 'remediation': remediation, 'initial': initial}
