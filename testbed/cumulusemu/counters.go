package cumulusemu

import (
	"fmt"
	"strconv"
	"strings"
)

// PortCounters are one port's QoS counters as `nv show interface <port>
// counters qos` prints them (testdata/vendor/cumulus/show-counters-qos.txt,
// CL 5.14 QoS guide "Show Qos Counters"). Buffer discards are bytes.
type PortCounters struct {
	RxFrames, RxBufferDiscards, RxSharedDiscards  [8]uint64 // per priority-group
	TxFrames, TxBytes, TxUCDiscards, WREDDiscards [8]uint64 // per traffic-class
	PFCRx, PFCTx                                  [8]uint64 // per switch-priority
	PFCRxDuration, PFCTxDuration                  [8]uint64
	ECNMarked, MCDiscards                         uint64 // transmit
	PauseRx, PauseTx                              uint64
}

// SetCounters changes the counters of port (a test injects a pause storm
// or ECN marks).
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

// showCountersQoS answers `nv show interface <port> counters qos` (ok
// false: another command).
func (sw *Switch) showCountersQoS(a []string) (string, bool) {
	if len(a) != 5 || a[0] != "show" || a[1] != "interface" || a[3] != "counters" || a[4] != "qos" {
		return "", false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(a[2], "swp"))
	if !strings.HasPrefix(a[2], "swp") || err != nil || n < 1 || n > sw.opts.Ports {
		return "", false // not an interface of the switch: NVUE's wording for it is not in the corpus
	}
	var c PortCounters
	if p := sw.counters[a[2]]; p != nil {
		c = *p
	}
	num := func(v uint64) string { return strconv.FormatUint(v, 10) }
	bytes := func(v uint64) string { return num(v) + " Bytes" }
	var b strings.Builder
	section := func(title string, hdr []string, rows [][]string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(title + "\n" + strings.Repeat("=", len(title)+3) + "\n")
		b.WriteString(nvTable(hdr, rows))
	}
	var in, eq, pfc [][]string
	for i := 0; i < 8; i++ {
		in = append(in, []string{num(uint64(i)), num(c.RxFrames[i]), bytes(c.RxBufferDiscards[i]), bytes(c.RxSharedDiscards[i])})
		eq = append(eq, []string{num(uint64(i)), num(c.TxFrames[i]), bytes(c.TxBytes[i]), bytes(c.TxUCDiscards[i]), num(c.WREDDiscards[i])})
		pfc = append(pfc, []string{num(uint64(i)), num(c.PFCRx[i]), num(c.PFCRxDuration[i]), num(c.PFCTx[i]), num(c.PFCTxDuration[i])})
	}
	section("Ingress Buffer Statistics", []string{"priority-group", "rx-frames", "rx-buffer-discards", "rx-shared-buffer-discards"}, in)
	section("Egress Queue Statistics", []string{"traffic-class", "tx-frames", "tx-bytes", "tx-uc-buffer-discards", "wred-discards"}, eq)
	section("PFC Statistics", []string{"switch-priority", "rx-pause-frames", "rx-pause-duration", "tx-pause-frames", "tx-pause-duration"}, pfc)
	section("Qos Port Statistics", []string{"Counter", "Receive", "Transmit"}, [][]string{
		{"ecn-marked-packets", "n/a", num(c.ECNMarked)},
		{"mc-buffer-discards", "n/a", num(c.MCDiscards)},
		{"pause-frames", num(c.PauseRx), num(c.PauseTx)},
	})
	return b.String(), true
}

// nvTable is NVUE's table layout in the guide's example: indented four
// spaces, each column as wide as its widest cell or header, left-aligned
// and padded, columns two spaces apart, a dash rule under the header.
func nvTable(hdr []string, rows [][]string) string {
	w := make([]int, len(hdr))
	for i, h := range hdr {
		w[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	line := func(cells []string) string {
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprintf("%-*s", w[i], c)
		}
		return "    " + strings.Join(parts, "  ") + "\n"
	}
	dash := make([]string, len(hdr))
	for i := range hdr {
		dash[i] = strings.Repeat("-", w[i])
	}
	var b strings.Builder
	b.WriteString(line(hdr))
	b.WriteString(line(dash))
	for _, r := range rows {
		b.WriteString(line(r))
	}
	return b.String()
}
