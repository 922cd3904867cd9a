"""Self-test of the vCenter twin (tests/twin/vcsim): the binary is built from Debian's govmomi,
started on a free port and driven with real pyVmomi, as the collection does.

Where vcsim 0.24 deviates from a real vCenter in a way the collection depends on, the twin corrects it
(README, "Deviations from vcsim 0.24 that the twin corrects"); the section "corrections of vcsim 0.24"
tests each correction against the documented vSphere API behaviour.
"""

import json
import os
import shutil
import signal
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
from pyVim.connect import Disconnect, SmartConnect
from pyVim.task import WaitForTask
from pyVmomi import vim, vmodl

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SOURCE_DIR = os.path.join(REPO_ROOT, 'tests', 'twin', 'vcsim')
GOPATH = '/usr/share/gocode'
USER = 'administrator@vsphere.local'
PASSWORD = 'selftest-Pa55word'
HOSTS = ['DC0_C0_H0', 'DC0_C0_H1', 'DC0_C0_H2']
VMS = ['ocp1-master-0', 'ocp1-master-1', 'ocp1-master-2', 'ocp1-worker-0', 'ocp1-worker-1', 'ocp1-worker-2']
START_TIMEOUT = 30


class Vcsim:
    """One running vcsim-twin process, its state file and a pyVmomi session."""

    def __init__(self, binary, workdir, *args):
        self.workdir = str(workdir)
        self.state_path = os.path.join(self.workdir, 'vcsim.json')
        self.log_path = os.path.join(self.workdir, 'vcsim.log')
        command = [binary, '-listen', '127.0.0.1:0', '-username', USER, '-password', PASSWORD,
                   '-state', self.state_path] + list(args)
        self.started = time.monotonic()
        with open(self.log_path, 'wb') as log:
            self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)  # pylint: disable=consider-using-with
        self.state = self._wait_for_state()
        self.startup_seconds = time.monotonic() - self.started
        self.base = self.state['url'].rsplit('/sdk', 1)[0]
        self._si = None

    def _wait_for_state(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if os.path.exists(self.state_path):
                with open(self.state_path, encoding='utf-8') as handle:
                    return json.load(handle)
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.proc.kill()
        self.proc.wait()
        raise AssertionError('vcsim-twin did not write %s:\n%s' % (self.state_path, self.log()))

    def log(self):
        """The process output so far."""
        with open(self.log_path, encoding='utf-8', errors='replace') as handle:
            return handle.read()

    @property
    def si(self):
        """A pyVmomi ServiceInstance, logged in once."""
        if self._si is None:
            self._si = connect(self.state)
        return self._si

    def http(self, method, path, body=None):
        """Call a /_twin/ endpoint; returns (status, decoded JSON)."""
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the twin's self-signed certificate, loopback only
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, method=method, data=data,
                                         headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def inventory(self):
        """GET /_twin/inventory."""
        status, payload = self.http('GET', '/_twin/inventory')
        assert status == 200
        return payload

    def requests(self):
        """GET /_twin/requests."""
        status, payload = self.http('GET', '/_twin/requests')
        assert status == 200
        return payload

    def stop(self):
        """SIGTERM; returns the exit code."""
        if self._si is not None:
            try:
                Disconnect(self._si)
            except Exception:  # pylint: disable=broad-except  # best effort on teardown
                pass
            self._si = None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def connect(state, password=None, user=None):
    """SmartConnect the way the collection does."""
    return SmartConnect(host=state['host'], port=state['port'], user=user or state['username'],
                        pwd=state['password'] if password is None else password, disableSslCertValidation=True)


def objects(si, kind):
    """All managed objects of a vim type."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [kind], True)
    try:
        return list(view.view)
    finally:
        view.Destroy()


def by_name(si, kind, name):
    """The managed object of that type and name."""
    found = [obj for obj in objects(si, kind) if obj.name == name]
    assert len(found) == 1, '%s %r: found %d' % (kind.__name__, name, len(found))
    return found[0]


def nics(vm):
    """The VM's virtual Ethernet cards."""
    return [dev for dev in vm.config.hardware.device if isinstance(dev, vim.vm.device.VirtualEthernetCard)]


def inv_vm(inventory, name):
    """One VM of /_twin/inventory."""
    return next(vm for vm in inventory['vms'] if vm['name'] == name)


def inv_host(inventory, name):
    """One host of /_twin/inventory."""
    return next(host for host in inventory['hosts'] if host['name'] == name)


def reconfigure(vm, spec):
    """ReconfigVM_Task and wait for it."""
    WaitForTask(vm.ReconfigVM_Task(spec=spec))


@pytest.fixture(name='binary', scope='module')
def fixture_binary(tmp_path_factory):
    """Build vcsim-twin the way the README says (offline, GOPATH mode).

    VCSIM_TWIN_BINARY names a prebuilt binary instead (e.g. one built with -race).
    """
    if os.environ.get('VCSIM_TWIN_BINARY'):
        return os.environ['VCSIM_TWIN_BINARY']
    if shutil.which('go') is None:
        pytest.skip('go is not installed (apt-get install golang-go golang-github-vmware-govmomi-dev)')
    if not os.path.isdir(os.path.join(GOPATH, 'src', 'github.com', 'vmware', 'govmomi', 'simulator')):
        pytest.skip('govmomi sources not found under %s (apt-get install golang-github-vmware-govmomi-dev)' % GOPATH)
    out = str(tmp_path_factory.mktemp('vcsim-bin') / 'vcsim-twin')
    cache = os.path.join(REPO_ROOT, '.cache', 'go-build')
    os.makedirs(cache, exist_ok=True)
    env = dict(os.environ, GOPATH=GOPATH, GO111MODULE='off', GOCACHE=cache, GOFLAGS='')
    proc = subprocess.run(['go', 'build', '-o', out, './tests/twin/vcsim'], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(name='twin', scope='module')
def fixture_twin(binary, tmp_path_factory):
    """A pristine twin with the default inventory, for read-only tests."""
    sim = Vcsim(binary, tmp_path_factory.mktemp('vcsim-ro'))
    yield sim
    assert sim.stop() == 0, sim.log()


@pytest.fixture(name='rw_twin', scope='module')
def fixture_rw_twin(binary, tmp_path_factory):
    """A second twin that the tests below change (NICs, port groups, placement, faults)."""
    sim = Vcsim(binary, tmp_path_factory.mktemp('vcsim-rw'))
    yield sim
    sim.http('DELETE', '/_twin/faults')
    assert sim.stop() == 0, sim.log()


# --- process and state file -----------------------------------------------------------------


def test_state_file(twin):
    """The state file carries what the README lists, in VM order (masters first)."""
    state = twin.state
    assert state['url'] == 'https://127.0.0.1:%d/sdk' % state['port']
    assert state['host'] == '127.0.0.1'
    assert isinstance(state['port'], int) and state['port'] > 0
    assert (state['username'], state['password']) == (USER, PASSWORD)
    assert (state['datacenter'], state['cluster']) == ('DC0', 'DC0_C0')
    assert [vm['name'] for vm in state['vms']] == VMS
    assert [vm['role'] for vm in state['vms']] == ['master'] * 3 + ['worker'] * 3
    assert [vm['host'] for vm in state['vms']] == HOSTS * 2
    for vm in state['vms']:
        assert set(vm) == {'name', 'moid', 'uuid', 'role', 'host', 'nics'}
        assert vm['moid'].startswith('vm-')
        assert len(vm['nics']) == 1
        assert vm['nics'][0]['network'] == 'VM Network'
        assert vm['nics'][0]['mac'] == vm['nics'][0]['mac'].lower()
    assert oct(os.stat(twin.state_path).st_mode & 0o777) == oct(0o600)


def test_flags_and_clean_exit_on_sigterm(binary, tmp_path):
    """-hosts/-masters/-workers/-cluster-name shape the inventory; SIGTERM exits 0 and removes the state file."""
    sim = Vcsim(binary, tmp_path, '-hosts', '2', '-masters', '1', '-workers', '2', '-cluster-name', 'abc')
    try:
        assert [(vm['name'], vm['role'], vm['host']) for vm in sim.state['vms']] == [
            ('abc-master-0', 'master', 'DC0_C0_H0'),
            ('abc-worker-0', 'worker', 'DC0_C0_H1'),
            ('abc-worker-1', 'worker', 'DC0_C0_H0'),
        ]
        assert [host['name'] for host in sim.inventory()['hosts']] == ['DC0_C0_H0', 'DC0_C0_H1']
    finally:
        code = sim.stop()
    assert code == 0, sim.log()
    assert not os.path.exists(sim.state_path)


def test_password_is_required(binary, tmp_path):
    """Credentials are always enforced: no password, no simulator."""
    proc = subprocess.run([binary, '-state', str(tmp_path / 'vcsim.json')], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode != 0
    assert 'password' in proc.stderr
    assert not (tmp_path / 'vcsim.json').exists()


# --- login ------------------------------------------------------------------------------------


def test_login(twin):
    """pyVmomi logs in with the state file's credentials over TLS."""
    about = twin.si.content.about
    assert about.apiType == 'VirtualCenter'
    session = twin.si.content.sessionManager.currentSession
    assert session.userName == USER


def test_wrong_password_is_refused(twin):
    """A wrong password or user name gets InvalidLogin."""
    with pytest.raises(vim.fault.InvalidLogin):
        connect(twin.state, password='not-the-password')
    with pytest.raises(vim.fault.InvalidLogin):
        connect(twin.state, user='root')


# --- inventory as pyVmomi sees it ---------------------------------------------------------------


def test_datacenter_cluster_and_hosts(twin):
    """DC0 with one cluster DC0_C0 of three hosts, and no standalone host."""
    content = twin.si.RetrieveContent()
    datacenters = [obj for obj in content.rootFolder.childEntity if isinstance(obj, vim.Datacenter)]
    assert [dc.name for dc in datacenters] == ['DC0']
    computes = datacenters[0].hostFolder.childEntity
    assert [(type(obj).__name__, obj.name) for obj in computes] == [('vim.ClusterComputeResource', 'DC0_C0')]
    assert sorted(host.name for host in computes[0].host) == HOSTS
    assert sorted(host.name for host in objects(twin.si, vim.HostSystem)) == HOSTS


def test_vms(twin):
    """Exactly the node VMs: powered on, round-robin, distinct BIOS UUIDs and MACs, one vmxnet3 NIC on VM Network."""
    vms = {vm.name: vm for vm in objects(twin.si, vim.VirtualMachine)}
    assert sorted(vms) == VMS
    uuids, macs = set(), set()
    for index, name in enumerate(VMS):
        vm = vms[name]
        assert vm.runtime.powerState == 'poweredOn'
        assert vm.runtime.host.name == HOSTS[index % 3]
        uuids.add(vm.config.uuid)
        cards = nics(vm)
        assert len(cards) == 1
        card = cards[0]
        assert isinstance(card, vim.vm.device.VirtualVmxnet3)
        assert isinstance(card.backing, vim.vm.device.VirtualEthernetCard.NetworkBackingInfo)
        assert card.backing.deviceName == 'VM Network'
        assert card.backing.network.name == 'VM Network'
        assert card.connectable.connected and card.connectable.startConnected
        macs.add(card.macAddress.lower())
        state_vm = twin.state['vms'][index]
        assert (state_vm['moid'], state_vm['uuid']) == (vm._moId, vm.config.uuid)  # pylint: disable=protected-access
        assert state_vm['nics'] == [{'mac': card.macAddress.lower(), 'network': 'VM Network'}]
    assert len(uuids) == len(VMS)
    assert len(macs) == len(VMS)


def test_vswitch1_on_every_host(twin):
    """Every host has vSwitch0 with VM Network and an empty vSwitch1."""
    for host in objects(twin.si, vim.HostSystem):
        info = host.configManager.networkSystem.networkInfo
        switches = {vswitch.name: vswitch for vswitch in info.vswitch}
        assert set(switches) == {'vSwitch0', 'vSwitch1'}, host.name
        assert not list(switches['vSwitch1'].portgroup or [])
        assert 'VM Network' in [pg.spec.name for pg in info.portgroup if pg.spec.vswitchName == 'vSwitch0']


def test_distributed_switch(twin):
    """DSwitch1 has every cluster host as member and the port group ocp-primary-dpg."""
    switches = objects(twin.si, vim.DistributedVirtualSwitch)
    assert [dvs.name for dvs in switches] == ['DSwitch1']
    dvs = switches[0]
    assert sorted(host.name for host in dvs.summary.hostMember) == HOSTS
    names = [pg.name for pg in dvs.portgroup]
    assert 'ocp-primary-dpg' in names
    pg = by_name(twin.si, vim.dvs.DistributedVirtualPortgroup, 'ocp-primary-dpg')
    assert pg.config.distributedVirtualSwitch == dvs
    assert sorted(host.name for host in pg.host) == HOSTS
    assert pg.config.configVersion == '0'


def test_twin_inventory_matches_pyvmomi(twin):
    """GET /_twin/inventory reports what the SOAP API reports."""
    inventory = twin.inventory()
    si = twin.si

    hosts = {host.name: host for host in objects(si, vim.HostSystem)}
    assert [host['name'] for host in inventory['hosts']] == sorted(hosts)
    for entry in inventory['hosts']:
        host = hosts[entry['name']]
        assert entry['moid'] == host._moId  # pylint: disable=protected-access
        info = host.configManager.networkSystem.networkInfo
        assert entry['vswitches'] == [vswitch.name for vswitch in info.vswitch]
        assert entry['portgroups'] == [{'name': pg.spec.name, 'vswitch': pg.spec.vswitchName, 'vlan': pg.spec.vlanId}
                                       for pg in info.portgroup]

    dvs = objects(si, vim.DistributedVirtualSwitch)[0]
    pg = by_name(si, vim.dvs.DistributedVirtualPortgroup, 'ocp-primary-dpg')
    assert len(inventory['dvs']) == 1
    entry = inventory['dvs'][0]
    assert (entry['name'], entry['uuid'], entry['moid']) == (dvs.name, dvs.uuid, dvs._moId)  # pylint: disable=protected-access
    assert entry['portgroups'] == [{'name': 'ocp-primary-dpg', 'key': pg.key, 'vlan': pg.config.defaultPortConfig.vlan.vlanId}]

    vms = {vm.name: vm for vm in objects(si, vim.VirtualMachine)}
    assert [vm['name'] for vm in inventory['vms']] == VMS
    for entry in inventory['vms']:
        vm = vms[entry['name']]
        assert entry['moid'] == vm._moId  # pylint: disable=protected-access
        assert entry['uuid'] == vm.config.uuid
        assert entry['host'] == vm.runtime.host.name
        assert entry['power_state'] == vm.runtime.powerState
        assert entry['nics'] == [{
            'key': card.key,
            'mac': card.macAddress.lower(),
            'adapter': 'vmxnet3',
            'connected': card.connectable.connected,
            'start_connected': card.connectable.startConnected,
            'network': card.backing.deviceName,
            'portgroup_key': None,
            'switch_uuid': None,
        } for card in nics(vm)]


def test_inventory_is_not_soap(twin):
    """Reading /_twin/inventory leaves no trace in the SOAP request log."""
    twin.http('DELETE', '/_twin/requests')
    twin.inventory()
    assert twin.requests() == {'requests': [], 'counts': {}}


# --- request log ------------------------------------------------------------------------------


def test_request_log_records_and_resets(twin):
    """Every SOAP call is one entry (method, _this, HTTP status); DELETE resets the log."""
    si = twin.si
    status, payload = twin.http('DELETE', '/_twin/requests')
    assert status == 200 and payload == {'requests': [], 'counts': {}}

    si.CurrentTime()
    si.CurrentTime()
    with pytest.raises(vim.fault.InvalidLogin):
        connect(twin.state, password='wrong')

    log = twin.requests()
    assert log['requests'][:2] == [{'method': 'CurrentTime', 'this': 'ServiceInstance', 'status': 200}] * 2
    assert log['counts']['CurrentTime'] == 2
    logins = [entry for entry in log['requests'] if entry['method'] == 'Login']
    assert logins == [{'method': 'Login', 'this': 'SessionManager', 'status': 500}]
    assert sum(log['counts'].values()) == len(log['requests'])

    twin.http('DELETE', '/_twin/requests')
    assert twin.requests() == {'requests': [], 'counts': {}}


def test_fault_api_validates_input(twin):
    """Bad fault rules are refused with 400 and never installed."""
    assert twin.http('POST', '/_twin/faults', {'count': 1})[0] == 400
    assert twin.http('POST', '/_twin/faults', {'method': 'ReconfigVM_Task', 'count': 0})[0] == 400
    assert twin.http('POST', '/_twin/faults', {'method': 'ReconfigVM_Task', 'type': 'NoSuchFault'})[0] == 400
    assert twin.http('POST', '/_twin/faults', {'method': 'ReconfigVM_Task', 'colour': 'red'})[0] == 400
    assert twin.http('GET', '/_twin/faults') == (200, {'faults': []})


# --- changes through the SOAP API -------------------------------------------------------------


def test_injected_fault_only_for_that_vm_and_count_times(rw_twin):
    """A fault on ReconfigVM_Task for one VM: pyVmomi raises with the message, twice, only for that VM."""
    si = rw_twin.si
    target = by_name(si, vim.VirtualMachine, 'ocp1-master-0')
    other = by_name(si, vim.VirtualMachine, 'ocp1-master-1')
    moid = target._moId  # pylint: disable=protected-access
    message = 'twin selftest: datastore LocalDS_0 is on fire'
    status, _payload = rw_twin.http('POST', '/_twin/faults',
                                    {'method': 'ReconfigVM_Task', 'this': moid, 'count': 2, 'fault': message})
    assert status == 201
    rw_twin.http('DELETE', '/_twin/requests')

    reconfigure(other, vim.vm.ConfigSpec(annotation='not affected'))
    for _attempt in range(2):
        with pytest.raises(vmodl.MethodFault) as excinfo:
            target.ReconfigVM_Task(spec=vim.vm.ConfigSpec(annotation='first try'))
        assert isinstance(excinfo.value, vmodl.fault.SystemError)
        assert excinfo.value.msg == message
        assert excinfo.value.reason == message
    reconfigure(target, vim.vm.ConfigSpec(annotation='third time lucky'))
    assert target.config.annotation == 'third time lucky'
    assert other.config.annotation == 'not affected'

    calls = [entry for entry in rw_twin.requests()['requests'] if entry['method'] == 'ReconfigVM_Task']
    assert [(entry['this'], entry['status']) for entry in calls] == [
        (other._moId, 200), (moid, 500), (moid, 500), (moid, 200)]  # pylint: disable=protected-access
    assert rw_twin.http('GET', '/_twin/faults') == (200, {'faults': []})


def test_injected_fault_type_and_clear(rw_twin):
    """A fault of another vim type can be injected; DELETE /_twin/faults clears pending ones."""
    si = rw_twin.si
    status, _payload = rw_twin.http('POST', '/_twin/faults',
                                    {'method': 'CurrentTime', 'count': 1, 'type': 'InvalidState', 'fault': 'not now'})
    assert status == 201
    with pytest.raises(vim.fault.InvalidState) as excinfo:
        si.CurrentTime()
    assert excinfo.value.msg == 'not now'
    si.CurrentTime()

    rw_twin.http('POST', '/_twin/faults', {'method': 'CurrentTime', 'count': 5})
    assert rw_twin.http('DELETE', '/_twin/faults') == (200, {'faults': []})
    si.CurrentTime()


def test_hot_add_vmxnet3_on_dvs_portgroup(rw_twin):
    """A vmxnet3 NIC backed by a distributed port group is hot-added to a powered-on VM."""
    si = rw_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-0')
    assert vm.runtime.powerState == 'poweredOn'
    dvs = objects(si, vim.DistributedVirtualSwitch)[0]
    pg = by_name(si, vim.dvs.DistributedVirtualPortgroup, 'ocp-primary-dpg')

    card = vim.vm.device.VirtualVmxnet3()
    card.key = -1
    card.backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(portgroupKey=pg.key, switchUuid=dvs.uuid))
    card.connectable = vim.vm.device.VirtualDevice.ConnectInfo(startConnected=True, connected=True, allowGuestControl=True)
    change = vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.add, device=card)
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[change]))

    cards = nics(vm)
    assert len(cards) == 2
    added = [c for c in cards if isinstance(c.backing, vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo)]
    assert len(added) == 1
    assert (added[0].backing.port.portgroupKey, added[0].backing.port.switchUuid) == (pg.key, dvs.uuid)
    assert added[0].macAddress

    entry = inv_vm(rw_twin.inventory(), 'ocp1-worker-0')
    assert len(entry['nics']) == 2
    dvs_nics = [nic for nic in entry['nics'] if nic['switch_uuid'] is not None]
    assert dvs_nics == [{
        'key': added[0].key,
        'mac': added[0].macAddress.lower(),
        'adapter': 'vmxnet3',
        'connected': True,
        'start_connected': True,
        'network': 'ocp-primary-dpg',
        'portgroup_key': pg.key,
        'switch_uuid': dvs.uuid,
    }]


def _add_portgroup(host, name, vlan, vswitch='vSwitch1'):
    spec = vim.host.PortGroup.Specification(name=name, vlanId=vlan, vswitchName=vswitch, policy=vim.host.NetworkPolicy())
    host.configManager.networkSystem.AddPortGroup(portgrp=spec)


def test_add_standard_portgroup_on_host(rw_twin):
    """HostNetworkSystem.AddPortGroup on one host shows for that host only (networkInfo, /_twin/inventory)."""
    si = rw_twin.si
    host = by_name(si, vim.HostSystem, 'DC0_C0_H0')
    _add_portgroup(host, 'egress-vlan20', 20)

    info = host.configManager.networkSystem.networkInfo
    assert 'egress-vlan20' in [pg.spec.name for pg in info.portgroup]
    assert 'egress-vlan20' in next(vswitch for vswitch in info.vswitch if vswitch.name == 'vSwitch1').portgroup

    inventory = rw_twin.inventory()
    assert {'name': 'egress-vlan20', 'vswitch': 'vSwitch1', 'vlan': 20} in inv_host(inventory, 'DC0_C0_H0')['portgroups']
    for other in ('DC0_C0_H1', 'DC0_C0_H2'):
        assert 'egress-vlan20' not in [pg['name'] for pg in inv_host(inventory, other)['portgroups']]


def test_same_portgroup_on_a_second_host(rw_twin):
    """A real vCenter accepts the same standard port group name on every host of a cluster."""
    si = rw_twin.si
    _add_portgroup(by_name(si, vim.HostSystem, 'DC0_C0_H1'), 'egress-shared', 30)
    _add_portgroup(by_name(si, vim.HostSystem, 'DC0_C0_H2'), 'egress-shared', 30)
    inventory = rw_twin.inventory()
    for name in ('DC0_C0_H1', 'DC0_C0_H2'):
        assert {'name': 'egress-shared', 'vswitch': 'vSwitch1', 'vlan': 30} in inv_host(inventory, name)['portgroups']
    assert 'egress-shared' not in [pg['name'] for pg in inv_host(inventory, 'DC0_C0_H0')['portgroups']]


def test_disconnect_nic(rw_twin):
    """Editing connectable.connected to False shows as connected false (start_connected unchanged)."""
    si = rw_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-1')
    card = nics(vm)[0]
    card.connectable.connected = False
    change = vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.edit, device=card)
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[change]))

    assert nics(vm)[0].connectable.connected is False
    entry = inv_vm(rw_twin.inventory(), 'ocp1-worker-1')
    assert len(entry['nics']) == 1
    assert entry['nics'][0]['connected'] is False
    assert entry['nics'][0]['start_connected'] is True
    assert entry['nics'][0]['mac'] == card.macAddress.lower()
    assert entry['nics'][0]['network'] == 'VM Network'


def test_relocate_to_another_host(rw_twin):
    """RelocateVM_Task to another host of the cluster changes the VM's host, and both hosts' vm lists."""
    si = rw_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-master-2')
    assert vm.runtime.host.name == 'DC0_C0_H2'
    source = by_name(si, vim.HostSystem, 'DC0_C0_H2')
    target = by_name(si, vim.HostSystem, 'DC0_C0_H0')
    WaitForTask(vm.RelocateVM_Task(spec=vim.vm.RelocateSpec(host=target, pool=target.parent.resourcePool)))
    assert vm.runtime.host.name == 'DC0_C0_H0'
    assert inv_vm(rw_twin.inventory(), 'ocp1-master-2')['host'] == 'DC0_C0_H0'
    assert vm in target.vm
    assert vm not in source.vm
    assert_host_vm_lists_follow_vms(si)


def test_migrate_to_another_host(rw_twin):
    """MigrateVM_Task to another host of the cluster changes the VM's host, and both hosts' vm lists."""
    si = rw_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-2')
    source = vm.runtime.host
    target = by_name(si, vim.HostSystem, 'DC0_C0_H1')
    assert source != target
    WaitForTask(vm.MigrateVM_Task(pool=target.parent.resourcePool, host=target, priority='defaultPriority'))
    assert vm.runtime.host == target
    assert vm.summary.runtime.host == target
    assert inv_vm(rw_twin.inventory(), 'ocp1-worker-2')['host'] == 'DC0_C0_H1'
    assert vm in target.vm
    assert vm not in source.vm
    assert_host_vm_lists_follow_vms(si)


def assert_host_vm_lists_follow_vms(si):
    """Every VM is in exactly the vm list of its runtime.host and of its resourcePool."""
    for host in objects(si, vim.HostSystem):
        assert sorted(vm.name for vm in host.vm) == sorted(
            vm.name for vm in objects(si, vim.VirtualMachine) if vm.runtime.host == host), host.name
    for pool in objects(si, vim.ResourcePool):
        assert sorted(vm.name for vm in pool.vm) == sorted(
            vm.name for vm in objects(si, vim.VirtualMachine) if vm.resourcePool == pool), pool.name


def test_inventory_is_consistent_during_changes(rw_twin):
    """Snapshots taken while NICs are added and removed see each change fully applied or not at all."""
    si = rw_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-master-1')
    primary = nics(vm)[0]
    seen, errors = [], []
    done = threading.Event()

    def poll():
        while not done.is_set():
            try:
                entry = inv_vm(rw_twin.inventory(), 'ocp1-master-1')
                seen.append(len(entry['nics']))
            except Exception as err:  # pylint: disable=broad-except  # reported below
                errors.append(err)
                return

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        for _round in range(10):
            card = vim.vm.device.VirtualVmxnet3(key=-1)
            card.backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName='VM Network')
            add = vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.add, device=card)
            reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[add]))
            extra = [c for c in nics(vm) if c.key != primary.key]
            remove = vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.remove, device=extra[0])
            reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[remove]))
    finally:
        done.set()
        poller.join(timeout=30)
    assert not errors
    assert seen and set(seen) <= {1, 2}
    assert len(nics(vm)) == 1


# --- corrections of vcsim 0.24 ----------------------------------------------------------------
#
# Each test starts its own twin (start-up is well under a second), so the scenarios do not
# depend on the order of the tests above.


@pytest.fixture(name='fresh_twin')
def fixture_fresh_twin(binary, tmp_path):
    """A pristine twin for one test."""
    sim = Vcsim(binary, tmp_path)
    yield sim
    assert sim.stop() == 0, sim.log()


def _pg_spec(name, vlan, vswitch='vSwitch1', **security):
    policy = vim.host.NetworkPolicy()
    if security:
        policy.security = vim.host.NetworkPolicy.SecurityPolicy(**security)
    return vim.host.PortGroup.Specification(name=name, vlanId=vlan, vswitchName=vswitch, policy=policy)


def _host_pg(host, name):
    """The port group of that name in the host's networkInfo, or None."""
    return next((pg for pg in host.configManager.networkSystem.networkInfo.portgroup if pg.spec.name == name), None)


def _standard_networks(si, name):
    """The datacenter's standard (non-distributed) Network objects of that name."""
    return [net for net in objects(si, vim.Network)
            if net.name == name and not isinstance(net, vim.dvs.DistributedVirtualPortgroup)]


def _nic_on(vm, network_name):
    """Hot-add a vmxnet3 NIC backed by a standard network (deviceName), as the collection does."""
    card = vim.vm.device.VirtualVmxnet3(key=-1)
    card.backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network_name)
    card.connectable = vim.vm.device.VirtualDevice.ConnectInfo(startConnected=True, connected=True, allowGuestControl=True)
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[
        vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.add, device=card)]))
    return next(c for c in nics(vm) if getattr(c.backing, 'deviceName', None) == network_name)


def test_add_portgroup_on_every_host(fresh_twin):
    """The same port group on every host: one datacenter Network listing the hosts; host and cluster networks."""
    si = fresh_twin.si
    hosts = {host.name: host for host in objects(si, vim.HostSystem)}
    for name in HOSTS[:2]:
        hosts[name].configManager.networkSystem.AddPortGroup(
            portgrp=_pg_spec('egress', 20, allowPromiscuous=False, macChanges=True, forgedTransmits=False))

    networks = _standard_networks(si, 'egress')
    assert len(networks) == 1
    network = networks[0]
    assert sorted(host.name for host in network.host) == HOSTS[:2]
    for name in HOSTS[:2]:
        host = hosts[name]
        assert network in host.network
        info_pg = _host_pg(host, 'egress')
        assert (info_pg.spec.name, info_pg.spec.vswitchName, info_pg.spec.vlanId) == ('egress', 'vSwitch1', 20)
        assert info_pg.key == 'key-vim.host.PortGroup-egress'
        assert info_pg.vswitch == 'key-vim.host.VirtualSwitch-vSwitch1'
        security = info_pg.spec.policy.security
        assert (security.allowPromiscuous, security.macChanges, security.forgedTransmits) == (False, True, False)
        computed = info_pg.computedPolicy.security
        assert (computed.allowPromiscuous, computed.macChanges, computed.forgedTransmits) == (False, True, False)
        # host.config.network.portgroup reports the same port groups as networkInfo.portgroup.
        config_pgs = host.config.network.portgroup
        assert [pg.spec.name for pg in config_pgs] == [pg.spec.name for pg in host.configManager.networkSystem.networkInfo.portgroup]
        assert next(pg for pg in config_pgs if pg.spec.name == 'egress').spec.vlanId == 20
    assert network not in hosts['DC0_C0_H2'].network
    assert _host_pg(hosts['DC0_C0_H2'], 'egress') is None
    cluster = objects(si, vim.ClusterComputeResource)[0]
    assert [net for net in cluster.network if net == network] == [network]
    datacenter = objects(si, vim.Datacenter)[0]
    assert network in datacenter.network

    # The third host joins the same Network; /_twin/inventory shows the same name on every host.
    hosts['DC0_C0_H2'].configManager.networkSystem.AddPortGroup(portgrp=_pg_spec('egress', 20))
    assert _standard_networks(si, 'egress') == [network]
    assert sorted(host.name for host in network.host) == HOSTS
    inventory = fresh_twin.inventory()
    for name in HOSTS:
        assert {'name': 'egress', 'vswitch': 'vSwitch1', 'vlan': 20} in inv_host(inventory, name)['portgroups']


def test_add_portgroup_faults(fresh_twin):
    """AlreadyExists on the same host, NotFound for an unknown vSwitch, InvalidArgument for a VLAN out of 0-4095."""
    si = fresh_twin.si
    ns = by_name(si, vim.HostSystem, 'DC0_C0_H0').configManager.networkSystem
    ns.AddPortGroup(portgrp=_pg_spec('egress', 20))
    with pytest.raises(vim.fault.AlreadyExists) as excinfo:
        ns.AddPortGroup(portgrp=_pg_spec('egress', 21))
    assert excinfo.value.name == 'egress'
    with pytest.raises(vim.fault.AlreadyExists):
        ns.AddPortGroup(portgrp=_pg_spec('VM Network', 0, vswitch='vSwitch0'))
    with pytest.raises(vim.fault.NotFound):
        ns.AddPortGroup(portgrp=_pg_spec('other', 20, vswitch='vSwitch9'))
    with pytest.raises(vmodl.fault.InvalidArgument):
        ns.AddPortGroup(portgrp=_pg_spec('other', 4096))
    assert _host_pg(by_name(si, vim.HostSystem, 'DC0_C0_H0'), 'egress').spec.vlanId == 20
    assert _host_pg(by_name(si, vim.HostSystem, 'DC0_C0_H0'), 'other') is None
    assert _standard_networks(si, 'other') == []


def test_computed_policy_inherits_from_vswitch0(fresh_twin):
    """computedPolicy = the port group's policy over its vSwitch's (vSwitch0's spec comes from vcsim's host template)."""
    si = fresh_twin.si
    host = by_name(si, vim.HostSystem, 'DC0_C0_H0')
    vswitch0 = next(vs for vs in host.config.network.vswitch if vs.name == 'vSwitch0')
    inherited = vswitch0.spec.policy.security
    host.configManager.networkSystem.AddPortGroup(portgrp=_pg_spec('on-vswitch0', 5, vswitch='vSwitch0', forgedTransmits=False))
    pg = _host_pg(host, 'on-vswitch0')
    assert pg.spec.policy.security.allowPromiscuous is None
    computed = pg.computedPolicy.security
    assert (computed.allowPromiscuous, computed.macChanges, computed.forgedTransmits) == (
        inherited.allowPromiscuous, inherited.macChanges, False)
    config_vswitch0 = next(vs for vs in host.config.network.vswitch if vs.name == 'vSwitch0')
    assert 'key-vim.host.PortGroup-on-vswitch0' in config_vswitch0.portgroup


def test_update_portgroup(fresh_twin):
    """UpdatePortGroup changes VLAN, policy and vSwitch of that host's port group only; NotFound, AlreadyExists."""
    si = fresh_twin.si
    hosts = {host.name: host for host in objects(si, vim.HostSystem)}
    for name in HOSTS:
        hosts[name].configManager.networkSystem.AddPortGroup(portgrp=_pg_spec('egress', 20, allowPromiscuous=False))
    ns = hosts['DC0_C0_H1'].configManager.networkSystem

    ns.UpdatePortGroup(pgName='egress', portgrp=_pg_spec('egress', 30, allowPromiscuous=True, macChanges=False))
    pg = _host_pg(hosts['DC0_C0_H1'], 'egress')
    assert (pg.spec.vlanId, pg.spec.vswitchName) == (30, 'vSwitch1')
    assert (pg.spec.policy.security.allowPromiscuous, pg.spec.policy.security.macChanges) == (True, False)
    assert (pg.computedPolicy.security.allowPromiscuous, pg.computedPolicy.security.macChanges) == (True, False)
    assert next(p for p in hosts['DC0_C0_H1'].config.network.portgroup if p.spec.name == 'egress').spec.vlanId == 30
    for other in ('DC0_C0_H0', 'DC0_C0_H2'):
        assert _host_pg(hosts[other], 'egress').spec.vlanId == 20
    inventory = fresh_twin.inventory()
    assert {'name': 'egress', 'vswitch': 'vSwitch1', 'vlan': 30} in inv_host(inventory, 'DC0_C0_H1')['portgroups']
    assert {'name': 'egress', 'vswitch': 'vSwitch1', 'vlan': 20} in inv_host(inventory, 'DC0_C0_H0')['portgroups']

    ns.UpdatePortGroup(pgName='egress', portgrp=_pg_spec('egress', 30, vswitch='vSwitch0'))
    info = ns.networkInfo
    switches = {vs.name: vs for vs in info.vswitch}
    assert 'egress' in switches['vSwitch0'].portgroup
    assert 'egress' not in (switches['vSwitch1'].portgroup or [])
    assert _host_pg(hosts['DC0_C0_H1'], 'egress').vswitch == 'key-vim.host.VirtualSwitch-vSwitch0'

    with pytest.raises(vim.fault.NotFound):
        ns.UpdatePortGroup(pgName='absent', portgrp=_pg_spec('absent', 1))
    with pytest.raises(vim.fault.NotFound):
        ns.UpdatePortGroup(pgName='egress', portgrp=_pg_spec('egress', 1, vswitch='vSwitch9'))
    with pytest.raises(vim.fault.AlreadyExists):
        ns.UpdatePortGroup(pgName='egress', portgrp=_pg_spec('VM Network', 1))
    with pytest.raises(vmodl.fault.InvalidArgument):
        ns.UpdatePortGroup(pgName='egress', portgrp=_pg_spec('egress', -1))
    assert _host_pg(hosts['DC0_C0_H1'], 'egress').spec.vlanId == 30

    # A rename moves this host from one datacenter Network to the other.
    ns.UpdatePortGroup(pgName='egress', portgrp=_pg_spec('egress-renamed', 30, vswitch='vSwitch0'))
    assert _host_pg(hosts['DC0_C0_H1'], 'egress') is None
    assert sorted(h.name for h in _standard_networks(si, 'egress')[0].host) == ['DC0_C0_H0', 'DC0_C0_H2']
    assert [h.name for h in _standard_networks(si, 'egress-renamed')[0].host] == ['DC0_C0_H1']


def test_vswitch_uplinks_and_physical_nic_link_state(fresh_twin):
    """networkInfo lists the physical NICs and each vSwitch's uplinks (spec.bridge.nicDevice, pnic keys);
    UpdateVirtualSwitch replaces the bridge (NotFound, ResourceInUse); /_twin/pnic pulls a cable (linkSpeed unset)."""
    si = fresh_twin.si
    host = by_name(si, vim.HostSystem, 'DC0_C0_H1')
    ns = host.configManager.networkSystem
    info = ns.networkInfo
    assert sorted(pnic.device for pnic in info.pnic) == ['vmnic0', 'vmnic1']
    assert all(pnic.linkSpeed.speedMb == 10000 for pnic in info.pnic)
    switches = {vs.name: vs for vs in info.vswitch}
    assert switches['vSwitch0'].spec.bridge.nicDevice == ['vmnic0'] and switches['vSwitch0'].pnic == ['key-vim.host.PhysicalNic-vmnic0']
    assert switches['vSwitch1'].spec.bridge.nicDevice == ['vmnic1'] and switches['vSwitch1'].pnic == ['key-vim.host.PhysicalNic-vmnic1']
    assert sorted(vs.name for vs in host.config.network.vswitch) == ['vSwitch0', 'vSwitch1']
    assert inv_host(fresh_twin.inventory(), 'DC0_C0_H1')['uplinks'] == {'vSwitch0': ['vmnic0'], 'vSwitch1': ['vmnic1']}

    ns.UpdateVirtualSwitch(vswitchName='vSwitch1', spec=vim.host.VirtualSwitch.Specification(numPorts=128, mtu=1500))
    vswitch1 = next(vs for vs in ns.networkInfo.vswitch if vs.name == 'vSwitch1')
    assert vswitch1.spec.bridge is None and not vswitch1.pnic
    assert not next(vs for vs in host.config.network.vswitch if vs.name == 'vSwitch1').pnic
    inventory = fresh_twin.inventory()
    assert inv_host(inventory, 'DC0_C0_H1')['uplinks']['vSwitch1'] == []
    assert inv_host(inventory, 'DC0_C0_H0')['uplinks']['vSwitch1'] == ['vmnic1']  # that host only
    bond = vim.host.VirtualSwitch.BondBridge
    with pytest.raises(vim.fault.NotFound):
        ns.UpdateVirtualSwitch(vswitchName='vSwitch9', spec=vim.host.VirtualSwitch.Specification(numPorts=128))
    with pytest.raises(vim.fault.NotFound):
        ns.UpdateVirtualSwitch(vswitchName='vSwitch1', spec=vim.host.VirtualSwitch.Specification(numPorts=128, bridge=bond(nicDevice=['vmnic7'])))
    with pytest.raises(vim.fault.ResourceInUse):
        ns.UpdateVirtualSwitch(vswitchName='vSwitch1', spec=vim.host.VirtualSwitch.Specification(numPorts=128, bridge=bond(nicDevice=['vmnic0'])))
    ns.UpdateVirtualSwitch(vswitchName='vSwitch1', spec=vim.host.VirtualSwitch.Specification(numPorts=128, bridge=bond(nicDevice=['vmnic1'])))
    assert next(vs for vs in ns.networkInfo.vswitch if vs.name == 'vSwitch1').pnic == ['key-vim.host.PhysicalNic-vmnic1']

    assert fresh_twin.http('POST', '/_twin/pnic', {'host': 'DC0_C0_H1', 'device': 'vmnic1', 'link_up': False})[0] == 200
    assert next(p for p in ns.networkInfo.pnic if p.device == 'vmnic1').linkSpeed is None
    assert next(p for p in host.config.network.pnic if p.device == 'vmnic1').linkSpeed is None
    assert {'device': 'vmnic1', 'link_up': False} in inv_host(fresh_twin.inventory(), 'DC0_C0_H1')['pnics']
    assert fresh_twin.http('POST', '/_twin/pnic', {'host': 'DC0_C0_H1', 'device': 'vmnic1', 'link_up': True})[0] == 200
    assert next(p for p in ns.networkInfo.pnic if p.device == 'vmnic1').linkSpeed.speedMb == 10000
    assert fresh_twin.http('POST', '/_twin/pnic', {'host': 'DC0_C0_H1', 'device': 'vmnic9', 'link_up': False})[0] == 404
    assert fresh_twin.http('POST', '/_twin/pnic', {'host': 'DC0_C0_H1'})[0] == 400


def test_nic_on_standard_portgroup_and_remove(fresh_twin):
    """A VM NIC on a standard port group of its host; RemovePortGroup: ResourceInUse there, NotFound when absent,
    the Network stays while a host has the port group and goes with the last one."""
    si = fresh_twin.si
    hosts = {host.name: host for host in objects(si, vim.HostSystem)}
    for name in HOSTS[1:]:
        hosts[name].configManager.networkSystem.AddPortGroup(portgrp=_pg_spec('egress', 20))
    network = _standard_networks(si, 'egress')[0]

    vm = by_name(si, vim.VirtualMachine, 'ocp1-master-1')
    assert vm.runtime.host.name == 'DC0_C0_H1'
    card = _nic_on(vm, 'egress')
    assert card.backing.network == network
    assert network in vm.network
    assert next(nic for nic in inv_vm(fresh_twin.inventory(), 'ocp1-master-1')['nics'] if nic['key'] == card.key)['network'] == 'egress'
    other = by_name(si, vim.VirtualMachine, 'ocp1-master-2')
    assert other.runtime.host.name == 'DC0_C0_H2'
    _nic_on(other, 'egress')

    with pytest.raises(vim.fault.ResourceInUse) as excinfo:
        hosts['DC0_C0_H1'].configManager.networkSystem.RemovePortGroup(pgName='egress')
    assert excinfo.value.name == 'egress'
    with pytest.raises(vim.fault.ResourceInUse):
        hosts['DC0_C0_H1'].configManager.networkSystem.RemovePortGroup(pgName='Management Network')  # vmk0
    with pytest.raises(vim.fault.NotFound):
        hosts['DC0_C0_H0'].configManager.networkSystem.RemovePortGroup(pgName='egress')
    assert _host_pg(hosts['DC0_C0_H1'], 'egress') is not None

    # Without the NIC, H1's port group goes; the Network stays for H2.
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[
        vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.remove, device=card)]))
    hosts['DC0_C0_H1'].configManager.networkSystem.RemovePortGroup(pgName='egress')
    assert _host_pg(hosts['DC0_C0_H1'], 'egress') is None
    assert 'egress' not in [pg.spec.name for pg in hosts['DC0_C0_H1'].config.network.portgroup]
    assert _standard_networks(si, 'egress') == [network]
    assert [host.name for host in network.host] == ['DC0_C0_H2']
    assert network not in hosts['DC0_C0_H1'].network
    cluster = objects(si, vim.ClusterComputeResource)[0]
    assert network in cluster.network

    # The last host: the Network is destroyed once no host has the port group and no VM uses it.
    other_card = next(c for c in nics(other) if getattr(c.backing, 'deviceName', None) == 'egress')
    reconfigure(other, vim.vm.ConfigSpec(deviceChange=[
        vim.vm.device.VirtualDeviceSpec(operation=vim.vm.device.VirtualDeviceSpec.Operation.remove, device=other_card)]))
    hosts['DC0_C0_H2'].configManager.networkSystem.RemovePortGroup(pgName='egress')
    assert _standard_networks(si, 'egress') == []
    assert 'egress' not in [net.name for net in cluster.network]
    assert 'egress' not in [net.name for net in objects(si, vim.Datacenter)[0].network]
    for name in HOSTS:
        assert 'egress' not in [pg['name'] for pg in inv_host(fresh_twin.inventory(), name)['portgroups']]


def _dvpg(si, name='ocp-primary-dpg'):
    return by_name(si, vim.dvs.DistributedVirtualPortgroup, name)


def _security(pg):
    sec = pg.config.defaultPortConfig.securityPolicy
    if sec is None:
        return (None, None, None)
    return tuple(None if p is None else p.value for p in (sec.allowPromiscuous, sec.macChanges, sec.forgedTransmits))


def _reconfigure_dvpg(pg, **fields):
    WaitForTask(pg.ReconfigureDVPortgroup_Task(spec=vim.dvs.DistributedVirtualPortgroup.ConfigSpec(**fields)))


def test_reconfigure_dvportgroup_applies_only_what_is_set(fresh_twin):
    """Unset fields stay unchanged (vcsim 0.24 erased them); configVersion goes up by one per change."""
    si = fresh_twin.si
    pg = _dvpg(si)
    before = pg.config
    assert before.configVersion == '0'
    assert (before.numPorts, before.type, before.defaultPortConfig.vlan.vlanId) == (8, 'earlyBinding', 0)

    setting = vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy(
        vlan=vim.dvs.VmwareDistributedVirtualSwitch.VlanIdSpec(inherited=False, vlanId=20))
    _reconfigure_dvpg(pg, configVersion='0', defaultPortConfig=setting)
    after = pg.config
    assert after.defaultPortConfig.vlan.vlanId == 20
    assert (after.name, after.numPorts, after.type, after.autoExpand) == ('ocp-primary-dpg', 8, 'earlyBinding', before.autoExpand)
    assert after.configVersion == '1'

    # Security policy: leaf by leaf.
    sec = vim.dvs.VmwareDistributedVirtualSwitch.SecurityPolicy
    _reconfigure_dvpg(pg, configVersion='1', defaultPortConfig=vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy(
        securityPolicy=sec(inherited=False, allowPromiscuous=vim.BoolPolicy(inherited=False, value=True))))
    _reconfigure_dvpg(pg, configVersion='2', defaultPortConfig=vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy(
        securityPolicy=sec(inherited=False, macChanges=vim.BoolPolicy(inherited=False, value=False),
                           forgedTransmits=vim.BoolPolicy(inherited=False, value=True))))
    assert _security(pg) == (True, False, True)
    assert pg.config.defaultPortConfig.vlan.vlanId == 20

    # name, numPorts, autoExpand, type (binding).
    _reconfigure_dvpg(pg, configVersion='3', name='egress-dpg', numPorts=16, autoExpand=True, type='ephemeral')
    cfg = pg.config
    assert (cfg.name, cfg.numPorts, cfg.autoExpand, cfg.type, cfg.configVersion) == ('egress-dpg', 16, True, 'ephemeral', '4')
    assert pg.name == 'egress-dpg'
    assert _security(pg) == (True, False, True)
    assert cfg.defaultPortConfig.vlan.vlanId == 20
    dvs = objects(si, vim.DistributedVirtualSwitch)[0]
    assert 'egress-dpg' in dvs.summary.portgroupName and 'ocp-primary-dpg' not in dvs.summary.portgroupName
    assert [entry['name'] for entry in fresh_twin.inventory()['dvs'][0]['portgroups']] == ['egress-dpg']
    assert fresh_twin.inventory()['dvs'][0]['portgroups'][0]['vlan'] == 20


def test_reconfigure_dvportgroup_checks_config_version(fresh_twin):
    """A stale or missing configVersion fails the task with ConcurrentAccess and changes nothing."""
    si = fresh_twin.si
    pg = _dvpg(si)
    _reconfigure_dvpg(pg, configVersion='0', numPorts=10)
    assert pg.config.configVersion == '1'
    for version in ('0', None, '7'):
        fields = {'numPorts': 12}
        if version is not None:
            fields['configVersion'] = version
        with pytest.raises(vim.fault.ConcurrentAccess):
            _reconfigure_dvpg(pg, **fields)
    assert (pg.config.numPorts, pg.config.configVersion) == (10, '1')
    _reconfigure_dvpg(pg, configVersion=pg.config.configVersion, numPorts=12)
    assert (pg.config.numPorts, pg.config.configVersion) == (12, '2')


def test_reconfigure_dvportgroup_duplicate_name(fresh_twin):
    """Renaming to the name of another network of the folder is DuplicateName."""
    si = fresh_twin.si
    pg = _dvpg(si)
    uplink = next(p for p in objects(si, vim.dvs.DistributedVirtualPortgroup) if p.name != 'ocp-primary-dpg')
    with pytest.raises(vim.fault.DuplicateName):
        _reconfigure_dvpg(pg, configVersion='0', name=uplink.name)
    assert (pg.name, pg.config.configVersion) == ('ocp-primary-dpg', '0')


def test_new_dvportgroup_starts_at_version_zero(fresh_twin):
    """A port group added later (AddDVPortgroup_Task) has configVersion "0", whatever the creation spec said."""
    si = fresh_twin.si
    dvs = objects(si, vim.DistributedVirtualSwitch)[0]
    WaitForTask(dvs.AddDVPortgroup_Task(spec=[vim.dvs.DistributedVirtualPortgroup.ConfigSpec(
        name='egress-dpg', type='earlyBinding', numPorts=8, configVersion='42')]))
    pg = _dvpg(si, 'egress-dpg')
    assert pg.config.configVersion == '0'
    _reconfigure_dvpg(pg, configVersion='0', numPorts=4)
    assert (pg.config.numPorts, pg.config.configVersion) == (4, '1')


def _soap_without_session(twin, call, namespaces=''):
    """POST a SOAP envelope with `call` in its body (and `namespaces` declared on the envelope) to the twin's /sdk without a
    session cookie, after clearing the request log: vcsim must answer NotAuthenticated (HTTP 500)."""
    envelope = ('<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"'
                '%s><soapenv:Body>%s</soapenv:Body></soapenv:Envelope>' % (namespaces, call))
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the twin's self-signed certificate, loopback only
    request = urllib.request.Request(twin.state['url'], data=envelope.encode(), method='POST',
                                     headers={'Content-Type': 'text/xml; charset=utf-8', 'SOAPAction': 'urn:vim25/8.0'})
    twin.http('DELETE', '/_twin/requests')
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(request, context=context, timeout=30)  # pylint: disable=consider-using-with
    assert excinfo.value.code == 500
    assert b'NotAuthenticated' in excinfo.value.read()


def test_overridden_methods_keep_session_log_and_faults(fresh_twin):
    """The methods the twin implements still need a session, are logged, and take injected faults."""
    pg = _dvpg(fresh_twin.si)
    moid = pg._moId  # pylint: disable=protected-access
    _soap_without_session(fresh_twin, '<ReconfigureDVPortgroup_Task xmlns="urn:vim25"><_this type="DistributedVirtualPortgroup">%s'
                          '</_this><spec><configVersion>0</configVersion><numPorts>99</numPorts></spec>'
                          '</ReconfigureDVPortgroup_Task>' % moid)
    assert pg.config.numPorts == 8

    status, _payload = fresh_twin.http('POST', '/_twin/faults', {'method': 'ReconfigureDVPortgroup_Task', 'this': moid,
                                                                 'type': 'ConcurrentAccess', 'fault': 'busy'})
    assert status == 201
    with pytest.raises(vim.fault.ConcurrentAccess):
        _reconfigure_dvpg(pg, configVersion='0', numPorts=9)
    _reconfigure_dvpg(pg, configVersion='0', numPorts=9)
    assert pg.config.numPorts == 9
    calls = [(e['this'], e['status']) for e in fresh_twin.requests()['requests'] if e['method'] == 'ReconfigureDVPortgroup_Task']
    assert calls == [(moid, 500), (moid, 500), (moid, 200)]


def test_migrate_faults_and_host_lists(fresh_twin):
    """MigrateVM_Task: InvalidPowerState for a state mismatch; host unset in the (DRS) cluster keeps the host."""
    si = fresh_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-0')
    source = vm.runtime.host
    target = by_name(si, vim.HostSystem, 'DC0_C0_H2')
    with pytest.raises(vim.fault.InvalidPowerState):
        WaitForTask(vm.MigrateVM_Task(host=target, priority='defaultPriority', state='poweredOff'))
    assert vm.runtime.host == source
    WaitForTask(vm.MigrateVM_Task(host=target, priority='defaultPriority', state='poweredOn'))
    assert vm.runtime.host == target
    WaitForTask(vm.MigrateVM_Task(pool=target.parent.resourcePool, priority='lowPriority'))
    assert vm.runtime.host == target
    assert vm in target.vm and vm not in source.vm
    assert_host_vm_lists_follow_vms(si)
    assert inv_vm(fresh_twin.inventory(), 'ocp1-worker-0')['host'] == 'DC0_C0_H2'


# --- correction 7: vCenter-generated MAC addresses ------------------------------------------------
#
# A real vCenter gives generated NIC MACs from one allocator per vCenter Server (VMware OUI
# 00:50:56, 00:50:56:80:YY:ZZ-00:50:56:BF:YY:ZZ), unique within the vCenter; vcsim 0.24 derives
# them from the VM's UUID, so they repeat across VMs (46 workers were enough for a collision).

BIG_WORKERS = 200
BIG_HOSTS = 8
NIC_ADD = vim.vm.device.VirtualDeviceSpec.Operation.add
NIC_EDIT = vim.vm.device.VirtualDeviceSpec.Operation.edit


def in_generated_range(mac):
    """00:50:56:80:00:00-00:50:56:BF:FF:FF, the addresses a vCenter Server generates."""
    octets = mac.lower().split(':')
    return len(octets) == 6 and octets[:3] == ['00', '50', '56'] and 0x80 <= int(octets[3], 16) <= 0xbf


def all_macs(inventory):
    """Every NIC MAC of every VM of /_twin/inventory."""
    return [nic['mac'] for vm in inventory['vms'] for nic in vm['nics']]


def _new_nic(address_type=None, mac=None, network='VM Network'):
    card = vim.vm.device.VirtualVmxnet3(key=-1)
    card.backing = vim.vm.device.VirtualEthernetCard.NetworkBackingInfo(deviceName=network)
    if address_type is not None:
        card.addressType = address_type
    if mac is not None:
        card.macAddress = mac
    return card


def _add_nics(vm, *cards):
    """Hot-adds the cards in one ReconfigVM_Task; returns the NICs that are new, in key order."""
    before = {card.key for card in nics(vm)}
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation=NIC_ADD, device=card)
                                                    for card in cards]))
    return sorted((card for card in nics(vm) if card.key not in before), key=lambda card: card.key)


@pytest.fixture(name='big_twin', scope='module')
def fixture_big_twin(binary, tmp_path_factory):
    """3 masters and 200 workers over 8 hosts."""
    sim = Vcsim(binary, tmp_path_factory.mktemp('vcsim-big'), '-hosts', str(BIG_HOSTS), '-workers', str(BIG_WORKERS))
    yield sim
    assert sim.stop() == 0, sim.log()


def test_startup_macs_are_vcenter_generated_and_unique(twin):
    """The start-up VMs' NICs: addressType assigned, MACs 00:50:56:80:00:00, :01... in state-file order."""
    assert [vm['nics'][0]['mac'] for vm in twin.state['vms']] == ['00:50:56:80:00:%02x' % i for i in range(len(VMS))]
    for vm in objects(twin.si, vim.VirtualMachine):
        card = nics(vm)[0]
        assert card.addressType == 'assigned'
        assert in_generated_range(card.macAddress)


def cpu_seconds(proc):
    """User + system CPU time a running process has used so far (Linux /proc)."""
    with open('/proc/%d/stat' % proc.pid, encoding='ascii') as handle:
        fields = handle.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def test_200_workers_start_fast_with_unique_macs(big_twin):
    """203 VMs over 8 hosts start, every MAC unique and vCenter-generated.

    Start-up time (about 0.6 s on an idle machine) is printed for the record, not asserted: timing belongs to the
    benchmarks, and a shared CI machine inflates it.
    """
    cpu = cpu_seconds(big_twin.proc)
    print('start-up with %d VMs: %.2fs wall, %.2fs CPU' % (len(big_twin.state['vms']), big_twin.startup_seconds, cpu))
    state_vms = big_twin.state['vms']
    assert len(state_vms) == 3 + BIG_WORKERS
    assert state_vms[-1]['name'] == 'ocp1-worker-%d' % (BIG_WORKERS - 1)
    assert {vm['host'] for vm in state_vms} == {'DC0_C0_H%d' % i for i in range(BIG_HOSTS)}
    macs = [vm['nics'][0]['mac'] for vm in state_vms]
    assert len(set(macs)) == len(macs)
    assert all(in_generated_range(mac) for mac in macs)
    assert sorted(all_macs(big_twin.inventory())) == sorted(macs)
    assert len({vm['uuid'] for vm in state_vms}) == len(state_vms)


def test_same_inventory_same_macs(big_twin, binary, tmp_path):
    """Start-up is repeatable: the same flags give the same VMs, moids, UUIDs and MACs."""
    again = Vcsim(binary, tmp_path, '-hosts', str(BIG_HOSTS), '-workers', str(BIG_WORKERS))
    try:
        assert again.state['vms'] == big_twin.state['vms']
    finally:
        assert again.stop() == 0, again.log()


def test_hot_add_on_every_vm_gives_unique_macs(big_twin):
    """A NIC hot-added to each of the 203 VMs (four sessions at once; addressType generated, assigned or unset)
    gets a MAC no other NIC of the vCenter has."""
    names = [vm['name'] for vm in big_twin.state['vms']]
    address_types = ['generated', 'assigned', None]
    errors = []

    def worker(part):
        si = connect(big_twin.state)
        try:
            for index in range(part, len(names), 4):
                vm = vim.VirtualMachine(big_twin.state['vms'][index]['moid'], si._stub)  # pylint: disable=protected-access
                reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[
                    vim.vm.device.VirtualDeviceSpec(operation=NIC_ADD, device=_new_nic(address_types[index % 3]))]))
        except Exception as err:  # pylint: disable=broad-except  # reported below
            errors.append(err)
        finally:
            Disconnect(si)

    threads = [threading.Thread(target=worker, args=(part,)) for part in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    inventory = big_twin.inventory()
    assert all(len(vm['nics']) == 2 for vm in inventory['vms'])
    macs = all_macs(inventory)
    assert len(macs) == 2 * len(names)
    assert len(set(macs)) == len(macs)
    assert all(in_generated_range(mac) for mac in macs)

    si = big_twin.si
    for name in names[:3]:
        added = nics(by_name(si, vim.VirtualMachine, name))[1]
        expected = address_types[names.index(name) % 3] or 'assigned'
        assert added.addressType == expected
        assert added.macAddress.lower() == inv_vm(inventory, name)['nics'][1]['mac']


def test_manual_mac_is_kept(fresh_twin):
    """addressType manual: the MAC is kept as given, in the static range or not, even if another NIC has it."""
    si = fresh_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-0')
    other_mac = nics(by_name(si, vim.VirtualMachine, 'ocp1-worker-1'))[0].macAddress
    added = _add_nics(vm, _new_nic('manual', '00:50:56:3f:00:01'), _new_nic('manual', '02:00:5e:10:00:01'),
                      _new_nic('manual', other_mac))
    assert [(card.addressType, card.macAddress) for card in added] == [
        ('manual', '00:50:56:3f:00:01'), ('manual', '02:00:5e:10:00:01'), ('manual', other_mac)]
    entry = inv_vm(fresh_twin.inventory(), 'ocp1-worker-0')
    assert [nic['mac'] for nic in entry['nics'][1:]] == ['00:50:56:3f:00:01', '02:00:5e:10:00:01', other_mac]


def test_given_mac_of_automatic_nic(fresh_twin):
    """addressType generated/assigned/unset: a given MAC is kept if in the vCenter range and unused, otherwise the
    server overrides it; an unset addressType becomes assigned; NICs added together get distinct MACs."""
    si = fresh_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-1')
    taken = nics(by_name(si, vim.VirtualMachine, 'ocp1-master-0'))[0].macAddress
    added = _add_nics(vm,
                      _new_nic('generated', '00:50:56:80:12:34'),  # in range, unused: kept
                      _new_nic('generated', taken),  # another VM's MAC: overridden
                      _new_nic(None, '00:0c:29:aa:bb:cc'),  # out of range: overridden
                      _new_nic('assigned', '00:50:56:80:12:34'),  # same as the first: overridden
                      _new_nic(None), _new_nic('generated'))
    assert [card.addressType for card in added] == ['generated', 'generated', 'assigned', 'assigned', 'assigned', 'generated']
    assert added[0].macAddress == '00:50:56:80:12:34'
    macs = all_macs(fresh_twin.inventory())
    assert len(set(macs)) == len(macs) == len(VMS) + 6
    assert all(in_generated_range(mac) for mac in macs)


def test_edit_without_mac_gets_a_new_mac(fresh_twin):
    """An edit that sends the NIC back keeps its MAC; one with a new device object without macAddress gets a new,
    unique MAC (as on a real vCenter, pyvmomi issue #260)."""
    si = fresh_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-worker-2')
    card = nics(vm)[0]
    original = card.macAddress
    card.connectable.connected = False
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation=NIC_EDIT, device=card)]))
    assert nics(vm)[0].macAddress == original

    # A new device object, as in the issue (vcsim 0.24 needs deviceInfo in an edit, or it panics).
    fresh = vim.vm.device.VirtualVmxnet3(key=card.key, backing=card.backing, connectable=card.connectable,
                                         deviceInfo=vim.Description(label=card.deviceInfo.label, summary='VM Network'))
    reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation=NIC_EDIT, device=fresh)]))
    edited = nics(vm)[0]
    assert edited.key == card.key
    assert edited.macAddress != original
    assert edited.addressType == 'assigned'
    macs = all_macs(fresh_twin.inventory())
    assert len(set(macs)) == len(macs) == len(VMS)
    assert all(in_generated_range(mac) for mac in macs)


def test_create_vm_nics_get_unique_macs(fresh_twin):
    """CreateVM_Task over SOAP: NICs without MAC get new unique ones, a manual MAC is kept."""
    si = fresh_twin.si
    datacenter = objects(si, vim.Datacenter)[0]
    cluster = objects(si, vim.ClusterComputeResource)[0]
    host = by_name(si, vim.HostSystem, 'DC0_C0_H1')
    spec = vim.vm.ConfigSpec(name='extra-vm', guestId='otherLinux64Guest', numCPUs=1, memoryMB=1024,
                             files=vim.vm.FileInfo(vmPathName='[LocalDS_0]'),
                             deviceChange=[vim.vm.device.VirtualDeviceSpec(operation=NIC_ADD, device=card) for card in (
                                 _new_nic('assigned'), _new_nic(None), _new_nic('manual', '00:50:56:00:00:42'))])
    task = datacenter.vmFolder.CreateVM_Task(config=spec, pool=cluster.resourcePool, host=host)
    WaitForTask(task)
    vm = task.info.result
    cards = nics(vm)
    assert [card.addressType for card in cards] == ['assigned', 'assigned', 'manual']
    assert cards[2].macAddress == '00:50:56:00:00:42'
    macs = all_macs(fresh_twin.inventory())
    assert len(set(macs)) == len(macs) == len(VMS) + 3
    assert all(in_generated_range(mac) for mac in macs if mac != '00:50:56:00:00:42')


def test_failed_reconfigure_gives_its_mac_back(fresh_twin):
    """A ReconfigVM_Task that fails leaves no trace in the allocator: the next NIC gets the MAC it would have had."""
    si = fresh_twin.si
    vm = by_name(si, vim.VirtualMachine, 'ocp1-master-1')
    card = vim.vm.device.VirtualVmxnet3(key=-1)
    card.backing = vim.vm.device.VirtualEthernetCard.DistributedVirtualPortBackingInfo(
        port=vim.dvs.PortConnection(portgroupKey='dvportgroup-404', switchUuid='no-such-switch'))
    with pytest.raises(vim.fault.NotFound):
        reconfigure(vm, vim.vm.ConfigSpec(deviceChange=[vim.vm.device.VirtualDeviceSpec(operation=NIC_ADD, device=card)]))
    assert len(nics(vm)) == 1
    added = _add_nics(vm, _new_nic('generated'))
    assert added[0].macAddress == '00:50:56:80:00:%02x' % len(VMS)


def test_nic_reconfigure_needs_a_session(fresh_twin):
    """A NIC hot-add without a session is NotAuthenticated (vcsim's answer), logged, and takes no MAC."""
    vm = by_name(fresh_twin.si, vim.VirtualMachine, 'ocp1-worker-0')
    moid = vm._moId  # pylint: disable=protected-access
    _soap_without_session(fresh_twin, '<ReconfigVM_Task xmlns="urn:vim25"><_this type="VirtualMachine">%s</_this><spec><deviceChange>'
                          '<operation>add</operation><device xsi:type="VirtualVmxnet3"><key>-1</key>'
                          '<backing xsi:type="VirtualEthernetCardNetworkBackingInfo"><deviceName>VM Network</deviceName>'
                          '</backing></device></deviceChange></spec></ReconfigVM_Task>' % moid,
                          namespaces=' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"')
    assert fresh_twin.requests()['requests'] == [{'method': 'ReconfigVM_Task', 'this': moid, 'status': 500}]
    assert len(nics(vm)) == 1
    assert _add_nics(vm, _new_nic())[0].macAddress == '00:50:56:80:00:%02x' % len(VMS)
