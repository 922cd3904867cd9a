#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: egressip_guard_deploy
short_description: Apply the in-cluster guard (its CronJob, account, least-privilege RBAC and alerts) or take it out
version_added: 0.2.0
description:
  - "O(state=present) applies the objects M(ocp.egressip.egressip_render) writes for the in-cluster guard (docs/guard.md),
    built by the same function: the Namespace, the ServiceAccount C(egressip-guard), the ClusterRole and ClusterRoleBinding
    of a round's reads, a Role and RoleBinding in C(default) (Events) and in the guard's namespace (the status ConfigMap,
    the Lease read), the ConfigMap C(egressip-guard-variables) (O(guard_variables), never a credential), the CronJob that
    runs one guard round per C(schedule) in the execution environment C(image), and with C(alerts) the PrometheusRule."
  - Every object carries the labels C(egressip.ocp/managed-by=ocp.egressip) and C(app.kubernetes.io/name=egressip-guard).
    A missing object is created; an existing one is patched (JSON merge patch) in the fields the collection sets that
    differ, and only those - labels, annotations and fields others set stay; a list the collection sets (the ClusterRole's
    rules, the CronJob's containers) is replaced whole. A second run with the same options changes nothing.
  - An object of one of these names that exists without the label C(egressip.ocp/managed-by=ocp.egressip) is not taken
    over - the run is refused before its first write (C(guard_object_not_owned)) - unless O(adopt=true).
  - "An object of the guard (both labels, the guard's names) that is no longer wanted is deleted: the PrometheusRule when
    C(alerts) is turned off, the objects left in a former namespace when C(namespace) changed (not that Namespace itself)."
  - O(state=absent) deletes every object carrying both labels, the Namespace last (which deletes what is in it - the
    Jobs and Pods of the CronJob, the status ConfigMap of the rounds and the vCenter Secret you created there) unless
    O(keep_namespace=true). The guard only observes, so nothing refuses its removal.
  - Bad options (no C(image), a schedule that is not five fields, a deadline or history limit that is not a whole number)
    are refused before any request (C(guard_input_invalid)), as M(ocp.egressip.egressip_render) refuses them.
  - Reads one list per kind (nine), by name (C(fieldSelector=metadata.name=...), O(state=present)) or by the guard's
    labels (O(state=absent)), in all namespaces.
  - "Creating the ClusterRole and Roles needs credentials that hold every permission they grant (or C(escalate) on
    roles), and binding them needs C(bind) or the same permissions: the API server's RBAC escalation prevention. The
    enable playbook's ClusterRole (rbac/enable.yml) holds them."
options:
  state:
    description: V(present) applies the guard, V(absent) deletes its objects.
    type: str
    choices: [present, absent]
    default: present
  guard:
    description:
      - The in-cluster guard's settings (C(egressip_guard.in_cluster), the keys of the C(guard) option of
        M(ocp.egressip.egressip_render)) - C(image) (required with O(state=present)), C(namespace) (default
        C(ocp-egressip-guard)), C(schedule), C(image_pull_secret), C(vcenter_secret), C(starting_deadline_seconds),
        C(active_deadline_seconds), C(successful_jobs_history_limit), C(failed_jobs_history_limit), C(alerts),
        C(platform_monitoring), C(resources). C(enabled) is ignored here (the calling role decides).
    type: dict
    default: {}
  guard_variables:
    description:
      - The variables a round reads, written to the ConfigMap C(egressip-guard-variables) - C(egressip_objects),
        C(egressip_network), C(egressip_vsphere), C(egressip_nodes), C(egressip_verify), C(egressip_acknowledge_unsupported);
        other keys are left out, so no credential gets in.
    type: dict
    default: {}
  adopt:
    description: Take over objects of the guard's names that exist without the collection's label (the label is added).
    type: bool
    default: false
  keep_namespace:
    description: With O(state=absent), keep the Namespace (and what else is in it) and delete only the guard's objects.
    type: bool
    default: false
  plan_only:
    description:
      - Read and plan, send no write at all (not even with C(dryRun)), report what a run would change and refuse as it
        would. The enable playbook uses it before its first write.
    type: bool
    default: false
extends_documentation_fragment:
  - ocp.egressip.cluster_lock
  - ocp.egressip.k8s_auth
  - ocp.egressip.common
attributes:
  check_mode:
    details:
      - Each write is sent with C(dryRun=All), but for the objects inside a namespace the run would create and the bindings
        of a role it would create (the API server would answer 404 for what does not exist yet).
  diff_mode:
    support: full
    details: Each object that changes, as it is and as it will be (the fields the collection sets), keyed by kind and name.
seealso:
  - module: ocp.egressip.egressip_render
  - module: ocp.egressip.egressip_guard_record
'''

EXAMPLES = r'''
- name: The in-cluster guard, every minute, with its alerts
  ocp.egressip.egressip_guard_deploy:
    guard:
      image: registry.example.com/platform/ocp-egressip-ee:1.0
    guard_variables:
      egressip_objects: "{{ egressip_objects }}"
      egressip_network: "{{ egressip_network }}"
      egressip_nodes: "{{ egressip_nodes }}"

- name: Take it out
  ocp.egressip.egressip_guard_deploy:
    state: absent
'''

RETURN = r'''
objects:
  description:
    - One entry per object - C(id) (kind and namespace/name), C(kind), C(name), C(namespace) (null for a cluster-scoped
      object) and C(action) - C(create), C(update), C(delete) or C(none).
  returned: always
  type: list
  elements: dict
  sample: [{id: CronJob ocp-egressip-guard/egressip-guard, kind: CronJob, name: egressip-guard, namespace: ocp-egressip-guard, action: create}]
namespace:
  description: The guard's namespace (O(state=present)).
  returned: when O(state=present)
  type: str
  sample: ocp-egressip-guard
'''

from ansible_collections.ocp.egressip.plugins.module_utils.checks import permissions
from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import LOCK_IN_STEP, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_deploy as gd
from ansible_collections.ocp.egressip.plugins.module_utils.plan import guard_manifests as gm
from ansible_collections.ocp.egressip.plugins.module_utils.plan import render

WHAT = 'egressip_guard_deploy'
KINDS = dict((kind.kind, kind) for kind in (
    kube.NAMESPACES, kube.SERVICEACCOUNTS, kube.CLUSTERROLES, kube.CLUSTERROLEBINDINGS, kube.ROLES, kube.ROLEBINDINGS, kube.CONFIGMAPS,
    kube.CRONJOBS, kube.PROMETHEUSRULES))


def read(k8s, by_name=None, alerts=True):
    """One list per kind in all namespaces: the objects of the guard's name of each kind (`by_name`: {kind: name}), or
    those with the guard's labels. Without alerts a cluster that serves no PrometheusRule reads as none."""
    found = []
    for kind_name in gm.KINDS:
        query = {'field_selector': 'metadata.name=%s' % by_name[kind_name]} if by_name else {'label_selector': gm.SELECTOR}
        absent = kube.FAIL if kind_name == 'PrometheusRule' and alerts else None
        items = kube.list_objects(k8s, KINDS[kind_name], absent=absent, **query)
        for item in items or []:
            item.setdefault('kind', kind_name)
            found.append(item)
    return found


def wanted(params):
    """The guard's objects and its settings (O(state=present)); raises Refused on bad options, before any request."""
    objects, refusals = gm.plan(params['guard'], params['guard_variables'], render.to_yaml, permissions.RULES['guard'],
                                permissions.NAMESPACES)
    if refusals:
        raise Refused(refusals)
    return objects, gm.settings(dict((key, value) for key, value in params['guard'].items() if key != 'enabled'))


def plan(module, objects, config):
    """The changes of the run; raises Refused on an object of the guard's names the collection does not own."""
    params = module.params
    if params['state'] == 'absent':
        return gd.plan_absent(read(module.k8s, alerts=False), keep_namespace=params['keep_namespace'])
    changes, refusals = gd.plan_present(objects, read(module.k8s, gm.names(config), alerts=config['alerts']), params['adopt'])
    if refusals:
        raise Refused(refusals)
    return changes


def apply(module, changes):
    """Each change in order; in check mode with dryRun=All, but for what the API cannot judge before an earlier create."""
    check, skipped = module.check_mode, gd.check_mode_skipped(changes) if module.check_mode else set()
    for change in changes:
        if change['action'] == 'none' or change['id'] in skipped:
            continue
        kind, namespace = KINDS[change['kind']], change['namespace']
        if change['action'] == 'create':
            kube.create(module.k8s, kind, change['body'], check, namespace=namespace)
        elif change['action'] == 'update':
            kube.patch(module.k8s, kind, change['name'], change['patch'], check, namespace=namespace)
        else:
            kube.delete(module.k8s, kind, change['name'], check, namespace=namespace)


def run(module, result):
    params = module.params
    objects, config = wanted(params) if params['state'] == 'present' else ([], None)
    if config:
        result['namespace'] = config['namespace']
    # the lock before the reads the writes are planned on (not in check mode, nor for a plan)
    module.take_lock(wanted=not params['plan_only'])
    changes = plan(module, objects, config)
    result.update(objects=gd.result_entries(changes), diff=gd.diff(changes),
                  changed=any(change['action'] != 'none' for change in changes))
    if not params['plan_only'] and result['changed']:
        apply(module, changes)


def main():
    module = EgressModule(WHAT, argument_spec=dict(
        state=dict(type='str', choices=['present', 'absent'], default='present'),
        guard=dict(type='dict', default={}),
        guard_variables=dict(type='dict', default={}),
        adopt=dict(type='bool', default=False),
        keep_namespace=dict(type='bool', default=False),
        plan_only=dict(type='bool', default=False),
    ), lock=LOCK_IN_STEP, supports_check_mode=True)
    module.run(run, objects=[])


if __name__ == '__main__':
    main()
