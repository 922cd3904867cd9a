# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reads behind the failure domain mode of the vSphere steps (model/failure_domains.py decides).

One GET of the Infrastructure singleton, and one list of the Machines when nodes are to be mapped. Private module_util:
no API promise outside this collection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.clients import kube
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import Refused
from ansible_collections.ocp.egressip.plugins.module_utils.core.findings import errors
from ansible_collections.ocp.egressip.plugins.module_utils.model import failure_domains as model


def read_domains(k8s, entries, defaults):
    """The resolved domains (model.resolve) from the cluster's Infrastructure; refuses (nothing written) on an error."""
    infrastructure = kube.get_object(k8s, kube.INFRASTRUCTURE, absent=None)
    domains, findings = model.resolve(infrastructure, entries, defaults)
    if errors(findings):
        raise Refused(findings)
    return domains


def node_domains(k8s, nodes, domains, machines=None):
    """({node name: domain name}, findings) for Node objects; the Machines are listed unless given (None when the
    Machine API is not served: then the zone labels alone decide)."""
    if machines is None:
        machines = kube.list_objects(k8s, kube.MACHINES, namespace=kube.MACHINE_API_NAMESPACE, absent=None) or []
    return model.map_nodes(nodes, machines, domains)
