# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The optional third-party library of the pure layers, imported in one place: ``netaddr``, None when it is missing.

A module that needs it declares it (``EgressModule(libraries=('netaddr',))``, clients/module.py), which fails the
run with missing_required_lib before any code that uses it runs; importing this file never fails.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# re-exported: the other module_utils import it from here
try:
    import netaddr  # noqa: F401 pylint: disable=unused-import
except ImportError:  # pragma: no cover - reported by the modules that declare it (clients/module.py LIBRARIES)
    netaddr = None
