# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""pyVmomi's ``vim`` and ``vmodl`` namespaces, imported on their first use.

Importing pyVmomi loads every vSphere type (about half a second of CPU). The vCenter readers and writers use these
stand-ins, so a module run that does not talk to vCenter (the permission check, a Kubernetes-only step) does not pay
for it; ``vim.VirtualMachine`` and ``except vmodl.MethodFault`` resolve to pyVmomi's own objects when evaluated.
Whether pyVmomi is installed is checked by the module base (clients/module.py) before any vCenter call.

``load()`` imports pyVmomi without the type definitions of the vSphere APIs the collection never calls (storage
policy, storage monitoring, ESX agent manager, first-class disks, vSAN health): pyVmomi loads each of those only if
its module imports (``pyVmomi._typeinfos``), and a module listed as None in ``sys.modules`` does not. That saves a
quarter of pyVmomi's import time (about 0.1 s of CPU per module run); the ``vim``, ``vmodl`` and query types, which are
all the collection uses, are loaded as usual.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import sys

# pyVmomi type definitions the collection does not use (pbm, sms, eam, vslm, vsan): pyVmomi skips any of them that does
# not import
UNUSED_TYPEINFOS = ('_typeinfo_eam', '_typeinfo_pbm', '_typeinfo_sms', '_typeinfo_vslm', '_typeinfo_vsanhealth')


def load():
    """pyVmomi, imported without the type definitions of UNUSED_TYPEINFOS when nothing imported it before."""
    if 'pyVmomi' not in sys.modules:
        for name in UNUSED_TYPEINFOS:
            sys.modules.setdefault('pyVmomi.' + name, None)
    return importlib.import_module('pyVmomi')


class _Namespace(object):
    """A pyVmomi namespace (``vim``, ``vmodl``) resolved on first attribute access."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attribute):
        namespace = getattr(load(), self._name)
        return getattr(namespace, attribute)

    def __repr__(self):
        return '<pyVmomi.%s, imported on first use>' % self._name


vim = _Namespace('vim')
vmodl = _Namespace('vmodl')


def smart_connect(**kwargs):
    """pyVim.connect.SmartConnect."""
    load()
    return importlib.import_module('pyVim.connect').SmartConnect(**kwargs)


def disconnect(service_instance):
    """pyVim.connect.Disconnect."""
    return importlib.import_module('pyVim.connect').Disconnect(service_instance)
