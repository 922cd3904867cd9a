# -*- coding: utf-8 -*-
# Copyright: (c) 2025, ocp.egressip contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Warnings for connections whose TLS certificate is not checked (AAP's built-in credentials turn checks off silently).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ocp.egressip.plugins.module_utils.core.catalogue import catalogue_finding


def tls_findings(k8s_connection, vsphere_params):
    """kube_tls_unverified / vcenter_tls_unverified for the connections a run uses without certificate checks.

    k8s_connection: the Kubernetes client's Connection (None when not built); vsphere_params: the vCenter options
    (None when the run does not connect to vCenter).
    """
    findings = []
    if k8s_connection is not None and not k8s_connection.verify_ssl:
        findings.append(catalogue_finding(
            'kube_tls_unverified',
            'The TLS certificate of the Kubernetes API at %s is not checked (validate_certs false, K8S_AUTH_VERIFY_SSL=false, or '
            'insecure-skip-tls-verify in the kubeconfig): a man in the middle could read the token.' % k8s_connection.host,
            objects=[{'kind': 'option', 'name': 'validate_certs'}]))
    if vsphere_params and vsphere_params.get('hostname') and vsphere_params.get('validate_certs') is False:
        findings.append(catalogue_finding(
            'vcenter_tls_unverified',
            'The TLS certificate of vCenter %s is not checked (validate_certs false or VMWARE_VALIDATE_CERTS=false; under AAP the '
            'built-in VMware vCenter credential takes it from a global setting whose default is false): a man in the middle '
            'could read the password.' % vsphere_params['hostname'],
            objects=[{'kind': 'option', 'name': 'vcenter.validate_certs'}]))
    return findings
