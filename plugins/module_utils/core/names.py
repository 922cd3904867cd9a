# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The names written on cluster objects: the collection's own labels and annotations, and the ones of OVN-Kubernetes
and Kubernetes it reads or sets. One home, so that every layer (model, plan, checks) says them the same way.

Pure code: no I/O. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

MANAGED_BY_LABEL = 'egressip.ocp/managed-by'
MANAGED_BY_VALUE = 'ocp.egressip'
NODE_ANNOTATION = 'egressip.ocp/node'
ADDRESSES_ANNOTATION = 'egressip.ocp/addresses'
EGRESS_ASSIGNABLE_LABEL = 'k8s.ovn.org/egress-assignable'
LABEL_RECORD_ANNOTATION = 'egressip.ocp/egress-assignable'  # beside the label: this collection set it (value MANAGED_BY_VALUE)
REMEDIATED_ANNOTATION = 'egressip.ocp/remediated-at'  # when a remediation last removed the node's label (UTC); the guard's hold-down
HOSTNAME_LABEL = 'kubernetes.io/hostname'


def is_managed(obj):
    """Whether the object carries the collection's managed-by label."""
    return ((obj or {}).get('metadata') or {}).get('labels', {}).get(MANAGED_BY_LABEL) == MANAGED_BY_VALUE
