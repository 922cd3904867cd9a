# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The required ``datacenter`` option of the vSphere modules that name vCenter objects in one datacenter
(vsphere_network_info, vsphere_portgroup)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  datacenter:
    description:
      - Name (or moid) of the datacenter.
    type: str
    required: true
'''
