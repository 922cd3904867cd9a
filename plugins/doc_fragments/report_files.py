# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The file options of the report modules (module_utils/reports/files.py write_reports); each module documents
its own ``dest`` and ``name`` (egressip_fleet_report gives these three options its own descriptions, over the fragment's)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  formats:
    description:
      - Which files to write - V(json) for machines, V(markdown) and V(html) for people. The HTML page is self-contained
        (no external asset, no JavaScript) - the verdict first, the topology as an inline SVG (verify and drill reports),
        the tables, and the findings with their remedies and runbook anchors.
    type: list
    elements: str
    choices: [json, markdown, html]
    default: [json, markdown, html]
  html_template:
    description:
      - A Jinja2 template file that replaces the page's default template. It gets C(report) (the data), C(title),
        C(verdict), C(ok), C(identity) (label and value pairs - cluster name, cluster ID, OpenShift version, API server,
        the time the report was made), C(generated_at), C(unknown) (why a part of the identity is unknown), C(lead) (the
        lines before the first section, as HTML), C(sections) (C(title), C(html)), C(svg) (the topology) and C(findings);
        C(autoescape) is on.
    type: path
  mode:
    description: Permissions of the files written.
    type: raw
    default: '0644'
'''
