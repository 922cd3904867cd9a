# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What every module of the collection documents alike.

``ocp.egressip.common`` holds the author and the attributes: check_mode (full support: every module of the collection
runs in check mode and writes nothing there), diff_mode, platform (all) and the membership of the
``ocp.egressip.egressip`` action group (meta/runtime.yml lists every module in it); a module adds its check mode
``details`` and its own diff_mode ``support`` and ``details``. ``ocp.egressip.common.read_only`` is the whole check_mode and diff_mode
documentation of a module that only reads.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    # The descriptions are those of ansible.builtin.action_common_attributes, which this fragment replaces.
    DOCUMENTATION = r'''
author:
  - ocp.egressip maintainers (!UNKNOWN)
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target, if not supported the
      action will be skipped.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
  platform:
    description: Target OS/families that can be operated against.
    support: N/A
    platforms: all
  action_group:
    description: Action is part of action_group(s), for convenient setting of module_defaults.
    support: full
    membership:
      - ocp.egressip.egressip
'''

    READ_ONLY = r'''
attributes:
  check_mode:
    support: full
    details: The module only reads.
  diff_mode:
    support: none
'''
