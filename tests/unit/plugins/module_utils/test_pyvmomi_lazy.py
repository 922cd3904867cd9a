"""clients/pyvmomi.py: pyVmomi's namespaces resolve on first use, and importing the vCenter readers does not import it."""

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.ocp.egressip.plugins.module_utils.clients import pyvmomi

REPO_BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', '.build')


def test_the_namespaces_are_pyvmomis_own_objects():
    from pyVmomi import vim, vmodl  # pylint: disable=import-outside-toplevel
    assert pyvmomi.vim.VirtualMachine is vim.VirtualMachine
    assert pyvmomi.vmodl.MethodFault is vmodl.MethodFault
    assert issubclass(pyvmomi.vim.fault.InvalidLogin, pyvmomi.vmodl.MethodFault)
    with pytest.raises(AttributeError):
        pyvmomi.vim.NoSuchType  # pylint: disable=pointless-statement
    assert 'imported on first use' in repr(pyvmomi.vim)


def test_importing_the_vcenter_modules_does_not_import_pyvmomi():
    modules = ['plugins.modules.preflight', 'plugins.modules.vsphere_vm_nic', 'plugins.modules.egressip_verify',
               'plugins.module_utils.clients.vsphere', 'plugins.module_utils.clients.vcenter']
    code = ('import importlib, json, sys\n'
            'for name in %r: importlib.import_module("ansible_collections.ocp.egressip." + name)\n'
            'print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("pyVmomi", "pyVim"))))' % modules)
    env = dict(os.environ, PYTHONPATH=os.path.abspath(REPO_BUILD))
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
