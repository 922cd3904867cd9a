# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Small readers over Kubernetes objects as plain dicts (standard library only).

The one home of the helpers every check and plan uses: ``dig`` (a nested value or None), the object's metadata,
name and labels, and whether a Node is Ready. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


def dig(obj, *path):
    """obj[path[0]][path[1]]... or None where any step is missing or not a mapping."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def meta(obj):
    return (obj or {}).get('metadata') or {}


def name(obj):
    """metadata.name, or '' for an object without one (sorting and messages never meet None)."""
    return meta(obj).get('name') or ''


def labels(obj):
    return meta(obj).get('labels') or {}


def condition_status(obj, kind):
    """The status ('True', 'False', 'Unknown') of the condition `kind` in status.conditions, or None."""
    for condition in dig(obj, 'status', 'conditions') or []:
        if isinstance(condition, dict) and condition.get('type') == kind:
            return condition.get('status')
    return None


def node_ready(node):
    return condition_status(node, 'Ready') == 'True'
