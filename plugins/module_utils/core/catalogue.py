# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The guardrail catalogue: every finding id the collection can report, as data.

Each entry: default `severity`, a one-line `title` (what the runbook entry is about) and the
generic `remedy`. Check functions build findings with `catalogue_finding(id, message,
objects)`: the message is specific (which node, which IP), the remedy comes from here unless
the check has a more precise one. docs/runbook.md has one section per id (a test checks it).
Each area keeps its entries in its own dict (core/catalogue_cluster.py, catalogue_egress.py, catalogue_lifecycle.py); CATALOGUE merges them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import finding

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue_cluster import PLATFORM_CHECKS, VSPHERE_CHECKS
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue_egress import EGRESSIP_CHECKS, NODE_CHECKS
from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue_lifecycle import LIFECYCLE_CHECKS, LOCK_CHECKS, PERMISSION_CHECKS


def _merge(*areas):
    merged = {}
    for area in areas:
        for finding_id, entry in area.items():
            if finding_id in merged:
                raise ValueError('finding id %s is defined twice in the catalogue' % finding_id)
            merged[finding_id] = entry
    return merged


CATALOGUE = _merge(PLATFORM_CHECKS, VSPHERE_CHECKS, NODE_CHECKS, EGRESSIP_CHECKS, LIFECYCLE_CHECKS, LOCK_CHECKS, PERMISSION_CHECKS)


def catalogue_finding(finding_id, message, objects=None, severity=None, remedy=None):
    """A finding for a catalogued id; severity and remedy default to the catalogue's."""
    entry = CATALOGUE[finding_id]
    return finding(finding_id, severity or entry['severity'], message, remedy or entry['remedy'], objects)
