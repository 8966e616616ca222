package sonicemu

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// PortCounters are one port's data-plane counters as COUNTERS_DB holds
// them; the emulator prints them with the show commands fabctl telemetry
// polls (testdata/vendor/sonic/show-counters.txt, from sonic-utilities
// scripts/pfcstat, queuestat, wredstat and pfcwd/main.py):
//
//	show pfc counters          PFCRx/PFCTx per priority
//	show queue counters        per queue UC0-UC9 (Counter pkts/bytes, Drop pkts/bytes), MC10-MC19
//	show queue wredcounters    per queue: WRED drops, ECN marks
//	show pfcwd stats           per lossless port:queue with storms: STATUS, DETECTED/RESTORED
//
// The queue layout (10 unicast, 10 multicast queues) is the one
// sonic-utilities' mock COUNTERS_DB gives a port (tests/queue_counter_test.py).
type PortCounters struct {
	PFCRx, PFCTx            [8]uint64
	QueuePkts, QueueDrops   [10]uint64
	WREDDrops, ECNMarked    [10]uint64
	StormDetected, Restored [8]uint64
	Stormed                 [8]bool
}

// SetCounters changes the counters of port (the live counters a test
// injects: a pause storm, ECN marks, a watchdog storm).
func (sw *Switch) SetCounters(port string, fn func(*PortCounters)) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.counters == nil {
		sw.counters = map[string]*PortCounters{}
	}
	c := sw.counters[port]
	if c == nil {
		c = &PortCounters{}
		sw.counters[port] = c
	}
	fn(c)
}

// ports are the PORT table's names in natural order (natsorted, as the
// scripts print them).
func (sw *Switch) ports() []string {
	var out []string
	if pt, ok := sw.db["PORT"].(map[string]any); ok {
		for p := range pt {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(out[i], "Ethernet"))
		b, _ := strconv.Atoi(strings.TrimPrefix(out[j], "Ethernet"))
		if a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}

func (sw *Switch) countersOf(p string) PortCounters {
	if c := sw.counters[p]; c != nil {
		return *c
	}
	return PortCounters{}
}

// showCounters answers the counter show commands (ok false: not one).
func (s *shell) showCounters(args []string) (string, int, bool) {
	cmd := strings.Join(args, " ")
	sw := s.sw
	sw.mu.Lock()
	defer sw.mu.Unlock()
	switch cmd {
	case "pfc counters":
		// scripts/pfcstat: the Rx table, a blank line, the Tx table;
		// format_number_with_comma.
		var b strings.Builder
		for i, dir := range []string{"Rx", "Tx"} {
			if i > 0 {
				b.WriteString("\n")
			}
			rows := [][]string{}
			for _, p := range sw.ports() {
				c := sw.countersOf(p)
				v := c.PFCRx
				if dir == "Tx" {
					v = c.PFCTx
				}
				r := []string{p}
				for _, n := range v {
					r = append(r, comma(n))
				}
				rows = append(rows, r)
			}
			b.WriteString(tabulate([]string{"Port " + dir, "PFC0", "PFC1", "PFC2", "PFC3", "PFC4", "PFC5", "PFC6", "PFC7"}, rows))
		}
		return b.String(), 0, true
	case "queue counters", "queue wredcounters":
		// scripts/queuestat l.447-453: "For namespace <ns>:" (empty on a
		// single-ASIC switch), the port's table, a blank line;
		// wredstat: the table and a blank line.
		hdr := []string{"Port", "TxQ", "Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"}
		if cmd == "queue wredcounters" {
			hdr = []string{"Port", "TxQ", "WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"}
		}
		var b strings.Builder
		for _, p := range sw.ports() {
			c := sw.countersOf(p)
			var rows [][]string
			for q := 0; q < 20; q++ {
				tag := fmt.Sprintf("UC%d", q)
				var a, d uint64
				if q >= 10 {
					tag = fmt.Sprintf("MC%d", q)
				} else if cmd == "queue counters" {
					a, d = c.QueuePkts[q], c.QueueDrops[q]
				} else {
					a, d = c.WREDDrops[q], c.ECNMarked[q]
				}
				// Bytes are not modelled: 0 (the emulator forwards nothing).
				rows = append(rows, []string{p, tag, fmt.Sprint(a), "0", fmt.Sprint(d), "0"})
			}
			if cmd == "queue counters" {
				b.WriteString("For namespace :\n")
			}
			b.WriteString(tabulate(hdr, rows))
			b.WriteString("\n")
		}
		return b.String(), 0, true
	case "pfcwd stats":
		// pfcwd/main.py l.157-162: a queue whose stats are all 0/0 is
		// left out (no -e); STATUS is PFC_WD_STATUS.
		var rows [][]string
		for _, p := range sw.ports() {
			c := sw.countersOf(p)
			for q := 0; q < 8; q++ {
				if c.StormDetected[q] == 0 && c.Restored[q] == 0 {
					continue
				}
				st := "operational"
				if c.Stormed[q] {
					st = "stormed"
				}
				rows = append(rows, []string{fmt.Sprintf("%s:%d", p, q), st, fmt.Sprintf("%d/%d", c.StormDetected[q], c.Restored[q]), "0/0", "0/0", "0/0", "0/0"})
			}
		}
		return tabulate([]string{"QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP", "TX LAST OK/DROP", "RX LAST OK/DROP"}, rows), 0, true
	}
	return "", 0, false
}

// comma is utilities_common/netstat.py format_number_with_comma.
func comma(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// tabulate is python-tabulate's tablefmt='simple' with stralign='right'
// as the scripts call it: a column is as wide as its widest cell and its
// header plus 2 (tabulate's MIN_PADDING for headers), cells and headers
// right-aligned, columns joined by two spaces, a dash rule under the
// header.
func tabulate(hdr []string, rows [][]string) string { return tabulateAligned(true, hdr, rows) }

// tabulateAligned is tablefmt='simple' right-aligned, or with tabulate's
// default alignment for text, left (lldpshow): cells padded on the
// right, trailing blanks trimmed.
func tabulateAligned(right bool, hdr []string, rows [][]string) string {
	w := make([]int, len(hdr))
	for i, h := range hdr {
		w[i] = len(h) + 2
	}
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	line := func(cells []string) string {
		parts := make([]string, len(cells))
		for i, c := range cells {
			pad := strings.Repeat(" ", w[i]-len(c))
			if right {
				parts[i] = pad + c
			} else {
				parts[i] = c + pad
			}
		}
		l := strings.Join(parts, "  ")
		if !right {
			l = strings.TrimRight(l, " ")
		}
		return l + "\n"
	}
	var b strings.Builder
	b.WriteString(line(hdr))
	dashes := make([]string, len(hdr))
	for i := range hdr {
		dashes[i] = strings.Repeat("-", w[i])
	}
	b.WriteString(strings.Join(dashes, "  ") + "\n")
	for _, r := range rows {
		b.WriteString(line(r))
	}
	return b.String()
}
