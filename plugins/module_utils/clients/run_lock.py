# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster lock of a playbook run: who the run is, taking the Lease for it (waiting for another run), and the detached
process that renews it while the run lives (docs/reliability.md).

The module ``cluster_lock`` takes it (O(state=acquired)), renews it (O(state=held)) and releases it; ``preflight`` takes it
in its own module run when given its ``lock`` option (the enable playbook), before it reads anything. Both take it the same
way: ``acquire_run``. The Lease protocol itself is ``lease.py``; ``module_lock.py`` is the lock a writing module called
directly takes for itself. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import shutil
import time

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kubeconfig, lease
from ansible_collections.ocp.egressip.plugins.module_utils.clients.module_lock import LockHeld, acquire
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure


def argument_spec():
    """The options of taking the lock for a run: cluster_lock's but ``state``, ``holder``, ``owner``, ``converged`` and the
    permission check (preflight's ``lock`` option takes these and that check's two)."""
    return dict(
        name=dict(type='str', default=lease.DEFAULT_NAME),
        namespace=dict(type='str', default=lease.DEFAULT_NAMESPACE),
        lease_duration=dict(type='int', default=60),
        wait_timeout=dict(type='int', default=120),
        poll_interval=dict(type='float', default=2.0),
        playbook=dict(type='str'),
        renew=dict(type='bool', default=False),
        max_hold=dict(type='int', default=21600),
    )


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


def problems(params):
    """What is wrong with the options of argument_spec(): one message each, naming the public variable and the fix."""
    messages = []
    if params['lease_duration'] < 3:
        messages.append('lease_duration=%s (egressip_lock.lease_duration): must be at least 3 seconds (it is renewed every third of it); '
                        'the default is 60.' % params['lease_duration'])
    if params['wait_timeout'] < 0:
        messages.append('wait_timeout=%s (egressip_lock.wait_timeout): must be 0 (fail at once) or more seconds.' % params['wait_timeout'])
    if params['poll_interval'] <= 0:
        messages.append('poll_interval=%s: must be more than 0 seconds.' % params['poll_interval'])
    if params['max_hold'] <= 0:
        messages.append('max_hold=%s (egressip_lock.max_hold): must be more than 0 seconds; the default is 21600 (6 hours).'
                        % params['max_hold'])
    return messages


def validate(module, params):
    """End the module on the first problem of its lock options."""
    messages = problems(params)
    if messages:
        module.fail_json(msg=messages[0])


def identity(module, params):
    held = params.get('state') == 'held'
    owner = lease.playbook_process() if not held else params.get('owner')
    details = lease.run_details(owner, params.get('playbook'))
    holder = params.get('holder')
    if not holder and owner and not held:
        holder = lease.default_holder(details, owner)
    if not holder:
        finding = catalogue_finding('cluster_lock_owner_unknown', 'No ansible-playbook process runs this module and no holder was given, '
                                    'so the lock cannot tell this run from another.')
        module.fail_json(msg='[%s] %s Fix: %s' % (finding['id'], finding['message'], finding['remedy']), findings=[finding])
    return holder, details, owner


def acquire_run(module, params, holder, details, owner):
    """(result, the Lease as it was before): take the Lease for the run ``holder`` (waiting up to ``wait_timeout`` for
    another run) and, with ``renew``, start its renewer; in check mode nothing is written. The result is cluster_lock's of
    O(state=acquired): holder, acquired, previous_holder, owner, lock, converged (the record the Lease carried before),
    waited_seconds, renewer, findings. When another run holds it past the wait, ``held`` is the cluster_lock_held finding
    (and ``lock`` that run's Lease)."""
    store = lease.LeaseStore(module.k8s, params['namespace'], params['name'])
    result = dict(changed=False, holder=holder, acquired=False, released=False, waited_seconds=0.0, previous_holder=None,
                  owner=owner, findings=[])
    started = time.monotonic()
    before = lease.describe(store.read(), lease.now())
    try:
        changed, written, previous = acquire(module.check_mode, store, holder, details, params)
    except LockHeld as held:
        result.update(lock=held.info, findings=[held.finding], held=held.finding, waited_seconds=round(time.monotonic() - started, 1))
        return result, before
    result.update(changed=changed, acquired=not module.check_mode, previous_holder=previous)
    if params['renew'] and not module.check_mode:
        result['renewer'] = start_renewer(store, holder, params, owner)
    result['lock'] = lease.describe(written, lease.now())
    # read before taking it (check mode writes nothing): what preflight compares its fingerprint with
    result['converged'] = (before or {}).get('converged')
    result['waited_seconds'] = round(time.monotonic() - started, 1)
    return result, before


def held_message(finding):
    """The failure message of cluster_lock_held (what a run that could not take the lock says)."""
    return '[%s] %s Fix: %s' % (finding['id'], finding['message'], finding['remedy'])
