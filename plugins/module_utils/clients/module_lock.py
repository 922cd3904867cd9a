# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Taking the cluster lock (the Lease of lease.py): the wait loop and release the cluster_lock module uses, and
ModuleLock, the one behaviour every writing module shares when it is called directly.

A writing module holds the Lease from before its first read-for-writing to after its last write, unless the run that
called it already holds it (the playbooks take it with the cluster_lock role: same ansible-playbook run, same holder
identity, or the identity given in ``lock_holder``). Check mode takes no lock. Documented by the doc fragment
``ocp.egressip.cluster_lock``. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import atexit
import os
import threading
import time

from ansible_collections.ocp.egressip.plugins.module_utils.clients import lease
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, fail_with
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import _default_kubeconfig
from ansible_collections.ocp.egressip.plugins.module_utils.clients.kubeconfig import IN_CLUSTER_HOST_ENV

CONFLICT_RETRIES = 5
MODULE_LEASE_DURATION = 60
MODULE_POLL_INTERVAL = 1.0
MODULE_REMEDY = ('Wait until the run named ends (its Lease is released), or raise lock_timeout; a killed run\'s Lease expires by '
                 'itself after leaseDurationSeconds once nothing of that run is left.')


class LockHeld(Exception):
    def __init__(self, finding, info):
        super(LockHeld, self).__init__(finding['message'])
        self.finding = finding
        self.info = info


def held_finding(info, moment, params, waited, check_mode, timeout_name='egressip_lock.wait_timeout', remedy=None):
    """cluster_lock_held naming the holder and since when; ``timeout_name`` is the public name of the wait bound."""
    where = 'Lease %s/%s' % (params['namespace'], params['name'])
    text = '%s is held by %s.' % (where, lease.holder_text(info, moment))
    if check_mode:
        text += ' Check mode takes no lock; a real run waits up to %d s (wait_timeout) for it, then fails.' % params['wait_timeout']
        return catalogue_finding('cluster_lock_held', text, objects=[where], severity='warning', remedy=remedy)
    text += ' Another run is writing to this cluster; waited %.0f s (%s=%d).' % (waited, timeout_name, params['wait_timeout'])
    return catalogue_finding('cluster_lock_held', text, objects=[where], remedy=remedy)


def acquire(check_mode, store, holder, details, params, timeout_name='egressip_lock.wait_timeout', remedy=None):
    """Take the Lease, waiting up to params['wait_timeout'] for another holder: (changed, Lease, previous holder); LockHeld else."""
    started, seen, seen_since = time.monotonic(), None, time.monotonic()
    while True:
        current = store.read()
        moment = lease.now()
        info = lease.describe(current, moment)
        version = info and info['resource_version']
        if version != seen:
            seen, seen_since = version, time.monotonic()
        if info and info['holder'] == holder:
            if check_mode or store.replace(lease.renewed(current, params['lease_duration'], moment)) is not None:
                return False, current, None
            continue
        if lease.is_free(info, time.monotonic() - seen_since):
            if check_mode:
                return True, current, info and info['holder']
            if current is None:
                written = store.create(lease.new_lease(params['namespace'], params['name'], holder, details, params['lease_duration'], moment))
            else:
                written = store.replace(lease.taken_over(current, holder, details, params['lease_duration'], moment))
            if written is not None:
                return True, written, info and info['holder']
            continue  # another run won the race (409): read again
        waited = time.monotonic() - started
        if check_mode or waited >= params['wait_timeout']:
            raise LockHeld(held_finding(info, moment, params, waited, check_mode, timeout_name, remedy), info)
        time.sleep(min(params['poll_interval'], max(0.1, params['wait_timeout'] - waited)))


def release(store, holder, moment_fn=lease.now, converged=None):
    """Give the Lease up if ``holder`` has it: (released, Lease after, what it said before). converged: lease.released's."""
    for _attempt in range(CONFLICT_RETRIES):
        current = store.read()
        info = lease.describe(current, moment_fn())
        if info is None or info['holder'] != holder:
            return False, current, info
        if store.replace(lease.released(current, moment_fn(), converged)) is not None:
            return True, store.read(), info
    raise ModuleFailure('Lease %s/%s kept changing while releasing it (409 Conflict %d times).' % (store.namespace, store.name, CONFLICT_RETRIES))


# --- a writing module called directly ------------------------------------------------------------

def argument_spec():
    """The options of the doc fragment ocp.egressip.cluster_lock."""
    return dict(
        lock_timeout=dict(type='int', default=120),
        lock_name=dict(type='str', default=lease.DEFAULT_NAME),
        lock_namespace=dict(type='str', default=lease.DEFAULT_NAMESPACE),
        lock_holder=dict(type='str'),
    )


def _module_identity(module_name):
    """(holder of the ansible-playbook run or None, this module's own holder, Lease details)."""
    owner = lease.playbook_process()
    details = lease.run_details(owner, None)
    run_holder = lease.default_holder(details, owner) if owner else None
    own_stat = lease._stat(os.getpid())  # pylint: disable=protected-access
    start = own_stat[3] if own_stat else '0'
    base = run_holder or '%s@%s' % (details['user'].replace(' ', '-'), details['host'])
    details = dict(details, pid=os.getpid(), module=module_name)
    return run_holder, '%s/%s-%d.%s' % (base, module_name, os.getpid(), start), details


def _kubernetes_configured(params):
    """Whether a Kubernetes connection is set at all (options, KUBECONFIG, ~/.kube/config or in a Pod)."""
    return bool(params.get('kubeconfig') or params.get('host') or _default_kubeconfig()[0] or os.environ.get(IN_CLUSTER_HOST_ENV))


def take(module, module_name, nested=False, wanted=True):
    """Hold the cluster lock from now to the end of the module process (exit_json, fail_json or an exception)."""
    held = ModuleLock(module, module_name, nested=nested, wanted=wanted).__enter__()
    atexit.register(held.__exit__, None, None, None)
    return held


class ModuleLock(object):
    """``with ModuleLock(module, 'egress_nodes'):`` around a writing module's work, or ``take()`` (see the module docstring).

    ``client`` is the K8sClient (default ``module.k8s``); ``nested`` takes the connection from the ``kubernetes``
    option of a vCenter module, which takes no lock (and warns) when no Kubernetes connection is configured at all.
    ``wanted=False`` (a read-only choice of options) takes no lock either.
    """

    def __init__(self, module, module_name, nested=False, wanted=True):
        self.module = module
        self.module_name = module_name
        self.nested = nested
        self.wanted = wanted and not module.check_mode
        self.holder = None
        self.store = None
        self._stop = threading.Event()
        self._renewal = None

    def params(self):
        options = self.module.params
        return {'namespace': options['lock_namespace'], 'name': options['lock_name'], 'lease_duration': MODULE_LEASE_DURATION,
                'wait_timeout': options['lock_timeout'], 'poll_interval': MODULE_POLL_INTERVAL}

    def _client(self):
        if not self.nested:
            return self.module.k8s
        connection = self.module.params.get('kubernetes') or {}
        if not _kubernetes_configured(connection):
            self.module.warn('No Kubernetes connection (option kubernetes) is configured, so this run takes no cluster lock '
                             '(Lease %s/%s): nothing stops another writer of this cluster meanwhile.'
                             % (self.module.params['lock_namespace'], self.module.params['lock_name']))
            return None
        return self.module.k8s  # the module's one client, from the same kubernetes option

    def __enter__(self):
        if not self.wanted:
            return self
        if self.module.params['lock_timeout'] < 0:
            self.module.fail_json(msg='lock_timeout=%s: must be 0 (fail at once when another run holds the cluster lock) or more seconds; '
                                      'the default is 120.' % self.module.params['lock_timeout'])
        client = self._client()
        if client is None:
            return self
        store = lease.LeaseStore(client, self.module.params['lock_namespace'], self.module.params['lock_name'])
        run_holder, own, details = _module_identity(self.module_name)
        try:
            current = lease.describe(store.read(), lease.now())
            if current and current['holder'] and current['holder'] in (run_holder, self.module.params['lock_holder']):
                return self  # the playbook run that called this module holds it
            acquire(False, store, own, details, self.params(), timeout_name='lock_timeout', remedy=MODULE_REMEDY)
        except LockHeld as held:
            finding = held.finding
            self.module.fail_json(msg='[%s] %s Fix: %s' % (finding['id'], finding['message'], finding['remedy']), changed=False,
                                  findings=[finding], lock=held.info)
        except ModuleFailure as failure:
            fail_with(self.module, failure)
        self.holder, self.store = own, store
        self._renewal = threading.Thread(target=self._renew, name='cluster-lock-renewal')
        self._renewal.daemon = True
        self._renewal.start()
        return self

    def _renew(self):
        """Renew every third of the duration until released; stop when another holder has it."""
        while not self._stop.wait(MODULE_LEASE_DURATION / 3.0):
            try:
                current = self.store.read()
                info = lease.describe(current, lease.now())
                if info is None or info['holder'] != self.holder:
                    return
                self.store.replace(lease.renewed(current, MODULE_LEASE_DURATION, lease.now()))
            except ModuleFailure:
                continue  # API unreachable for now: the next round tries again; the Lease expires if it lasts

    def __exit__(self, *exc_info):
        """Release after the last write, also when the module ends by fail_json or exit_json (SystemExit)."""
        if self.holder is None:
            return False
        self._stop.set()
        self._renewal.join(10)
        try:
            release(self.store, self.holder)
        except ModuleFailure:
            pass  # the result is written already; the Lease expires leaseDurationSeconds after the last renewal
        self.holder = None
        return False
