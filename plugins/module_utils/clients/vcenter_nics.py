# -*- coding: utf-8 -*-
# Copyright: contributors to the ocp.egressip collection
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The VMs' NICs, host and power state in one read that parses only the NICs.

The read-only checks (preflight, verify, vsphere_network_info) need the virtual NICs of every node VM, which live in
``config.hardware.device`` beside a dozen other devices per VM (controllers, disk, video card, keyboard...). pyVmomi
builds a data object of every element of that answer with a Python callback per XML element: about 170 elements per
VM, 2 to 3 s of CPU for 500 VMs. Here the same RetrievePropertiesEx goes over pyVmomi's own connection and session
(its stub's pooled HTTPS connection, cookie and SOAP version) and the answer is parsed by ElementTree's C parser; only
the NIC elements become objects, which ``model.vsphere_facts.nic_facts`` reads as it reads pyVmomi's. The facts are the
same; the reconfigure paths (vsphere_vm_nic, machineset_network, the drill) keep pyVmomi's full data objects.

Anything other than a 200 answer (a fault, an expired session) is asked again through pyVmomi, so that failures read
exactly as the other calls' do; so is every read when the stub does not have the pooled connection this needs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from xml.etree import ElementTree  # nosec B405: the answer of the vCenter this run logged in to, not user input
from xml.sax.saxutils import escape

from ansible_collections.ocp.egressip.plugins.module_utils.clients.pyvmomi import vim  # pyVmomi on first use
from ansible_collections.ocp.egressip.plugins.module_utils.model.vsphere_facts import ADAPTER_TYPES, vm_nics

PATHS = ('config.hardware.device', 'runtime.host', 'runtime.powerState')
VIM = '{urn:vim25}'
XSI_TYPE = '{http://www.w3.org/2001/XMLSchema-instance}type'
SOAP = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"'
        ' xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        '<soapenv:Body>%s</soapenv:Body></soapenv:Envelope>')
# the NIC properties nic_facts reads that are not strings
CONVERT = {'key': int, 'connected': lambda text: text == 'true', 'startConnected': lambda text: text == 'true'}


class Ref(object):
    """A managed object reference of the answer (``runtime.host``, a backing's ``network``): its ``_moId``."""

    def __init__(self, moid):
        self._moId = moid  # pylint: disable=invalid-name


class Element(object):
    """An element of the answer read as pyVmomi's data object is: attributes are child elements, ``_wsdlName`` is the
    element's xsi:type. A NIC reads ``macAddress`` as None when vCenter sent none."""

    def __init__(self, element, nic=False):
        self._element = element
        self._wsdlName = element.get(XSI_TYPE)  # pylint: disable=invalid-name
        self._nic = nic

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        child = self._element.find(VIM + name)
        if child is None:
            if self._nic and name == 'macAddress':
                return None
            raise AttributeError(name)
        if len(child):
            return Element(child)
        if child.get('type') is not None:
            return Ref(child.text or '')
        text = child.text or ''
        return CONVERT[name](text) if name in CONVERT else text


def _ethernet_types():
    """The xsi:type names of every VirtualEthernetCard subclass pyVmomi knows (and the adapter types of the facts)."""
    card = vim.vm.device.VirtualEthernetCard
    names = set(ADAPTER_TYPES)
    for name in dir(vim.vm.device):
        kind = getattr(vim.vm.device, name, None)
        if isinstance(kind, type) and issubclass(kind, card):
            names.add(getattr(kind, '_wsdlName', name))
    return names


def request(collector, moids):
    """The RetrievePropertiesEx body: PATHS of the VMs ``moids``, objects gone since reported missing (and skipped)."""
    objects = ''.join('<objectSet><obj type="VirtualMachine">%s</obj><skip>false</skip></objectSet>' % escape(moid) for moid in moids)
    paths = ''.join('<pathSet>%s</pathSet>' % path for path in PATHS)
    return SOAP % ('<RetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">%s</_this><specSet><propSet>'
                   '<type>VirtualMachine</type><all>false</all>%s</propSet>%s<reportMissingObjectsInResults>true'
                   '</reportMissingObjectsInResults></specSet><options></options></RetrievePropertiesEx>'
                   % (escape(collector), paths, objects))


def continue_request(collector, token):
    return SOAP % ('<ContinueRetrievePropertiesEx xmlns="urn:vim25"><_this type="PropertyCollector">%s</_this><token>%s</token>'
                   '</ContinueRetrievePropertiesEx>' % (escape(collector), escape(token)))


def parse(answer, ethernet_types):
    """``({moid: {'host': moid, 'power_state': str, 'devices': [NIC Elements]}}, token or None)`` of one answer page."""
    root = ElementTree.fromstring(answer)  # nosec B314: see the import
    returnval = root.find('.//%sreturnval' % VIM)
    found = {}
    if returnval is None:
        return found, None
    for content in returnval.iterfind(VIM + 'objects'):
        props = content.findall(VIM + 'propSet')
        if not props:
            continue  # the VM was deleted since its reference was read
        facts = found.setdefault(content.findtext(VIM + 'obj'), {'host': None, 'power_state': None, 'devices': []})
        for prop in props:
            name, value = prop.findtext(VIM + 'name'), prop.find(VIM + 'val')
            if value is None:
                continue
            if name == 'runtime.host':
                facts['host'] = value.text
            elif name == 'runtime.powerState':
                facts['power_state'] = value.text
            elif name == 'config.hardware.device':
                facts['devices'] = [Element(device, nic=True) for device in value if device.get(XSI_TYPE) in ethernet_types]
    return found, returnval.findtext(VIM + 'token') or None


def _post(stub, body):
    """(status, bytes) of one SOAP call over the stub's pooled connection, with its session cookie and SOAP version."""
    connection = stub.GetConnection()
    try:
        connection.request('POST', stub.path, body.encode('utf-8'),
                           {'Cookie': stub.cookie, 'SOAPAction': stub.versionId, 'Content-Type': 'text/xml; charset=utf-8'})
        response = connection.getresponse()
        answer = response.read()
    except Exception:
        connection.close()
        raise
    stub.ReturnConnection(connection)
    return response.status, answer


def _pyvmomi_read(client, vms, purpose, portgroups_by_key):
    """The same facts through pyVmomi's data objects (the fallback, and the way a fault is reported)."""
    records = client.retrieve_objects([vm['ref'] for vm in vms], vim.VirtualMachine, list(PATHS), purpose)
    return dict((record.moid, {'host': getattr(record.props.get('runtime.host'), '_moId', None),
                               'power_state': record.props.get('runtime.powerState'),
                               'nics': vm_nics(record.props.get('config.hardware.device'), portgroups_by_key)}) for record in records)


def read_nics(client, vms, purpose, portgroups_by_key=None):
    """``{moid: {'host': host moid, 'power_state', 'nics': [nic_facts]}}`` of the VMs ``vms`` (``ref``/``moid``), in one
    read (plus the pages vCenter splits it into)."""
    if not vms:
        return {}
    stub = getattr(getattr(client, 'service_instance', None), '_stub', None)
    if not all(hasattr(stub, name) for name in ('GetConnection', 'ReturnConnection', 'cookie', 'path', 'versionId')):
        return _pyvmomi_read(client, vms, purpose, portgroups_by_key)
    collector = client.content.propertyCollector._moId  # pylint: disable=protected-access
    ethernet = _ethernet_types()
    found, body = {}, request(collector, [vm['moid'] for vm in vms])
    while body:
        status, answer = client.call('RetrievePropertiesEx', purpose, _post, stub, body)
        if status != 200:
            return _pyvmomi_read(client, vms, purpose, portgroups_by_key)
        page, token = parse(answer, ethernet)
        found.update(page)
        body = continue_request(collector, token) if token else None
    return dict((moid, {'host': facts['host'], 'power_state': facts['power_state'],
                        'nics': vm_nics(facts['devices'], portgroups_by_key)}) for moid, facts in found.items())
