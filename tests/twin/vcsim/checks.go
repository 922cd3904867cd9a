package main

// vCenter's own checks that vcsim 0.24 does not make (README, "vCenter's own checks"):
//
//  1. One reconfigure at a time per VM. ESXi's hostd refuses a second task on a VM while one
//     runs: "Failed to start Reconfiguring: vim.fault.TaskInProgress" (vmware/vic #5647),
//     "Another task is already in progress." (vmware/govmomi #953); TaskInProgress is among
//     ReconfigVM_Task's faults and carries "task: the task already in progress". Whether
//     vCenter queues the second instead is unconfirmed (terraform-provider-vsphere #493
//     reports a reconfigure blocked until a relocate ended), so /_twin/options
//     {"reconfigure_overlap": "fail"|"queue"} models both: "fail" (default) ends the second
//     ReconfigVM_Task's task with TaskInProgress, "queue" holds it until the first ends.
//     vcsim creates its task only when the change is applied (after reconfigure_delay), so
//     the fault's task is a twin task standing for the running reconfigure; it ends with
//     that reconfigure's outcome.
//  2. Device connection follows the power state, as recent vcsim does
//     (simulator/virtual_machine.go powerVMTask.Run and configureDevice, read at
//     fd06160642a8): powering off or suspending disconnects every connectable device,
//     powering on connects those with startConnected; a device of a VM that is not powered
//     on is never connected ("device can be connected only if vm is powered on").
//  3. vMotion compatibility: MigrateVM_Task / RelocateVM_Task to a host that has no port
//     group of the name a standard-network NIC uses fails with CannotAccessNetwork
//     (CannotAccessVmDevice: "One of the virtual machine's devices uses a backing that is not
//     accessible on the host ... This is an error if the device is currently connected and a
//     warning otherwise"; a VmConfigFault, in both methods' fault lists). A disconnected NIC
//     (so every NIC of a powered-off VM) only warns: the move goes ahead.
//  4. At most 10 virtual NICs per VM (vSphere Configuration Maximums, "Virtual NICs per
//     virtual machine: 10"): a ReconfigVM_Task that would leave more fails with
//     TooManyDevices (InvalidVmConfig; the fault type is an inference, unconfirmed).

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/types"
)

const maxNICs = 10

// wrapped: methods the twin checks before (and repairs after) its other handling.
var wrapped = map[string]func(*twin, http.ResponseWriter, *http.Request, []byte) bool{
	"ReconfigVM_Task": (*twin).serveCheckedReconfig,
	"RelocateVM_Task": (*twin).serveCheckedRelocate,
	"RetrievePropertiesEx": func(t *twin, w http.ResponseWriter, r *http.Request, body []byte) bool {
		t.serveRetrieveEx(w, r, body)
		return true
	},
}

func init() {
	for _, method := range []string{"PowerOnVM_Task", "PowerOffVM_Task", "SuspendVM_Task", "ResetVM_Task"} {
		repaired[method] = func(t *twin, this string) {
			syncConnected(types.ManagedObjectReference{Type: "VirtualMachine", Value: this})
		}
	}
}

// --- one reconfigure at a time --------------------------------------------------------------

type runningReconfig struct {
	done        chan struct{}
	placeholder *simulator.Task
	fault       types.BaseMethodFault
}

var reconfigs = struct {
	sync.Mutex
	queue   bool // option reconfigure_overlap == "queue"
	running map[types.ManagedObjectReference]*runningReconfig
}{running: map[types.ManagedObjectReference]*runningReconfig{}}

func overlapMode() string {
	reconfigs.Lock()
	defer reconfigs.Unlock()
	if reconfigs.queue {
		return "queue"
	}
	return "fail"
}

func setOverlapMode(mode string) error {
	if mode != "fail" && mode != "queue" {
		return fmt.Errorf("reconfigure_overlap must be \"fail\" or \"queue\", not %q", mode)
	}
	reconfigs.Lock()
	defer reconfigs.Unlock()
	reconfigs.queue = mode == "queue"
	return nil
}

// beginReconfig makes the caller the VM's running reconfigure; or, in "fail" mode while another
// runs, returns that one's (placeholder) task.
func beginReconfig(vm *simulator.VirtualMachine) (*runningReconfig, *simulator.Task) {
	for {
		reconfigs.Lock()
		current := reconfigs.running[vm.Self]
		if current == nil {
			mine := &runningReconfig{done: make(chan struct{})}
			reconfigs.running[vm.Self] = mine
			reconfigs.Unlock()
			return mine, nil
		}
		if !reconfigs.queue {
			if current.placeholder == nil {
				current.placeholder = simulator.CreateTask(vm, "reconfigVm", func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
					<-current.done
					return nil, current.fault
				})
				go current.placeholder.Run()
			}
			task := current.placeholder
			reconfigs.Unlock()
			return nil, task
		}
		reconfigs.Unlock()
		<-current.done
	}
}

func endReconfig(vm *simulator.VirtualMachine, mine *runningReconfig, fault types.BaseMethodFault) {
	reconfigs.Lock()
	defer reconfigs.Unlock()
	mine.fault = fault
	delete(reconfigs.running, vm.Self)
	close(mine.done)
}

// failedTask creates and runs a task on entity that ends with fault and vCenter's message.
func failedTask(entity mo.Reference, name string, fault types.BaseMethodFault, message string) types.ManagedObjectReference {
	task := simulator.CreateTask(entity, name, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) { return nil, fault })
	task.Run()
	simulator.Map.WithLock(task, func() {
		if task.Info.Error != nil {
			task.Info.Error.LocalizedMessage = message
		}
	})
	return task.Self
}

// vmCall decodes a SOAP call of type T on a virtual machine. It returns the request and the VM
// only when the body decodes as a T that accept takes (nil: any), its _this is a VM and the caller
// has a session; otherwise nil, and vcsim answers the call (with its own fault, if any).
func vmCall[T any](t *twin, r *http.Request, body []byte, accept func(*T) bool) (*T, *simulator.VirtualMachine) {
	m, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	if err != nil {
		return nil, nil
	}
	req, ok := m.Body.(*T)
	if !ok || (accept != nil && !accept(req)) {
		return nil, nil
	}
	vm, ok := simulator.Map.Get(m.This).(*simulator.VirtualMachine)
	if !ok || !t.authenticated(r) {
		return nil, nil
	}
	return req, vm
}

func (t *twin) serveCheckedReconfig(w http.ResponseWriter, r *http.Request, body []byte) bool {
	req, vm := vmCall[types.ReconfigVM_Task](t, r, body, nil)
	if vm == nil {
		return false // vcsim answers its own fault
	}
	mine, other := beginReconfig(vm)
	if other != nil {
		task := failedTask(vm, "reconfigVm", &types.TaskInProgress{Task: other.Self}, "Another task is already in progress.")
		writeSOAPBody(w, &methods.ReconfigVM_TaskBody{Res: &types.ReconfigVM_TaskResponse{Returnval: task}})
		return true
	}
	var outcome types.BaseMethodFault = &types.SystemError{Reason: "reconfigure failed"}
	defer func() { endReconfig(vm, mine, outcome) }()

	if count := nicCountAfter(vm, req.Spec.DeviceChange); count > maxNICs {
		msg := fmt.Sprintf("The virtual machine would have %d network adapters; at most %d are supported.", count, maxNICs)
		task := failedTask(vm, "reconfigVm", &types.TooManyDevices{}, msg)
		outcome = &types.TooManyDevices{}
		writeSOAPBody(w, &methods.ReconfigVM_TaskBody{Res: &types.ReconfigVM_TaskResponse{Returnval: task}})
		return true
	}
	rec := t.recorded(t.serveReconfig, r, body) // changeversion.go
	if taskSucceeded(rec) {
		outcome = nil
	}
	syncConnected(vm.Self)
	copyRecorded(w, rec)
	return true
}

// nicCountAfter is the number of Ethernet cards the VM would have after changes.
func nicCountAfter(vm *simulator.VirtualMachine, changes []types.BaseVirtualDeviceConfigSpec) int {
	count := 0
	simulator.Map.WithLock(vm, func() {
		for _, dev := range vm.Config.Hardware.Device {
			if _, ok := dev.(types.BaseVirtualEthernetCard); ok {
				count++
			}
		}
	})
	for _, change := range changes {
		spec := change.GetVirtualDeviceConfigSpec()
		if spec == nil || spec.Device == nil {
			continue
		}
		if _, ok := spec.Device.(types.BaseVirtualEthernetCard); !ok {
			continue
		}
		switch spec.Operation {
		case types.VirtualDeviceConfigSpecOperationAdd:
			count++
		case types.VirtualDeviceConfigSpecOperationRemove:
			count--
		}
	}
	return count
}

// --- connected follows the power state ------------------------------------------------------

// serveCreateVM: the MACs as macs.go completes them, then the new (powered-off) VM's devices disconnected.
func (t *twin) serveCreateVM(w http.ResponseWriter, r *http.Request, body []byte) bool {
	rec := t.recorded(t.serveNICSpec, r, body)
	syncAllConnected()
	copyRecorded(w, rec)
	return true
}

func syncAllConnected() {
	for _, e := range simulator.Map.All("VirtualMachine") {
		syncConnected(e.Reference())
	}
}

// syncConnected sets each connectable device's connected state from the VM's power state
// (powered on: startConnected; otherwise false), but only when the VM's power state changed
// since the last sync or the device is connected while the VM is not powered on: a NIC a
// client disconnects on a running VM stays disconnected.
func syncConnected(ref types.ManagedObjectReference) {
	vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return
	}
	powerSeen.Lock()
	defer powerSeen.Unlock()
	simulator.Map.WithLock(vm, func() {
		if vm.Config == nil {
			return
		}
		state := vm.Runtime.PowerState
		on := state == types.VirtualMachinePowerStatePoweredOn
		previous, known := powerSeen.state[ref]
		changedPower := known && previous != state
		powerSeen.state[ref] = state
		var devices []types.BaseVirtualDevice
		changed := false
		for _, dev := range vm.Config.Hardware.Device {
			conn := dev.GetVirtualDevice().Connectable
			if conn != nil {
				want := conn.Connected
				if !on {
					want = false
				} else if changedPower {
					want = conn.StartConnected
				}
				if want != conn.Connected {
					c := *conn
					c.Connected = want
					dev.GetVirtualDevice().Connectable = &c
					changed = true
				}
			}
			devices = append(devices, dev)
		}
		if changed {
			simulator.Map.Update(vm, []types.PropertyChange{{Name: "config.hardware.device", Val: devices}})
		}
	})
}

var powerSeen = struct {
	sync.Mutex
	state map[types.ManagedObjectReference]types.VirtualMachinePowerState
}{state: map[types.ManagedObjectReference]types.VirtualMachinePowerState{}}

// --- vMotion: the target host must have the VM's standard port groups -----------------------

// networkFault is the CannotAccessNetwork for the first connected NIC of vm on a standard
// port group that host does not have, or nil.
func networkFault(vm *simulator.VirtualMachine, hostRef types.ManagedObjectReference) (types.BaseMethodFault, string) {
	type nic struct {
		label, network string
		ref            *types.ManagedObjectReference
	}
	var connected []nic
	simulator.Map.WithLock(vm, func() {
		if vm.Config == nil || vm.Runtime.PowerState != types.VirtualMachinePowerStatePoweredOn {
			return // every device of a VM that is not running is disconnected: warnings only
		}
		for _, dev := range vm.Config.Hardware.Device {
			card, ok := dev.(types.BaseVirtualEthernetCard)
			if !ok {
				continue
			}
			d := card.GetVirtualEthernetCard()
			b, ok := d.Backing.(*types.VirtualEthernetCardNetworkBackingInfo)
			if !ok || d.Connectable == nil || !d.Connectable.Connected {
				continue
			}
			label := ""
			if d.DeviceInfo != nil {
				label = d.DeviceInfo.GetDescription().Label
			}
			connected = append(connected, nic{label: label, network: b.DeviceName, ref: b.Network})
		}
	})
	if len(connected) == 0 {
		return nil, ""
	}
	host, ok := simulator.Map.Get(hostRef).(*simulator.HostSystem)
	if !ok || host.ConfigManager.NetworkSystem == nil {
		return nil, ""
	}
	names := map[string]bool{}
	nsObj := simulator.Map.Get(*host.ConfigManager.NetworkSystem)
	if ns := networkSystemOf(nsObj); ns != nil {
		simulator.Map.WithLock(nsObj, func() {
			for _, pg := range ns.NetworkInfo.Portgroup {
				names[pg.Spec.Name] = true
			}
		})
	}
	for _, n := range connected {
		if names[n.network] {
			continue
		}
		f := &types.CannotAccessNetwork{Network: n.ref}
		f.Device, f.Backing, f.Connected = n.label, n.network, true
		return f, fmt.Sprintf("Currently connected network interface '%s' uses network '%s', which is not accessible.", n.label, n.network)
	}
	return nil, ""
}

func (t *twin) serveCheckedRelocate(w http.ResponseWriter, r *http.Request, body []byte) bool {
	req, vm := vmCall(t, r, body, func(req *types.RelocateVM_Task) bool { return req.Spec.Host != nil })
	if vm == nil {
		return false
	}
	fault, msg := networkFault(vm, *req.Spec.Host)
	if fault == nil {
		return false // vcsim moves it (and the twin repairs the host lists, overrides.go)
	}
	task := failedTask(vm, "relocateVm", fault, msg)
	writeSOAPBody(w, &methods.RelocateVM_TaskBody{Res: &types.RelocateVM_TaskResponse{Returnval: task}})
	return true
}

// migrateNetworkCheck is MigrateVM_Task's check (overrides.go), before the VM is locked.
func migrateNetworkCheck(vm *simulator.VirtualMachine, req *types.MigrateVM_Task) *types.ManagedObjectReference {
	if req.Host == nil {
		return nil
	}
	fault, msg := networkFault(vm, *req.Host)
	if fault == nil {
		return nil
	}
	task := failedTask(vm, "migrateVm", fault, msg)
	return &task
}
