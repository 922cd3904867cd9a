# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every Kubernetes kind the collection touches (KINDS): group, version, plural, scope, the singleton's name and what a
404 of its API means, with the paths and names derived from them. Pure data: the plans build objects of these kinds,
the one API layer (clients/kube.py, which makes these names its own) reads and writes them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections import namedtuple

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
