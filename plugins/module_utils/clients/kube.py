# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one Kubernetes API layer: every kind the collection touches (KINDS) and get / list / create / patch / delete.

Every request goes through ``K8sClient.request`` of k8s.py (one client, one error format). Lists are
paged (``K8sClient.list_items``). Writes take ``check_mode``: in check mode the same write is sent with
``dryRun=All`` so the server validates it (schema, admission) and stores nothing. A kind whose API is not
served (HTTP 404: CRD absent) fails with that kind's own message, or gives None where the caller says the
kind is optional. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure

MERGE_PATCH = 'application/merge-patch+json'
MACHINE_API_NAMESPACE = 'openshift-machine-api'
FAIL = 'fail'  # list/get: a 404 of the API fails with the kind's message

# key: the one name of the kind across the collection (snapshot keys too); name: the singleton's name, if any;
# missing: what a 404 of the API means to the user ({host}: the API URL), None for the API's own message.
Kind = namedtuple('Kind', 'key kind group version plural namespaced name missing')


def _kind(key, kind, group, version, plural, namespaced=False, name=None, missing=None):
    return Kind(key, kind, group, version, plural, namespaced, name, missing)


NODES = _kind('nodes', 'Node', '', 'v1', 'nodes')
NAMESPACES = _kind('namespaces', 'Namespace', '', 'v1', 'namespaces')
PODS = _kind('pods', 'Pod', '', 'v1', 'pods', namespaced=True)
EVENTS = _kind('events', 'Event', '', 'v1', 'events', namespaced=True)
CONFIGMAPS = _kind('configmaps', 'ConfigMap', '', 'v1', 'configmaps', namespaced=True)
SERVICEACCOUNTS = _kind('serviceaccounts', 'ServiceAccount', '', 'v1', 'serviceaccounts', namespaced=True)
RBAC_GROUP = 'rbac.authorization.k8s.io'
CLUSTERROLES = _kind('clusterroles', 'ClusterRole', RBAC_GROUP, 'v1', 'clusterroles')
CLUSTERROLEBINDINGS = _kind('clusterrolebindings', 'ClusterRoleBinding', RBAC_GROUP, 'v1', 'clusterrolebindings')
ROLES = _kind('roles', 'Role', RBAC_GROUP, 'v1', 'roles', namespaced=True)
ROLEBINDINGS = _kind('rolebindings', 'RoleBinding', RBAC_GROUP, 'v1', 'rolebindings', namespaced=True)
CRONJOBS = _kind('cronjobs', 'CronJob', 'batch', 'v1', 'cronjobs', namespaced=True)
PROMETHEUSRULES = _kind('prometheusrules', 'PrometheusRule', 'monitoring.coreos.com', 'v1', 'prometheusrules', namespaced=True, missing=(
    'PrometheusRule API (monitoring.coreos.com/v1) not found on {host}: the cluster has no Prometheus Operator (OpenShift\'s '
    'monitoring stack serves it); set egressip_guard.in_cluster.alerts: false to leave the alerts out.'))
EGRESSIPS = _kind('egressips', 'EgressIP', 'k8s.ovn.org', 'v1', 'egressips', missing=(
    'EgressIP API (k8s.ovn.org/v1) not found on {host}: the cluster does not serve egressips.k8s.ovn.org, so its network plugin '
    'is not OVN-Kubernetes (check networks.config.openshift.io/cluster status.networkType).'))
NMSTATE_MISSING = ('NodeNetworkConfigurationPolicy API (nmstate.io/v1) not found on {host}: install the Kubernetes NMState '
                   'Operator and create the NMState CR named nmstate (DOMAIN: prerequisite, docs/limitations.md).')
NNCPS = _kind('nncps', 'NodeNetworkConfigurationPolicy', 'nmstate.io', 'v1', 'nodenetworkconfigurationpolicies', missing=NMSTATE_MISSING)
NNCES = _kind('nnces', 'NodeNetworkConfigurationEnactment', 'nmstate.io', 'v1beta1', 'nodenetworkconfigurationenactments',
              missing=NMSTATE_MISSING)
NNS = _kind('nns', 'NodeNetworkState', 'nmstate.io', 'v1beta1', 'nodenetworkstates', missing=NMSTATE_MISSING)
NMSTATES = _kind('nmstates', 'NMState', 'nmstate.io', 'v1', 'nmstates', missing=NMSTATE_MISSING)
TUNEDS = _kind('tuneds', 'Tuned', 'tuned.openshift.io', 'v1', 'tuneds', namespaced=True, missing=(
    'Tuned API (tuned.openshift.io/v1) not found on {host}: the Node Tuning Operator is not running; use mode: global, or install it.'))
PROFILES = _kind('profiles', 'Profile', 'tuned.openshift.io', 'v1', 'profiles', namespaced=True)
MACHINESETS = _kind('machinesets', 'MachineSet', 'machine.openshift.io', 'v1beta1', 'machinesets', namespaced=True)
MACHINES = _kind('machines', 'Machine', 'machine.openshift.io', 'v1beta1', 'machines', namespaced=True)
MACHINECONFIGPOOLS = _kind('machineconfigpools', 'MachineConfigPool', 'machineconfiguration.openshift.io', 'v1', 'machineconfigpools')
LEASES = _kind('leases', 'Lease', 'coordination.k8s.io', 'v1', 'leases', namespaced=True)
SELF_SUBJECT_ACCESS_REVIEWS = _kind('selfsubjectaccessreviews', 'SelfSubjectAccessReview', 'authorization.k8s.io', 'v1',
                                    'selfsubjectaccessreviews')
INFRASTRUCTURE = _kind('infrastructure', 'Infrastructure', 'config.openshift.io', 'v1', 'infrastructures', name='cluster')
NETWORK_CONFIG = _kind('network_config', 'Network', 'config.openshift.io', 'v1', 'networks', name='cluster')
NETWORK_OPERATOR = _kind('network_operator', 'Network', 'operator.openshift.io', 'v1', 'networks', name='cluster',
                         missing='Network operator API (operator.openshift.io/v1 networks) not found on {host}: is this OpenShift?')
CLUSTER_VERSION = _kind('cluster_version', 'ClusterVersion', 'config.openshift.io', 'v1', 'clusterversions', name='version')

KINDS = dict((kind.key, kind) for kind in (
    NODES, NAMESPACES, PODS, EVENTS, CONFIGMAPS, SERVICEACCOUNTS, CLUSTERROLES, CLUSTERROLEBINDINGS, ROLES, ROLEBINDINGS, CRONJOBS,
    PROMETHEUSRULES, EGRESSIPS, NNCPS, NNCES, NNS, NMSTATES, TUNEDS, PROFILES, MACHINESETS, MACHINES,
    MACHINECONFIGPOOLS, LEASES, SELF_SUBJECT_ACCESS_REVIEWS, INFRASTRUCTURE, NETWORK_CONFIG, NETWORK_OPERATOR, CLUSTER_VERSION))


def api_version(kind):
    """The apiVersion of an object of `kind` (``v1``, ``k8s.ovn.org/v1``)."""
    return '%s/%s' % (kind.group, kind.version) if kind.group else kind.version


def path(kind, name=None, namespace=None, subresource=None):
    """The API path of all objects of `kind`, those of a namespace, or one by name (and its subresource)."""
    text = '/apis/%s/%s' % (kind.group, kind.version) if kind.group else '/api/%s' % kind.version
    if namespace:
        text += '/namespaces/%s' % namespace
    text += '/%s' % kind.plural
    if name:
        text += '/%s' % name
    if subresource:
        text += '/%s' % subresource
    return text


def resource(kind, name=None, namespace=None):
    """How messages name the kind (``egressips.k8s.ovn.org``, ``nodes``) or one object of it."""
    text = '%s.%s' % (kind.plural, kind.group) if kind.group else kind.plural
    if name:
        text += ' %s' % ('%s/%s' % (namespace, name) if namespace else name)
    return text


def _dry_run(check_mode):
    return {'dryRun': 'All' if check_mode else None}


def _absent(k8s, kind, failure, absent, reason):
    """What a 404 means: the kind's message (FAIL), or `absent` (None) when the caller can do without the kind."""
    if failure.details.get('status') != 404:
        raise failure
    if absent != FAIL:
        return absent
    if kind.missing:
        raise ModuleFailure(kind.missing.format(host=k8s.host), status=404, reason=reason)
    raise failure


def list_objects(k8s, kind, namespace=None, label_selector=None, field_selector=None, absent=FAIL):
    """Every object of `kind` (in `namespace`, or in all of them), one request per LIST_PAGE_SIZE objects, as plain dicts.

    A 404 (API not served) fails with the kind's message (or the API's), or returns `absent` when that is not FAIL.
    """
    query = {'labelSelector': label_selector or None, 'fieldSelector': field_selector or None}
    query = dict((key, value) for key, value in query.items() if value)
    try:
        return k8s.list_items(resource(kind), path(kind, namespace=namespace), query=query or None)
    except ModuleFailure as failure:
        return _absent(k8s, kind, failure, absent, 'api_not_found')


def get_object(k8s, kind, name=None, namespace=None, absent=None):
    """One object (the kind's singleton when `name` is None), or `absent` (None) when it does not exist; FAIL: the kind's message."""
    name = name or kind.name
    try:
        return k8s.request('get', resource(kind, name, namespace), path(kind, name, namespace))
    except ModuleFailure as failure:
        return _absent(k8s, kind, failure, absent, 'not_found')


def create(k8s, kind, body, check_mode, namespace=None):
    """Create `body` (dryRun=All in check mode)."""
    name = (body.get('metadata') or {}).get('name')
    return k8s.request('create', resource(kind, name, namespace), path(kind, namespace=namespace), query=_dry_run(check_mode), body=body)


def patch(k8s, kind, name, body, check_mode, namespace=None):
    """A JSON merge patch (RFC 7386): only the keys in `body` change; `null` removes (dryRun=All in check mode)."""
    return k8s.request('patch', resource(kind, name, namespace), path(kind, name, namespace), query=_dry_run(check_mode),
                       body=body, content_type=MERGE_PATCH)


def delete(k8s, kind, name, check_mode, namespace=None):
    """Delete one object (dryRun=All in check mode)."""
    return k8s.request('delete', resource(kind, name, namespace), path(kind, name, namespace), query=_dry_run(check_mode))
