package main

// VirtualMachineConfigInfo.changeVersion and the ReconfigVM_Task guard on it.
//
// vSphere API reference:
//   - VirtualMachineConfigSpec.changeVersion (vim.vm.ConfigSpec): "If specified, the changes
//     are only applied if the current changeVersion matches the specified changeVersion. This
//     field can be used to guard against updates that have happened between when configInfo
//     is read and when it is applied."
//   - VirtualMachineConfigInfo.changeVersion: "a unique identifier for a given version of the
//     configuration. Each change to the configuration updates this value ... a client should
//     always treat this as an opaque string."
//   - ConcurrentAccess is among ReconfigVM_Task's faults, "thrown when an operation fails
//     because another operation has modified the datastructure" (vim.fault.ConcurrentAccess).
//     That a stale changeVersion fails the task with ConcurrentAccess is an inference from
//     that list (unconfirmed).
//
// vcsim 0.24 neither sets nor checks it (config.changeVersion stays empty); recent vcsim
// (simulator/virtual_machine.go updateLastModifiedAndChangeVersion, read at
// fd06160642a8) sets it on every successful reconfigure and still does not check it.
//
// The twin gives every VM a changeVersion (a timestamp, as vCenter's look), and for every
// ReconfigVM_Task, under one lock spanning the check, vcsim's change and the new version:
// a spec whose changeVersion is set and differs from the VM's current one fails as a task
// with ConcurrentAccess (nothing applied); a task that succeeds gives the VM a new version.
// POST /_twin/options {"change_version_check": false} models a server that ignores the
// field (vcsim itself): versions still change, nothing is refused. {"reconfigure_delay": s}
// holds every ReconfigVM_Task s seconds before it is applied (outside the lock: a slow
// vCenter, whose reconfigure tasks take seconds), so tests can make writers overlap.
// {"reconfigure_barrier": n} holds every ReconfigVM_Task until n different sessions have each
// sent one (or 60 s have passed), then lets all of them through: a test control, not vCenter
// behaviour, so that writers started at once overlap however far apart a loaded machine starts
// them (each has read the VMs before its first write). 0 or 1 turns it off. The wait comes
// before the twin's request gate (twin.forward), so other requests go on meanwhile.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"time"

	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/types"
)

type changeVersions struct {
	mu     sync.Mutex // held across a whole ReconfigVM_Task; taken before the MAC allocator's lock
	last   time.Time
	ignore bool          // the server ignores spec.changeVersion (option change_version_check=false)
	delay  time.Duration // option reconfigure_delay
}

var vmVersions = &changeVersions{}

// reconfigureBarrier: option reconfigure_barrier (see the file comment).
type reconfigureBarrier struct {
	mu       sync.Mutex
	need     int
	sessions map[string]bool
	open     chan struct{} // closed once `need` sessions have arrived
}

var barrier = &reconfigureBarrier{}

const barrierTimeout = 60 * time.Second

func (b *reconfigureBarrier) set(need int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.need = need
	b.sessions = map[string]bool{}
	b.open = make(chan struct{})
	if need <= 1 {
		close(b.open)
	}
}

func (b *reconfigureBarrier) current() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.need
}

// await returns once `need` different sessions have called it, or after barrierTimeout.
func (b *reconfigureBarrier) await(session string) {
	b.mu.Lock()
	if b.need <= 1 || b.open == nil {
		b.mu.Unlock()
		return
	}
	b.sessions[session] = true
	open := b.open
	if len(b.sessions) >= b.need {
		select {
		case <-open:
		default:
			close(open)
		}
	}
	b.mu.Unlock()
	select {
	case <-open:
	case <-time.After(barrierTimeout):
	}
}

// sessionOf names the session of a request by its cookies.
func sessionOf(r *http.Request) string {
	key := ""
	for _, c := range r.Cookies() {
		key += c.Name + "=" + c.Value + ";"
	}
	return key
}

// next returns a new version, strictly later than the last one. Caller holds mu.
func (c *changeVersions) next() string {
	now := time.Now().UTC()
	if !now.After(c.last) {
		now = c.last.Add(time.Microsecond)
	}
	c.last = now
	return now.Format("2006-01-02T15:04:05.000000Z")
}

func (c *changeVersions) setChecking(check bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ignore = !check
}

func (c *changeVersions) options() map[string]interface{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return map[string]interface{}{"change_version_check": !c.ignore, "reconfigure_delay": c.delay.Seconds()}
}

func (c *changeVersions) setDelay(seconds float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delay = time.Duration(seconds * float64(time.Second))
}

func (c *changeVersions) currentDelay() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.delay
}

// versionVMs gives every VM without a changeVersion one (at start-up, and for VMs created since).
func versionVMs() {
	vmVersions.mu.Lock()
	defer vmVersions.mu.Unlock()
	versionVMsLocked()
}

func versionVMsLocked() {
	for _, vm := range allOf[*simulator.VirtualMachine]("VirtualMachine") {
		simulator.Map.WithLock(vm, func() {
			if vm.Config != nil && vm.Config.ChangeVersion == "" {
				vm.Config.ChangeVersion = vmVersions.next()
			}
		})
	}
}

var taskRef = regexp.MustCompile(`<returnval type="Task">([^<]+)</returnval>`)

// serveReconfig handles every ReconfigVM_Task of a known VM within a session; it returns
// false (having written nothing) otherwise, and vcsim answers.
func (t *twin) serveReconfig(w http.ResponseWriter, r *http.Request, body []byte) bool {
	req, vm := vmCall[types.ReconfigVM_Task](t, r, body, nil) // checks.go
	if vm == nil {
		return false
	}
	c := vmVersions
	if d := c.currentDelay(); d > 0 {
		time.Sleep(d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	versionVMsLocked()
	var current string
	simulator.Map.WithLock(vm, func() { current = vm.Config.ChangeVersion })
	if !c.ignore && req.Spec.ChangeVersion != "" && req.Spec.ChangeVersion != current {
		// vCenter's wording for a concurrent modification (pyvmomi issue #538); vcsim would say "*types.ConcurrentAccess"
		task := failedTask(vm, "reconfigVm", &types.ConcurrentAccess{}, // checks.go
			"Cannot complete operation due to concurrent modification by another operation.")
		writeSOAPBody(w, &methods.ReconfigVM_TaskBody{Res: &types.ReconfigVM_TaskResponse{Returnval: task}})
		return true
	}
	rec := t.recorded(t.serveNICSpec, r, body)
	if taskSucceeded(rec) {
		simulator.Map.WithLock(vm, func() { vm.Config.ChangeVersion = c.next() })
	}
	copyRecorded(w, rec) // pages.go
	return true
}

// recorded is the answer of serve (serveNICSpec, serveReconfig), or vcsim's to the request as
// sent where serve leaves it to vcsim, held so that the twin acts on it before the caller sees it.
func (t *twin) recorded(serve func(http.ResponseWriter, *http.Request, []byte) bool, r *http.Request, body []byte) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	if !serve(rec, r, body) {
		t.inner.ServeHTTP(rec, r)
	}
	return rec
}

// taskSucceeded reads the task a recorded ReconfigVM_Task answer names (vcsim runs it within the call).
func taskSucceeded(rec *httptest.ResponseRecorder) bool {
	if rec.Code != http.StatusOK {
		return false
	}
	match := taskRef.FindSubmatch(rec.Body.Bytes())
	if match == nil {
		return false
	}
	task, ok := simulator.Map.Get(types.ManagedObjectReference{Type: "Task", Value: string(match[1])}).(*simulator.Task)
	if !ok {
		return false
	}
	state := types.TaskInfoStateError
	simulator.Map.WithLock(task, func() { state = task.Info.State })
	return state == types.TaskInfoStateSuccess
}

// serveOptions: GET or POST /_twin/options {"change_version_check": bool, "reconfigure_delay": seconds,
// "reconfigure_barrier": sessions}.
func (t *twin) serveOptions(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		var body struct {
			ChangeVersionCheck *bool    `json:"change_version_check"`
			ReconfigureDelay   *float64 `json:"reconfigure_delay"`
			ReconfigureOverlap *string  `json:"reconfigure_overlap"` // checks.go
			ReconfigureBarrier *int     `json:"reconfigure_barrier"`
		}
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("bad options: %v", err)})
			return
		}
		if body.ReconfigureOverlap != nil {
			if err := setOverlapMode(*body.ReconfigureOverlap); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
		}
		if body.ChangeVersionCheck != nil {
			vmVersions.setChecking(*body.ChangeVersionCheck)
		}
		if body.ReconfigureDelay != nil {
			vmVersions.setDelay(*body.ReconfigureDelay)
		}
		if body.ReconfigureBarrier != nil {
			barrier.set(*body.ReconfigureBarrier)
		}
	}
	options := vmVersions.options()
	options["reconfigure_overlap"] = overlapMode()
	options["reconfigure_barrier"] = barrier.current()
	writeJSON(w, http.StatusOK, options)
}
