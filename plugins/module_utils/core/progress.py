# -*- coding: utf-8 -*-
# Copyright: (c) 2026, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a module is waiting for, for the progress lines its action plugin prints (standard library only).

A module cannot print while it runs. The action plugins of the modules whose waits cannot be split into tries (the
drill, verify's reassignment watch, the capable-node wait, the vCenter tasks) run the module in a thread and print a
line every ``progress_interval`` seconds while it runs (plugin_utils/progress.NotingAction). The line names what the
module said it awaits: ``note()`` writes that text to the file the action plugin named in the ``progress_file``
option, replacing the previous note. Without that option (a module run by hand, by ansible-test, in a unit test)
``note()`` does nothing.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

SHOWN_NAMES = 6  # names shown in one note or progress line; the rest are counted


def shown(names, limit=SHOWN_NAMES):
    """``a, b, c and 4 more``: the first ``limit`` names and a count of the others ('' for none)."""
    names = [str(item) for item in names]
    if len(names) > limit:
        return ', '.join(names[:limit]) + ' and %d more' % (len(names) - limit)
    return ', '.join(names)


def argument_spec():
    """The options of a module whose action plugin prints its notes (doc fragment ocp.egressip.progress_notes)."""
    return dict(progress_interval=dict(type='int', default=10), progress_file=dict(type='path'))


class Notes(object):
    """The one note sink of a module run: configured once by the module base, written by the waits."""

    def __init__(self):
        self.path = None
        self.last = None

    def configure(self, path):
        self.path = path or None
        self.last = None

    def note(self, text):
        """Say what the module now waits for (one line); the same text again writes nothing. Never fails the run: a
        note that cannot be written only leaves the previous one in place."""
        text = ' '.join(str(text).split())
        if self.path is None or text == self.last:
            return
        partial = self.path + '.partial'
        try:
            with open(partial, 'w') as handle:
                handle.write(text)
            os.rename(partial, self.path)   # atomic: the reader sees the old note or the new one, never half of one
        except (IOError, OSError):
            return
        self.last = text


NOTES = Notes()


def configure(path):
    NOTES.configure(path)


def note(text):
    NOTES.note(text)
