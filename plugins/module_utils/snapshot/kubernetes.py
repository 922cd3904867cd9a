# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one Kubernetes snapshot reader: the caller names the kinds it needs, the result has one key per kind.

The keys are those of ``kube.KINDS`` (``nodes``, ``nns``, ``nncps``, ``egressips``...), the same in every module,
plan and check. One list request per kind (per LIST_PAGE_SIZE objects), whatever the cluster size; a singleton
(the Infrastructure ``cluster``, the ClusterVersion ``version``) is picked from its list; ``read_singletons`` GETs
singletons by name instead (one request each; the reports' cluster block, for a module that lists neither).

What a failed list means is decided here, once:
- HTTP 404 (CRD absent): None for a kind the caller names `optional`, else the kind's message (kube.KINDS);
- HTTP 403: for a kind the caller names `forbidden_ok`, the key is left out and the kind named in
  ``unreadable`` (so the checks that need it are skipped with a finding), else the API's message;
- any other error fails with the API's message.
Private module_util.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure


def _singleton(items, name):
    return next((item for item in items if (item.get('metadata') or {}).get('name') == name), None)


def _unreadable(kind):
    return 'HTTP 403: the credentials may not list %s' % kube.resource(kind)


def read(k8s, kinds, optional=(), forbidden_ok=(), namespaces=None):
    """{key: objects (or the singleton), 'unreadable': {resource: why}} for each key of kube.KINDS in `kinds`, in that order.

    `optional`: keys whose absence (404) the caller can do without; `forbidden_ok`: keys it can do without when the
    credentials may not list them (403). `namespaces`: {key: namespace} to list a namespaced kind in one namespace.
    """
    snapshot = {'unreadable': {}}
    namespaces = namespaces or {}
    for key in kinds:
        kind = kube.KINDS[key]
        try:
            items = kube.list_objects(k8s, kind, namespace=namespaces.get(key))
        except ModuleFailure as failure:
            status = failure.details.get('status')
            if status == 404 and key in optional:
                snapshot[key] = None
            elif status == 403 and key in forbidden_ok:
                snapshot['unreadable'][kube.resource(kind)] = _unreadable(kind)
            else:
                raise
            continue
        snapshot[key] = _singleton(items, kind.name) if kind.name else items
    return snapshot


def read_singletons(k8s, keys):
    """{key: the singleton (None after a 404), 'unreadable': {resource: why}} with one GET per key of kube.KINDS in `keys`
    (singleton kinds only: the Infrastructure ``cluster``, the ClusterVersion ``version``); a 403 leaves the key out and
    names it in ``unreadable``, as read() does for `forbidden_ok`; any other error fails with the API's message."""
    snapshot = {'unreadable': {}}
    for key in keys:
        kind = kube.KINDS[key]
        try:
            snapshot[key] = kube.get_object(k8s, kind, absent=None)
        except ModuleFailure as failure:
            if failure.details.get('status') != 403:
                raise
            snapshot['unreadable'][kube.resource(kind)] = 'HTTP 403: the credentials may not get %s' % kube.resource(kind, kind.name)
    return snapshot
