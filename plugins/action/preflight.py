# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of ocp.egressip.preflight: the module once, with progress lines from its notes (plugin_utils/progress),
for the wire check a verification of a converged read may wait on (its ``verify`` option)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.plugin_utils.progress import NotingAction


class ActionModule(NotingAction):
    """NotingAction as it is: the module says what it waits for."""
