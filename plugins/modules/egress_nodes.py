#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egress_nodes
short_description: Put the egress-assignable label on exactly the nodes that can host secondary-network egress IPs
version_added: 0.1.0
description:
  - Labels C(k8s.ovn.org/egress-assignable="") exactly the capable nodes - those that match O(selector), whose
    secondary NIC is up with an address in every family of O(network) (O(network.cidr), O(network.ipv6.cidr)) according to their
    C(NodeNetworkState), and whose C(k8s.ovn.org/host-cidrs) annotation (what OVN-Kubernetes places egress IPs by)
    shows that address.
  - Reports the nodes that match O(selector) but are not capable, and why (finding C(node_not_capable)).
  - With O(state=present), a selector that matches no node is refused before anything is written (finding
    C(egress_nodes_none_selected)), on a fresh cluster as on an enabled one (where it would remove every label).
  - Writes the label together with the record C(egressip.ocp/egress-assignable=ocp.egressip) (a Node annotation, in the
    same patch), and only ever removes a label that carries that record. A label without it was set by hand (or by a
    release of this collection before the record) - it is kept and reported (finding C(egress_label_set_by_hand), with
    how to hand it over or remove it), unless O(force=true). O(adopt=true) hands over the hand-made labels of capable
    nodes (writes the record); a record whose label was removed by hand is dropped.
  - Removes its label from labelled nodes that are not capable (with O(exclusive=true), also from labelled nodes
    outside O(selector)). Removing it from a node is refused unless O(force=true) (nothing is written then) when the
    node hosts an egress IP this collection does not own - a primary-network egress IP (outside O(network))
    or one of an EgressIP object without the label C(egressip.ocp/managed-by=ocp.egressip); it would move (finding
    C(node_hosts_unowned_egress_ips)) - or one of its own egress IPs without a capable replacement (a node keeping the
    label that does not already host another IP of the same EgressIP object; finding C(node_hosts_egress_ips)).
  - Reads one list of Nodes, NodeNetworkStates and EgressIPs; writes one JSON merge patch per node that changes, in
    parallel. A run that changes nothing costs three requests.
  - O(state=absent) removes the labels this collection set (same guards), for example before the secondary network is
    taken down, and the C(egressip.ocp/remediated-at) annotation remediations wrote (the guard's hold-down record).
requirements:
  - netaddr >= 1.3.0
options:
  selector:
    description:
      - 'The candidate nodes, as a label map (C({node-role.kubernetes.io/worker: ""})) or a LabelSelector
        (C(matchLabels), C(matchExpressions)).'
    type: dict
    required: true
  cidr:
    description:
      - Deprecated (removed in 2.0.0), use O(network) (only its cidrs are read here). One of O(network) and O(cidr) is required.
    type: str
  ipv6_cidr:
    description: Deprecated (removed in 2.0.0), use O(network.ipv6.cidr).
    type: str
  exclusive:
    description:
      - V(true) keeps the label on exactly the capable nodes, removing it from any other node.
      - V(false) only removes it from nodes that match O(selector) and are not capable.
    type: bool
    default: true
  force:
    description:
      - Remove the label even from nodes that host egress IPs without a capable replacement, or egress IPs this
        collection does not own (they move), and also labels set by hand (without the record; in MachineSet templates
        too).
    type: bool
    default: false
  adopt:
    description:
      - Hand over to this collection the labels set by hand on the capable nodes (those that match O(selector)) - the
        record is written beside them, so later runs and the disable playbook manage them. Labels outside O(selector)
        or on nodes that are not capable are never adopted.
    type: bool
    default: false
  deleted_egressips:
    description:
      - Names of EgressIP objects that an earlier step of the same run deletes (the disable role in check mode, where
        they still exist); their egress IPs do not hold a label back.
    type: list
    elements: str
    default: []
  state:
    description: V(present) labels the capable nodes; V(absent) removes the label.
    type: str
    choices: [present, absent]
    default: present
  machinesets:
    description:
      - Also put the label in the template (C(spec.template.spec.metadata.labels)) of the MachineSets that build the
        capable nodes, with the record in the template's annotations, so their new Machines' nodes arrive labelled
        (with O(state=absent), take it out of every MachineSet template that carries it with the record; others only
        with O(force=true)). Only that label and annotation key are changed in a MachineSet.
      - A new node is still not capable until it has its NIC and address; OVN-Kubernetes does not place a
        secondary-network egress IP on a node whose C(host-cidrs) lacks the subnet, and the next run of this module
        (with O(exclusive=true)) removes the label from a node that stayed incapable.
      - Adds one list of MachineSets and one of Machines (namespace C(openshift-machine-api)); a cluster without
        Machine API has none, and nothing is done.
    type: bool
    default: false
  wait:
    description:
      - Before labelling, wait until every node listed in O(nodes) is capable (its address reaches C(host-cidrs) a
        few seconds after the NMState policy is applied). On timeout the capable nodes are labelled and the others
        are reported.
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait with O(wait=true).
    type: int
    default: 120
extends_documentation_fragment:
  - ocp.egressip.node_nics
  - ocp.egressip.egressip_network
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.wait
  - ocp.egressip.progress.notes
  - ocp.egressip.common
attributes:
  check_mode:
    details: Nothing is sent but the reads (and, with O(machinesets=true), MachineSet patches with C(dryRun=All)).
  diff_mode:
    support: full
    details: The sorted lists of egress-assignable nodes and of nodes carrying the record, before and after.
notes:
  - Cordoned or NotReady nodes are labelled like any other; OVN-Kubernetes itself skips nodes that are not Ready or
    not reachable, and cordon does not move egress IPs.
seealso:
  - module: ocp.egressip.node_nic_address
'''

EXAMPLES = r'''
- name: Label the capable workers (after node_nic_address)
  ocp.egressip.egress_nodes:
    selector: {node-role.kubernetes.io/worker: ""}
    network: "{{ egressip_network }}"
    nodes: "{{ nics }}"
    wait: true
  register: egress_nodes

- name: Nodes that match but cannot host egress IPs, and why
  ansible.builtin.debug:
    var: egress_nodes.not_capable

- name: Take the label off every node (egress IPs already removed)
  ocp.egressip.egress_nodes:
    selector: {node-role.kubernetes.io/worker: ""}
    network: {cidr: 10.20.0.0/24}
    state: absent
'''

RETURN = r'''
egress_assignable:
  description: The nodes carrying the label after this run (or that would, in check mode), sorted.
  returned: always
  type: list
  elements: str
  sample: [ocp1-worker-0, ocp1-worker-1]
added:
  description: Nodes the label was put on.
  returned: always
  type: list
  elements: str
  sample: [ocp1-worker-1]
removed:
  description: Nodes the label was taken from.
  returned: always
  type: list
  elements: str
  sample: []
adopted:
  description: Nodes whose hand-made label was handed over (the record written), with O(adopt=true).
  returned: always
  type: list
  elements: str
  sample: []
hand_made:
  description: Nodes carrying the label after this run without the record (set by hand); this collection leaves them as they are.
  returned: always
  type: list
  elements: str
  sample: [ocp1-infra-0]
capable:
  description: Nodes that match O(selector) and can host secondary-network egress IPs.
  returned: always
  type: list
  elements: str
  sample: [ocp1-worker-0, ocp1-worker-1]
not_capable:
  description: Nodes that match O(selector) but cannot, with the reasons.
  returned: always
  type: list
  elements: dict
  sample: [{node: ocp1-worker-2, reasons: ["k8s.ovn.org/host-cidrs has no address in 10.20.0.0/24"]}]
machinesets_labelled:
  description: MachineSets whose template carries the label after this run, with O(machinesets=true).
  returned: with O(machinesets=true)
  type: list
  elements: str
  sample: [ocp1-x7k2p-worker-0]
findings:
  description: Refusals and warnings (C(node_not_capable), C(node_hosts_egress_ips), C(node_hosts_unowned_egress_ips), C(egress_label_set_by_hand)).
  returned: always
  type: list
  elements: dict
  sample: []
diff:
  description: The egress-assignable nodes before and after.
  returned: when diff mode is on
  type: dict
  sample: {before: {egress_assignable: [ocp1-worker-0], set_by_collection: [ocp1-worker-0]},
           after: {egress_assignable: [ocp1-worker-0, ocp1-worker-1], set_by_collection: [ocp1-worker-0, ocp1-worker-1]}}
  contains:
    before:
      description:
        - C(egress_assignable), the labelled nodes, C(set_by_collection), the nodes carrying the record, and
          C(machinesets) (with O(machinesets=true)) before.
      type: dict
    after:
      description: The same after.
      type: dict
'''

import json

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.snapshot import kubernetes
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.model import network as _network
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core import progress
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_IN_STEP, PROGRESS_NOTES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.plan.machine_api import node_machines
from ansible_collections.ocp.egressip.plugins.module_utils.plan import egress_labels as el
from ansible_collections.ocp.egressip.plugins.module_utils.plan import nic_addresses as na

WHAT = 'egress_nodes'
KINDS = ('nodes', 'nns', 'egressips')  # what the plan reads, one list each
FLAT = (('cidr', None), ('ipv6_cidr', 6))  # deprecated: the network option's cidrs


def validate(module):
    params = module.params
    entries, findings = na.nic_entries(params['nodes'], keys=('node', 'mac'))
    findings += el.validate_selector(params['selector']) + na.validate_nic_entries(entries)
    networks, found = _network.cidr_options(params, FLAT, module.deprecate)  # parsed once per run
    return networks, dict((entry['node'], entry['mac']) for entry in entries), findings + found


def none_selected(selector, nodes):
    return catalogue_finding(
        'egress_nodes_none_selected', 'selector %s matches none of the %d nodes; nothing was written.'
        % (json.dumps(selector, sort_keys=True), len(nodes)), objects=[{'kind': 'option', 'name': 'selector'}],
        remedy='correct the selector (egressip_nodes.selector) to the labels of the egress nodes (oc get nodes --show-labels); '
               'to remove every label the collection set, use state: absent.')


def plan(module, networks, macs):
    params = module.params
    snapshot = kubernetes.read(module.k8s, KINDS)
    result = el.plan_egress_nodes(params['selector'], networks, macs, snapshot, params['state'] == 'present',
                                  params['exclusive'], params['force'], params['adopt'], params['deleted_egressips'])
    # the same refusal on a fresh and on an enabled cluster (there it would strand every label)
    if params['state'] == 'present' and not result['matching']:
        raise Refused([none_selected(params['selector'], snapshot['nodes'])])
    if not (params['wait'] and macs and params['state'] == 'present') or module.check_mode:
        return result
    clock = parallel.Clock(params['wait_timeout'], params['wait_sleep'])
    while [name for name in macs if name not in result['capable']] and not clock.expired():
        progress.note('the host-cidrs of %s to hold the egress network (wait_timeout %d s)'
                      % (progress.shown('Node %s' % name for name in sorted(macs) if name not in result['capable']), params['wait_timeout']))
        clock.sleep()
        snapshot = kubernetes.read(module.k8s, KINDS)
        result = el.plan_egress_nodes(params['selector'], networks, macs, snapshot, True, params['exclusive'], params['force'],
                                      params['adopt'], params['deleted_egressips'])
    return result


def label_machinesets(module, labels, result):
    k8s = module.k8s
    machinesets = kube.list_objects(k8s, kube.MACHINESETS, namespace=kube.MACHINE_API_NAMESPACE, absent=None) or []
    machines = kube.list_objects(k8s, kube.MACHINES, namespace=kube.MACHINE_API_NAMESPACE, absent=None) or []
    nodes = [{'metadata': {'name': name}} for name in labels['capable']]
    changes, before, after = el.plan_machineset_labels(labels['capable'], node_machines(nodes, machines, machinesets), machinesets,
                                                       module.params['state'] == 'present', module.params['force'])
    result['machinesets_labelled'] = after
    result['diff']['before']['machinesets'] = before
    result['diff']['after']['machinesets'] = after
    result['changed'] = result['changed'] or bool(changes)
    results, failures = parallel.run_parallel([
        lambda name=name, add=add: kube.patch(k8s, kube.MACHINESETS, name, el.machineset_label_patch(add), module.check_mode,
                                              namespace=kube.MACHINE_API_NAMESPACE) for name, add in changes])
    parallel.raise_failures(failures, len([item for item in results if item is not None]), 'MachineSet template label patches')


def step(module, result):
    """Validate, take the lock, plan the labels, write them unless in check mode."""
    networks, macs, findings = validate(module)
    if errors(findings):
        raise Refused(findings)
    module.take_lock()
    labels = plan(module, networks, macs)
    result.update(egress_assignable=labels['after'], added=labels['add'], removed=labels['remove'], adopted=labels['adopt'],
                  hand_made=labels['hand_made'], capable=labels['capable'], not_capable=labels['not_capable'], findings=labels['findings'])
    if errors(labels['findings']):
        result['egress_assignable'] = labels['before']
        raise Refused(labels['findings'])
    changes = el.label_changes(labels)
    result['changed'] = bool(changes)
    result['diff'] = {'before': {'egress_assignable': labels['before'], 'set_by_collection': labels['recorded_before'],
                                 'remediated': labels['remediated_before']},
                      'after': {'egress_assignable': labels['after'], 'set_by_collection': labels['recorded_after'],
                                'remediated': labels['remediated_after']}}
    if changes and not module.check_mode:
        k8s = module.k8s
        results, failures = parallel.run_parallel([lambda name=name, body=body: kube.patch(k8s, kube.NODES, name, body, False)
                                                   for name, body in changes])
        parallel.raise_failures(failures, len([item for item in results if item is not None]), 'egress-assignable label patches')
    if module.params['machinesets']:
        label_machinesets(module, labels, result)


def main():
    module = EgressModule(
        WHAT, argument_spec=dict(
            selector=dict(type='dict', required=True),
            network=_network.argument_spec(),
            cidr=dict(type='str'),
            ipv6_cidr=dict(type='str'),
            nodes=dict(type='list', elements='dict'),
            exclusive=dict(type='bool', default=True),
            force=dict(type='bool', default=False),
            adopt=dict(type='bool', default=False),
            deleted_egressips=dict(type='list', elements='str', default=[]),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            machinesets=dict(type='bool', default=False),
            wait=dict(type='bool', default=False),
            wait_timeout=dict(type='int', default=120),
            wait_sleep=dict(type='int', default=2),
        ),
        libraries=('netaddr',), lock=LOCK_IN_STEP, progress=PROGRESS_NOTES, supports_check_mode=True,
        required_one_of=[['network', 'cidr']], mutually_exclusive=_network.exclusive_with(('cidr', 'ipv6_cidr')),
    )
    module.run(step, egress_assignable=[], added=[], removed=[], adopted=[], hand_made=[], capable=[], not_capable=[], findings=[])


if __name__ == '__main__':
    main()
