# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The file options of the report modules (module_utils/reports/files.py write_reports); each module documents
its own ``dest`` and ``name``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  formats:
    description: Which files to write.
    type: list
    elements: str
    choices: [json, markdown]
    default: [json, markdown]
  mode:
    description: Permissions of the files written.
    type: raw
    default: '0644'
'''
