# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Kubernetes label selectors matched against a label map (pure, no imports beyond the standard library).

Its own file so that the vCenter modules, which select node VMs by label, do not load the node network
planning code (and netaddr) in every run. Private module_util: no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def selector_matches(selector, labels):
    """A LabelSelector ({matchLabels, matchExpressions}) or a plain {label: value} map against labels."""
    selector = selector or {}
    labels = labels or {}
    if 'matchLabels' in selector or 'matchExpressions' in selector:
        match_labels = selector.get('matchLabels') or {}
        expressions = selector.get('matchExpressions') or []
    else:
        match_labels, expressions = selector, []
    for key, value in match_labels.items():
        if labels.get(key) != ('' if value is None else str(value)):
            return False
    for expression in expressions:
        if not _expression_matches(expression, labels):
            return False
    return True


def _expression_matches(expression, labels):
    key, operator = expression.get('key'), expression.get('operator')
    values = [str(value) for value in expression.get('values') or []]
    if operator == 'In':
        return key in labels and labels[key] in values
    if operator == 'NotIn':
        return key not in labels or labels[key] not in values
    if operator == 'Exists':
        return key in labels
    if operator == 'DoesNotExist':
        return key not in labels
    raise ValueError('unknown selector operator %r of key %r' % (operator, key))
