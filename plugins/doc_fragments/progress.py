# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Progress lines of the modules whose waits take minutes on a real cluster (their action plugins run them in tries)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  progress_interval:
    description:
      - While the module waits, the controller prints a line at least every this many seconds naming what is still
        awaited (the task name, C(still waiting after 20 s), the time limit and the awaited
        objects, such as C(NodeNetworkConfigurationPolicy egressip-worker-0)).
      - A module cannot print while it runs, so its action plugin runs it in tries that wait at most this long each and
        then runs it again with the time left; the module is idempotent, so a later try does only what is still to do.
        The result is the last try's, with C(changed) and the diff of all tries, and C(tries).
      - C(0) or less waits in one try, without progress lines. Not used in check mode (nothing is waited for).
    type: int
    default: 10
'''

    # The modules whose waits cannot be split into tries (a drill step, verify's watch, vCenter tasks): their action
    # plugin runs the module once and prints what it says it waits for (plugin_utils/progress.NotingAction).
    NOTES = r'''
options:
  progress_interval:
    description:
      - While the module runs, the controller prints a line at least every this many seconds naming what it is waiting
        for (the task name, C(still waiting after 20 s for) and what the module last said it awaits, such as
        C(10.20.0.10 of EgressIP egressip-a (on worker-0\) to move to another node (wait_timeout 120 s\))).
      - The module runs once; its action plugin reads what the module notes in O(progress_file) while it runs.
      - C(0) or less prints no progress lines. Not used in check mode.
    type: int
    default: 10
  progress_file:
    description:
      - Where the module notes what it waits for. Set by the module's action plugin; leave it unset.
    type: path
'''
