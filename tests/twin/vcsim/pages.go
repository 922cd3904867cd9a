package main

// RetrievePropertiesEx pages (RetrieveOptions.maxObjects, ContinueRetrievePropertiesEx,
// CancelRetrievePropertiesEx).
//
// vSphere API reference (vmodl.query.PropertyCollector):
//   - RetrieveOptions.maxObjects: "The maximum number of ObjectContent data objects that
//     should be returned in a single result from RetrievePropertiesEx. An unset value
//     indicates that there is no maximum. In this case PropertyCollector policy may still
//     limit the number of objects. Any remaining objects may be retrieved with
//     ContinueRetrievePropertiesEx."
//   - RetrieveResult.token: "A token used to retrieve further retrieval results. If
//     unset, there are no further results"; CancelRetrievePropertiesEx discards them.
//
// vcsim 0.24 ignores maxObjects and has neither Continue nor Cancel (MethodNotFound).
// Recent vcsim (simulator/property_collector.go RetrievePropertiesEx and
// ContinueRetrievePropertiesEx, read at fd06160642a8) pages by maxObjects, keeps the rest
// under a uuid token, answers InvalidProperty{name: token} for an unknown or used token;
// the twin does the same. Its "PropertyCollector policy" is the flag -max-objects N: at
// most N objects per page even when the client sets no maxObjects (0: no policy limit, as
// vcsim). A token is bound to the collector that issued it and used once.

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/google/uuid"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

func init() {
	implemented["ContinueRetrievePropertiesEx"] = (*twin).continueRetrieveEx
	implemented["CancelRetrievePropertiesEx"] = (*twin).cancelRetrieveEx
}

// serverMaxObjects is the property collector's own page limit (flag -max-objects).
var serverMaxObjects int32

type pendingPage struct {
	collector types.ManagedObjectReference
	max       int32
	objects   []types.ObjectContent
}

var pages = struct {
	sync.Mutex
	byToken map[string]pendingPage
}{byToken: map[string]pendingPage{}}

func pageSize(requested int32) int32 {
	if serverMaxObjects > 0 && (requested <= 0 || requested > serverMaxObjects) {
		return serverMaxObjects
	}
	return requested
}

// splitPage returns the first page of objects and the token keeping the rest ("" when none).
func splitPage(collector types.ManagedObjectReference, max int32, objects []types.ObjectContent) ([]types.ObjectContent, string) {
	if max <= 0 || len(objects) <= int(max) {
		return objects, ""
	}
	token := uuid.New().String()
	pages.Lock()
	pages.byToken[token] = pendingPage{collector: collector, max: max, objects: objects[max:]}
	pages.Unlock()
	return objects[:max], token
}

func takePage(collector types.ManagedObjectReference, token string) (pendingPage, bool) {
	pages.Lock()
	defer pages.Unlock()
	page, ok := pages.byToken[token]
	if !ok || page.collector != collector {
		return pendingPage{}, false
	}
	delete(pages.byToken, token)
	return page, true
}

// serveRetrieveEx lets vcsim answer RetrievePropertiesEx, then cuts its result into pages.
func (t *twin) serveRetrieveEx(w http.ResponseWriter, r *http.Request, body []byte) {
	rec := httptest.NewRecorder()
	t.inner.ServeHTTP(rec, r)
	m, err := simulator.UnmarshalBody(types.TypeFunc(), body)
	req, ok := (*types.RetrievePropertiesEx)(nil), false
	if err == nil {
		req, ok = m.Body.(*types.RetrievePropertiesEx)
	}
	answer := &methods.RetrievePropertiesExBody{}
	if rec.Code != http.StatusOK || !ok || decodeAnswer(rec.Body.Bytes(), answer) != nil || answer.Res == nil || answer.Res.Returnval == nil {
		copyRecorded(w, rec) // a fault, or nothing to page
		return
	}
	result := answer.Res.Returnval
	result.Objects, result.Token = splitPage(req.This, pageSize(req.Options.MaxObjects), result.Objects)
	writeSOAPBody(w, &methods.RetrievePropertiesExBody{Res: &types.RetrievePropertiesExResponse{Returnval: result}})
}

func (t *twin) continueRetrieveEx(m *simulator.Method) soap.HasFault {
	req := m.Body.(*types.ContinueRetrievePropertiesEx)
	body := &methods.ContinueRetrievePropertiesExBody{}
	page, ok := takePage(req.This, req.Token)
	if !ok {
		body.Fault_ = simulator.Fault("", &types.InvalidProperty{Name: "token"})
		return body
	}
	objects, token := splitPage(req.This, page.max, page.objects)
	body.Res = &types.ContinueRetrievePropertiesExResponse{Returnval: types.RetrieveResult{Objects: objects, Token: token}}
	return body
}

func (t *twin) cancelRetrieveEx(m *simulator.Method) soap.HasFault {
	req := m.Body.(*types.CancelRetrievePropertiesEx)
	body := &methods.CancelRetrievePropertiesExBody{}
	if _, ok := takePage(req.This, req.Token); !ok {
		body.Fault_ = simulator.Fault("", &types.InvalidProperty{Name: "token"})
		return body
	}
	body.Res = &types.CancelRetrievePropertiesExResponse{}
	return body
}

// decodeAnswer decodes a SOAP answer of vcsim into a methods.*Body, as govmomi's client does.
func decodeAnswer(data []byte, into interface{}) error {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.TypeFunc = types.TypeFunc()
	return dec.Decode(&soap.Envelope{Body: into})
}

func copyRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}
