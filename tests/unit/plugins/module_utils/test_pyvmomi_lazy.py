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


def _in_fresh_interpreter(code):
    env = dict(os.environ, PYTHONPATH=os.path.abspath(REPO_BUILD))
    prefix = 'import json, sys\nfrom ansible_collections.ocp.egressip.plugins.module_utils.clients import pyvmomi\n'
    return json.loads(subprocess.run([sys.executable, '-c', prefix + code], env=env, capture_output=True, text=True,
                                     check=True).stdout)


def test_load_skips_the_type_definitions_the_collection_never_uses_and_keeps_vim():
    out = _in_fresh_interpreter(
        'module = pyvmomi.load()\n'
        'from pyVmomi import VmomiSupport\n'
        'def known(name):\n'
        '    try:\n'
        '        VmomiSupport.GetVmodlType(name)\n'
        '        return True\n'
        '    except Exception:\n'
        '        return False\n'
        'print(json.dumps({"vim": [known(n) for n in ("vim.VirtualMachine", "vim.vm.device.VirtualVmxnet3",'
        ' "vim.dvs.DistributedVirtualPortgroup", "vmodl.query.PropertyCollector")],'
        ' "pbm": known("pbm.profile.Profile"), "skipped": [n for n in pyvmomi.UNUSED_TYPEINFOS'
        ' if sys.modules.get("pyVmomi." + n) is not None], "connect": pyvmomi.vim.ServiceInstance.__name__}))\n')
    assert out == {'vim': [True, True, True, True], 'pbm': False, 'skipped': [], 'connect': 'vim.ServiceInstance'}


def test_load_leaves_a_pyvmomi_imported_before_as_it_is():
    out = _in_fresh_interpreter(
        'import pyVmomi\n'
        'print(json.dumps([pyvmomi.load() is pyVmomi, all(sys.modules.get("pyVmomi." + n) is not None'
        ' for n in pyvmomi.UNUSED_TYPEINFOS)]))\n')
    assert out == [True, True]
