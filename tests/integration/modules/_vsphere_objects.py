"""Test arrangement in the twin's vCenter with plain pyVmomi (nothing of the collection): its managed objects by kind and
name, a VM as the inventory lists it, a distributed port group made by hand.

The module tests import it as `_vsphere_objects`; the playbook tests put tests/integration/modules on sys.path first, as
for _egress_cluster. (tests/twin/conformance keeps its own: the twin's tests never import these.)
"""

from pyVim.task import WaitForTask
from pyVmomi import vim


def objects(twin, kind, name=None):
    """The managed objects of a pyVmomi kind (vim.HostSystem, vim.VirtualMachine, ...), read through a container view
    that is destroyed again; with `name`, only those of that name."""
    content = twin.vsphere().RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [kind], True)
    try:
        return [obj for obj in view.view if name is None or obj.name == name]
    finally:
        view.DestroyView()


def find(twin, kind, name):
    """The managed object of that kind and name (the first, if a name repeats, as vim.Network's can)."""
    found = objects(twin, kind, name)
    if not found:
        raise LookupError('no %s named %r in the twin\'s vCenter' % (kind.__name__, name))
    return found[0]


def inventory_vm(twin, name):
    """The VM as the twin's inventory lists it (name, moid, role, nics: [{mac, network, portgroup_key, ...}])."""
    return next(vm for vm in twin.inventory()['vms'] if vm['name'] == name)


def add_distributed_portgroup(twin, name, vlan=None, ports=8, auto_expand=False, switch='DSwitch1'):
    """An early-binding distributed port group on the switch (with that VLAN, when given), as an administrator makes it.

    Returns it as the twin's inventory lists it (name, key, vlan) and the switch's UUID as `switch_uuid`: what a NIC's
    DistributedVirtualPortBackingInfo names."""
    dvs = find(twin, vim.DistributedVirtualSwitch, switch)
    spec = vim.dvs.DistributedVirtualPortgroup.ConfigSpec(name=name, type='earlyBinding', numPorts=ports)
    if auto_expand:
        spec.autoExpand = True
    if vlan is not None:
        spec.defaultPortConfig = vim.dvs.VmwareDistributedVirtualSwitch.VmwarePortConfigPolicy(
            vlan=vim.dvs.VmwareDistributedVirtualSwitch.VlanIdSpec(vlanId=vlan, inherited=False))
    WaitForTask(dvs.AddDVPortgroup_Task([spec]))
    portgroup = next(pg for item in twin.inventory()['dvs'] if item['name'] == switch for pg in item['portgroups'] if pg['name'] == name)
    return dict(portgroup, switch_uuid=dvs.uuid)
