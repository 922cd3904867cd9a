package main

import (
	"bytes"
	"encoding/json"
	stdxml "encoding/xml"
	"fmt"
	"io"
	"io/ioutil"
	"log"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// twin wraps the simulator's HTTP handler: it serves the /_twin/ endpoints, logs
// every SOAP call and answers injected faults. Every other request, and every
// SOAP call without an injected fault, goes to vcsim, except the few SOAP methods
// whose vcsim 0.24 behaviour the twin corrects (overrides.go).
type twin struct {
	inner http.Handler

	// gate keeps inventory snapshots apart from SOAP calls: calls hold it shared,
	// a snapshot holds it exclusively, so a snapshot sees every call either fully
	// applied or not at all (vcsim runs tasks synchronously inside the call, and
	// some of its writes touch objects other than the one it locked). Long polls
	// (WaitForUpdates*) only read the property collector and do not take it.
	gate sync.RWMutex

	mu       sync.Mutex
	requests []requestEntry
	counts   map[string]int
	faults   []*faultRule

	// State of the SOAP methods the twin corrects (overrides.go).
	overrides
}

type requestEntry struct {
	Method   string `json:"method"`
	This     string `json:"this"`
	Status   int    `json:"status"`
	Injected bool   `json:"injected,omitempty"`
}

type faultRule struct {
	Method string `json:"method"`
	This   string `json:"this,omitempty"`
	Count  int    `json:"count"`
	Fault  string `json:"fault"`
	Type   string `json:"type"`
}

func newTwin() *twin {
	return &twin{counts: map[string]int{}}
}

func isSOAPPath(p string) bool {
	return p == "/sdk" || p == "/sdk/vimService"
}

func (t *twin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/_twin/inventory":
		t.serveInventory(w, r)
	case r.URL.Path == "/_twin/requests":
		t.serveRequests(w, r)
	case r.URL.Path == "/_twin/faults":
		t.serveFaults(w, r)
	case r.URL.Path == "/_twin/options":
		t.serveOptions(w, r)
	case r.URL.Path == "/_twin/pnic":
		t.servePnic(w, r)
	case strings.HasPrefix(r.URL.Path, "/_twin/"):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "unknown twin endpoint " + r.URL.Path})
	case r.Method == http.MethodPost && isSOAPPath(r.URL.Path):
		t.serveSOAP(w, r)
	default:
		t.inner.ServeHTTP(w, r)
	}
}

// statusRecorder remembers the HTTP status that vcsim answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (t *twin) serveSOAP(w http.ResponseWriter, r *http.Request) {
	body, err := ioutil.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		log.Printf("reading SOAP request body: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		t.record(requestEntry{Status: http.StatusBadRequest})
		return
	}
	method, this := parseSOAPCall(body)

	if rule := t.takeFault(method, this); rule != nil {
		status := writeSOAPFault(w, rule)
		t.record(requestEntry{Method: method, This: this, Status: status, Injected: true})
		return
	}

	// Restore the body for vcsim's ServeSDK.
	r.Body = ioutil.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		// vcsim answers some malformed specs with a Go panic; net/http then drops
		// the connection without a status. Log the call as status 0 and let the
		// panic continue to net/http.
		if p := recover(); p != nil {
			t.record(requestEntry{Method: method, This: this, Status: 0})
			panic(p)
		}
	}()
	t.forward(rec, r, body, method, this)
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	t.record(requestEntry{Method: method, This: this, Status: status})
}

func isLongPoll(method string) bool {
	switch method {
	case "WaitForUpdates", "WaitForUpdatesEx", "CheckForUpdates":
		return true
	}
	return false
}

func (t *twin) forward(w http.ResponseWriter, r *http.Request, body []byte, method, this string) {
	if method == "ReconfigVM_Task" {
		barrier.await(sessionOf(r)) // option reconfigure_barrier (changeversion.go), outside the gate
	}
	if !isLongPoll(method) {
		t.gate.RLock()
		defer t.gate.RUnlock()
	}
	if t.serveOverride(w, r, body, method, this) {
		return
	}
	t.inner.ServeHTTP(w, r)
}

func (t *twin) record(e requestEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests = append(t.requests, e)
	t.counts[e.Method]++
}

func (t *twin) takeFault(method, this string) *faultRule {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, f := range t.faults {
		if f.Method != method || (f.This != "" && f.This != this) {
			continue
		}
		rule := *f
		f.Count--
		if f.Count <= 0 {
			t.faults = append(t.faults[:i], t.faults[i+1:]...)
		}
		return &rule
	}
	return nil
}

// parseSOAPCall returns the method element name of a SOAP request body and the
// value of its _this argument (a managed object id), or empty strings.
func parseSOAPCall(body []byte) (method, this string) {
	d := stdxml.NewDecoder(bytes.NewReader(body))
	depth := 0
	inBody := false
	bodyDepth := 0
	for {
		tok, err := d.Token()
		if err != nil {
			return method, this
		}
		switch el := tok.(type) {
		case stdxml.StartElement:
			depth++
			switch {
			case !inBody && el.Name.Local == "Body":
				inBody = true
				bodyDepth = depth
			case inBody && method == "" && depth == bodyDepth+1:
				method = el.Name.Local
			case inBody && method != "" && depth == bodyDepth+2 && el.Name.Local == "_this":
				var v string
				if err := d.DecodeElement(&v, &el); err != nil {
					return method, this
				}
				depth--
				return method, strings.TrimSpace(v)
			}
		case stdxml.EndElement:
			depth--
			if inBody && depth < bodyDepth {
				return method, this
			}
		}
	}
}

// SOAP fault envelope, in the same form as vcsim's own faults (simulator.go).
type soapFaultEnvelope struct {
	XMLName xml.Name `xml:"soapenv:Envelope"`
	Enc     string   `xml:"xmlns:soapenc,attr"`
	Env     string   `xml:"xmlns:soapenv,attr"`
	XSD     string   `xml:"xmlns:xsd,attr"`
	XSI     string   `xml:"xmlns:xsi,attr"`
	Body    struct {
		Fault soapFault `xml:"soapenv:Fault"`
	} `xml:"soapenv:Body"`
}

type soapFault struct {
	Code   string `xml:"faultcode"`
	String string `xml:"faultstring"`
	Detail struct {
		Fault *faultDetail
	} `xml:"detail"`
}

type faultDetail struct {
	Fault types.BaseMethodFault
}

// MarshalXML renames the element to "<Type>Fault" with xsi:type, as vim25 does.
func (d *faultDetail) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	kind := reflect.TypeOf(d.Fault).Elem().Name()
	start.Name.Local = kind + "Fault"
	start.Attr = append(start.Attr,
		xml.Attr{Name: xml.Name{Local: "xmlns"}, Value: "urn:vim25"},
		xml.Attr{Name: xml.Name{Local: "xsi:type"}, Value: kind})
	return e.EncodeElement(d.Fault, start)
}

// newFault builds the vim fault named kind (a MethodFault subtype), carrying msg.
func newFault(kind, msg string) (types.BaseMethodFault, error) {
	rt, ok := types.TypeFunc()(kind)
	if !ok {
		return nil, fmt.Errorf("unknown vim type %q", kind)
	}
	if rt.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%q is not a fault type", kind)
	}
	v := reflect.New(rt)
	f, ok := v.Interface().(types.BaseMethodFault)
	if !ok {
		return nil, fmt.Errorf("%q is not a MethodFault", kind)
	}
	if se, ok := f.(*types.SystemError); ok {
		se.Reason = msg
	}
	return f, nil
}

func writeSOAPFault(w http.ResponseWriter, rule *faultRule) int {
	f, err := newFault(rule.Type, rule.Fault)
	if err != nil { // validated when the rule was added
		f = &types.SystemError{Reason: rule.Fault}
	}
	return writeFault(w, rule.Fault, f)
}

// writeFault answers a SOAP fault with that message and vim fault (HTTP 500).
func writeFault(w http.ResponseWriter, msg string, f types.BaseMethodFault) int {
	env := soapFaultEnvelope{
		Enc: "http://schemas.xmlsoap.org/soap/encoding/",
		Env: "http://schemas.xmlsoap.org/soap/envelope/",
		XSD: "http://www.w3.org/2001/XMLSchema",
		XSI: "http://www.w3.org/2001/XMLSchema-instance",
	}
	env.Body.Fault.Code = "ServerFaultCode"
	env.Body.Fault.String = msg
	env.Body.Fault.Detail.Fault = &faultDetail{Fault: f}

	var out bytes.Buffer
	out.WriteString(xml.Header)
	if err := xml.NewEncoder(&out).Encode(&env); err != nil {
		log.Printf("encoding fault: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(out.Bytes())
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v interface{}) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed, use " + allow})
}

func (t *twin) serveInventory(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		methodNotAllowed(w, "GET")
		return
	}
	t.gate.Lock()
	inv := snapshot()
	t.gate.Unlock()
	writeJSON(w, http.StatusOK, inv)
}

func (t *twin) serveRequests(w http.ResponseWriter, r *http.Request) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		reqs := make([]requestEntry, len(t.requests))
		copy(reqs, t.requests)
		counts := make(map[string]int, len(t.counts))
		for k, v := range t.counts {
			counts[k] = v
		}
		writeJSON(w, http.StatusOK, map[string]interface{}{"requests": reqs, "counts": counts})
	case http.MethodDelete:
		t.requests = nil
		t.counts = map[string]int{}
		writeJSON(w, http.StatusOK, map[string]interface{}{"requests": []requestEntry{}, "counts": map[string]int{}})
	default:
		methodNotAllowed(w, "GET, DELETE")
	}
}

func (t *twin) faultList() []faultRule {
	out := make([]faultRule, 0, len(t.faults))
	for _, f := range t.faults {
		out = append(out, *f)
	}
	return out
}

func (t *twin) serveFaults(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		t.mu.Lock()
		defer t.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]interface{}{"faults": t.faultList()})
	case http.MethodDelete:
		t.mu.Lock()
		defer t.mu.Unlock()
		t.faults = nil
		writeJSON(w, http.StatusOK, map[string]interface{}{"faults": []faultRule{}})
	case http.MethodPost:
		var req struct {
			Method string `json:"method"`
			This   string `json:"this"`
			Count  *int   `json:"count"`
			Fault  string `json:"fault"`
			Type   string `json:"type"`
		}
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON body: " + err.Error()})
			return
		}
		if req.Method == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "\"method\" is required (a SOAP method name, e.g. ReconfigVM_Task)"})
			return
		}
		rule := faultRule{Method: req.Method, This: req.This, Count: 1, Fault: req.Fault, Type: req.Type}
		if req.Count != nil {
			rule.Count = *req.Count
		}
		if rule.Count < 1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "\"count\" must be at least 1"})
			return
		}
		if rule.Fault == "" {
			rule.Fault = "twin: injected fault"
		}
		if rule.Type == "" {
			rule.Type = "SystemError"
		}
		if _, err := newFault(rule.Type, rule.Fault); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "\"type\": " + err.Error()})
			return
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		t.faults = append(t.faults, &rule)
		writeJSON(w, http.StatusCreated, map[string]interface{}{"faults": t.faultList()})
	default:
		methodNotAllowed(w, "GET, POST, DELETE")
	}
}
