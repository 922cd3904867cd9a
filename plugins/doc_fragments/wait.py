# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The poll interval of the modules that wait for the cluster to apply what they wrote; each module documents its
own ``wait`` and ``wait_timeout`` (what is waited for, and how long, differ)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  wait_sleep:
    description: Seconds between two reads while waiting.
    type: int
    default: 2
'''
