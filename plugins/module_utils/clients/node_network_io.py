# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes reads and writes around the pure plans of _node_network (node side of the secondary network).

Every request goes through ``K8sClient.request`` of _k8s.py (one client, one error format).
Reads are one list per kind; writes are merge patches, creates and deletes issued in parallel
with a bound; in check mode the same writes are sent with ``dryRun=All`` so the server
validates them (schema, admission) and stores nothing. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

try:
    from concurrent.futures import ThreadPoolExecutor
except ImportError:  # pragma: no cover - Python 2 is not supported
    ThreadPoolExecutor = None

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import custom_path

MERGE_PATCH = 'application/merge-patch+json'
PARALLEL_WRITES = 8

NNCP = dict(group='nmstate.io', version='v1', plural='nodenetworkconfigurationpolicies')
NNCE = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkconfigurationenactments')
NNS = dict(group='nmstate.io', version='v1beta1', plural='nodenetworkstates')
EGRESSIPS = dict(group='k8s.ovn.org', version='v1', plural='egressips')
TUNEDS = dict(group='tuned.openshift.io', version='v1', plural='tuneds')
NETWORK_OPERATOR = dict(group='operator.openshift.io', version='v1', plural='networks')
MACHINESETS = dict(group='machine.openshift.io', version='v1beta1', plural='machinesets')
MACHINES = dict(group='machine.openshift.io', version='v1beta1', plural='machines')
MACHINE_API_NAMESPACE = 'openshift-machine-api'

NMSTATE_MISSING = ('NodeNetworkConfigurationPolicy API (nmstate.io/v1) not found on {host}: install the Kubernetes NMState '
                   'Operator and create the NMState CR named nmstate (DOMAIN: prerequisite, docs/limitations.md).')
EGRESSIP_MISSING = ('EgressIP API (k8s.ovn.org/v1) not found on {host}: the network plugin is not OVN-Kubernetes '
                    '(check networks.config.openshift.io/cluster status.networkType).')
TUNED_MISSING = ('Tuned API (tuned.openshift.io/v1) not found on {host}: the Node Tuning Operator is not running; '
                 'use mode: global, or install it.')
NETWORK_OPERATOR_MISSING = 'Network operator API (operator.openshift.io/v1 networks) not found on {host}: is this OpenShift?'


def _path(api, name=None, namespace=None):
    return custom_path(api['group'], api['version'], api['plural'], name=name, namespace=namespace)


def _resource(api):
    return '%s.%s' % (api['plural'], api['group'])


def _dry_run(check_mode):
    return {'dryRun': 'All' if check_mode else None}


def list_objects(k8s, api, not_found_msg=None):
    """Every object of a cluster-scoped kind, one request per LIST_PAGE_SIZE objects."""
    return k8s.list_cluster_custom_objects(not_found_msg=not_found_msg, **api)


def list_objects_or_none(k8s, api):
    """Like list_objects, but None when the API is not served (for example no EgressIP API: nothing can be hosted)."""
    try:
        return list_objects(k8s, api)
    except ModuleFailure as failure:
        if failure.details.get('status') == 404:
            return None
        raise


def list_namespaced(k8s, api, namespace, not_found_msg=None):
    """Every object of a namespaced kind in one namespace, one request per LIST_PAGE_SIZE objects."""
    try:
        return k8s.list_items(_resource(api), _path(api, namespace=namespace))
    except ModuleFailure as failure:
        if not_found_msg and failure.details.get('status') == 404 and failure.details.get('reason') in (None, 'NotFound'):
            raise ModuleFailure(not_found_msg.format(host=k8s.host), status=404, reason='api_not_found')
        raise


def list_namespaced_or_none(k8s, api, namespace):
    """Like list_namespaced, but None when the API is not served (no Machine API on UPI clusters)."""
    try:
        return list_namespaced(k8s, api, namespace)
    except ModuleFailure as failure:
        if failure.details.get('status') == 404:
            return None
        raise


def get_object(k8s, api, name, not_found_msg=None):
    """One cluster-scoped object, or None when it does not exist."""
    try:
        return k8s.request('get', _resource(api), _path(api, name))
    except ModuleFailure as failure:
        if failure.details.get('status') == 404:
            if not_found_msg:
                raise ModuleFailure(not_found_msg.format(host=k8s.host), status=404, reason='not_found')
            return None
        raise


def create(k8s, api, body, check_mode, namespace=None):
    name = body['metadata']['name']
    resource = '%s %s' % (_resource(api), '%s/%s' % (namespace, name) if namespace else name)
    return k8s.request('create', resource, _path(api, namespace=namespace), query=_dry_run(check_mode), body=body)


def patch(k8s, api, name, body, check_mode, namespace=None):
    """A JSON merge patch (RFC 7386): only the keys in `body` change; `null` removes."""
    resource = '%s %s' % (_resource(api), '%s/%s' % (namespace, name) if namespace else name)
    return k8s.request('patch', resource, _path(api, name, namespace), query=_dry_run(check_mode), body=body, content_type=MERGE_PATCH)


def delete(k8s, api, name, check_mode, namespace=None):
    resource = '%s %s' % (_resource(api), '%s/%s' % (namespace, name) if namespace else name)
    return k8s.request('delete', resource, _path(api, name, namespace), query=_dry_run(check_mode))


def patch_node(k8s, name, body, check_mode):
    """A JSON merge patch of one Node (labels: `null` removes one)."""
    return k8s.request('patch', 'nodes %s' % name, '/api/v1/nodes/%s' % name, query=_dry_run(check_mode),
                       body=body, content_type=MERGE_PATCH)


def run_parallel(calls, limit=PARALLEL_WRITES):
    """Run zero-argument callables with at most `limit` at once.

    Returns (results, failures): results in the order of `calls` (None where it failed),
    failures the ModuleFailure of each failed call. Every call runs even when one fails, so
    a re-run only has the failed ones left.
    """
    results, failures = [None] * len(calls), []
    if not calls:
        return results, failures
    if len(calls) == 1 or ThreadPoolExecutor is None:
        for index, call in enumerate(calls):
            try:
                results[index] = call()
            except ModuleFailure as failure:
                failures.append(failure)
        return results, failures
    with ThreadPoolExecutor(max_workers=min(limit, len(calls))) as pool:
        futures = [pool.submit(call) for call in calls]
        for index, future in enumerate(futures):
            try:
                results[index] = future.result()
            except ModuleFailure as failure:
                failures.append(failure)
    return results, failures


def raise_failures(failures, done, what):
    """One ModuleFailure for every failed write, saying what was written before (a re-run finishes the rest)."""
    if not failures:
        return
    messages = '; '.join(failure.msg for failure in failures)
    details = dict(failures[0].details)
    details['failed_writes'] = [failure.msg for failure in failures]
    raise ModuleFailure('%s: %d write(s) failed (%s). %d write(s) succeeded before; run again to finish.'
                        % (what, len(failures), messages, done), **details)


class Clock(object):
    """Deadline and sleep for the waits (a class so unit tests can replace it)."""

    def __init__(self, timeout, sleep):
        self.deadline = time.time() + timeout
        self.sleep_seconds = sleep

    def expired(self):
        return time.time() >= self.deadline

    def sleep(self):
        time.sleep(self.sleep_seconds)


def wait_for_states(k8s, snapshot, plan, replan, timeout, sleep):
    """Re-read the NodeNetworkStates into snapshot['states'] until replan(snapshot) has nothing pending (or `timeout` s); the last plan.

    NodeNetworkState is refreshed about every 60 s, so a NIC added in vCenter a moment ago is listed a minute later.
    """
    clock = Clock(timeout, sleep)
    while plan['pending'] and not clock.expired():
        clock.sleep()
        snapshot['states'] = list_objects(k8s, NNS, NMSTATE_MISSING)
        plan = replan(snapshot)
    return plan
