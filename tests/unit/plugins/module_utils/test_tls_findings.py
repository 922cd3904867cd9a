"""Preflight warns when a connection's TLS certificate is not checked (docs/aap.md: AAP's built-in credentials do that silently)."""

from ansible_collections.ocp.egressip.plugins.module_utils.clients.kubeconfig import Connection
from ansible_collections.ocp.egressip.plugins.module_utils.checks.tls import tls_findings


def connection(verify):
    result = Connection('https://api.ocp.example.com:6443')
    result.verify_ssl = verify
    return result


def test_unchecked_connections_are_warnings_naming_the_endpoint():
    findings = tls_findings(connection(False), {'hostname': 'vc.example.com', 'validate_certs': False})
    assert [(f['id'], f['severity']) for f in findings] == [('kube_tls_unverified', 'warning'), ('vcenter_tls_unverified', 'warning')]
    assert 'https://api.ocp.example.com:6443' in findings[0]['message'] and 'vc.example.com' in findings[1]['message']


def test_checked_or_absent_connections_give_nothing():
    assert tls_findings(connection(True), {'hostname': 'vc', 'validate_certs': True}) == []
    assert tls_findings(None, None) == []
    assert tls_findings(connection(True), {'hostname': None, 'validate_certs': False}) == []
