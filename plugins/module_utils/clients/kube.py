# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one Kubernetes API layer: get / list / create / patch / delete of every kind the collection touches (KINDS, defined
in core/kinds.py and named here too, as ``kube.NODES``).

Every request goes through ``K8sClient.request`` of k8s.py (one client, one error format). Lists are
paged (``K8sClient.list_items``). Writes take ``check_mode``: in check mode the same write is sent with
``dryRun=All`` so the server validates it (schema, admission) and stores nothing. A kind whose API is not
served (HTTP 404: CRD absent) fails with that kind's own message, or gives None where the caller says the
kind is optional. Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure
# the kinds of core/kinds.py, named here too (kube.NODES): callers of the API layer need one import
from ansible_collections.ocp.egressip.plugins.module_utils.core.kinds import (  # noqa: F401  pylint: disable=unused-import
    CLUSTERROLEBINDINGS,
    CLUSTERROLES,
    CLUSTER_VERSION,
    CONFIGMAPS,
    CRONJOBS,
    EGRESSIPS,
    EVENTS,
    INFRASTRUCTURE,
    KINDS,
    Kind,
    LEASES,
    MACHINECONFIGPOOLS,
    MACHINES,
    MACHINESETS,
    NAMESPACES,
    NETWORK_CONFIG,
    NETWORK_OPERATOR,
    NMSTATES,
    NMSTATE_MISSING,
    NNCES,
    NNCPS,
    NNS,
    NODES,
    PODS,
    PROFILES,
    PROMETHEUSRULES,
    RBAC_GROUP,
    ROLEBINDINGS,
    ROLES,
    SELF_SUBJECT_ACCESS_REVIEWS,
    SERVICEACCOUNTS,
    TUNEDS,
    api_version,
    path,
    resource,
)

MERGE_PATCH = 'application/merge-patch+json'
JSON_PATCH = 'application/json-patch+json'
MACHINE_API_NAMESPACE = 'openshift-machine-api'
FAIL = 'fail'  # list/get: a 404 of the API fails with the kind's message


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


def json_patch(k8s, kind, name, operations, check_mode, namespace=None):
    """A JSON patch (RFC 6902), applied whole or not at all: a failed ``test`` operation is 422 (dryRun=All in check mode)."""
    return k8s.request('patch', resource(kind, name, namespace), path(kind, name, namespace), query=_dry_run(check_mode),
                       body=operations, content_type=JSON_PATCH)


def delete(k8s, kind, name, check_mode, namespace=None):
    """Delete one object (dryRun=All in check mode)."""
    return k8s.request('delete', resource(kind, name, namespace), path(kind, name, namespace), query=_dry_run(check_mode))
