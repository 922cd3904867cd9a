#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_guard_record
short_description: Record a guard round where operators look - Events on the EgressIP objects and a status ConfigMap
version_added: 0.2.0
description:
  - Takes the result of M(ocp.egressip.egressip_verify) (its C(summary), C(egress_ips) and C(findings)) and gives each
    EgressIP object a state - C(blackhole), C(unassigned), C(capacity_low), C(unknown) (its path could not be checked)
    or C(healthy).
  - "Kubernetes Events (core v1, in the C(default) namespace as for every cluster-scoped object, so that
    C(oc describe egressip <name>) and C(oc get events -n default) show them): a Warning C(EgressIPBlackhole),
    C(EgressIPUnassigned) or C(EgressIPCapacityLow) when an object enters that state, with the findings' messages, their
    fixes and the nodes involved; while the state lasts, the same Event's C(count) and C(lastTimestamp) go up each
    round (as the kubelet aggregates its Events) instead of a new Event; a Normal C(EgressIPHealthy) only when an
    object leaves a bad state. An Event removed by the API server's Event TTL is created again."
  - When the verification holds a C(remediation) (M(ocp.egressip.egressip_verify) with O(ocp.egressip.egressip_verify#module:remediate=true)
    unlabelled a broken node), a Normal C(EgressIPRemediated) Event per EgressIP object whose IPs it moved, saying from
    which node to which and how fast; the status ConfigMap keeps the remediation (nodes, moves, deferred nodes and why)."
  - The ConfigMap O(name) in O(namespace) holds the last round - C(time) (UTC, ISO 8601), C(verdict) (C(ok),
    C(warning), C(error)) and C(status.json) (counts, findings, the state of each object since when, the Events
    written) - and is what the next round compares with.
  - Reads the ConfigMap and one list of EgressIPs (for the Events' C(involvedObject.uid)) whatever the cluster size.
    Every round writes the ConfigMap (its time), so a real run always reports C(changed=true).
options:
  verification:
    description:
      - The registered result of M(ocp.egressip.egressip_verify), or a dict with at least its C(summary), C(egress_ips)
        and C(findings), and its C(remediation) when it remediated.
    type: dict
    required: true
  namespace:
    description:
      - Namespace of the status ConfigMap; it must exist. The default is where the cluster lock's Lease lives.
    type: str
    default: openshift-machine-api
  name:
    description: Name of the status ConfigMap.
    type: str
    default: egressip-guard-status
  events:
    description: Write the Events; with V(false) only the ConfigMap is written.
    type: bool
    default: true
  instance:
    description: C(reportingInstance) of the Events (for example the host or Pod name of the guard); not set when empty.
    type: str
  not_remediated:
    description:
      - Why a round that was to remediate did not (the guard playbook gives the cluster lock's message when another run
        holds it); recorded as the warning C(guard_remediation_locked) with the round's findings.
    type: str
extends_documentation_fragment:
  - ocp.egressip.k8s_auth
  - ocp.egressip.common
attributes:
  check_mode:
    details: Every write is sent with C(dryRun=All); nothing is stored.
  diff_mode:
    support: full
    details: The verdict and the state of each object before and after, and the Events the round writes.
seealso:
  - module: ocp.egressip.egressip_verify
'''

EXAMPLES = r'''
- name: Verify
  ocp.egressip.egressip_verify:
    fail_on_error: false
  register: verification

- name: Record the round (Events, status ConfigMap)
  ocp.egressip.egressip_guard_record:
    verification: "{{ verification }}"
'''

RETURN = r'''
verdict:
  description: C(ok), C(warning) or C(error) (the verification's worst finding).
  returned: always
  type: str
  sample: error
objects:
  description: Per EgressIP object, its C(state), since when (C(since)), whether it was checked this round, and its
    current Event (C(event), C(count)).
  returned: always
  type: dict
  sample: {payments: {state: blackhole, since: "2026-12-03T07:40:00Z", checked: true, event: payments.18b2c6d1e0f4a000, count: 3}}
events:
  description: The Events written this round - C(name), C(reason) (C(EgressIPRemediated) too when the round remediated),
    C(type), C(egressip), C(count), C(action) (C(created) or C(raised)).
  returned: always
  type: list
  elements: dict
  sample: [{name: payments.18b2c6d1e0f4a000, reason: EgressIPBlackhole, type: Warning, egressip: payments, count: 1, action: created}]
configmap:
  description: C(namespace) and C(name) of the status ConfigMap.
  returned: always
  type: dict
  sample: {namespace: openshift-machine-api, name: egressip-guard-status}
'''

import datetime
import time

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.names import MANAGED_BY_LABEL, MANAGED_BY_VALUE
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard

WHAT = 'egressip_guard_record'


def validate(params):
    """Refusals for a verification that is not an egressip_verify result."""
    verification = params['verification']
    missing = [key for key in ('summary', 'egress_ips', 'findings') if not isinstance(verification.get(key), (dict if key == 'summary' else list))]
    if verification.get('remediation') is not None and not isinstance(verification['remediation'], dict):
        missing.append('remediation as a dict (got %s)' % type(verification['remediation']).__name__)
    if missing:
        raise Refused([catalogue_finding(
            'guard_input_invalid', 'verification lacks %s (keys given: %s): pass the registered result of '
            'ocp.egressip.egressip_verify (or a dict with its summary, egress_ips and findings).'
            % (', '.join(missing), ', '.join(sorted(verification)) or 'none'))])


def now_utc():
    stamp = datetime.datetime.now(datetime.timezone.utc) if hasattr(datetime, 'timezone') else datetime.datetime.utcnow()
    return stamp.strftime('%Y-%m-%dT%H:%M:%SZ')


def write_events(module, plan, uids, now, nanoseconds):
    """Create the new Events and raise the lasting ones; an Event the TTL removed is created again. The written list."""
    params, k8s, check = module.params, module.k8s, module.check_mode
    written = []
    for body in plan['create']:
        kube.create(k8s, kube.EVENTS, body, check, namespace=guard.EVENTS_NAMESPACE)
        written.append({'name': body['metadata']['name'], 'reason': body['reason'], 'type': body['type'],
                        'egressip': body['involvedObject']['name'], 'count': 1, 'action': 'created'})
    for index, (name, patch, egressip, entry) in enumerate(plan['raise']):
        try:
            kube.patch(k8s, kube.EVENTS, name, patch, check, namespace=guard.EVENTS_NAMESPACE)
            reason = guard.REASONS[entry['state']]
            written.append({'name': name, 'reason': reason[1], 'type': reason[0], 'egressip': egressip,
                            'count': patch['count'], 'action': 'raised'})
        except ModuleFailure as failure:
            if failure.details.get('status') != 404:
                raise
            body = guard.new_event(egressip, uids.get(egressip), entry, now, nanoseconds + plan['next_offset'] + index,
                                   instance=params['instance'])
            kube.create(k8s, kube.EVENTS, body, check, namespace=guard.EVENTS_NAMESPACE)
            plan['objects'][egressip].update(event=body['metadata']['name'], count=1)
            written.append({'name': body['metadata']['name'], 'reason': body['reason'], 'type': body['type'],
                            'egressip': egressip, 'count': 1, 'action': 'created'})
    return written


def write_configmap(module, current, data):
    params = module.params
    if current is None:
        return kube.create(module.k8s, kube.CONFIGMAPS, guard.status_configmap(params['name'], params['namespace'], data),
                           module.check_mode, namespace=params['namespace'])
    return kube.patch(module.k8s, kube.CONFIGMAPS, params['name'], {'metadata': {'labels': {MANAGED_BY_LABEL: MANAGED_BY_VALUE}},
                                                                    'data': data}, module.check_mode, namespace=params['namespace'])


def run(module, result):
    params = module.params
    validate(params)
    if params['not_remediated']:
        verification = dict(params['verification'])
        verification['findings'] = list(verification['findings']) + [catalogue_finding(
            'guard_remediation_locked', 'The guard did not remediate this round: %s' % params['not_remediated'])]
        verification['summary'] = dict(verification['summary'], warnings=int(verification['summary'].get('warnings') or 0) + 1)
        params['verification'] = verification
    result['configmap'] = {'namespace': params['namespace'], 'name': params['name']}
    current = kube.get_object(module.k8s, kube.CONFIGMAPS, params['name'], params['namespace'])
    uids = dict((item['metadata']['name'], item['metadata'].get('uid')) for item in kube.list_objects(module.k8s, kube.EGRESSIPS))
    now, nanoseconds = now_utc(), time.time_ns() if hasattr(time, 'time_ns') else int(time.time() * 1e9)
    states = guard.object_states(params['verification'])
    remediation = params['verification'].get('remediation')
    plan = guard.plan_round(states, guard.previous_record(current), uids, now, nanoseconds, events=params['events'],
                            instance=params['instance'], remediation=remediation)
    result['events'] = write_events(module, plan, uids, now, nanoseconds)
    data = guard.status_data(params['verification'], plan['objects'], now, result['events'], remediation)
    write_configmap(module, current, data)
    result.update(changed=True, verdict=data['verdict'], objects=plan['objects'], diff=guard.round_diff(current, data, plan))


def main():
    module = EgressModule(WHAT, argument_spec=dict(
        verification=dict(type='dict', required=True),
        namespace=dict(type='str', default='openshift-machine-api'),
        name=dict(type='str', default='egressip-guard-status'),
        events=dict(type='bool', default=True),
        instance=dict(type='str'),
        not_remediated=dict(type='str'),
    ), supports_check_mode=True)
    module.run(run)


if __name__ == '__main__':
    main()
