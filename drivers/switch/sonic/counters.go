package sonic

import (
	"context"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/clicore"
)

// The show commands fabctl telemetry polls on SONiC, with their output
// formats in testdata/vendor/sonic/show-counters.txt (sonic-utilities
// scripts/pfcstat, queuestat, wredstat and pfcwd/main.py).
var counterCommands = []string{
	"show pfc counters",       // Port Rx / Port Tx x PFC0..PFC7
	"show queue counters",     // per port and queue: Drop/pkts
	"show queue wredcounters", // per port and queue: EcnMarked/pkts
	"show pfcwd stats",        // per port:queue: STORM DETECTED/RESTORED
}

var _ drivers.CounterReader = (*Driver)(nil)

// CounterCommands are the show commands one telemetry poll sends.
func (d *Driver) CounterCommands() []string { return append([]string(nil), counterCommands...) }

// ReadCounters polls the data-plane counters on one connection.
func (d *Driver) ReadCounters(ctx context.Context, t drivers.Target) (*drivers.Counters, error) {
	outs, err := d.Poll(ctx, t, counterCommands)
	if err != nil {
		return nil, err
	}
	return ParseCounters(outs[0], outs[1], outs[2], outs[3])
}

// ParseCounters reads the four outputs: PFC pause frames per port,
// direction and priority (pfcstat), unicast queue drops and ECN marks
// (queuestat, wredstat: queue UC<n> is traffic class n, fabctl maps TC n
// to queue n) and the PFC watchdog's storms per port:queue (pfcwd; a
// queue it leaves out has none). SONiC's show commands carry no per-port
// ingress discards in these tables: in_discards_total is not polled.
func ParseCounters(pfc, queues, wred, pfcwd string) (*drivers.Counters, error) {
	var c drivers.Counters
	n := 0
	for _, t := range clicore.Tables(pfc) {
		if len(t.Header) != 9 || (t.Header[0] != "Port Rx" && t.Header[0] != "Port Tx") {
			continue
		}
		dir := strings.ToLower(strings.TrimPrefix(t.Header[0], "Port "))
		for _, r := range t.Rows {
			for p := 0; p < 8 && p+1 < len(r); p++ {
				if v, ok := clicore.Count(r[p+1]); ok {
					c.Samples = append(c.Samples, drivers.Counter{Port: r[0], Metric: drivers.CounterPFCPause, Direction: dir, Priority: fmt.Sprint(p), Value: v})
				}
			}
		}
		n++
	}
	if n != 2 {
		return nil, fmt.Errorf("show pfc counters: want the Port Rx and Port Tx tables (sonic-utilities pfcstat), found %d", n)
	}
	if err := queueTable(&c, "show queue counters", queues, "Drop/pkts", drivers.CounterQueueDropped); err != nil {
		return nil, err
	}
	if err := queueTable(&c, "show queue wredcounters", wred, "EcnMarked/pkts", drivers.CounterECNMarked); err != nil {
		return nil, err
	}
	for _, t := range clicore.Tables(pfcwd) {
		q, st := t.Col("QUEUE"), t.Col("STORM DETECTED/RESTORED")
		if q < 0 || st < 0 {
			continue
		}
		for _, r := range t.Rows {
			port, prio, ok1 := strings.Cut(r[q], ":")
			det, _, ok2 := strings.Cut(r[st], "/")
			v, ok3 := clicore.Count(det)
			if ok1 && ok2 && ok3 {
				c.Samples = append(c.Samples, drivers.Counter{Port: port, Metric: drivers.CounterPFCWatchdog, Priority: prio, Value: v})
			}
		}
	}
	return &c, nil
}

// queueTable reads column col of the unicast queues (UC<n>) of a
// queuestat/wredstat output. An output without a table is no queue
// counters at all (queuestat prints nothing for a port without them).
func queueTable(c *drivers.Counters, cmd, out, col, metric string) error {
	found := false
	for _, t := range clicore.Tables(out) {
		p, q, v := t.Col("Port"), t.Col("TxQ"), t.Col(col)
		if p < 0 || q < 0 || v < 0 {
			continue
		}
		found = true
		for _, r := range t.Rows {
			prio, ok := strings.CutPrefix(r[q], "UC")
			if !ok {
				continue // MC/ALL queues carry no traffic class of their own
			}
			if n, ok := clicore.Count(r[v]); ok {
				c.Samples = append(c.Samples, drivers.Counter{Port: r[p], Metric: metric, Priority: prio, Value: n})
			}
		}
	}
	if !found && strings.TrimSpace(out) != "" {
		return fmt.Errorf("%s: no table with Port, TxQ and %s", cmd, col)
	}
	return nil
}
