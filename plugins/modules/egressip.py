#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip
short_description: Apply the EgressIP objects of the variables file, validated first, then wait until every IP is assigned
version_added: 0.1.0
description:
  - Creates, updates and deletes C(EgressIP) objects (C(k8s.ovn.org/v1), cluster-scoped) so that the objects this
    collection owns are exactly the ones in O(objects).
  - Validates everything before any write, and writes nothing when one check fails; the failure message lists each
    problem with the field, the value and the fix. Checks (DOMAIN.md sections 3 and 5) - each IP is an address
    inside O(network.cidr); it is not the network, broadcast or gateway address; not inside
    O(network.node_address_range) (reserved for the node NIC base addresses of the address plan); not the address of
    a node (C(k8s.ovn.org/host-cidrs) and the node addresses); not in C(spec.egressIPs) of another EgressIP object;
    listed once; C(namespace_selector) is given and not empty; each object has at least one more capable node
    (labelled C(k8s.ovn.org/egress-assignable), Ready, holding the IP's network in C(host-cidrs)) than IPs, since one
    node failure would otherwise leave an IP unassigned (an error, or a warning with O(allow_insufficient_capacity)).
  - Writes C(spec) only, as JSON merge patches (EgressIP has no status subresource; C(status) belongs to the
    OVN-Kubernetes cluster manager and is never sent). The object's spec is exactly what its entry says
    (C(podSelector) is removed when the entry has no C(pod_selector)); labels and annotations the collection did not
    set are kept.
  - Objects it creates carry the label C(egressip.ocp/managed-by=ocp.egressip). An object of the same name without
    that label is never changed or deleted unless O(adopt=true).
  - Deleting an object whose egress IPs are assigned (C(status.items) not empty; O(state=absent) or O(exclusive)) stops
    the traffic they carry, so it is refused before any write unless O(force=true) (finding C(egressip_delete_assigned)
    naming each IP and its node). RV(stops_carrying) lists those egress IPs, in check mode too.
  - With O(wait=true), waits until C(status.items) lists every IP of the objects in O(objects), each on a node whose
    C(host-cidrs) hold O(network.cidr). On timeout, fails naming each IP that is not where it should be together with
    the Warning events OVN-Kubernetes recorded for its object (C(NoMatchingNodeFound), C(EgressIPConflict),
    C(UnsupportedRequest), C(UnassignedRequest), C(InvalidEgressIP)).
  - Reads one list of EgressIPs and one list of Nodes (Events only when a wait times out). A run that changes
    nothing and finds every IP assigned costs these two requests, whatever the number of objects and nodes.
requirements:
  - netaddr >= 1.3.0
options:
  objects:
    description:
      - The EgressIP objects, as in C(egressip_objects) of the variables file.
      - With O(state=absent), only O(objects[].name) is used.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: Object name (a DNS-1123 subdomain, for example C(payments)).
        type: str
        required: true
      egress_ips:
        description:
          - The egress IPs (C(spec.egressIPs)), each inside O(network.cidr). Written in canonical form; the order does
            not matter to OVN-Kubernetes and a different order alone is not a change.
          - Required with O(state=present).
        type: list
        elements: str
      namespace_selector:
        description:
          - C(spec.namespaceSelector), a LabelSelector (C(matchLabels), C(matchExpressions)) selecting the namespaces
            whose pods leave with these IPs. Required with O(state=present); an empty selector is refused because it
            selects every namespace.
        type: dict
      pod_selector:
        description: C(spec.podSelector), a LabelSelector narrowing the pods in those namespaces; omitted selects them all.
        type: dict
  state:
    description:
      - V(present) creates or updates the objects in O(objects).
      - V(absent) deletes the objects named in O(objects) (owned ones; others only with O(adopt=true)).
    type: str
    choices: [present, absent]
    default: present
  exclusive:
    description:
      - With O(state=present), also delete the objects this collection owns that are not in O(objects).
      - Objects without the ownership label are never deleted this way.
    type: bool
    default: false
  adopt:
    description:
      - Take over objects of the same name that the collection did not create (for example made by hand with
        C(oc apply)); the ownership label is added and their spec replaced by the entry.
    type: bool
    default: false
  force:
    description:
      - Delete objects whose egress IPs are assigned (O(state=absent), or owned objects not in O(objects) with
        O(exclusive=true)); those egress IPs stop carrying traffic.
    type: bool
    default: false
  allow_insufficient_capacity:
    description:
      - Turn the capacity refusal (fewer capable nodes than IPs per object + 1) into a warning in RV(findings).
    type: bool
    default: false
  wait:
    description: Wait until every IP of O(objects) is assigned to a node whose C(host-cidrs) hold O(network.cidr).
    type: bool
    default: true
  wait_timeout:
    description: Seconds to wait with O(wait=true).
    type: int
    default: 120
  wait_sleep:
    description: Seconds between two reads of the EgressIP objects while waiting.
    type: int
    default: 2
extends_documentation_fragment:
  - ocp.egressip.egressip_network
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.progress
  - ocp.egressip.common
attributes:
  check_mode:
    details:
      - Every write is sent with C(dryRun=All), so the API server validates it (schema, admission) and stores nothing.
      - Nothing is waited for.
  diff_mode:
    support: full
    details: The managed part (ownership label and spec) of each object that changes, before and after.
notes:
  - Secondary-network EgressIP on vSphere is outside Red Hat support (see docs/support-matrix.md); the C(preflight)
    module checks the acknowledgement, this module does not.
  - Where OVN-Kubernetes will place each IP, and what happens when a node fails, is what M(ocp.egressip.egressip_plan)
    tells; RV(placement) gives the same prediction for the objects of this run.
seealso:
  - module: ocp.egressip.egressip_plan
  - module: ocp.egressip.egressip_info
  - module: ocp.egressip.egress_nodes
'''

EXAMPLES = r'''
- name: Apply the EgressIP objects of the variables file and wait for their assignment
  ocp.egressip.egressip:
    objects: "{{ egressip_objects }}"
    network:
      cidr: "{{ egressip_network.cidr }}"
      gateway: "{{ egressip_network.gateway }}"
      node_address_range: "{{ egressip_network.node_address_range }}"
  register: egress

- name: One object, written out
  ocp.egressip.egressip:
    objects:
      - name: payments
        egress_ips: [10.20.0.200, 10.20.0.201]
        namespace_selector: {matchLabels: {team: payments}}
        pod_selector: {matchLabels: {app: gateway}}
    network: {cidr: 10.20.0.0/24, gateway: 10.20.0.1}
    wait_timeout: 300

- name: Keep exactly these objects (delete owned objects no longer listed) and take over one made by hand
  ocp.egressip.egressip:
    objects: "{{ egressip_objects }}"
    network: {cidr: 10.20.0.0/24, gateway: 10.20.0.1}
    exclusive: true
    adopt: true

- name: Remove an object (refused while its egress IPs are assigned, unless force)
  ocp.egressip.egressip:
    objects: [{name: payments}]
    state: absent
    force: true
'''

RETURN = r'''
egressips:
  description: One entry per object in O(objects) (and per owned object deleted by O(exclusive)), in that order.
  returned: always
  type: list
  elements: dict
  contains:
    name:
      description: Object name.
      type: str
      sample: payments
    action:
      description: C(create), C(update), C(adopt), C(delete) or C(none).
      type: str
      sample: create
    egress_ips:
      description: C(spec.egressIPs) after the run.
      type: list
      elements: str
      sample: [10.20.0.200, 10.20.0.201]
    assignments:
      description: C(status.items) as last read (after the wait when O(wait=true)).
      type: list
      elements: dict
      sample: [{egressIP: 10.20.0.200, node: ocp1-worker-0}, {egressIP: 10.20.0.201, node: ocp1-worker-1}]
stops_carrying:
  description:
    - The assigned egress IPs of the objects this run deletes (or would delete, in check mode, or refused to delete without
      O(force)) - what stops carrying traffic.
  returned: always
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.200, node: ocp1-worker-0}]
placement:
  description:
    - Where OVN-Kubernetes puts or will put each IP of O(objects), as M(ocp.egressip.egressip_plan) predicts it for the
      state after this run - the current node when assigned, else the set of nodes it may land on (equally loaded
      nodes are picked in an arbitrary order).
  returned: with O(state=present)
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.200, node: null, state: pending, candidates: [ocp1-worker-0, ocp1-worker-1],
            may_be_unassigned: false, reasons: []}]
findings:
  description: Refusals (on failure) and accepted warnings, as findings (C(id), C(severity), C(message), C(remedy), C(docs), C(objects)).
  returned: always
  type: list
  elements: dict
  sample: []
unassigned:
  description: After a wait that timed out, each IP not where it should be, with the events of its object.
  returned: on wait timeout
  type: list
  elements: dict
  sample: [{egressip: payments, ip: 10.20.0.201, node: null, problem: unassigned,
            events: [{reason: UnassignedRequest, message: "Not all egress IPs for EgressIP: payments could be assigned, please tag more nodes", count: 3}]}]
diff:
  description: The managed part of each changed object, before and after (C(null) for absent).
  returned: when diff mode is on
  type: dict
  sample: {before: {payments: null}, after: {payments: {metadata: {labels: {egressip.ocp/managed-by: ocp.egressip}}, spec: {egressIPs: [10.20.0.200]}}}}
'''

import copy

from ansible_collections.ocp.egressip.plugins.module_utils.checks import egressip_validation as validation
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients import parallel
from ansible_collections.ocp.egressip.plugins.module_utils.model import placement
from ansible_collections.ocp.egressip.plugins.module_utils.model.network import argument_spec as network_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.option_specs import objects_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_IN_STEP, PROGRESS_TRIES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.plan.egressips import (
    KIND,
    OWNER,
    delete_guard,
    diff_of,
    explain_gaps,
    plan_changes,
)

WHAT = 'egressip'
EVENTS_NAMESPACE = 'default'  # events of a cluster-scoped object land there (client-go record.EventRecorder)


def read(k8s, need_nodes):
    egressips = kube.list_objects(k8s, kube.EGRESSIPS)
    nodes = kube.list_objects(k8s, kube.NODES) if need_nodes else []
    return egressips, nodes


def list_events(k8s):
    selector = 'involvedObject.kind=%s,type=Warning' % KIND
    return kube.list_objects(k8s, kube.EVENTS, namespace=EVENTS_NAMESPACE, field_selector=selector)


def _phase(change):
    """Deletes, then updates that free IPs, then other updates, then creates: a freed IP is claimed after its release."""
    if change['action'] == 'delete':
        return 0
    if change['action'] == 'create':
        return 3
    return 1 if change['drops_ips'] else 2


def apply(k8s, changes, check_mode):
    """Write the changes phase by phase, each phase in parallel."""
    done = 0
    for phase in range(4):
        calls = []
        for change in changes:
            if _phase(change) != phase:
                continue
            if change['action'] == 'delete':
                calls.append(lambda change=change: kube.delete(k8s, kube.EGRESSIPS, change['name'], check_mode))
            elif change['action'] == 'create':
                calls.append(lambda change=change: kube.create(k8s, kube.EGRESSIPS, change['body'], check_mode))
            else:
                calls.append(lambda change=change: kube.patch(k8s, kube.EGRESSIPS, change['name'], change['patch'], check_mode))
        results, failures = parallel.run_parallel(calls)
        parallel.raise_failures(failures, done + len([item for item in results if item is not None]), 'EgressIP writes')
        done += len(calls)


def wait_for_assignment(module, names, nodes, network, egressips):
    """Poll the EgressIP list until no IP of `names` has a gap; returns (egressips, gaps).

    The nodes read at the start of the run serve the check, unless an IP sits on a node whose
    host-cidrs lack the network: then the nodes are read again with each poll.
    """
    params = module.params
    clock = parallel.Clock(params['wait_timeout'], params['wait_sleep'])
    while True:
        gaps = placement.assignment_gaps(placement.snapshot(nodes, egressips), names, network)
        if not gaps or clock.expired():
            return egressips, gaps
        clock.sleep()
        egressips = kube.list_objects(module.k8s, kube.EGRESSIPS)
        if any(gap['problem'] != 'unassigned' for gap in gaps):
            nodes = kube.list_objects(module.k8s, kube.NODES)


def _entries(params):
    entries = []
    for entry in params['objects'] or []:
        entries.append(dict((key, entry.get(key)) for key in ('name', 'egress_ips', 'namespace_selector', 'pod_selector')))
    return entries


def _report(entries, changes, egressips, state):
    """One entry per listed object, then per object deleted by exclusive: action, IPs, assignments."""
    by_name = dict((obj['metadata']['name'], obj) for obj in egressips)
    actions = dict((change['name'], change['action']) for change in changes)
    listed = [entry['name'] for entry in entries]
    names = listed + [change['name'] for change in changes if change['action'] == 'delete' and change['name'] not in listed]
    report = []
    for name in names:
        action = actions.get(name, 'none')
        gone = action == 'delete' or state == 'absent'
        obj = None if gone else by_name.get(name)
        report.append({'name': name, 'action': action,
                       'egress_ips': list(((obj or {}).get('spec') or {}).get('egressIPs') or []),
                       'assignments': [{'egressIP': item.get('egressIP'), 'node': item.get('node')}
                                       for item in ((obj or {}).get('status') or {}).get('items') or []]})
    return report


def run(module, result):
    params = module.params
    entries = _entries(params)
    present = params['state'] == 'present'
    findings = validation.check_shape(entries, 'objects', require_ips=present)
    if present and not params['network']:
        findings.append(validation.egress_network(None)[1][0])
    if errors(findings):
        raise Refused(findings)

    module.take_lock()  # input refused above writes nothing, not even the Lease
    egressips, nodes = read(module.k8s, present)
    existing = dict((obj['metadata']['name'], obj) for obj in egressips)
    changes, refusals = plan_changes(entries, existing, params['state'], params['exclusive'], params['adopt'])
    deleted = [change['name'] for change in changes if change['action'] == 'delete']
    snap = placement.snapshot(nodes, egressips, owner_label=OWNER)
    if present:
        findings += validation.validate(entries, params['network'], snap, others_ignored=deleted,
                                        allow_insufficient_capacity=params['allow_insufficient_capacity'])
    result['stops_carrying'], assigned_refusals = delete_guard(changes, params['force'])
    findings += refusals + assigned_refusals
    result['findings'] = findings
    if errors(findings):
        raise Refused(findings)

    result['changed'] = bool(changes)
    result['diff'] = diff_of(changes)
    if present:
        after = placement.with_objects(snap, [{'name': entry['name'], 'egress_ips': entry['egress_ips']} for entry in entries], deleted)
        names = set(entry['name'] for entry in entries)
        result['placement'] = [item for item in placement.predict(after)['placements'] if item['egressip'] in names]
    if changes:
        apply(module.k8s, changes, module.check_mode)
        if not module.check_mode:
            egressips = kube.list_objects(module.k8s, kube.EGRESSIPS) if not (present and params['wait']) else egressips
    if present and params['wait'] and not module.check_mode:
        egressips = _after_writes(egressips, changes)
        names = [entry['name'] for entry in entries]
        parsed = validation.egress_network(params['network'])[0]
        cidrs = [str(family.cidr) for family in parsed.families] if parsed is not None else params['network']['cidr']
        egressips, gaps = wait_for_assignment(module, names, nodes, cidrs, egressips)
        if gaps:
            result['unassigned'], timeout_findings = explain_gaps(gaps, list_events(module.k8s))
            result['egressips'] = _report(entries, changes, egressips, params['state'])
            result['findings'] = findings + timeout_findings
            raise Refused(timeout_findings)
    result['egressips'] = _report(entries, changes, egressips, params['state'])


def _after_writes(egressips, changes):
    """The EgressIP list as it is after the writes, without reading it again (status unknown for new ones)."""
    by_name = dict((obj['metadata']['name'], copy.deepcopy(obj)) for obj in egressips)
    for change in changes:
        if change['action'] == 'delete':
            by_name.pop(change['name'], None)
        elif change['action'] == 'create':
            by_name[change['name']] = copy.deepcopy(change['body'])
        else:
            obj = by_name[change['name']]
            obj['spec'] = dict(change['after']['spec'])
            obj.setdefault('metadata', {}).setdefault('labels', {}).update(change['after']['metadata']['labels'])
    return list(by_name.values())


def main():
    module = EgressModule(
        WHAT, argument_spec=dict(
            objects=objects_argument_spec(default=[]),
            network=network_argument_spec(),
            state=dict(type='str', choices=['present', 'absent'], default='present'),
            exclusive=dict(type='bool', default=False),
            adopt=dict(type='bool', default=False),
            force=dict(type='bool', default=False),
            allow_insufficient_capacity=dict(type='bool', default=False),
            wait=dict(type='bool', default=True),
            wait_timeout=dict(type='int', default=120),
            wait_sleep=dict(type='int', default=2),
        ),
        libraries=('netaddr',), lock=LOCK_IN_STEP, progress=PROGRESS_TRIES, supports_check_mode=True,
    )
    module.run(run, egressips=[], stops_carrying=[], findings=[])


if __name__ == '__main__':
    main()
