#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
module: cluster_lock
short_description: One writer per cluster - take, renew and release the cluster's lock Lease
version_added: 0.1.0
description:
  - "The lock is a C(coordination.k8s.io/v1) C(Lease) (default C(openshift-machine-api/egressip-lock)). Every writing
    playbook of the collection (enable, and migrate and upgrade through it, disable, failover_drill, verify with
    remediation) takes it before its first write and releases it after its last, so two AAP jobs, a scheduled guard and
    a person at a terminal never write to one cluster at the same time."
  - "O(state=acquired) takes the Lease: it creates it, or takes it over when it has no holder or its holder has not
    renewed it within C(leaseDurationSeconds) (by C(renewTime), or because this module saw no change for that long,
    which holds whatever the clocks say). Taking over from another holder adds one to C(leaseTransitions). Every write
    carries the C(resourceVersion) read, so of two runs racing for a free Lease exactly one wins (the API answers the
    other 409) and the loser goes on waiting. While another run holds it, the module waits up to O(wait_timeout)
    seconds, then fails with C(cluster_lock_held) naming the holder (identity, user, host, playbook, pid) and since
    when it holds it. The same run acquiring again keeps the lock (re-entrant)."
  - "O(state=held) keeps it: it renews C(renewTime) every third of O(lease_duration) while the run that took it lives,
    and ends when the Lease is released, taken by someone else (C(cluster_lock_lost)), or that run is gone. An Ansible
    play cannot renew between its tasks by itself, so this state runs as a background job (C(async) with C(poll: 0)),
    or O(state=acquired) with O(renew) starts the same renewal itself, which is how the playbooks keep the lock
    (one task); C(async), or O(max_hold), bounds how long a run may hold it."
  - "The run is the C(ansible-playbook) process the module runs under (found through C(/proc), Linux): it is alive while
    that process lives, and, when that process leads its process group (a terminal, AAP, ansible-navigator), while any
    process of the group lives. Killing C(ansible-playbook) leaves a running module going on with its writes (Ansible's
    behaviour); the renewal goes on as long as it runs, so the next run waits instead of writing alongside it, and the
    Lease expires C(leaseDurationSeconds) after the last process of the killed run has ended."
  - O(state=released) gives the Lease up (no holder; C(leaseTransitions) stays). Releasing a Lease this run does not
    hold changes nothing (idempotent); when another holder has it, the result warns with C(cluster_lock_lost).
  - Check mode writes nothing - the lock is not taken - but a lock held by another run is reported as a warning.
options:
  state:
    description: V(acquired) takes the lock (or waits for it), V(held) renews it until the run ends, V(released) gives it up.
    type: str
    choices: [acquired, held, released]
    default: acquired
  name:
    description: Name of the Lease.
    type: str
    default: egressip-lock
  namespace:
    description:
      - Namespace of the Lease. It must exist and the credentials need C(get), C(create) and C(update) on C(leases) in it.
      - C(openshift-machine-api) is where the collection already writes (MachineSets) and exists on every OpenShift
        cluster; the guard and the RBAC of the collection use the same one.
    type: str
    default: openshift-machine-api
  lease_duration:
    description:
      - C(leaseDurationSeconds) written to the Lease - how long after its last renewal a holder that stopped renewing
        (a killed run) keeps others waiting. Renewed every third of it; at least 3.
    type: int
    default: 60
  wait_timeout:
    description: Seconds to wait for a lock held by another run before failing with C(cluster_lock_held); 0 fails at once.
    type: int
    default: 120
  poll_interval:
    description: Seconds between two reads of the Lease while waiting.
    type: float
    default: 2.0
  holder:
    description:
      - The holder identity. Default - one per C(ansible-playbook) run, C(<user>@<host>/ansible-playbook-<pid>.<start>),
        so every task of one run (and a play imported by another playbook) is the same holder.
      - Required when the module does not run under C(ansible-playbook) (ad-hoc commands, tests).
    type: str
  playbook:
    description: What the run is (for example V(enable)), written to the Lease and shown to a run that has to wait.
    type: str
  owner:
    description:
      - With O(state=held) - the run whose life the renewal follows, the RV(owner) the O(state=acquired) task returned
        (keys C(pid), C(start), C(process_group_leader)). Without it the renewal goes on until the Lease is released
        or the C(async) limit ends the job.
    type: dict
  permissions:
    description:
      - With O(state=acquired) - first check the Kubernetes permissions of this playbook (docs/rbac.md), one
        SelfSubjectAccessReview per verb and resource it uses, as O(ocp.egressip.preflight#module:permissions) does; a missing
        one fails the task with C(kube_permission_missing), naming each and the ClusterRole file to bind, before the Lease is
        written. The playbooks that take the lock check their permissions here, in the same module run.
      - Unset, nothing is checked.
    type: str
    choices: [enable, verify, failover_drill, support_report, migrate, upgrade, disable, render, guard]
  permissions_guard:
    description: With O(permissions) - the run applies or removes the in-cluster guard, so its objects' permissions are checked too.
    type: bool
    default: false
  renew:
    description:
      - With O(state=acquired) - once the lock is taken, renew it as O(state=held) does, in a process of its own that
        outlives this task (detached, as Ansible's C(async) starts a job), for at most O(max_hold) seconds. The playbooks
        take and keep the lock this way, in one task; RV(renewer) is that process.
      - Not in check mode (the lock is not taken).
    type: bool
    default: false
  max_hold:
    description: With O(renew) - seconds after which the renewal stops even while the run lasts (the Lease then expires).
    type: int
    default: 21600
  converged:
    description:
      - With O(state=released) - the converged record to leave on the Lease (annotation C(egressip.ocp/converged), the
        fingerprint C(ocp.egressip.preflight) returned for a cluster enable left converged,
        docs/how-it-works.md#the-converged-record); an empty string removes it. Unset, the annotation stays as it is.
      - The record survives other holders of the lock; O(state=acquired) returns it as RV(converged).
    type: str
extends_documentation_fragment:
  - ocp.egressip.k8s_auth
  - ocp.egressip.progress
  - ocp.egressip.common
attributes:
  check_mode:
    details: The Lease is read, never written; a lock held by another run is reported as a warning.
  diff_mode:
    support: full
    details: The holder of the Lease before and after.
notes:
  - Controller clocks should be synchronised (NTP) to well within a third of O(lease_duration); the module also treats a
    Lease it saw unchanged for a whole O(lease_duration) as expired, whatever the clocks say.
  - The process checks need Linux C(/proc) on the controller (AAP execution environments and Linux hosts have it).
seealso:
  - module: ocp.egressip.egressip
'''

EXAMPLES = r'''
- name: Take the cluster lock and keep it renewed in the background while this run lasts (at most 6 hours)
  ocp.egressip.cluster_lock:
    state: acquired
    playbook: enable
    renew: true
    max_hold: 21600
  register: lock

- name: Or take it without renewal ...
  ocp.egressip.cluster_lock:
    state: acquired
    playbook: enable
  register: lock

- name: ... and renew it as a background job of its own (at most 6 hours)
  ocp.egressip.cluster_lock:
    state: held
    holder: "{{ lock.holder }}"
    owner: "{{ lock.owner | default(omit, true) }}"
  async: 21600
  poll: 0
  when: lock.acquired

- name: Release it
  ocp.egressip.cluster_lock:
    state: released
    holder: "{{ lock.holder }}"
'''

RETURN = r'''
holder:
  description: The holder identity of this run.
  returned: always
  type: str
  sample: alice@bastion/ansible-playbook-4242.8812345
acquired:
  description: Whether this run holds the lock after the task (always false in check mode).
  returned: always
  type: bool
released:
  description: Whether this task released the lock.
  returned: always
  type: bool
waited_seconds:
  description: How long O(state=acquired) waited for another run.
  returned: always
  type: float
previous_holder:
  description: The holder of an expired Lease this run took over (its run was killed or lost the API), else null.
  returned: always
  type: str
lock:
  description:
    - The Lease after the task - C(namespace), C(name), C(holder), C(details) (C(user), C(host), C(playbook), C(pid)),
      C(acquire_time), C(renew_time), C(lease_duration_seconds), C(lease_transitions), C(expires_at), C(expired),
      C(resource_version), C(converged) (the converged record, or null); null when there is none.
  returned: always
  type: dict
converged:
  description: With O(state=acquired), the converged record on the Lease before this task (null when none).
  returned: with O(state=acquired)
  type: str
owner:
  description: The ansible-playbook process of this run (C(pid), C(start), C(process_group_leader), C(playbooks)), or null.
  returned: always
  type: dict
renewer:
  description: With O(renew), the pid of the process that renews the Lease in the background (not in check mode).
  returned: with O(renew) when the lock was taken
  type: int
stopped:
  description: With O(state=held), why the renewal ended - C(released), C(lost), C(owner_gone).
  returned: with O(state=held)
  type: str
renewals:
  description: With O(state=held), how many times the Lease was renewed.
  returned: with O(state=held)
  type: int
findings:
  description:
    - C(cluster_lock_held) (check mode, as a warning) or C(cluster_lock_lost); with O(permissions), the permission check's
      (C(kube_permission_missing), C(kube_permission_unchecked)).
  returned: always
  type: list
  elements: dict
'''

import shutil
import time

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kubeconfig, lease
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module import PROGRESS_TRIES, EgressModule
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module_lock import LockHeld, acquire, release
from ansible_collections.ocp.egressip.plugins.module_utils.checks.permissions import PLAYBOOKS
from ansible_collections.ocp.egressip.plugins.module_utils.checks.permissions import check as check_permissions


def hold(store, holder, duration, owner, sleep=time.sleep, until=None):
    """Renew every third of the duration until released, lost, the owner run is gone or the monotonic time ``until``:
    (why, renewals)."""
    interval, renewals = max(1.0, duration / 3.0), 0
    while True:
        if owner and not lease.owner_alive(owner):
            return 'owner_gone', renewals
        if until is not None and time.monotonic() >= until:
            return 'max_hold', renewals
        try:
            current = store.read()
        except ModuleFailure:
            current = False  # API unreachable for now: try again next round; the Lease expires if it lasts
        if current is not False:
            info = lease.describe(current, lease.now())
            if info is None or not info['holder']:
                return 'released', renewals
            if info['holder'] != holder:
                return 'lost', renewals
            if store.replace(lease.renewed(current, duration, lease.now())) is None:
                continue  # changed under us (a release racing the renewal): look again at once
            renewals += 1
        deadline = time.monotonic() + interval
        while time.monotonic() < deadline:
            if owner and not lease.owner_alive(owner):
                return 'owner_gone', renewals
            sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def start_renewer(store, holder, params, owner):
    """O(renew): the renewal of O(state=held), in a process of its own that outlives this module run; its pid."""
    until = time.monotonic() + params['max_hold']
    # a client certificate from kubeconfig data is in a file this run removes when it ends: the renewer keeps a copy
    own_files = kubeconfig.detached_copies(store.client.connection)

    def renew():
        directory = own_files()
        # its own connections (opened on first use): the module's pooled ones stay the module's
        store.client._pool = None  # pylint: disable=protected-access
        try:
            hold(store, holder, params['lease_duration'], owner, until=until)
        finally:
            if directory:
                shutil.rmtree(directory, True)
    return lease.in_background(renew)


def _validate(module, params):
    if params['lease_duration'] < 3:
        module.fail_json(msg='lease_duration=%s (egressip_lock.lease_duration): must be at least 3 seconds (it is renewed every third of it); '
                             'the default is 60.' % params['lease_duration'])
    if params['wait_timeout'] < 0:
        module.fail_json(msg='wait_timeout=%s (egressip_lock.wait_timeout): must be 0 (fail at once) or more seconds.' % params['wait_timeout'])
    if params['poll_interval'] <= 0:
        module.fail_json(msg='poll_interval=%s: must be more than 0 seconds.' % params['poll_interval'])
    if params['max_hold'] <= 0:
        module.fail_json(msg='max_hold=%s (egressip_lock.max_hold): must be more than 0 seconds; the default is 21600 (6 hours).'
                         % params['max_hold'])


def _identity(module, params):
    owner = lease.playbook_process() if params['state'] != 'held' else params.get('owner')
    details = lease.run_details(owner, params.get('playbook'))
    holder = params.get('holder')
    if not holder and owner and params['state'] != 'held':
        holder = lease.default_holder(details, owner)
    if not holder:
        finding = catalogue_finding('cluster_lock_owner_unknown', 'No ansible-playbook process runs this module and no holder was given, '
                                    'so the lock cannot tell this run from another.')
        module.fail_json(msg='[%s] %s Fix: %s' % (finding['id'], finding['message'], finding['remedy']), findings=[finding])
    return holder, details, owner


def argument_spec():
    return dict(
        state=dict(type='str', default='acquired', choices=['acquired', 'held', 'released']),
        name=dict(type='str', default=lease.DEFAULT_NAME),
        namespace=dict(type='str', default=lease.DEFAULT_NAMESPACE),
        lease_duration=dict(type='int', default=60),
        wait_timeout=dict(type='int', default=120),
        poll_interval=dict(type='float', default=2.0),
        holder=dict(type='str'),
        playbook=dict(type='str'),
        owner=dict(type='dict'),
        converged=dict(type='str'),
        permissions=dict(type='str', choices=list(PLAYBOOKS)),
        permissions_guard=dict(type='bool', default=False),
        renew=dict(type='bool', default=False),
        max_hold=dict(type='int', default=21600),
    )


def main():
    module = EgressModule('cluster_lock', argument_spec=argument_spec(), progress=PROGRESS_TRIES, supports_check_mode=True)
    params = module.params
    _validate(module, params)
    holder, details, owner = _identity(module, params)
    store = lease.LeaseStore(module.k8s, params['namespace'], params['name'])
    result = dict(changed=False, holder=holder, acquired=False, released=False, waited_seconds=0.0, previous_holder=None,
                  owner=owner, findings=[])
    started = time.monotonic()
    try:
        if params['state'] == 'held':
            if not module.check_mode:
                result['stopped'], result['renewals'] = hold(store, holder, params['lease_duration'], owner)
            result['lock'] = lease.describe(store.read(), lease.now())
            if result.get('stopped') == 'lost':
                _lost(module, result, params)
            module.exit_json(**result)
        if params['state'] == 'acquired' and params['permissions']:
            permission_check(module, params)
        before = lease.describe(store.read(), lease.now())
        if params['state'] == 'acquired':
            changed, written, previous = acquire(module.check_mode, store, holder, details, params)
            result.update(changed=changed, acquired=not module.check_mode, previous_holder=previous)
            if params['renew'] and not module.check_mode:
                result['renewer'] = start_renewer(store, holder, params, owner)
            result['lock'] = lease.describe(written, lease.now())
            # read before taking it (check mode writes nothing): what preflight compares its fingerprint with
            result['converged'] = (before or {}).get('converged')
        else:
            changed, written, info = (release(store, holder, converged=params['converged']) if not module.check_mode
                                      else (False, None, before))
            result.update(changed=changed, released=changed, lock=lease.describe(written, lease.now()))
            if not changed and info and info['holder'] and info['holder'] != holder:
                _lost(module, result, params, info)
        result['waited_seconds'] = round(time.monotonic() - started, 1)
    except LockHeld as held:
        result.update(lock=held.info, findings=[held.finding], waited_seconds=round(time.monotonic() - started, 1))
        if module.check_mode:
            module.warn('[cluster_lock_held] %s' % held.finding['message'])
            module.exit_json(**result)
        module.fail_json(msg='[%s] %s Fix: %s' % (held.finding['id'], held.finding['message'], held.finding['remedy']), **result)
    except ModuleFailure as failure:
        module.fail_failure(failure, result)
    if module._diff:
        result['diff'] = {'before': {'holder': before and before['holder']}, 'after': {'holder': result['lock'] and result['lock']['holder']}}
    module.exit_json(**result)


def permission_check(module, params):
    """The playbook's Kubernetes permissions, before the Lease (its first write): the preflight role's permission check in
    this module run (checks/permissions.py); a missing one fails with nothing written."""
    findings = check_permissions(module.k8s, params['permissions'], params['namespace'], True, guard=params['permissions_guard'])
    for item in findings:
        if item['severity'] != 'error':
            module.warn('[%s] %s Fix: %s (docs/runbook.md#%s)' % (item['id'], item['message'], item['remedy'], item['id']))
    refused = [item for item in findings if item['severity'] == 'error']
    if refused:
        module.fail_json(msg='%s Nothing was written. Each id has a section in docs/runbook.md.' % ' '.join(
            '[%s] %s Fix: %s' % (item['id'], item['message'], item['remedy']) for item in refused), findings=findings, changed=False)


def _lost(module, result, params, info=None):
    text = 'Lease %s/%s is held by %s, not by this run (%s).' % (
        params['namespace'], params['name'], (info or result['lock'] or {}).get('holder') or 'another run', result['holder'])
    finding = catalogue_finding('cluster_lock_lost', text, objects=['Lease %s/%s' % (params['namespace'], params['name'])])
    result['findings'].append(finding)
    module.warn('[cluster_lock_lost] %s %s' % (text, finding['remedy']))


if __name__ == '__main__':
    main()
