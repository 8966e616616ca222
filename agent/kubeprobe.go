package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// readiness is what the agent's readiness probe reports: whether its
// watch of the node's FabricHostConfig is open, whether its status
// writes go through, and since when the answer is what it is.
type readiness struct {
	watching    bool
	watchReason string
	statusErr   string // the last status write's error while it retries
	nodeErr     string // the last read of the Node's error while untaint retries
	since       time.Time
}

func (r *readiness) ok() bool { return r.watching && r.statusErr == "" && r.nodeErr == "" }

// change updates r under a.mu, restarting the clock when the answer
// changes.
func (a *KubeAgent) changeReady(fn func(r *readiness)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	was, started := a.ready.ok(), !a.ready.since.IsZero()
	fn(&a.ready)
	if !started || was != a.ready.ok() {
		a.ready.since = a.now()
	}
}

func (a *KubeAgent) setReady(watching bool, reason string) {
	a.changeReady(func(r *readiness) { r.watching, r.watchReason = watching, reason })
}

// setNodeErr marks the agent not ready while it retries reading its Node
// (the taint removal after an apply), as a failing status write does: an
// agent that cannot reach the apiserver there must not answer 200.
func (a *KubeAgent) setNodeErr(err error) {
	a.changeReady(func(r *readiness) {
		r.nodeErr = ""
		if err != nil {
			r.nodeErr = "cannot read the Node " + a.Node + ": " + err.Error()
		}
	})
}

func (a *KubeAgent) setStatusErr(err error) {
	a.changeReady(func(r *readiness) {
		r.statusErr = ""
		if err != nil {
			r.statusErr = "cannot write the status of FabricHostConfig " + a.Node + ": " + err.Error()
		}
	})
}

// Ready reports whether the agent's watch of its node's object is open
// and its status writes go through, with the reason and since when it
// has been so. A new agent is not ready until it has listed its object,
// converged it and opened the watch; it is not ready while it cannot
// list or watch (an apiserver it cannot reach, RBAC refusing it),
// between a watch ending and the next one opening, while a status
// write fails and is retried, and while reading its Node (the taint
// removal) fails and is retried.
func (a *KubeAgent) Ready() (ok bool, reason string, since time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ready.since.IsZero() {
		return false, "starting: FabricHostConfig " + a.Node + " not listed yet", time.Time{}
	}
	reason = a.ready.watchReason
	if a.ready.nodeErr != "" {
		reason = a.ready.nodeErr
	}
	if a.ready.statusErr != "" {
		reason = a.ready.statusErr
	}
	return a.ready.ok(), reason, a.ready.since
}

// ProbeHandler answers the DaemonSet's readiness probe: GET /readyz is
// 200 while Ready, 503 otherwise, with the reason as text.
func (a *KubeAgent) ProbeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ok, reason, since := a.Ready()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		code := http.StatusOK
		if !ok {
			code = http.StatusServiceUnavailable
		}
		w.WriteHeader(code)
		if since.IsZero() {
			fmt.Fprintln(w, reason)
			return
		}
		fmt.Fprintf(w, "%s (since %s)\n", reason, since.UTC().Format(time.RFC3339))
	})
	return mux
}

// ServeProbe listens on addr and answers the readiness probe until ctx
// ends. The listener is opened before it returns, so a port another
// process holds is an error here, not a probe that never answers.
func (a *KubeAgent) ServeProbe(ctx context.Context, addr string) (<-chan error, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("readiness probe: %w (another process on the node has this port: pick another with fabctl kube manifests --probe-port)", err)
	}
	srv := &http.Server{Handler: a.ProbeHandler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 8 << 10}
	done := make(chan error, 1)
	go func() {
		err := srv.Serve(l)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return done, nil
}
