# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The doc fragment variants that are another variant rewritten, so each option is written once.

A doc fragment file keeps its first variant a literal string in the class body (ansible-test's yamllint reads the
class body's assignments as literals) and sets the derived variant after the class, which ansible-doc and
validate-modules see, since they import the file. Each rewrite fails when what it rewrites is not there, so a
changed fragment cannot silently lose a variant's difference.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


def nested_options(documentation, parent, description):
    """``documentation`` with its options as the suboptions of the dict option ``parent``.

    ``description`` is the YAML of the parent's description items (indented for under ``description:``); the option
    references ``O(name)`` to the moved options become ``O(parent.name)``; what follows the options (notes) stays.
    """
    head, _options, rest = documentation.partition('options:\n')
    lines = rest.split('\n')
    end = next((index for index, line in enumerate(lines) if line and not line.startswith(' ')), len(lines))
    names = re.findall(r'^  ([A-Za-z0-9_]+):', '\n'.join(lines[:end]), re.M)
    suboptions = '\n'.join(('    ' + line) if line else line for line in lines[:end])
    suboptions = re.sub(r'O\((%s)\)' % '|'.join(names), r'O(%s.\1)' % parent, suboptions)
    return '%soptions:\n  %s:\n    description:\n%s\n    type: dict\n    suboptions:\n\n%s\n%s' % (
        head, parent, description.strip('\n'), suboptions, '\n'.join(lines[end:]))


def rewritten(text, *changes):
    """``text`` with each (old, new) of ``changes`` replaced once; ValueError when an ``old`` is not in it."""
    for old, new in changes:
        if old not in text:
            raise ValueError('doc fragment variant: %r is not in the text it rewrites' % old)
        text = text.replace(old, new, 1)
    return text


def only_options(documentation, *names):
    """The ``options:`` of ``documentation`` cut down to ``names`` (each a top-level option, in that order); ValueError
    when one is not there. A fragment for modules that take some of another fragment's options, written once."""
    _head, _options, rest = documentation.partition('options:\n')
    lines = rest.split('\n')
    end = next((index for index, line in enumerate(lines) if line and not line.startswith(' ')), len(lines))
    blocks, current = {}, None
    for line in lines[:end]:
        match = re.match(r'^  ([A-Za-z0-9_]+):', line)
        if match:
            current = match.group(1)
        if current is not None:
            blocks.setdefault(current, []).append(line)
    missing = [name for name in names if name not in blocks]
    if missing:
        raise ValueError('doc fragment variant: options %s are not in the text it cuts' % ', '.join(missing))
    return 'options:\n%s\n' % '\n'.join(line for name in names for line in blocks[name] if line.strip())
