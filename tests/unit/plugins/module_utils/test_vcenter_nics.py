"""The NIC read that parses only the NICs (clients/vcenter_nics.py): from answers shaped as vCenter (and vcsim) sends
them, the same NIC facts as pyVmomi's data objects give (model.vsphere_facts.nic_facts), over pages, for standard,
distributed and opaque backings; a VM gone since the index and every non-NIC device left out; a fault asked again
through pyVmomi so that it reads as every other call's."""

from pyVmomi import vim

from ansible_collections.ocp.egressip.plugins.module_utils.clients import vcenter_nics
from ansible_collections.ocp.egressip.plugins.module_utils.clients.vsphere import ObjectRecord
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import vm_nics

XSI = 'xmlns:XMLSchema-instance="http://www.w3.org/2001/XMLSchema-instance"'
DISK = ('<VirtualDevice XMLSchema-instance:type="VirtualDisk"><key>2000</key><deviceInfo XMLSchema-instance:type="Description">'
        '<label>Hard disk 1</label><summary>16 GB</summary></deviceInfo><backing XMLSchema-instance:type="VirtualDiskFlatVer2BackingInfo">'
        '<fileName>[ds] w0/w0.vmdk</fileName><datastore type="Datastore">datastore-1</datastore></backing><controllerKey>1000'
        '</controllerKey><unitNumber>0</unitNumber></VirtualDevice>')
STANDARD = ('<VirtualDevice XMLSchema-instance:type="VirtualVmxnet3"><key>4000</key><deviceInfo XMLSchema-instance:type="Description">'
            '<label>Network adapter 1</label><summary>VM Network</summary></deviceInfo><backing XMLSchema-instance:type='
            '"VirtualEthernetCardNetworkBackingInfo"><deviceName>VM Network</deviceName><network type="Network">network-7</network>'
            '</backing><connectable><startConnected>true</startConnected><allowGuestControl>true</allowGuestControl><connected>true'
            '</connected></connectable><controllerKey>100</controllerKey><unitNumber>7</unitNumber><addressType>assigned</addressType>'
            '<macAddress>00:50:56:AA:00:01</macAddress></VirtualDevice>')
DISTRIBUTED = ('<VirtualDevice XMLSchema-instance:type="VirtualE1000e"><key>4001</key><deviceInfo XMLSchema-instance:type="Description">'
               '<label>Network adapter 2</label><summary>DVSwitch: 6c b6</summary></deviceInfo><backing XMLSchema-instance:type='
               '"VirtualEthernetCardDistributedVirtualPortBackingInfo"><port><switchUuid>6c b6 86 23</switchUuid><portgroupKey>'
               'dvportgroup-41</portgroupKey><portKey>12</portKey><connectionCookie>99</connectionCookie></port></backing><connectable>'
               '<startConnected>false</startConnected><allowGuestControl>true</allowGuestControl><connected>false</connected>'
               '</connectable><addressType>generated</addressType></VirtualDevice>')
OPAQUE = ('<VirtualDevice XMLSchema-instance:type="VirtualVmxnet3"><key>4002</key><deviceInfo XMLSchema-instance:type="Description">'
          '<label>Network adapter 3</label><summary>nsx</summary></deviceInfo><backing XMLSchema-instance:type='
          '"VirtualEthernetCardOpaqueNetworkBackingInfo"><opaqueNetworkId>ls-1</opaqueNetworkId><opaqueNetworkType>nsx.LogicalSwitch'
          '</opaqueNetworkType></backing><connectable><startConnected>true</startConnected><connected>true</connected></connectable>'
          '<macAddress>00:50:56:aa:00:03</macAddress></VirtualDevice>')


def vm_object(moid, devices, host='host-17', state='poweredOn'):
    return ('<objects><obj type="VirtualMachine">%s</obj><propSet><name>config.hardware.device</name><val %s XMLSchema-instance:type='
            '"ArrayOfVirtualDevice">%s</val></propSet><propSet><name>runtime.host</name><val %s XMLSchema-instance:type='
            '"ManagedObjectReference" type="HostSystem">%s</val></propSet><propSet><name>runtime.powerState</name><val %s '
            'XMLSchema-instance:type="VirtualMachinePowerState">%s</val></propSet></objects>' % (moid, XSI, devices, XSI, host, XSI, state))


def answer(objects, token=None, method='RetrievePropertiesEx'):
    return ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body><%sResponse xmlns="urn:vim25"><returnval>%s%s'
            '</returnval></%sResponse></soapenv:Body></soapenv:Envelope>'
            % (method, '<token>%s</token>' % token if token else '', ''.join(objects), method)).encode()


class Stub(object):
    """pyVmomi's SoapStubAdapter as far as the read uses it: a pooled connection answering the queued bodies."""
    path, versionId, cookie = '/sdk', '"urn:vim25/8.0.1.0"', 'vmware_soap_session="s1"'

    def __init__(self, answers):
        self.answers, self.requests, self.returned = list(answers), [], 0

    def GetConnection(self):  # noqa: N802 (pyVmomi's name)  pylint: disable=invalid-name
        return Connection(self)

    def ReturnConnection(self, _connection):  # noqa: N802  pylint: disable=invalid-name
        self.returned += 1


class Connection(object):
    def __init__(self, stub):
        self.stub = stub

    def request(self, method, path, body, headers):
        self.stub.requests.append((method, path, body.decode(), headers))

    def getresponse(self):
        status, body = self.stub.answers.pop(0)
        return Response(status, body)

    def close(self):
        pass


class Response(object):
    def __init__(self, status, body):
        self.status, self.body = status, body

    def read(self):
        return self.body


class Client(object):
    """VsphereClient as the read uses it: call() runs the function; retrieve_objects() is pyVmomi's read."""

    def __init__(self, stub, records=()):
        self.service_instance = type('ServiceInstance', (), {'_stub': stub})()
        self.content = type('Content', (), {'propertyCollector': vim.PropertyCollector('propertyCollector')})()
        self.records, self.retrieved = list(records), []

    def call(self, _method, _purpose, func, *args):
        return func(*args)

    def retrieve_objects(self, refs, vim_type, paths, purpose):
        self.retrieved.append(([ref._moId for ref in refs], vim_type, paths, purpose))
        return self.records


VMS = [{'moid': 'vm-1', 'ref': vim.VirtualMachine('vm-1')}, {'moid': 'vm-2', 'ref': vim.VirtualMachine('vm-2')},
       {'moid': 'vm-3', 'ref': vim.VirtualMachine('vm-3')}]


def test_the_nics_of_every_backing_read_as_pyvmomi_s_data_objects_give_them():
    stub = Stub([(200, answer([vm_object('vm-1', DISK + STANDARD + DISTRIBUTED + OPAQUE)]))])
    facts = vcenter_nics.read_nics(Client(stub), VMS[:1], 'reading', {'dvportgroup-41': 'egress-dpg'})
    assert list(facts) == ['vm-1'] and facts['vm-1']['host'] == 'host-17' and facts['vm-1']['power_state'] == 'poweredOn'
    assert facts['vm-1']['nics'] == [
        {'key': 4000, 'label': 'Network adapter 1', 'mac': '00:50:56:aa:00:01', 'adapter': 'vmxnet3', 'network': 'VM Network',
         'network_moid': 'network-7', 'portgroup_key': None, 'switch_uuid': None, 'opaque_network_id': None, 'connected': True,
         'start_connected': True},
        {'key': 4001, 'label': 'Network adapter 2', 'mac': None, 'adapter': 'e1000e', 'network': 'egress-dpg',
         'network_moid': 'dvportgroup-41', 'portgroup_key': 'dvportgroup-41', 'switch_uuid': '6c b6 86 23', 'opaque_network_id': None,
         'connected': False, 'start_connected': False},
        {'key': 4002, 'label': 'Network adapter 3', 'mac': '00:50:56:aa:00:03', 'adapter': 'vmxnet3', 'network': None,
         'network_moid': None, 'portgroup_key': None, 'switch_uuid': None, 'opaque_network_id': 'ls-1', 'connected': True,
         'start_connected': True}]
    method, path, body, headers = stub.requests[0]
    assert (method, path, headers['Cookie'], headers['SOAPAction']) == ('POST', '/sdk', stub.cookie, stub.versionId)
    assert '<obj type="VirtualMachine">vm-1</obj>' in body and '<_this type="PropertyCollector">propertyCollector</_this>' in body
    assert [part.split('</pathSet>')[0] for part in body.split('<pathSet>')[1:]] == list(vcenter_nics.PATHS)
    assert stub.returned == 1   # the pooled connection goes back to pyVmomi's pool


def test_the_same_facts_as_through_pyvmomi():
    """The pyVmomi path (the fallback) on data objects and this read on the XML agree NIC for NIC."""
    nic = vim.vm.device.VirtualVmxnet3(key=4000, macAddress='00:50:56:AA:00:01', deviceInfo=vim.Description(label='Network adapter 1'),
                                       connectable=vim.vm.device.VirtualDevice.ConnectInfo(connected=True, startConnected=True))
    nic.backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network', network=vim.Network('network-7'))
    disk = vim.vm.device.VirtualDisk(key=2000)
    through_xml = vcenter_nics.read_nics(Client(Stub([(200, answer([vm_object('vm-1', DISK + STANDARD)]))])), VMS[:1], 'reading')
    assert through_xml['vm-1']['nics'] == vm_nics([disk, nic])


def test_pages_are_followed_and_a_vm_gone_since_the_index_is_left_out():
    gone = '<objects><obj type="VirtualMachine">vm-3</obj><missingSet><path>config.hardware.device</path></missingSet></objects>'
    stub = Stub([(200, answer([vm_object('vm-1', STANDARD)], token='page-2')),
                 (200, answer([vm_object('vm-2', DISK, host='host-18', state='poweredOff'), gone], method='ContinueRetrievePropertiesEx'))])
    facts = vcenter_nics.read_nics(Client(stub), VMS, 'reading')
    assert sorted(facts) == ['vm-1', 'vm-2']
    assert facts['vm-2'] == {'host': 'host-18', 'power_state': 'poweredOff', 'nics': []}
    assert '<token>page-2</token>' in stub.requests[1][2] and 'ContinueRetrievePropertiesEx' in stub.requests[1][2]


def test_a_fault_is_asked_again_through_pyvmomi_and_no_stub_means_pyvmomi_only():
    fault = b'<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body><soapenv:Fault>' \
            b'<faultcode>ServerFaultCode</faultcode><faultstring>The session is not authenticated.</faultstring></soapenv:Fault>' \
            b'</soapenv:Body></soapenv:Envelope>'
    record = ObjectRecord(ref=VMS[0]['ref'], moid='vm-1', props={'runtime.powerState': 'poweredOn', 'config.hardware.device': []})
    client = Client(Stub([(500, fault)]), records=[record])
    assert vcenter_nics.read_nics(client, VMS[:1], 'reading') == {'vm-1': {'host': None, 'power_state': 'poweredOn', 'nics': []}}
    assert client.retrieved == [(['vm-1'], vim.VirtualMachine, list(vcenter_nics.PATHS), 'reading')]
    bare = Client(object(), records=[record])
    assert vcenter_nics.read_nics(bare, VMS[:1], 'reading')['vm-1']['power_state'] == 'poweredOn' and len(bare.retrieved) == 1
    assert vcenter_nics.read_nics(bare, [], 'reading') == {}
