package telemetry

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// AddPolled adds the SSH CLI switches of s whose driver in reg reads
// counters (drivers.CounterReader; PolledPlatforms lists them) to the
// collector, and returns their names. Every other switch of s that the
// collector neither streams nor polls is returned second with the reason,
// and is exported as not seen: fabctl_switch_up 0 with that reason as its
// reason label, so a blind spot is a series an alert can see, not an
// absence. What a switch is comes from its platform's descriptor as the
// loader was told it: a gNMI platform's switches are streamed
// (NewSwitchCollector), an InfiniBand platform's have no driver to poll
// (the subnet manager programs them; fabctl validate reads them over
// MADs) and are left out.
func (c *SwitchCollector) AddPolled(s *spec.Spec, reg *drivers.Registry) (added []string, skipped map[string]string) {
	skipped = map[string]string{}
	for _, sw := range s.Switches {
		if _, ok := c.plats[sw.Name]; ok || sw.InfiniBand {
			continue
		}
		if sw.Driver == drivers.TransportGNMI {
			c.notSeen(sw, fmt.Sprintf("not streamed: no gNMI telemetry paths for the %s platform", sw.Platform))
			skipped[sw.Name] = c.unseen[sw.Name]
			continue
		}
		d, err := reg.New(sw.Platform)
		if err != nil {
			c.notSeen(sw, "not polled: "+err.Error())
			skipped[sw.Name] = c.unseen[sw.Name]
			continue
		}
		cr, ok := d.(drivers.CounterReader)
		if !ok {
			c.notSeen(sw, fmt.Sprintf("not polled: the %s driver reads no counters", sw.Platform))
			skipped[sw.Name] = c.unseen[sw.Name]
			continue
		}
		c.add(s, sw, nil)
		c.polled[sw.Name] = cr
		added = append(added, sw.Name)
	}
	return added, skipped
}

// notSeen records a switch of the spec the collector can neither stream
// nor poll: exported as fabctl_switch_up 0 with the reason.
func (c *SwitchCollector) notSeen(sw *spec.Switch, reason string) {
	c.plats[sw.Name] = sw.Platform
	c.unseen[sw.Name] = reason
}

// PolledPlatforms are the SSH CLI platforms of reg whose driver reads
// counters (drivers.CounterReader), in registry order: the switches
// telemetry serve polls.
func PolledPlatforms(reg *drivers.Registry, platforms []string) []string {
	var out []string
	for _, p := range platforms {
		d, err := reg.New(p)
		if err != nil {
			continue
		}
		if _, ok := d.(drivers.CounterReader); ok {
			out = append(out, p)
		}
	}
	return out
}

// Polled are the SSH CLI switches the collector polls, sorted.
func (c *SwitchCollector) Polled() []string {
	var out []string
	for n := range c.polled {
		out = append(out, n)
	}
	sortStrings(out)
	return out
}

// Take replaces switch sw's polled values with one poll's counters.
func (c *SwitchCollector) Take(sw string, cs *drivers.Counters) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.vals {
		if k.sw == sw {
			delete(c.vals, k)
		}
	}
	for _, x := range cs.Samples {
		if _, ok := switchMetrics[x.Metric]; !ok {
			continue
		}
		c.vals[seriesKey{metric: x.Metric, sw: sw, port: x.Port, dir: x.Direction, prio: x.Priority}] = x.Value
	}
	// counter_supported names a counter without _total, as the gNMI
	// platforms' Lacks do.
	lacks := make([]string, len(cs.Lacks))
	for i, l := range cs.Lacks {
		lacks[i] = strings.TrimSuffix(l, "_total")
	}
	c.lacks[sw] = lacks
}

// PollOptions tune Poll.
type PollOptions struct {
	Interval time.Duration // between polls (default 10s)
	Timeout  time.Duration // one poll's bound (default Interval)
	Insecure bool
	// Until, when set, ends polling: no poll starts after it, and Poll
	// returns once each switch's poll in flight has finished. Every
	// switch is polled at least once, however close Until is (serve
	// --once reports each switch's state after one complete poll).
	Until time.Time
}

// Poll reads every polled SSH CLI switch's counters through its driver
// (one connection, the platform's show commands) every Interval until
// ctx ends; a failed poll marks the switch down (fabctl_switch_up 0)
// and keeps its last values out of the scrape.
func Poll(ctx context.Context, s *spec.Spec, c *SwitchCollector, o PollOptions) {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = o.Interval
	}
	var wg sync.WaitGroup
	for _, name := range c.Polled() {
		sw, cr := s.Switch(name), c.polled[name]
		dev := intent.Device{Kind: intent.KindSwitch, Name: sw.Name, Platform: sw.Platform, Driver: sw.Driver,
			Address: sw.Address, Role: sw.Role, Credentials: sw.Credentials}
		// The intent carries the ports to read, for platforms whose
		// counter commands take one port (Cumulus NVUE).
		in := &intent.Switch{Device: dev}
		for _, p := range SwitchPorts(s, sw) {
			in.Ports = append(in.Ports, intent.Port{Name: p.Labels.Port})
		}
		t := drivers.Target{Device: dev, Intent: in, Credentials: s.CredentialsByName(sw.Credentials), Insecure: o.Insecure}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(o.Interval)
			defer tick.Stop()
			for {
				// Each poll gets its whole Timeout: a poll started as ctx's
				// deadline arrives would connect with no time left and call
				// a healthy switch unreachable (a negative connect timeout).
				pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.Timeout)
				stop := context.AfterFunc(ctx, cancel)
				cs, err := cr.ReadCounters(pctx, t)
				stop()
				cancel()
				if ctx.Err() != nil {
					return // cut short: neither up nor down
				}
				if err != nil {
					c.Take(name, &drivers.Counters{})
					c.SetUp(name, false, err)
				} else {
					c.Take(name, cs)
					c.SetUp(name, true, nil)
				}
				if !o.Until.IsZero() && !time.Now().Before(o.Until) {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				if !o.Until.IsZero() && !time.Now().Before(o.Until) {
					return
				}
			}
		}()
	}
	wg.Wait()
}
