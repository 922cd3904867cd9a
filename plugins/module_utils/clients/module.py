# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one module base and runner of the collection's modules.

``EgressModule`` owns the connections (one Kubernetes client and one vCenter session per run, each made on
first use, from flat or nested options), the check of the Python libraries a module declares, and the end of
the run: ``run()`` turns a Refused or a ModuleFailure into the failure result and drops the diff unless asked.
pyVmomi is imported only when a module reads vCenter, so a Kubernetes-only run does not pay for it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core import progress as progress_notes
from ansible_collections.ocp.egressip.plugins.module_utils.clients.k8s import (
    HAS_K8S_LIBS,
    K8S_LIBS_ERROR,
    KubeconfigMasking,
    k8s_argument_spec,
    k8s_client_for,
    kubeconfig_secrets,
)
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere_options import vsphere_argument_spec
from ansible_collections.ocp.egressip.plugins.module_utils.clients import pyvmomi

KUBERNETES = 'kubernetes'
VSPHERE = 'vsphere'
NONE = None

# When the cluster lock (clients/module_lock.py) is taken: by run() before the step, or by the step once its input is checked.
LOCK_BEFORE = 'before'
LOCK_IN_STEP = 'step'

# How the module's action plugin shows progress (plugin_utils/progress.py): it runs the module once and prints what the
# module notes it waits for (doc fragment ocp.egressip.progress.notes), or in tries of at most progress_interval seconds
# of waiting each (ocp.egressip.progress).
PROGRESS_NOTES = 'notes'
PROGRESS_TRIES = 'tries'

# The EgressModule settings of a step that writes vCenter (vsphere_portgroup, vsphere_vm_nic): pyVmomi, the cluster lock
# before the step (through its kubernetes option), progress notes while its vCenter tasks run, check mode.
VCENTER_WRITER = dict(connection=VSPHERE, libraries=('pyvmomi',), lock=LOCK_BEFORE, progress=PROGRESS_NOTES, supports_check_mode=True)

# what ``invocation`` shows in place of an option's value that an earlier task handed over (EgressModule._add_invocation)
HANDED_OVER = '(not echoed: handed over from an earlier task of this run)'

# Library name as missing_required_lib says it -> the Python module to import.
LIBRARIES = {'netaddr': 'netaddr', 'pyvmomi': 'pyVmomi', 'jmespath': 'jmespath'}
K8S_LIBRARY = 'urllib3 (pip install kubernetes brings it)'


def library_error(name):
    """The traceback of importing the library ``name`` (a key of LIBRARIES), or None when it imports."""
    try:
        if LIBRARIES[name] == 'pyVmomi':
            pyvmomi.load()   # without the type definitions the collection never uses
        else:
            importlib.import_module(LIBRARIES[name])
    except ImportError:
        return traceback.format_exc()
    return None


def merged_findings(result_findings, refusal_findings):
    """The findings of a refused run: those reported so far that the refusal does not repeat, then the refusal's."""
    return [item for item in result_findings if item not in refusal_findings] + refusal_findings


def _module_lock():
    # imported by the writing modules only: a read-only module does not load the lock and Lease code
    from ansible_collections.ocp.egressip.plugins.module_utils.clients import module_lock  # pylint: disable=import-outside-toplevel
    return module_lock


class EgressModule(KubeconfigMasking, AnsibleModule):
    """AnsibleModule with the connection options, the library checks, lazy clients and the one way a run ends.

    ``connection`` is the main connection (flat options): KUBERNETES, VSPHERE or NONE; a module that also
    talks to the other declares its nested option (``vsphere`` or ``kubernetes``) in its argument spec.
    ``libraries`` are the LIBRARIES keys the module cannot start without. ``lock`` (LOCK_BEFORE or LOCK_IN_STEP)
    adds the cluster lock options of a writing module and says when its lock is taken. ``progress`` adds the options
    of a module whose action plugin prints what it waits for: PROGRESS_NOTES (or True) also points the module's notes
    (core/progress.py) at the file that plugin reads, PROGRESS_TRIES adds only progress_interval.
    """

    def __init__(self, what, argument_spec=None, connection=KUBERNETES, libraries=(), lock=None, progress=False, handed_over=(),
                 **kwargs):
        spec = {KUBERNETES: k8s_argument_spec, VSPHERE: vsphere_argument_spec}.get(connection, dict)()
        if lock:
            spec.update(_module_lock().argument_spec())
        notes = progress and progress != PROGRESS_TRIES
        if progress:
            options = progress_notes.argument_spec()
            spec.update(options if notes else {'progress_interval': options['progress_interval']})
        spec.update(argument_spec or {})
        super(EgressModule, self).__init__(argument_spec=spec, **kwargs)
        if notes:
            progress_notes.configure(self.params['progress_file'])
        self.what = what
        self.handed_over = handed_over
        self.connection = connection
        self.lock = lock
        self.no_log_values.update(kubeconfig_secrets(self.params.get('kubeconfig')))  # before any output, -vvv's included
        if connection == KUBERNETES and not HAS_K8S_LIBS:
            self.fail_json(msg=missing_required_lib(K8S_LIBRARY), exception=K8S_LIBS_ERROR)
        for name in libraries:
            self.require(name)
        self._k8s = None
        self._vsphere = None

    def exit_json(self, **kwargs):
        self._add_invocation(kwargs)
        super(EgressModule, self).exit_json(**kwargs)

    def fail_json(self, msg, **kwargs):
        self._add_invocation(kwargs)
        super(EgressModule, self).fail_json(msg, **kwargs)

    def _add_invocation(self, result):
        """Ansible's ``invocation`` (the options, as -vvv prints them) without the values of the ``handed_over`` options:
        data an earlier task of the same run returned (verify's ``vcenter_facts``: hundreds of KB at 500 nodes), which
        echoing back would cost the module, the controller and every callback a second copy for nothing. Without such a
        value Ansible adds the invocation as always."""
        params = getattr(self, 'params', None) or {}
        handed = [name for name in getattr(self, 'handed_over', ()) if params.get(name)]
        if handed and 'invocation' not in result:
            result['invocation'] = {'module_args': dict(params, **dict((name, HANDED_OVER) for name in handed))}

    def require(self, name, reason=None):
        """End the module when the library ``name`` is missing (one message and one exception form for all)."""
        error = library_error(name)
        if error is not None:
            self.fail_json(msg=missing_required_lib(name, reason=reason), exception=error)

    def connection_params(self, kind):
        """The options of the connection ``kind``: flat for the main connection, else the dict option named ``kind``
        (both connections have validate_certs, so the other one is nested)."""
        if kind == self.connection:
            return self.params
        return self.params.get(kind) or {}

    @property
    def k8s(self):
        """The one K8sClient of the run, built on first use; a configuration failure ends the module."""
        if self._k8s is None:
            self._k8s = k8s_client_for(self, self.connection_params(KUBERNETES))
        return self._k8s

    @property
    def vsphere(self):
        """The one vCenter session of the run, logged in on first use; a connection failure ends the module."""
        return self.vcenter()

    def vcenter(self, reason=None):
        """The vCenter session; ``reason`` says why pyVmomi is needed when it is missing."""
        if self._vsphere is None:
            self.require('pyvmomi', reason=reason)
            from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import connect_vsphere
            try:
                self._vsphere = connect_vsphere(self.connection_params(VSPHERE))
            except ModuleFailure as failure:
                self.fail_failure(failure)
        return self._vsphere

    def take_lock(self, wanted=True):
        """Hold the cluster lock until the module ends (not in check mode, nor with ``wanted=False``); a vCenter module
        takes it through its ``kubernetes`` option."""
        _module_lock().take(self, self.what, nested=self.connection == VSPHERE, wanted=wanted)

    def fail_failure(self, failure, result=None):
        """End the module with a ModuleFailure (message plus details), then the keys of ``result`` it does not set."""
        details = failure.to_result()
        details.update((key, value) for key, value in (result or {}).items() if key not in details)
        self.fail_json(**details)

    def fail_refused(self, refusal, result):
        """End the module with a Refused: its message, and its findings after those the result reported."""
        result.update(refusal.details)
        result['findings'] = merged_findings(result.get('findings') or [], refusal.findings)
        self.fail_json(msg=refusal.message(self.what), **result)

    def run(self, body, **result):
        """Run ``body(module, result)`` and end the module; a dict it returns is added to the result.

        ``result`` starts as ``changed=False`` plus the given keys; with LOCK_BEFORE the cluster lock is taken first.
        A Refused or a ModuleFailure ends the run
        as a failure carrying what the result holds so far; the diff is returned only when asked for.
        """
        result.setdefault('changed', False)
        try:
            if self.lock == LOCK_BEFORE:
                self.take_lock()
            returned = body(self, result)
            if returned:
                result.update(returned)
        except Refused as refusal:
            self.fail_refused(refusal, result)
        except ModuleFailure as failure:
            self.fail_failure(failure, result)
        if not self._diff:  # pylint: disable=protected-access
            result.pop('diff', None)
        self.exit_json(**result)
