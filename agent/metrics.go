package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fabctl/fabctl/drivers/host"
	"github.com/fabctl/fabctl/telemetry"
)

// MetricsHandler is the /metrics handler of a collector: the Prometheus
// text format, or OpenMetrics when the scraper asks for it.
func MetricsHandler(cs ...prometheus.Collector) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError}), nil
}

// ServeMetrics serves h at /metrics on ln until ctx ends.
func ServeMetrics(ctx context.Context, ln net.Listener, h http.Handler) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// WatchMetrics feeds the collector's DCB drift state from watch: one
// watch per host (its namespace), until ctx ends. Errors of a host's
// watch are passed to fail (nil: dropped); the drift gauge of a host
// whose watch failed stays as it was.
func WatchMetrics(ctx context.Context, c *telemetry.HostCollector, watch WatchFunc, fail func(host string, err error)) {
	c.WatchingDCB()
	type hw struct {
		netns  string
		ifaces []string
	}
	hosts := map[string]*hw{}
	var order []string
	for _, n := range c.NICs {
		h := n.Endpoint.Host
		if n.Endpoint.NIC.GUID != "" { // InfiniBand: no host DCB
			continue
		}
		e, ok := hosts[h.Name]
		if !ok {
			e = &hw{}
			if h.Connect.Kind == "netns" {
				e.netns = h.Connect.Netns
			}
			hosts[h.Name] = e
			order = append(order, h.Name)
		}
		e.ifaces = append(e.ifaces, n.Endpoint.NIC.Name)
	}
	for _, name := range order {
		e := hosts[name]
		go func(name string, e *hw) {
			err := watch(ctx, e.netns, e.ifaces, func(d host.Drift) { c.SetDrift(name, d.NIC, len(d.Changes)) })
			if err != nil && fail != nil && ctx.Err() == nil {
				fail(name, err)
			}
		}(name, e)
	}
}
