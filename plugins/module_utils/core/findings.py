# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Findings: the one shape in which every check, refusal and verification result is reported.

A finding has a stable `id` (documented in docs/runbook.md, one entry per id), a `severity`
(error, warning, info), a `message` saying what is wrong with which object, a `remedy`
saying what to do, and the objects it concerns. Preflight, the modules' refusals, verify,
migrate and the reports all speak in findings, so a support engineer sees the same id
wherever a problem shows up. Pure code: no I/O.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ERROR = 'error'
WARNING = 'warning'
INFO = 'info'
SEVERITIES = (ERROR, WARNING, INFO)
DOCS_BASE = 'docs/runbook.md#'


def finding(finding_id, severity, message, remedy, objects=None):
    """Build one finding as a plain dict (what modules return and reports render)."""
    if severity not in SEVERITIES:
        raise ValueError('severity of %s must be one of %s, not %r' % (finding_id, ', '.join(SEVERITIES), severity))
    return {
        'id': finding_id,
        'severity': severity,
        'message': message,
        'remedy': remedy,
        'docs': DOCS_BASE + finding_id,
        'objects': list(objects or []),
    }


def errors(findings):
    return [item for item in findings if item['severity'] == ERROR]


def summarize(findings):
    """Counts per severity, for one-line summaries."""
    counts = dict((severity, 0) for severity in SEVERITIES)
    for item in findings:
        counts[item['severity']] += 1
    return counts


SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}


def dedupe(findings):
    """The findings without repeats (same id and message), errors first, then warnings, then info (stable)."""
    seen, result = set(), []
    for item in findings:
        if (item['id'], item['message']) not in seen:
            seen.add((item['id'], item['message']))
            result.append(item)
    return sorted(result, key=lambda item: SEVERITY_ORDER[item['severity']])


def failure_message(findings, what):
    """One message for a module failure listing every error finding with its remedy."""
    lines = ['%s refused: %d error(s); nothing was written.' % (what, len(errors(findings)))]
    for item in errors(findings):
        lines.append('[%s] %s Fix: %s' % (item['id'], item['message'], item['remedy']))
    return ' '.join(lines)
