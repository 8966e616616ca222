package traffic

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/internal/sysattr"
)

// Counters are one NIC's counters at one moment, by source-prefixed name:
// "rdma:<hw_counters or counters file>" from sysfs,
// "pfc:req:<prio>" / "pfc:ind:<prio>" from DCB netlink (IEEE PFC stats),
// "eth:<name>" from ethtool -S.
type Counters map[string]uint64

// Diff is after minus before; a counter that went backwards (reset, or a
// driver reload) is left out and named in the second result.
func Diff(before, after Counters) (Counters, []string) {
	d := Counters{}
	var reset []string
	for k, a := range after {
		b, ok := before[k]
		switch {
		case !ok:
		case a < b:
			reset = append(reset, k)
		case a > b:
			d[k] = a - b
		}
	}
	sort.Strings(reset)
	return d, reset
}

// ReadRDMA reads an RDMA port's counters from sysfs: hw_counters (driver
// statistics: rxe, mlx5, irdma ...) and counters (the IB PMA port counters).
func ReadRDMA(sysRoot, dev string, port int) (Counters, error) {
	return ReadRDMAOnly(sysRoot, dev, port, nil)
}

// ReadRDMAOnly is ReadRDMA reading only the counters keep accepts (by
// their "rdma:" name; nil keeps all): on mlx5 every hw_counters file read
// is a firmware query, so a periodic reader reads only what it reports.
func ReadRDMAOnly(sysRoot, dev string, port int, keep func(name string) bool) (Counters, error) {
	c := Counters{}
	base := filepath.Join(sysRoot, "class/infiniband", dev, "ports", strconv.Itoa(port))
	if _, err := os.Stat(base); err != nil {
		return nil, fmt.Errorf("no RDMA port %s/%d in sysfs", dev, port)
	}
	for _, dir := range []string{"hw_counters", "counters"} {
		ents, err := os.ReadDir(filepath.Join(base, dir))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if keep != nil && !keep("rdma:"+e.Name()) {
				continue
			}
			s, err := sysattr.Read(filepath.Join(base, dir, e.Name()))
			if err != nil {
				continue // write-only or unsupported counters fail to read
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				continue
			}
			c["rdma:"+e.Name()] = v
		}
	}
	return c, nil
}

// Merge adds src's counters to c.
func (c Counters) Merge(src map[string]uint64, prefix string) {
	for k, v := range src {
		c[prefix+k] = v
	}
}

// Loss indicators: counters that grow only when packets were lost on the
// way (sequence gaps, discards). On a lossless class any of them is a
// failure. Names from the kernel drivers' hw_counters (mlx5, rxe, irdma,
// bnxt_re) and mlx5's ethtool statistics.
var lossCounters = map[string]bool{
	"rdma:out_of_sequence":     true, // mlx5: responder saw a PSN gap
	"rdma:packet_seq_err":      true, // mlx5: requester got a NAK sequence error
	"rdma:implied_nak_seq_err": true,
	"rdma:out_of_seq_request":  true, // rxe: responder saw a PSN gap
	"rdma:rcvd_seq_err":        true, // rxe: requester got a NAK sequence error
	"rdma:out_of_buffer":       true, // mlx5: dropped for lack of a receive WQE
	"rdma:port_rcv_errors":     true,
	"rdma:port_xmit_discards":  true,
	"rdma:rx_out_of_buffer":    true,
	"eth:rx_discards_phy":      true,
	"eth:rx_out_of_buffer":     true,
}

// softSeqCounters are a software RDMA device's sequence-error counts
// (rxe's responder and requester). rxe counts them for any PSN gap it
// sees (drivers/infiniband/sw/rxe: rxe_resp.c check_psn,
// RXE_CNT_OUT_OF_SEQ_REQ; rxe_comp.c, RXE_CNT_RCV_SEQ_ERR on a sequence
// NAK), and a gap also opens when the device's own queues and kernel
// threads lose or delay a packet that the wire delivered (a VM run of
// fabctl's demo saw out_of_seq_request=1 with every packet counted on the
// wire). Between two software devices they are the device's own
// retransmissions; the NICs' drop counters say whether the fabric lost
// anything.
var softSeqCounters = map[string]bool{
	"rdma:out_of_seq_request": true,
	"rdma:rcvd_seq_err":       true,
}

// netDropCounters are the netdev's own drops and errors (rtnetlink link
// statistics): packets the NIC or the kernel below the RDMA device
// dropped. Between software RDMA devices they are the fabric-loss signal.
var netDropCounters = map[string]bool{
	"net:rx_dropped":       true,
	"net:tx_dropped":       true,
	"net:rx_errors":        true,
	"net:tx_errors":        true,
	"net:rx_missed_errors": true,
	"net:rx_fifo_errors":   true,
	// tc's qdisc drops on the netdev (SnapshotOnly): the veth "fabric"
	// of the VM testbed drops there.
	"tc:drops": true,
}

// hasAny reports whether the counters include any of set.
func (c Counters) hasAny(set map[string]bool) bool {
	for k := range c {
		if set[k] {
			return true
		}
	}
	return false
}

// Retransmission counters: the sender retried (a timeout or a NAK). On a
// lossless fabric they mean loss or a too-short ACK timeout; software
// RDMA under heavy load also retries when ACKs are merely late.
var retryCounters = map[string]bool{
	"rdma:local_ack_timeout_err": true, // mlx5
	"rdma:duplicate_request":     true, // responder saw a retransmission (mlx5, rxe)
	"rdma:completer_retry_err":   true, // rxe
	"rdma:rnr_nak_retry_err":     true,
	"rdma:retry_exceeded_err":    true, // rxe: retries exhausted (the QP failed)
	"rdma:req_cqe_error":         true,
}

// prioCounter matches per-priority ethtool statistics (mlx5
// rx_prio3_bytes / tx_prio3_packets; ice rx_priority_3_xoff ...).
var prioCounter = regexp.MustCompile(`^eth:(rx|tx)_prio(?:rity_)?(\d)_(bytes|packets)$`)

// congestionCounter matches ECN marks, CNPs and PFC frames: not loss, but
// the fabric's congestion signals, worth showing next to a lossless
// class's verdict (mlx5 np_cnp_sent, rp_cnp_handled,
// np_ecn_marked_roce_packets; DCB PFC requests and indications).
var congestionCounter = regexp.MustCompile(`^(rdma:.*(cnp|ecn).*|pfc:(req|ind):\d|eth:(rx|tx)_prio\d_pause)$`)

// Congestion returns the congestion signals that grew.
func (d Counters) Congestion() Counters {
	out := Counters{}
	for k, v := range d {
		if v > 0 && congestionCounter.MatchString(k) {
			out[k] = v
		}
	}
	return out
}

// Loss returns the loss indicators that grew.
func (d Counters) Loss() Counters { return d.pick(lossCounters) }

// Retries returns the retransmission counters that grew.
func (d Counters) Retries() Counters { return d.pick(retryCounters) }

func (d Counters) pick(set map[string]bool) Counters {
	out := Counters{}
	for k, v := range d {
		if set[k] && v > 0 {
			out[k] = v
		}
	}
	return out
}

// Observable reports whether the counters include any loss indicator, so
// "no loss" means something.
func (c Counters) Observable() bool {
	for k := range c {
		if lossCounters[k] {
			return true
		}
	}
	return false
}

// PrioShare reports how much of the per-priority traffic (packets, else
// bytes) in the delta went on priority prio, from ethtool's
// per-priority counters; ok is false when the NIC has none.
func (d Counters) PrioShare(before Counters, prio int) (on, total uint64, ok bool) {
	for _, unit := range []string{"packets", "bytes"} {
		found := false
		for k := range before {
			if m := prioCounter.FindStringSubmatch(k); m != nil && m[3] == unit {
				found = true
			}
		}
		if !found {
			continue
		}
		for k, v := range d {
			m := prioCounter.FindStringSubmatch(k)
			if m == nil || m[3] != unit {
				continue
			}
			total += v
			if m[2] == strconv.Itoa(prio) {
				on += v
			}
		}
		return on, total, true
	}
	return 0, 0, false
}

// PFC returns the PFC frames per priority in the delta: requests (sent)
// and indications (received).
func (d Counters) PFC() (req, ind [8]uint64) {
	for p := 0; p < 8; p++ {
		req[p] = d["pfc:req:"+strconv.Itoa(p)]
		ind[p] = d["pfc:ind:"+strconv.Itoa(p)]
	}
	return req, ind
}

// String lists counters as "name=value" in key order, without the rdma:
// and eth: prefixes (PFC counters keep theirs: pfc:ind:3).
func (c Counters) String() string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		name := strings.TrimPrefix(strings.TrimPrefix(k, "rdma:"), "eth:")
		fmt.Fprintf(&b, "%s=%d", name, c[k])
	}
	return b.String()
}
