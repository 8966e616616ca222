package testutil

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// RestartingAPIServer is a Kubernetes API server as a client meets it
// across a restart: 503 to the first two requests (the outage), 403 to
// the third (restarted, its RBAC authorizer not caught up yet), then
// body with 200 OK. It counts the requests; ok, when set, refuses with
// 400 a request that is not the one expected.
func RestartingAPIServer(t *testing.T, body string, ok func(*http.Request) bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok != nil && !ok(r) {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch calls.Add(1) {
		case 1, 2:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`)
		case 3:
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","message":"RBAC: not yet","code":403}`)
		default:
			fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}
