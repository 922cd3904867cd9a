# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which cluster a report is about and when it was made: the ``cluster`` block and ``generated_at`` of every report.

Pure code: the caller reads (``snapshot.kubernetes.read_singletons`` with ``KINDS``, or a snapshot that already holds
them) and passes the time. From what was read:

- ``name``: the Infrastructure ``cluster``'s ``status.infrastructureName`` (the infrastructure ID, ``<cluster>-<5 chars>``,
  the prefix of the cluster's VM, folder and tag names in vCenter). ClusterVersion's own name is always ``version``, and
  the API host name is in ``api_url``, so neither is used as the name.
- ``id``: ClusterVersion ``version`` ``spec.clusterID`` (what Red Hat support and OpenShift Cluster Manager know the cluster by).
- ``openshift_version``: its ``status.desired.version``, else the newest Completed history entry.
- ``api_url``: the API server URL the run connected to, without userinfo (user, password, token), query or fragment.
- ``unknown``: {field: why} for each field that could not be known (HTTP 403 or 404 on the read, or the field absent);
  a report whose cluster is partly unknown is still a report, so none of these is a failure.

``generated_at`` is the time in UTC, ISO 8601 to the second (``2026-11-30T10:00:00Z``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime

from ansible.module_utils.six.moves.urllib.parse import urlsplit, urlunsplit

from ansible_collections.ocp.egressip.plugins.module_utils.core.objects import dig as _dig

# the snapshot keys (kube.KINDS) of the two objects read for the block, each one GET of its singleton
KINDS = ('cluster_version', 'infrastructure')
RESOURCES = {'cluster_version': 'clusterversions.config.openshift.io version',
             'infrastructure': 'infrastructures.config.openshift.io cluster'}
UNREADABLE_KEYS = {'cluster_version': 'clusterversions.config.openshift.io', 'infrastructure': 'infrastructures.config.openshift.io'}
TIME_FORMAT = '%Y-%m-%dT%H:%M:%SZ'
FIELDS = ('name', 'id', 'openshift_version', 'api_url')


def api_url(url):
    """The URL without userinfo, query and fragment (``https://api.example.com:6443``); None when there is no host in it."""
    text = str(url or '').strip()
    if not text:
        return None
    if '://' not in text:
        text = 'https://' + text
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    netloc = parts.netloc.rpartition('@')[2]
    if not netloc or netloc.startswith(':'):
        return None
    return urlunsplit((parts.scheme.lower(), netloc, parts.path.rstrip('/'), '', ''))


def generated_at(now):
    """`now` (an aware datetime, or naive in UTC) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    if now.tzinfo is not None:
        now = now.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    return now.strftime(TIME_FORMAT)


def _read_problem(snapshot, key):
    """Why the object of `key` was not read (403 or 404), or None when it was."""
    unreadable = snapshot.get('unreadable') or {}
    if key not in snapshot or UNREADABLE_KEYS[key] in unreadable:
        return unreadable.get(UNREADABLE_KEYS[key]) or '%s was not read' % RESOURCES[key]
    if snapshot.get(key) is None:
        return 'HTTP 404: %s does not exist (is this OpenShift?)' % RESOURCES[key]
    return None


def openshift_version(cluster_version):
    """ClusterVersion's status.desired.version, else the newest Completed history entry's version."""
    text = _dig(cluster_version, 'status', 'desired', 'version')
    if text:
        return text
    for entry in _dig(cluster_version, 'status', 'history') or []:
        if isinstance(entry, dict) and entry.get('state') == 'Completed' and entry.get('version'):
            return entry['version']
    return None


def cluster_block(snapshot, url):
    """The ``cluster`` block from a snapshot holding ``cluster_version`` and ``infrastructure`` (absent and named in
    ``unreadable`` after a 403, None after a 404) and the API URL the run used."""
    version_problem = _read_problem(snapshot, 'cluster_version')
    infrastructure_problem = _read_problem(snapshot, 'infrastructure')
    cluster_version = None if version_problem else snapshot.get('cluster_version')
    infrastructure = None if infrastructure_problem else snapshot.get('infrastructure')
    block = {
        'name': _dig(infrastructure, 'status', 'infrastructureName') or None,
        'id': _dig(cluster_version, 'spec', 'clusterID') or None,
        'openshift_version': openshift_version(cluster_version),
        'api_url': api_url(url),
    }
    why = {
        'name': infrastructure_problem or 'Infrastructure cluster has no status.infrastructureName',
        'id': version_problem or 'ClusterVersion version has no spec.clusterID',
        'openshift_version': version_problem or 'ClusterVersion version has neither status.desired.version nor a Completed update',
        'api_url': 'the connection has no API server URL',
    }
    block['unknown'] = dict((field, why[field]) for field in FIELDS if block[field] is None)
    return block


def identity(snapshot, url, now):
    """{'cluster': cluster_block(...), 'generated_at': generated_at(now)}: what a report adds about itself.
    `now` may also be a ready ``generated_at`` text (an option that fixes the time), used as it is."""
    stamp = now if isinstance(now, str) else generated_at(now)
    return {'cluster': cluster_block(snapshot, url), 'generated_at': stamp}


def utc_now():
    """The current time in UTC (the modules' one wall-clock read for a report)."""
    return datetime.datetime.now(datetime.timezone.utc)
