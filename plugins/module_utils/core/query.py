# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``query`` option of the info modules: a JMESPath expression applied to the result.

Compile the expression before any API request, so a typo fails at once and costs nothing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import traceback

try:
    import jmespath
    from jmespath.exceptions import JMESPathError
    HAS_JMESPATH = True
    JMESPATH_IMPORT_ERROR = None
except ImportError:
    HAS_JMESPATH = False
    JMESPATH_IMPORT_ERROR = traceback.format_exc()
    JMESPathError = Exception

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, library_versions


def describe_jmespath_error(exc):
    """The first line of a jmespath error without its expression echo, with the column when known."""
    lines = str(exc).splitlines()
    text = lines[0] if lines else type(exc).__name__
    for suffix in (', for expression:', ':'):
        if text.endswith(suffix):
            text = text[:-len(suffix)]
    for prefix in ('Invalid jmespath expression: ', 'Bad jmespath expression: '):
        if text.startswith(prefix):
            text = text[len(prefix):]
    position = getattr(exc, 'lex_position', None)
    if position is not None and 'column' not in text:
        text += ' at column %s' % position
    return text


def compile_query(expression):
    """A compiled JMESPath expression; a ModuleFailure naming the expression and the error otherwise."""
    try:
        return jmespath.compile(expression)
    except JMESPathError as exc:
        raise ModuleFailure('query %r is not a valid JMESPath expression: %s' % (expression, describe_jmespath_error(exc)),
                            reason='invalid_query', **library_versions('jmespath'))


def run_query(compiled, expression, data):
    """The compiled expression applied to ``data``; a ModuleFailure naming the expression when evaluation fails."""
    try:
        return compiled.search(data)
    except JMESPathError as exc:
        raise ModuleFailure('query %r failed on the result: %s' % (expression, describe_jmespath_error(exc)),
                            reason='query_failed', **library_versions('jmespath'))
