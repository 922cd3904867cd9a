package main

// SOAP methods whose vcsim 0.24 behaviour the twin corrects in its HTTP handler.
//
// These objects cannot be replaced in simulator.Map by a wrapper type the way the
// HostNetworkSystem is (netsys.go): vcsim type-asserts *VirtualMachine and
// *DistributedVirtualPortgroup in many places (dvs.go, virtual_machine.go, folder.go...),
// and port groups created later by clients would not be wrapped. So the twin either
//
//   - implements the method itself (ReconfigureDVPortgroup_Task, MigrateVM_Task): the
//     session is checked by vcsim (a CurrentTime probe with the caller's cookie; without a
//     session the original request goes to vcsim, which answers NotAuthenticated), the
//     request is decoded with vcsim's own simulator.UnmarshalBody, the object is locked
//     with simulator.Map.WithLock exactly as vcsim's dispatcher does for the duration of
//     the call, and the task is a vcsim task (simulator.CreateTask / Task.Run); or
//   - lets vcsim answer and then repairs what vcsim left inconsistent, before the answer
//     is released to the client (RelocateVM_Task, AddDVPortgroup_Task,
//     CreateDVPortgroup_Task); or
//   - completes the request before vcsim answers it (the MACs of the NICs that
//     CreateVM_Task and ReconfigVM_Task add or edit, macs.go): the request is decoded with
//     simulator.UnmarshalBody, completed, re-encoded with govmomi's encoder into the
//     caller's envelope and handed to vcsim, which checks the session and does the rest.
//
// Everything runs under the twin's gate (shared), like every other SOAP call.

import (
	"bytes"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// implemented: methods the twin answers itself (after vcsim has checked the session).
var implemented = map[string]func(*twin, *simulator.Method) soap.HasFault{
	"ReconfigureDVPortgroup_Task": onObject("DistributedVirtualPortgroup", (*twin).reconfigureDVPortgroup),
	"MigrateVM_Task":              onObject("VirtualMachine", (*twin).migrateVM),
}

// repaired: methods vcsim answers, followed by the twin's repair (this = the _this moid).
var repaired = map[string]func(*twin, string){
	"RelocateVM_Task": func(t *twin, this string) {
		t.reconcileVM(types.ManagedObjectReference{Type: "VirtualMachine", Value: this})
	},
	"AddDVPortgroup_Task":    func(t *twin, _ string) { t.versionNewPortgroups() },
	"CreateDVPortgroup_Task": func(t *twin, _ string) { t.versionNewPortgroups() },
}

// overrides is the twin's state for the methods above.
type overrides struct {
	// reconcileMu serialises reconcileVM, so two reconciliations of one VM cannot
	// interleave their reads and writes of the host/pool lists.
	reconcileMu sync.Mutex

	// versionMu guards knownPortgroups: distributed port groups whose configVersion the
	// twin has already set (see versionNewPortgroups).
	versionMu       sync.Mutex
	knownPortgroups map[types.ManagedObjectReference]bool
}

// serveOverride handles a SOAP call if the twin overrides its method; it returns false
// (having written nothing) otherwise. The gate is held by the caller.
func (t *twin) serveOverride(w http.ResponseWriter, r *http.Request, body []byte, method, this string) bool {
	if check, ok := wrapped[method]; ok && check(t, w, r, body) {
		return true // checks.go (vCenter's own checks), pages.go
	}
	if impl, ok := implemented[method]; ok {
		if !t.authenticated(r) {
			t.inner.ServeHTTP(w, r) // vcsim answers NotAuthenticated
			return true
		}
		m, err := simulator.UnmarshalBody(types.TypeFunc(), body)
		if err != nil {
			t.inner.ServeHTTP(w, r) // vcsim answers its own decoding fault
			return true
		}
		writeSOAPBody(w, impl(t, m))
		return true
	}
	if repair, ok := repaired[method]; ok {
		// Hold vcsim's answer until the repair is done, so the caller never sees the
		// task complete before the inventory is consistent.
		rec := httptest.NewRecorder()
		t.inner.ServeHTTP(rec, r)
		if rec.Code == http.StatusOK {
			repair(t, this)
		}
		copyRecorded(w, rec)
		return true
	}
	if method == "ReconfigVM_Task" && t.serveReconfig(w, r, body) {
		return true // changeversion.go (NIC specs completed there too)
	}
	if nicMethods[method] {
		return t.serveNICSpec(w, r, body) // false: vcsim answers the original request
	}
	return false
}

const currentTimeProbe = `<?xml version="1.0" encoding="UTF-8"?>` +
	`<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">` +
	`<soapenv:Body><CurrentTime xmlns="urn:vim25"><_this type="ServiceInstance">ServiceInstance</_this></CurrentTime>` +
	`</soapenv:Body></soapenv:Envelope>`

// authenticated asks vcsim whether the request carries a valid session: vcsim answers
// CurrentTime only within a session (simulator.Service.call). The probe is not logged.
func (t *twin) authenticated(r *http.Request) bool {
	probe := httptest.NewRequest(http.MethodPost, r.URL.Path, strings.NewReader(currentTimeProbe))
	probe.RemoteAddr = r.RemoteAddr
	probe.Header.Set("Content-Type", "text/xml; charset=utf-8")
	probe.Header.Set("User-Agent", r.UserAgent())
	for _, c := range r.Cookies() {
		probe.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	t.inner.ServeHTTP(rec, probe)
	return rec.Code == http.StatusOK
}

// --- SOAP response encoding (as vcsim's ServeSDK does it) -------------------------------

type soapEnvelope struct {
	XMLName xml.Name    `xml:"soapenv:Envelope"`
	Enc     string      `xml:"xmlns:soapenc,attr"`
	Env     string      `xml:"xmlns:soapenv,attr"`
	XSD     string      `xml:"xmlns:xsd,attr"`
	XSI     string      `xml:"xmlns:xsi,attr"`
	Body    interface{} `xml:"soapenv:Body"`
}

// soapResponse encodes a methods.*Body's Res as <{urn:vim25}XxxResponse> (vcsim's response type).
type soapResponse struct {
	Body soap.HasFault
}

func (r *soapResponse) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	val := reflect.ValueOf(r.Body).Elem().FieldByName("Res")
	if !val.IsValid() || val.IsNil() {
		return fmt.Errorf("%T: no response", r.Body)
	}
	res := xml.StartElement{Name: xml.Name{Space: "urn:vim25", Local: val.Elem().Type().Name()}}
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if err := e.EncodeElement(val.Interface(), res); err != nil {
		return err
	}
	return e.EncodeToken(start.End())
}

func writeSOAPBody(w http.ResponseWriter, res soap.HasFault) {
	if f := res.Fault(); f != nil {
		fault, ok := f.Detail.Fault.(types.BaseMethodFault)
		if !ok {
			fault = &types.SystemError{Reason: f.String}
		}
		writeFault(w, f.String, fault)
		return
	}
	var out bytes.Buffer
	out.WriteString(xml.Header)
	err := xml.NewEncoder(&out).Encode(&soapEnvelope{
		Enc:  "http://schemas.xmlsoap.org/soap/encoding/",
		Env:  "http://schemas.xmlsoap.org/soap/envelope/",
		XSD:  "http://www.w3.org/2001/XMLSchema",
		XSI:  "http://www.w3.org/2001/XMLSchema-instance",
		Body: &soapResponse{Body: res},
	})
	if err != nil {
		log.Printf("encoding response: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out.Bytes())
}

// lookup returns the registry object of a request's _this as vcsim's type T, or the fault
// vcsim's dispatcher would answer (ManagedObjectNotFound, or MethodNotFound for another type).
func lookup[T mo.Reference](m *simulator.Method, kind string) (T, *soap.Fault) {
	var none T
	obj := simulator.Map.Get(m.This)
	if obj == nil {
		return none, simulator.Fault(fmt.Sprintf("managed object not found: %s", m.This), &types.ManagedObjectNotFound{Obj: m.This})
	}
	if m.This.Type != kind {
		return none, simulator.Fault(fmt.Sprintf("%s does not implement: %s", m.This, m.Name),
			&types.MethodNotFound{Receiver: m.This, Method: m.Name})
	}
	typed, ok := obj.(T)
	if !ok {
		return none, simulator.Fault("", &types.MethodNotFound{Receiver: m.This, Method: m.Name})
	}
	return typed, nil
}

// onObject makes impl, a method the twin implements on managed objects of vcsim type T (kind:
// their type name), an entry of implemented: the request's _this is looked up first, and when
// it is missing or of another type the answer is lookup's fault.
func onObject[T mo.Reference](kind string, impl func(*twin, *simulator.Method, T) soap.HasFault) func(*twin, *simulator.Method) soap.HasFault {
	return func(t *twin, m *simulator.Method) soap.HasFault {
		obj, fault := lookup[T](m, kind)
		if fault != nil {
			return faultBody{fault}
		}
		return impl(t, m, obj)
	}
}

// faultBody answers a fault alone (writeSOAPBody encodes only the fault of a body that has one).
type faultBody struct{ fault *soap.Fault }

func (b faultBody) Fault() *soap.Fault { return b.fault }

// runLockedTask creates a vcsim task on obj whose outcome is apply's fault (nil: success), and
// runs it with obj locked, as vcsim's dispatcher locks the object for the duration of a call.
func runLockedTask(obj mo.Reference, name string, apply func() types.BaseMethodFault) types.ManagedObjectReference {
	var task types.ManagedObjectReference
	simulator.Map.WithLock(obj, func() {
		task = simulator.CreateTask(obj, name, func(*simulator.Task) (types.AnyType, types.BaseMethodFault) {
			return nil, apply()
		}).Run()
	})
	return task
}

// --- ReconfigureDVPortgroup_Task ---------------------------------------------------------
//
// vcsim 0.24 (portgroup.go) assigns every field of the spec to the port group's config,
// so an unset field erases the current value, and it ignores configVersion. A real
// vCenter applies only what the spec sets and checks the version:
//   - DVPortgroupConfigSpec.configVersion: "Version string of the configuration that this
//     spec is trying to change. This property is required in reconfiguring a portgroup
//     and should be set to the same value as the configVersion" (API reference,
//     vim.dvs.DistributedVirtualPortgroup.ConfigSpec); DVPortgroupConfigInfo.configVersion
//     is the "Configuration version number".
//   - The method's faults are DvsFault, ConcurrentAccess, DuplicateName, InvalidName
//     (pyVmomi _typeinfo_vim.py, docs/vim/dvs/DistributedVirtualPortgroup.rst).
//     ConcurrentAccess is "thrown when an operation fails because another operation has
//     modified the datastructure" (docs/vim/fault/ConcurrentAccess.rst): the twin answers
//     it, as the task's error, when the spec's configVersion is not the current one (also
//     when it is missing); pyvmomi issue #538 shows vCenter's message for a stale version,
//     "Cannot complete operation due to concurrent modification by another operation."
//   - Every successful reconfiguration increments configVersion.
// Unset means: empty string, zero numPorts, nil pointer/interface/list. Nested policies
// (defaultPortConfig, policy) are merged leaf by leaf: a BoolPolicy, IntPolicy,
// StringPolicy or VLAN spec that the spec sets replaces the current one, the others stay
// (so a securityPolicy setting only allowPromiscuous keeps macChanges and forgedTransmits).

func (t *twin) reconfigureDVPortgroup(m *simulator.Method, pg *simulator.DistributedVirtualPortgroup) soap.HasFault {
	req := m.Body.(*types.ReconfigureDVPortgroup_Task)
	task := runLockedTask(pg, "reconfigureDvPortgroup", func() types.BaseMethodFault { return applyDVPortgroupSpec(pg, &req.Spec) })
	return &methods.ReconfigureDVPortgroup_TaskBody{Res: &types.ReconfigureDVPortgroup_TaskResponse{Returnval: task}}
}

// applyDVPortgroupSpec runs inside the task, with the port group locked.
func applyDVPortgroupSpec(pg *simulator.DistributedVirtualPortgroup, spec *types.DVPortgroupConfigSpec) types.BaseMethodFault {
	cfg := pg.Config
	if spec.ConfigVersion != cfg.ConfigVersion {
		return &types.ConcurrentAccess{}
	}

	oldName := pg.Name
	name := oldName
	if spec.Name != "" && spec.Name != oldName {
		if dup := duplicateName(pg, spec.Name); dup != nil {
			return &types.DuplicateName{Name: spec.Name, Object: dup.Reference()}
		}
		name = spec.Name
	}
	cfg.Name = name

	setIfSet(&cfg.NumPorts, spec.NumPorts)
	setIfSet(&cfg.PortNameFormat, spec.PortNameFormat)
	if spec.DefaultPortConfig != nil {
		merged := reflect.ValueOf(&cfg.DefaultPortConfig).Elem()
		overlayValue(merged, reflect.ValueOf(spec.DefaultPortConfig))
	}
	setIfSet(&cfg.Description, spec.Description)
	setIfSet(&cfg.Type, spec.Type)
	setIfSet(&cfg.BackingType, spec.BackingType)
	if spec.Scope != nil {
		cfg.Scope = spec.Scope
	}
	if spec.Policy != nil {
		merged := reflect.ValueOf(&cfg.Policy).Elem()
		overlayValue(merged, reflect.ValueOf(spec.Policy))
	}
	if spec.VendorSpecificConfig != nil {
		cfg.VendorSpecificConfig = spec.VendorSpecificConfig
	}
	setIfSet(&cfg.AutoExpand, spec.AutoExpand)
	setIfSet(&cfg.VmVnicNetworkResourcePoolKey, spec.VmVnicNetworkResourcePoolKey)
	setIfSet(&cfg.TransportZoneUuid, spec.TransportZoneUuid)
	setIfSet(&cfg.TransportZoneName, spec.TransportZoneName)
	setIfSet(&cfg.LogicalSwitchUuid, spec.LogicalSwitchUuid)
	setIfSet(&cfg.SegmentId, spec.SegmentId)
	cfg.ConfigVersion = nextVersion(cfg.ConfigVersion)

	// Ports: "Setting this number larger than the number of existing ports in the
	// portgroup causes new ports to be added ... smaller ... deletes the free ports ...
	// For portgroups of type ephemeral this property is ignored" (numPorts). vcsim keeps
	// no port state, so every port counts as free.
	portKeys := pg.PortKeys
	if cfg.Type != string(types.DistributedVirtualPortgroupPortgroupTypeEphemeral) && int(cfg.NumPorts) != len(portKeys) {
		portKeys = resizePortKeys(portKeys, int(cfg.NumPorts))
	}

	pg.Config = cfg
	pg.PortKeys = portKeys
	pg.Name = name
	pg.Entity().Name = name
	summary := pg.Summary
	if s, ok := pg.Summary.(*types.NetworkSummary); ok && s != nil {
		c := *s
		c.Name = name
		summary = &c
		pg.Summary = summary
	}
	simulator.Map.Update(pg, []types.PropertyChange{
		{Name: "config", Val: cfg},
		{Name: "portKeys", Val: portKeys},
		{Name: "name", Val: name},
		{Name: "summary", Val: summary},
	})

	if name != oldName && cfg.DistributedVirtualSwitch != nil {
		if dvs, ok := simulator.Map.Get(*cfg.DistributedVirtualSwitch).(*simulator.DistributedVirtualSwitch); ok {
			simulator.Map.WithLock(dvs, func() {
				names := append([]string(nil), dvs.Summary.PortgroupName...)
				for i := range names {
					if names[i] == oldName {
						names[i] = name
					}
				}
				simulator.Map.Update(dvs, []types.PropertyChange{{Name: "summary.portgroupName", Val: names}})
			})
		}
	}
	return nil
}

// setIfSet sets *dst to v unless v is unset (the zero value: empty string, zero, nil pointer).
func setIfSet[T comparable](dst *T, v T) {
	var unset T
	if v != unset {
		*dst = v
	}
}

// duplicateName returns another entity of that name in the port group's folder (the
// check vcsim's AddDVPortgroup_Task makes), or nil.
func duplicateName(pg *simulator.DistributedVirtualPortgroup, name string) mo.Entity {
	if pg.Parent == nil {
		return nil
	}
	folder, ok := simulator.Map.Get(*pg.Parent).(*simulator.Folder)
	if !ok {
		return nil
	}
	var children []types.ManagedObjectReference
	simulator.Map.WithLock(folder, func() {
		children = append(children, folder.ChildEntity...)
	})
	children = withoutRef(children, pg.Self)
	return simulator.Map.FindByName(name, children)
}

func nextVersion(v string) string {
	n, err := strconv.Atoi(v)
	if err != nil {
		return "1"
	}
	return strconv.Itoa(n + 1)
}

func resizePortKeys(keys []string, n int) []string {
	if n < 0 {
		n = 0
	}
	if n <= len(keys) {
		return append([]string(nil), keys[:n]...)
	}
	out := append([]string(nil), keys...)
	next := 0
	for _, k := range keys {
		if i, err := strconv.Atoi(k); err == nil && i >= next {
			next = i + 1
		}
	}
	for len(out) < n {
		out = append(out, strconv.Itoa(next))
		next++
	}
	return out
}

// versionNewPortgroups gives every distributed port group the twin has not seen yet the
// initial configVersion "0": vcsim 0.24 copies the creation spec's configVersion (usually
// empty) into the config, while the API says it "is ignored in creating a portgroup if
// set" and config.configVersion is a "Configuration version number".
func (t *twin) versionNewPortgroups() {
	t.versionMu.Lock()
	defer t.versionMu.Unlock()
	if t.knownPortgroups == nil {
		t.knownPortgroups = map[types.ManagedObjectReference]bool{}
	}
	for _, pg := range allOf[*simulator.DistributedVirtualPortgroup]("DistributedVirtualPortgroup") {
		if t.knownPortgroups[pg.Self] {
			continue
		}
		t.knownPortgroups[pg.Self] = true
		simulator.Map.WithLock(pg, func() {
			cfg := pg.Config
			cfg.ConfigVersion = "0"
			pg.Config = cfg
			simulator.Map.Update(pg, []types.PropertyChange{{Name: "config", Val: cfg}})
		})
	}
}

// --- MigrateVM_Task ----------------------------------------------------------------------
//
// Not implemented by vcsim 0.24 (MethodNotFound). The twin moves the VM to another host
// and/or pool of the same compute resource, per the API reference (pyVmomi
// docs/vim/VirtualMachine.rst, MigrateVM): pool unset = the VM's current pool; host unset
// is allowed when the pool's compute resource is a stand-alone host (that host) or a
// DRS-enabled cluster (DRS picks: the twin keeps the current host if it is in the
// cluster, else the first connected one), otherwise InvalidArgument; InvalidArgument "if
// the target host and target pool are not associated with the same compute resource";
// InvalidPowerState "if the state argument is set and the virtual machine does not have
// that power state"; InvalidState if "the target host is disconnected or in maintenance
// mode"; NotSupported "if the virtual machine is marked as a template". No storage moves.

func (t *twin) migrateVM(m *simulator.Method, vm *simulator.VirtualMachine) soap.HasFault {
	body := &methods.MigrateVM_TaskBody{}
	req := m.Body.(*types.MigrateVM_Task)
	if failed := migrateNetworkCheck(vm, req); failed != nil { // checks.go
		body.Res = &types.MigrateVM_TaskResponse{Returnval: *failed}
		return body
	}
	task := runLockedTask(vm, "migrateVm", func() types.BaseMethodFault { return migrate(vm, req) })
	t.reconcileVM(vm.Self)
	body.Res = &types.MigrateVM_TaskResponse{Returnval: task}
	return body
}

// migrate runs inside the task, with the VM locked.
func migrate(vm *simulator.VirtualMachine, req *types.MigrateVM_Task) types.BaseMethodFault {
	if vm.Config != nil && vm.Config.Template {
		return &types.NotSupported{}
	}
	if req.State != "" && req.State != vm.Runtime.PowerState {
		return &types.InvalidPowerState{RequestedState: req.State, ExistingState: vm.Runtime.PowerState}
	}

	poolRef := vm.ResourcePool
	if req.Pool != nil {
		poolRef = req.Pool
	}
	if poolRef == nil {
		return &types.InvalidArgument{InvalidProperty: "pool"}
	}
	var owner types.ManagedObjectReference
	switch p := simulator.Map.Get(*poolRef).(type) {
	case *simulator.ResourcePool:
		owner = p.Owner
	case *simulator.VirtualApp:
		owner = p.Owner
	default:
		return &types.InvalidArgument{InvalidProperty: "pool"}
	}
	crObj := simulator.Map.Get(owner)
	cr := computeResourceOf(crObj)
	if cr == nil {
		return &types.InvalidArgument{InvalidProperty: "pool"}
	}

	hostRef := req.Host
	if hostRef == nil {
		picked := pickHost(vm, crObj, cr)
		if picked == nil {
			return &types.InvalidArgument{InvalidProperty: "host"}
		}
		hostRef = picked
	}
	host, ok := simulator.Map.Get(*hostRef).(*simulator.HostSystem)
	if !ok {
		return &types.InvalidArgument{InvalidProperty: "host"}
	}
	if simulator.FindReference(cr.Host, host.Self) == nil {
		return &types.InvalidArgument{InvalidProperty: "host"}
	}
	if host.Runtime.ConnectionState != types.HostSystemConnectionStateConnected || host.Runtime.InMaintenanceMode {
		return &types.InvalidState{}
	}

	target := host.Self
	pool := *poolRef
	simulator.Map.Update(vm, []types.PropertyChange{
		{Name: "runtime.host", Val: &target},
		{Name: "summary.runtime.host", Val: &target},
		{Name: "resourcePool", Val: &pool},
	})
	return nil
}

// pickHost is the target when MigrateVM_Task names no host: the stand-alone host, or for
// a DRS-enabled cluster the VM's current host if it is in the cluster, else the first
// connected host not in maintenance mode. Nil when the API requires a host.
func pickHost(vm *simulator.VirtualMachine, crObj mo.Reference, cr *mo.ComputeResource) *types.ManagedObjectReference {
	cluster, isCluster := crObj.(*simulator.ClusterComputeResource)
	if !isCluster {
		if len(cr.Host) == 1 {
			h := cr.Host[0]
			return &h
		}
		return nil
	}
	drs := false
	if ex, ok := cluster.ConfigurationEx.(*types.ClusterConfigInfoEx); ok && ex != nil && ex.DrsConfig.Enabled != nil {
		drs = *ex.DrsConfig.Enabled
	}
	if !drs {
		return nil
	}
	if vm.Runtime.Host != nil && simulator.FindReference(cr.Host, *vm.Runtime.Host) != nil {
		h := *vm.Runtime.Host
		return &h
	}
	for _, ref := range cr.Host {
		if h, ok := simulator.Map.Get(ref).(*simulator.HostSystem); ok &&
			h.Runtime.ConnectionState == types.HostSystemConnectionStateConnected && !h.Runtime.InMaintenanceMode {
			r := ref
			return &r
		}
	}
	return nil
}

// --- host.vm and resourcePool.vm after a move ---------------------------------------------
//
// vcsim 0.24's RelocateVM_Task updates vm.runtime.host and vm.resourcePool but removes
// the *target's* own reference from the target's vm list (a no-op) instead of moving the
// VM between the hosts' and pools' lists, so HostSystem.vm ("List of virtual machines
// associated with this host") and ResourcePool.vm still name the old host and pool.
// reconcileVM makes them follow the VM: it is in exactly the vm list of its
// runtime.host and of its resourcePool. (Datastore.vm is left as vcsim has it: vcsim
// does not move VM files between datastores.)

func (t *twin) reconcileVM(ref types.ManagedObjectReference) {
	t.reconcileMu.Lock()
	defer t.reconcileMu.Unlock()

	vm, ok := simulator.Map.Get(ref).(*simulator.VirtualMachine)
	if !ok {
		return
	}
	var host, pool *types.ManagedObjectReference
	simulator.Map.WithLock(vm, func() {
		if vm.Runtime.Host != nil {
			h := *vm.Runtime.Host
			host = &h
		}
		if vm.ResourcePool != nil {
			p := *vm.ResourcePool
			pool = &p
		}
	})

	for _, h := range allOf[*simulator.HostSystem]("HostSystem") {
		simulator.Map.WithLock(h, func() {
			setMembership(h, "vm", &h.Vm, ref, host != nil && *host == h.Self)
		})
	}
	for _, kind := range []string{"ResourcePool", "VirtualApp"} {
		for _, e := range simulator.Map.All(kind) {
			var list *[]types.ManagedObjectReference
			switch p := e.(type) {
			case *simulator.ResourcePool:
				list = &p.Vm
			case *simulator.VirtualApp:
				list = &p.Vm
			default:
				continue
			}
			simulator.Map.WithLock(e, func() {
				setMembership(e, "vm", list, ref, pool != nil && *pool == e.Reference())
			})
		}
	}
}

// setMembership adds ref to obj's list property (list, named property: "vm", "network",
// "host"), or removes it, as a fresh slice, telling property collectors; nothing changes when
// the list already has ref (want) or has not (!want). The caller holds obj's lock.
func setMembership(obj mo.Reference, property string, list *[]types.ManagedObjectReference, ref types.ManagedObjectReference, want bool) {
	has := simulator.FindReference(*list, ref) != nil
	if has == want {
		return
	}
	var next []types.ManagedObjectReference
	if want {
		next = append(append([]types.ManagedObjectReference(nil), *list...), ref)
	} else {
		next = withoutRef(*list, ref)
	}
	simulator.Map.Update(obj, []types.PropertyChange{{Name: property, Val: next}})
}

// --- merging nested vim data objects ----------------------------------------------------

// overlay copies onto dst (an addressable struct) every field that src (a struct of the
// same type) sets: non-nil pointers, interfaces and lists, non-zero strings and numbers,
// and plain booleans (in these vim types a plain bool is a required field, so it is
// always sent). Nested data objects are merged recursively, except inheritable policy
// leaves (BoolPolicy, IntPolicy, StringPolicy, VLAN specs...), which replace the current
// value whole. Pointers are replaced, never written through, so values shared with the
// previous state stay unchanged.
func overlay(dst, src reflect.Value) {
	for i := 0; i < src.NumField(); i++ {
		field := src.Type().Field(i)
		if field.PkgPath != "" {
			continue
		}
		sf, df := src.Field(i), dst.Field(i)
		switch sf.Kind() {
		case reflect.Struct:
			if field.Anonymous {
				overlay(df, sf)
			} else if !sf.IsZero() {
				df.Set(sf)
			}
		case reflect.Ptr, reflect.Interface:
			if !sf.IsNil() {
				overlayValue(df, sf)
			}
		case reflect.Slice, reflect.Map:
			if !sf.IsNil() {
				df.Set(sf)
			}
		case reflect.Bool:
			df.Set(sf)
		default:
			if !sf.IsZero() {
				df.Set(sf)
			}
		}
	}
}

// overlayValue merges src (a non-nil pointer, or interface holding one) into the
// settable dst of the same static type.
func overlayValue(dst, src reflect.Value) {
	s := src
	if s.Kind() == reflect.Interface {
		s = s.Elem()
	}
	d := dst
	if d.Kind() == reflect.Interface && !d.IsNil() {
		d = d.Elem()
	}
	if d.Kind() != reflect.Ptr || d.IsNil() || d.Type() != s.Type() ||
		s.Elem().Kind() != reflect.Struct || isLeafPolicy(s.Elem().Type()) {
		dst.Set(src)
		return
	}
	merged := reflect.New(s.Elem().Type())
	merged.Elem().Set(d.Elem())
	overlay(merged.Elem(), s.Elem())
	dst.Set(merged)
}

// isLeafPolicy: an InheritablePolicy with no nested data objects (BoolPolicy,
// IntPolicy, LongPolicy, StringPolicy, VmwareDistributedVirtualSwitchVlanIdSpec...).
func isLeafPolicy(t reflect.Type) bool {
	if _, ok := t.FieldByName("InheritablePolicy"); !ok {
		return false
	}
	return !hasNestedObject(t)
}

func hasNestedObject(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		switch f.Type.Kind() {
		case reflect.Interface:
			return true
		case reflect.Ptr:
			if f.Type.Elem().Kind() == reflect.Struct {
				return true
			}
		case reflect.Struct:
			if f.Anonymous && hasNestedObject(f.Type) {
				return true
			}
		}
	}
	return false
}
