# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Failures the collection reports to the user: one message plus machine-readable details.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors, failure_message


class ModuleFailure(Exception):
    """A failure reported as is through fail_json.

    ``msg`` is complete for a human (what failed, on which object and endpoint, what to do);
    ``details`` are extra keys for the result (HTTP status, fault type, library versions).
    Neither ever holds a password or a token.
    """

    def __init__(self, msg, **details):
        super(ModuleFailure, self).__init__(msg)
        self.msg = msg
        self.details = details

    def to_result(self):
        """The keyword arguments for ``AnsibleModule.fail_json``."""
        result = dict(self.details)
        result['msg'] = self.msg
        return result


class Refused(Exception):
    """Error findings: the step writes nothing (more) and fails with them.

    ``written`` names what was written before the refusal (a step that failed on the result of its writes);
    ``details`` are extra keys for the failure result (the per-object plan that was refused).
    """

    def __init__(self, findings, written=None, **details):
        super(Refused, self).__init__('%d error finding(s)' % len(errors(findings)))
        self.findings = findings
        self.written = written
        self.details = details

    def message(self, what):
        """The failure message of the step ``what``: each error finding with its remedy."""
        if self.written is None:
            return failure_message(self.findings, what)
        return ' '.join(['%s: %d error(s) after writing %s.' % (what, len(errors(self.findings)), self.written)] +
                        ['[%s] %s Fix: %s' % (item['id'], item['message'], item['remedy']) for item in errors(self.findings)])


def library_versions(*distributions):
    """``{'<name>_version': '<version>'}`` for each Python distribution, like amazon.aws fail_json_aws."""
    try:   # imported here, on a failure: importlib.metadata takes about 35 ms to import, a tenth of a module start
        from importlib.metadata import version as distribution_version, PackageNotFoundError  # pylint: disable=import-outside-toplevel
    except ImportError:  # Python < 3.8 has no importlib.metadata; versions are then reported as unknown
        distribution_version, PackageNotFoundError = None, Exception  # pylint: disable=invalid-name
    versions = {}
    for name in distributions:
        key = '%s_version' % name.lower().replace('-', '_')
        if distribution_version is None:
            versions[key] = 'unknown'
            continue
        try:
            versions[key] = distribution_version(name)
        except PackageNotFoundError:
            versions[key] = 'not installed'
    return versions


def fail_with(module, failure):
    """Exit the module through fail_json with a ModuleFailure."""
    module.fail_json(**failure.to_result())
