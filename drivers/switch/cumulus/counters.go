package cumulus

import (
	"context"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
)

// counterCommand is NVUE's per-interface QoS statistics (CL 5.5+), with
// its output format in testdata/vendor/cumulus/show-counters-qos.txt:
// "Ingress Buffer Statistics", "Egress Queue Statistics", "PFC
// Statistics" and "Qos Port Statistics" tables.
const counterCommand = "nv show interface %s counters qos"

var _ drivers.CounterReader = (*Driver)(nil)

// CounterCommands are the show commands one telemetry poll sends: the
// QoS statistics of each port the spec names.
func (d *Driver) CounterCommands() []string { return []string{fmt.Sprintf(counterCommand, "<port>")} }

// cumulusLacks: the output has no PFC watchdog counts, and its egress
// discards are buffer discards in bytes (tx-uc-buffer-discards) plus
// WRED discards, not packets dropped per queue.
var cumulusLacks = []string{drivers.CounterPFCWatchdog, drivers.CounterQueueDropped}

// ReadCounters polls every port of the target's switch intent on one
// connection.
func (d *Driver) ReadCounters(ctx context.Context, t drivers.Target) (*drivers.Counters, error) {
	sw, err := drivers.SwitchIntent(t, Name)
	if err != nil {
		return nil, err
	}
	if len(sw.Ports) == 0 {
		return nil, fmt.Errorf("%s: no ports to read counters of", t.Device.Name)
	}
	cmds := make([]string, len(sw.Ports))
	for i, p := range sw.Ports {
		cmds[i] = fmt.Sprintf(counterCommand, p.Name)
	}
	outs, err := d.Poll(ctx, t, cmds)
	if err != nil {
		return nil, err
	}
	c := &drivers.Counters{Lacks: cumulusLacks}
	for i, p := range sw.Ports {
		pc, err := ParseCountersQoS(p.Name, outs[i])
		if err != nil {
			return nil, err
		}
		c.Samples = append(c.Samples, pc...)
	}
	return c, nil
}

// ParseCountersQoS reads one port's `nv show interface <port> counters
// qos`: rx/tx pause frames per switch-priority (PFC Statistics), the
// port's transmitted ECN-marked packets (no priority: NVUE counts them
// per port) and its 802.3x pause frames (Qos Port Statistics).
func ParseCountersQoS(port, out string) ([]drivers.Counter, error) {
	var cs []drivers.Counter
	pfc, ports := false, false
	for _, t := range clicore.Tables(out) {
		if sp, rx, tx := t.Col("switch-priority"), t.Col("rx-pause-frames"), t.Col("tx-pause-frames"); sp >= 0 && rx >= 0 && tx >= 0 {
			pfc = true
			for _, r := range t.Rows {
				for _, x := range []struct {
					dir string
					col int
				}{{"rx", rx}, {"tx", tx}} {
					if v, ok := clicore.Count(r[x.col]); ok {
						cs = append(cs, drivers.Counter{Port: port, Metric: drivers.CounterPFCPause, Direction: x.dir, Priority: r[sp], Value: v})
					}
				}
			}
		}
		if n, rx, tx := t.Col("Counter"), t.Col("Receive"), t.Col("Transmit"); n >= 0 && rx >= 0 && tx >= 0 {
			ports = true
			for _, r := range t.Rows {
				switch r[n] {
				case "ecn-marked-packets":
					if v, ok := clicore.Count(r[tx]); ok {
						cs = append(cs, drivers.Counter{Port: port, Metric: drivers.CounterECNMarked, Value: v})
					}
				case "pause-frames":
					for dir, col := range map[string]int{"rx": rx, "tx": tx} {
						if v, ok := clicore.Count(r[col]); ok {
							cs = append(cs, drivers.Counter{Port: port, Metric: drivers.CounterMACPause, Direction: dir, Value: v})
						}
					}
				}
			}
		}
	}
	if !pfc || !ports {
		first, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
		return nil, fmt.Errorf("nv show interface %s counters qos: no PFC Statistics and Qos Port Statistics tables (got %q)", port, first)
	}
	return cs, nil
}
