#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_plan
short_description: Predict where OVN-Kubernetes places each egress IP, and what happens when each egress node fails
version_added: 0.1.0
description:
  - Predicts egress IP placement the way the OVN-Kubernetes cluster manager does it (DOMAIN.md section 3). Candidate
    nodes are labelled C(k8s.ovn.org/egress-assignable), Ready and reachable, and hold the IP's network (the primary
    subnet of C(k8s.ovn.org/node-primary-ifaddr), or by longest-prefix match another C(k8s.ovn.org/host-cidrs) subnet).
    The least loaded candidate wins; a node never hosts two IPs of one EgressIP object; an IP equal to a node address
    (C(EgressIPConflict)) or held by another object (C(UnsupportedRequest)) is refused; valid assignments never move
    (no rebalancing, no failback).
  - Equally loaded nodes are picked in an arbitrary order, so each prediction is a B(set) of candidate nodes, never a
    guess of one node. The prediction explores every order and tie; on very large clusters it falls back to sound
    bounds and says so (RV(exact)).
  - For the current state (or the state after applying O(objects)), and, for each egress node, what happens when that
    node fails with O(trigger) - which IPs move, the candidate nodes of each, which would be left unassigned. Nodes
    whose failure may leave an IP unassigned are single points of failure (finding
    C(egressip_single_point_of_failure)).
  - Read-only. Reads one list of Nodes and one list of EgressIPs.
requirements:
  - netaddr >= 1.3.0
options:
  objects:
    description:
      - EgressIP objects to predict as if they were applied (the same entries as M(ocp.egressip.egressip)); their
        IPs still assigned keep their node. Only O(objects[].name) and O(objects[].egress_ips) matter here.
      - Omitted, the prediction is for the cluster as it is.
    type: list
    elements: dict
    suboptions:
      name:
        description: Object name.
        type: str
        required: true
      egress_ips:
        description: The egress IPs of the object.
        type: list
        elements: str
        required: true
      namespace_selector:
        description: Accepted so the entries of the variables file can be passed as they are; not used.
        type: dict
      pod_selector:
        description: Accepted so the entries of the variables file can be passed as they are; not used.
        type: dict
  exclusive:
    description: With O(objects), predict as if the owned objects not in O(objects) were deleted.
    type: bool
    default: false
  trigger:
    description:
      - The failure to predict for each egress node. V(unlabel), V(not_ready), V(unreachable), V(power_off) and
        V(deleted) move all its IPs; V(subnet_gone) moves the IPs on its secondary networks; V(cordon) moves nothing
        (cordon/drain is not looked at); V(disconnect_nic) depends on NetworkManager (O(carrier_loss)) - without
        C(ignore-carrier) it removes the address a few seconds after the carrier went and the IPs move as for
        V(subnet_gone); with it nothing moves and the node's secondary IPs are blackholed (RV(what_if[].blackholed)).
    type: str
    choices: [cordon, deleted, disconnect_nic, not_ready, power_off, subnet_gone, unlabel, unreachable]
    default: unlabel
  carrier_loss:
    description:
      - What NetworkManager on the nodes does when the secondary vNIC loses its carrier, for O(trigger=disconnect_nic).
        V(remove) - the address goes (no C(ignore-carrier), NetworkManager's default) and the IPs move; V(keep) - the
        address stays (C(ignore-carrier)) and the IPs are blackholed.
      - V(auto) reads it from the NodeNetworkStates (an ethernet interface that is down and still holds its address is
        C(ignore-carrier) at work) and otherwise assumes V(remove); RV(what_if[].notes) and RV(carrier_loss) say which.
    type: str
    choices: [auto, keep, remove]
    default: auto
  nodes:
    description: The nodes to predict a failure of; by default every node labelled C(k8s.ovn.org/egress-assignable).
    type: list
    elements: str
  what_if:
    description: Predict the failure of each node. V(false) predicts the placement only.
    type: bool
    default: true
  unreachable:
    description:
      - Nodes known to fail OVN-Kubernetes' reachability probe (not visible through the API); they are not candidates.
    type: list
    elements: str
    default: []
extends_documentation_fragment:
  - ocp.egressip.k8s_auth
  - ocp.egressip.common
  - ocp.egressip.common.read_only
notes:
  - The prediction assumes the cluster manager sees what the API shows; it does not know about a secondary vNIC that
    is disconnected in vCenter now on a node that keeps its address (the blackhole case), which is what the verify
    step checks, in vCenter and on the wire.
  - When several objects are reconciled at once (a fresh apply, a failure moving several IPs), their order is not
    assumed, so the candidate sets cover every order.
  - What-if predictions start from the current assignments; IPs not yet assigned whose placement is certain are placed
    first, the others are left out and named in RV(what_if[].notes).
seealso:
  - module: ocp.egressip.egressip
  - module: ocp.egressip.egressip_info
'''

EXAMPLES = r'''
- name: Where are the egress IPs, and what happens when each egress node loses its label?
  ocp.egressip.egressip_plan:
  register: plan

- name: Fail when one node is a single point of failure
  ansible.builtin.assert:
    that: plan.single_points_of_failure | length == 0
    fail_msg: "{{ plan.findings | map(attribute='message') | join(' ') }}"

- name: Where would the objects of the variables file land (before applying them)?
  ocp.egressip.egressip_plan:
    objects: "{{ egressip_objects }}"
    what_if: false

- name: What happens when a node is powered off?
  ocp.egressip.egressip_plan:
    trigger: power_off
    nodes: [ocp1-worker-0]
'''

RETURN = r'''
placements:
  description: One entry per IP of every EgressIP object (sorted by object, in spec order).
  returned: always
  type: list
  elements: dict
  contains:
    egressip:
      description: Object name.
      type: str
      sample: payments
    ip:
      description: The egress IP (canonical form).
      type: str
      sample: 10.20.0.200
    node:
      description: The node hosting it now (a valid assignment), or C(null).
      type: str
      sample: ocp1-worker-0
    state:
      description: C(kept) (assigned, stays there) or C(pending) (the cluster manager will place it, or cannot).
      type: str
      sample: kept
    candidates:
      description: The nodes it is or will be on, sorted; more than one when equally loaded nodes tie.
      type: list
      elements: str
      sample: [ocp1-worker-0]
    may_be_unassigned:
      description: Whether it may stay (or certainly stays, with no candidates) unassigned.
      type: bool
      sample: false
    reasons:
      description: The OVN-Kubernetes event reasons that could leave it unassigned.
      type: list
      elements: str
      sample: []
egress_nodes:
  description: The nodes that may host egress IPs now (labelled, Ready, reachable), with how many they host.
  returned: always
  type: list
  elements: dict
  sample: [{node: ocp1-worker-0, load: 1}, {node: ocp1-worker-1, load: 1}, {node: ocp1-worker-2, load: 0}]
what_if:
  description: One prediction per node in O(nodes) (by default every labelled node).
  returned: when O(what_if=true)
  type: list
  elements: dict
  contains:
    node:
      description: The failing node.
      type: str
      sample: ocp1-worker-0
    trigger:
      description: O(trigger).
      type: str
      sample: unlabel
    effect:
      description: C(moves), C(none) or C(blackhole).
      type: str
      sample: moves
    moved:
      description: Each IP that moves, with C(from), C(candidates), C(may_be_unassigned) and C(reasons).
      type: list
      elements: dict
      sample: [{egressip: payments, ip: 10.20.0.200, from: ocp1-worker-0, candidates: [ocp1-worker-2], may_be_unassigned: false, reasons: []}]
    unassigned:
      description: IPs the failure may leave unassigned (C(certain) when no node can take them).
      type: list
      elements: dict
      sample: []
    blackholed:
      description: With O(trigger=disconnect_nic), the IPs that stay on the node and lose their traffic.
      type: list
      elements: dict
      sample: []
    exact:
      description: Whether the prediction explored every case (else it is a sound over-approximation).
      type: bool
      sample: true
    carrier_loss:
      description: With O(trigger=disconnect_nic), the NetworkManager behaviour predicted for this node (C(remove) or C(keep)).
      type: str
      sample: remove
    notes:
      description: What the trigger does, how the carrier-loss behaviour was chosen, and what the prediction left out.
      type: list
      elements: str
      sample: ["the node loses the egress-assignable label: its egress IPs move"]
carrier_loss:
  description:
    - With O(trigger=disconnect_nic) and O(what_if=true), per node the carrier-loss behaviour predicted - C(behaviour)
      (C(remove) or C(keep)) and C(source) (given, read from which node's NodeNetworkState, or assumed).
  returned: when O(trigger=disconnect_nic) and O(what_if=true)
  type: dict
  sample: {ocp1-worker-0: {behaviour: remove, source: "assumed: remove, NetworkManager's default without ignore-carrier"}}
single_points_of_failure:
  description: Nodes whose failure may leave an egress IP unassigned, with those IPs.
  returned: when O(what_if=true)
  type: list
  elements: dict
  sample: [{node: ocp1-worker-0, trigger: unlabel, ips: [{egressip: payments, ip: 10.20.0.200, certain: true}]}]
exact:
  description: Whether every prediction explored every case.
  returned: always
  type: bool
  sample: true
findings:
  description:
    - C(egressip_single_point_of_failure) (warning) per single point of failure; C(egressip_unassigned) for each IP
      predicted unassigned (error when certain, warning when possible).
  returned: always
  type: list
  elements: dict
  sample: []
'''

from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_path as _verify_path
from ansible_collections.ocp.egressip.plugins.module_utils.checks import verify_io as vio
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import objects_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import WARNING
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import EgressModule

OWNER = (MANAGED_BY_LABEL, MANAGED_BY_VALUE)


def desired_snapshot(snap, objects, exclusive):
    """The snapshot as if `objects` were applied (and, with exclusive, owned unlisted objects deleted)."""
    if objects is None:
        return snap
    listed = set(entry['name'] for entry in objects)
    removed = [name for name, entry in snap['egressips'].items() if exclusive and entry['owned'] and name not in listed]
    return placement.with_objects(snap, objects, removed)


def plan_findings(placements, single_points):
    findings = []
    for item in placements:
        if not item['may_be_unassigned']:
            continue
        certain = not item['candidates']
        findings.append(catalogue_finding(
            'egressip_unassigned', 'EgressIP %s IP %s %s unassigned (%s)%s.' % (
                item['egressip'], item['ip'], 'stays' if certain else 'may stay', ', '.join(item['reasons']) or 'no capable node',
                '' if certain else '; otherwise on one of %s' % ', '.join(item['candidates'])),
            objects=[{'kind': 'EgressIP', 'name': item['egressip']}], severity=None if certain else WARNING))
    for point in single_points:
        findings.append(catalogue_finding(
            'egressip_single_point_of_failure', 'If node %s fails (%s), %s.' % (
                point['node'], point['trigger'], '; '.join('%s %s %s unassigned' % (
                    gap['egressip'], gap['ip'], 'stays' if gap['certain'] else 'may stay') for gap in point['ips'])),
            objects=[{'kind': 'Node', 'name': point['node']}] + [{'kind': 'EgressIP', 'name': name}
                                                                 for name in sorted(set(gap['egressip'] for gap in point['ips']))]))
    return findings


def carrier_loss(module, snap, params):
    """{node: {'behaviour', 'source'}} for trigger=disconnect_nic (NodeNetworkStates read only for carrier_loss=auto), else None."""
    if params['trigger'] != 'disconnect_nic':
        return None
    given = params['carrier_loss'] if params['carrier_loss'] != 'auto' else None
    nns = vio.read_nns(module.k8s)[0] if given is None else None
    result = {}
    for node in params['nodes'] or placement.egress_nodes(snap):
        behaviour, source = _verify_path.carrier_loss_choice(node, given, nns)
        result[node] = {'behaviour': behaviour, 'source': source}
    return result


def run(module, _result=None):
    params = module.params
    egressips = kube.list_objects(module.k8s, kube.EGRESSIPS)
    nodes = kube.list_objects(module.k8s, kube.NODES)
    snap = placement.snapshot(nodes, egressips, unreachable=params['unreachable'], owner_label=OWNER)
    objects = None
    if params['objects'] is not None:
        objects = [{'name': entry['name'], 'egress_ips': entry['egress_ips']} for entry in params['objects']]
    snap = desired_snapshot(snap, objects, params['exclusive'])
    unknown = sorted(set(params['nodes'] or []) - set(snap['nodes']))
    if unknown:
        raise ModuleFailure('nodes %s: no such node in the cluster (nodes: %s)' % (', '.join(unknown), ', '.join(sorted(snap['nodes']))))
    prediction = placement.predict(snap)
    result = {'placements': prediction['placements'], 'egress_nodes': prediction['egress_nodes'], 'exact': prediction['exact']}
    single_points = []
    if params['what_if']:
        behaviours = carrier_loss(module, snap, params)
        result['what_if'] = placement.what_if_all(snap, params['trigger'], params['nodes'],
                                                  carrier_loss=dict((node, item['behaviour']) for node, item in (behaviours or {}).items()))
        if behaviours is not None:
            result['carrier_loss'] = behaviours
            for item in result['what_if']:
                item['notes'].append('carrier loss: %s' % behaviours[item['node']]['source'])
        single_points = placement.single_points_of_failure(result['what_if'])
        result['single_points_of_failure'] = single_points
        result['exact'] = result['exact'] and all(item['exact'] for item in result['what_if'])
    result['findings'] = plan_findings(prediction['placements'], single_points)
    return result


def main():
    module = EgressModule(
        'egressip_plan', argument_spec=dict(
            objects=objects_argument_spec(required=('egress_ips',)),
            exclusive=dict(type='bool', default=False),
            trigger=dict(type='str', default='unlabel', choices=sorted(placement.TRIGGERS)),
            nodes=dict(type='list', elements='str'),
            what_if=dict(type='bool', default=True),
            unreachable=dict(type='list', elements='str', default=[]),
            carrier_loss=dict(type='str', default='auto', choices=['auto', 'keep', 'remove']),
        ),
        libraries=('netaddr',), supports_check_mode=True,
    )
    module.run(run)


if __name__ == '__main__':
    main()
