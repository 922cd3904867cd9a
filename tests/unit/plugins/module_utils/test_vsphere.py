"""vSphere connection errors (never the password), fault formatting and batched, paged reads (no server)."""

import ssl

import pytest
from pyVmomi import vim, vmodl

from ansible_collections.ocp.egressip.plugins.module_utils.clients import vsphere as _vsphere
from ansible_collections.ocp.egressip.plugins.module_utils.core.errors import ModuleFailure, library_versions
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import (
    ObjectRecord,
    VsphereClient,
    connect_vsphere,
    fault_name,
    fault_text,
)

PASSWORD = 'Pa55-w0rd!secret'


def params(**kwargs):
    base = dict(hostname='vc.example.com', username='administrator@vsphere.local', password=PASSWORD, port=443, validate_certs=True,
                proxy_host=None, proxy_port=None)
    base.update(kwargs)
    return base


def failure_of(monkeypatch, exc, **kwargs):
    """connect_vsphere's failure when SmartConnect raises exc (the TCP probe passes)."""
    monkeypatch.setattr(_vsphere, '_probe_tcp', lambda *args: None)

    def smart_connect(**connect_args):
        assert isinstance(connect_args['sslContext'], ssl.SSLContext)
        raise exc
    monkeypatch.setattr(_vsphere, 'SmartConnect', smart_connect)
    with pytest.raises(ModuleFailure) as failure:
        connect_vsphere(params(**kwargs))
    assert PASSWORD not in failure.value.msg and PASSWORD not in repr(failure.value.details)
    assert failure.value.details['pyvmomi_version'] == library_versions('pyvmomi')['pyvmomi_version']
    return failure.value


def test_wrong_password(monkeypatch):
    failure = failure_of(monkeypatch, vim.fault.InvalidLogin(msg='Cannot complete login due to an incorrect user name or password.'))
    assert failure.msg == ('vCenter vc.example.com:443 refused the login of user administrator@vsphere.local: Cannot complete login due to an '
                           'incorrect user name or password. Check the username and password (VMWARE_USER, VMWARE_PASSWORD).')
    assert failure.details['reason'] == 'login_refused' and failure.details['fault'] == 'InvalidLogin'


def test_untrusted_certificate(monkeypatch):
    exc = ssl.SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate (_ssl.c:1006)')
    exc.verify_message = 'self-signed certificate'
    failure = failure_of(monkeypatch, exc, port=8989)
    assert failure.msg.startswith('The TLS certificate of vCenter vc.example.com:8989 is not trusted: self-signed certificate.')
    assert 'validate_certs: false (VMWARE_VALIDATE_CERTS=false)' in failure.msg
    assert failure.details['reason'] == 'certificate_untrusted'


def _record_contexts(monkeypatch):
    """The SSL contexts connect_vsphere hands to SmartConnect (which then refuses the login)."""
    contexts = []
    monkeypatch.setattr(_vsphere, '_probe_tcp', lambda *args: None)

    def smart_connect(**connect_args):
        contexts.append(connect_args['sslContext'])
        raise vim.fault.InvalidLogin(msg='no')
    monkeypatch.setattr(_vsphere, 'SmartConnect', smart_connect)
    return contexts


def test_verification_context_follows_validate_certs(monkeypatch):
    contexts = _record_contexts(monkeypatch)
    for validate in (True, False):
        with pytest.raises(ModuleFailure):
            connect_vsphere(params(hostname='127.0.0.1', validate_certs=validate))
    # an explicit context: pyVmomi would otherwise skip verification for 127.0.0.1
    assert contexts[0].verify_mode == ssl.CERT_REQUIRED and contexts[0].check_hostname
    assert contexts[1].verify_mode == ssl.CERT_NONE


def test_other_login_fault_keeps_type_and_message(monkeypatch):
    failure = failure_of(monkeypatch, vmodl.fault.InvalidRequest(msg='malformed request'))
    assert failure.msg == 'Login to vCenter vc.example.com:443 as administrator@vsphere.local failed: InvalidRequest: malformed request'
    assert failure.details['fault'] == 'InvalidRequest'


def test_no_permission_to_log_in(monkeypatch):
    failure = failure_of(monkeypatch, vim.fault.NoPermission(msg='Permission to perform this operation was denied.'))
    assert failure.msg == ('User administrator@vsphere.local may not log in to vCenter vc.example.com:443: '
                           'NoPermission: Permission to perform this operation was denied.')


def test_not_a_vsphere_endpoint(monkeypatch):
    failure = failure_of(monkeypatch, Exception('vc.example.com:443 is down or is not a VIM server'))
    assert failure.msg.startswith('vCenter vc.example.com:443 does not answer as a vSphere API endpoint')


def test_connection_reset_during_login(monkeypatch):
    failure = failure_of(monkeypatch, ConnectionResetError(104, 'Connection reset by peer'))
    assert failure.msg == 'Cannot talk to vCenter vc.example.com:443: Connection reset by peer'


def test_unreachable_port_names_host_and_port(closed_port):
    port = closed_port
    with pytest.raises(ModuleFailure) as failure:
        connect_vsphere(params(hostname='127.0.0.1', port=port))
    assert failure.value.msg == 'Cannot reach vCenter 127.0.0.1:%d: Connection refused (check hostname, port and firewall)' % port
    assert failure.value.details['reason'] == 'unreachable'
    assert PASSWORD not in failure.value.msg


def test_unreachable_proxy(closed_port):
    port = closed_port
    with pytest.raises(ModuleFailure) as failure:
        connect_vsphere(params(proxy_host='127.0.0.1', proxy_port=port))
    assert failure.value.msg.startswith('Cannot reach the proxy 127.0.0.1:%d for vCenter vc.example.com:443: Connection refused' % port)


def test_proxy_host_needs_a_port():
    with pytest.raises(ModuleFailure) as failure:
        connect_vsphere(params(proxy_host='proxy.example.com'))
    assert failure.value.msg == 'proxy_host proxy.example.com is set but proxy_port is not: set proxy_port or VMWARE_PROXY_PORT'


@pytest.mark.parametrize('missing, variable', [('hostname', 'VMWARE_HOST'), ('username', 'VMWARE_USER'), ('password', 'VMWARE_PASSWORD')])
def test_missing_connection_option(missing, variable):
    with pytest.raises(ModuleFailure) as failure:
        connect_vsphere(params(**{missing: None}))
    assert failure.value.msg == 'vCenter %s is not set: set the %s option or the %s environment variable' % (missing, missing, variable)


def test_fault_text_keeps_type_and_message():
    assert fault_text(vim.fault.InvalidLogin(msg='Login failure.')) == 'InvalidLogin: Login failure.'
    assert fault_name(vmodl.fault.ManagedObjectNotFound()) == 'ManagedObjectNotFound'
    localized = vim.fault.NoPermission(faultMessage=[vmodl.LocalizableMessage(key='k', message='Permission to perform this operation was denied.')])
    assert fault_text(localized) == 'NoPermission: Permission to perform this operation was denied.'
    assert fault_text(vmodl.fault.SystemError(msg='', reason='x')) == 'SystemError: reason=x'


def test_fault_text_without_message_names_the_fault_properties_not_a_repr_dump():
    fault = vim.fault.NoPermission(privilegeId='Network.Assign', object=vim.Network('network-7'))
    assert fault_text(fault) == 'NoPermission: object=Network:network-7, privilegeId=Network.Assign'
    assert fault_text(vim.fault.InvalidDeviceSpec(deviceIndex=2, property='backing')) == 'InvalidDeviceSpec: property=backing, deviceIndex=2'
    assert fault_text(vim.fault.NotFound()) == 'NotFound: no message from vCenter'


# --- batched reads with a fake vCenter --------------------------------------------------------------

def fake_view(log):
    """A ContainerView reference whose DestroyView only records the call."""
    class FakeView(vim.view.ContainerView):
        def DestroyView(self):  # pylint: disable=invalid-name
            log.append('DestroyView')
    return FakeView('session[1]view-1', None)


class FakeCollector:
    """Answers RetrievePropertiesEx in pages of two objects."""

    def __init__(self, log, objects, fault=None):
        self.log = log
        self.objects = objects
        self.fault = fault
        self.specs = None

    def _page(self, start):
        objects = self.objects[start:start + 2]
        token = str(start + 2) if start + 2 < len(self.objects) else None
        return vmodl.query.PropertyCollector.RetrieveResult(objects=objects, token=token)

    def RetrievePropertiesEx(self, specSet, options):  # pylint: disable=invalid-name
        self.log.append('RetrievePropertiesEx')
        self.specs = specSet
        if self.fault:
            raise self.fault
        return self._page(0)

    def ContinueRetrievePropertiesEx(self, token):  # pylint: disable=invalid-name
        self.log.append('ContinueRetrievePropertiesEx')
        return self._page(int(token))


class FakeContent:
    def __init__(self, log, objects, fault=None):
        self.rootFolder = vim.Folder('group-d1')  # pylint: disable=invalid-name
        self.propertyCollector = FakeCollector(log, objects, fault)  # pylint: disable=invalid-name
        self.viewManager = self  # pylint: disable=invalid-name
        self.log = log

    def CreateContainerView(self, container, types, recursive):  # pylint: disable=invalid-name
        self.log.append('CreateContainerView')
        return fake_view(self.log)


class FakeServiceInstance:
    def __init__(self, content):
        self.content = content

    def RetrieveContent(self):  # pylint: disable=invalid-name
        return self.content


def vm_content(index, with_props=True):
    props = [vmodl.DynamicProperty(name='name', val='vm%d' % index), vmodl.DynamicProperty(name='config.uuid', val='uuid-%d' % index)]
    missing = [] if with_props else [vmodl.query.PropertyCollector.MissingProperty(path='name', fault=vmodl.fault.ManagedObjectNotFound())]
    content = vmodl.query.PropertyCollector.ObjectContent
    return content(obj=vim.VirtualMachine('vm-%d' % index), propSet=props if with_props else [], missingSet=missing)


def make_client(objects, fault=None):
    log = []
    client = VsphereClient(FakeServiceInstance(FakeContent(log, objects, fault)), 'vc.example.com:443')
    return client, log


def test_retrieve_view_pages_through_results_and_destroys_the_view():
    client, log = make_client([vm_content(index) for index in range(5)])
    records = client.retrieve_view(client.content.rootFolder, [(vim.VirtualMachine, ['name', 'config.uuid'])], 'reading VMs')
    assert [record.moid for record in records] == ['vm-0', 'vm-1', 'vm-2', 'vm-3', 'vm-4']
    assert records[0] == ObjectRecord(ref=records[0].ref, moid='vm-0', props={'name': 'vm0', 'config.uuid': 'uuid-0'})
    assert log == ['CreateContainerView', 'RetrievePropertiesEx', 'ContinueRetrievePropertiesEx', 'ContinueRetrievePropertiesEx', 'DestroyView']
    spec = client.content.propertyCollector.specs[0]
    assert spec.propSet[0].type == vim.VirtualMachine and list(spec.propSet[0].pathSet) == ['name', 'config.uuid'] and not spec.propSet[0].all
    assert spec.objectSet[0].skip is True and spec.objectSet[0].selectSet[0].path == 'view'


def test_view_is_destroyed_when_the_read_fails():
    client, log = make_client([], fault=vmodl.fault.SystemError(msg='injected', reason='test'))
    with pytest.raises(ModuleFailure) as failure:
        client.retrieve_view(client.content.rootFolder, [(vim.VirtualMachine, ['name'])], 'reading the VM index of datacenter DC0')
    assert failure.value.msg == ('vCenter vc.example.com:443: reading the VM index of datacenter DC0 (RetrievePropertiesEx) failed: '
                                 'SystemError: injected')
    assert failure.value.details['fault'] == 'SystemError'
    assert log[-1] == 'DestroyView'


def test_retrieve_objects_reads_refs_in_one_call_and_skips_vanished_objects():
    client, log = make_client([vm_content(1), vm_content(2, with_props=False)])
    records = client.retrieve_objects([vim.VirtualMachine('vm-1'), vim.VirtualMachine('vm-2')], vim.VirtualMachine, ['name'], 'reading devices')
    assert [record.moid for record in records] == ['vm-1']
    assert log == ['RetrievePropertiesEx']
    spec = client.content.propertyCollector.specs[0]
    assert [object_spec.obj._moId for object_spec in spec.objectSet] == ['vm-1', 'vm-2']  # pylint: disable=protected-access
    assert spec.reportMissingObjectsInResults is True


def test_retrieve_objects_without_refs_costs_nothing():
    client, log = make_client([])
    assert client.retrieve_objects([], vim.VirtualMachine, ['name'], 'x') == []
    assert log == []


def test_connection_error_during_a_read():
    client, log = make_client([], fault=ConnectionResetError(104, 'Connection reset by peer'))
    with pytest.raises(ModuleFailure) as failure:
        client.retrieve_view(client.content.rootFolder, [(vim.VirtualMachine, ['name'])], 'reading VMs')
    assert failure.value.msg == 'vCenter vc.example.com:443: reading VMs (RetrievePropertiesEx) failed: connection error: Connection reset by peer'
    assert log[-1] == 'DestroyView'


def test_unexpected_error_during_a_read_still_names_endpoint_and_call():
    client, log = make_client([], fault=KeyError(''))
    with pytest.raises(ModuleFailure) as failure:
        client.retrieve_view(client.content.rootFolder, [(vim.VirtualMachine, ['name'])], 'reading VMs')
    assert failure.value.msg == "vCenter vc.example.com:443: reading VMs (RetrievePropertiesEx) failed: unexpected KeyError: ''"
    assert 'Traceback' in failure.value.details['exception']
    assert log[-1] == 'DestroyView'


def test_a_ca_bundle_from_the_environment_is_trusted_for_vcenter(monkeypatch, tmp_path):
    """The collection's AAP credential type (extensions/aap/credential_types/vcenter.yml) injects the CA bundle's file."""
    certifi = pytest.importorskip('certifi')
    contexts = _record_contexts(monkeypatch)
    monkeypatch.setattr(_vsphere.ssl, 'create_default_context', lambda: ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    monkeypatch.setenv(_vsphere.VCENTER_CA_BUNDLE_ENV, certifi.where())
    with pytest.raises(ModuleFailure):
        connect_vsphere(params())
    assert len(contexts[0].get_ca_certs()) > 10
    monkeypatch.setenv(_vsphere.VCENTER_CA_BUNDLE_ENV, str(tmp_path / 'missing.pem'))
    with pytest.raises(ModuleFailure) as failure:
        connect_vsphere(params())
    assert failure.value.details['reason'] == 'ca_bundle_invalid'
    assert failure.value.msg.startswith('OCP_EGRESSIP_VCENTER_CA_BUNDLE %s cannot be used as the vCenter CA bundle' % (tmp_path / 'missing.pem'))
    monkeypatch.setenv(_vsphere.VCENTER_CA_BUNDLE_ENV, '')  # the credential type leaves it empty without a bundle
    contexts[:] = []
    with pytest.raises(ModuleFailure):
        connect_vsphere(params())
    assert contexts[0].get_ca_certs() == []
