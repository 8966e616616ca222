package traffic

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// WireObserver counts the RoCEv2 packets (IPv4, UDP 4791) arriving on a
// netdev, all of them and those carrying one DSCP, with two u32
// classifiers on the clsact ingress hook whose actions only count
// ("continue": classification goes on, nothing is dropped or changed).
//
// It sees what a software RDMA device (rxe) puts on the wire, because
// those packets pass through the kernel's network stack. A hardware
// NIC's RoCE traffic bypasses it: there the per-priority ethtool counters
// are the evidence (Counters.PrioShare).
//
// Counting is exact although two filters count and other tests' traffic
// may be crossing the netdev while they are installed and read: a packet
// passes the all-filter first and the DSCP filter right after it, so
//   - the counts start from a reading taken once both filters are in
//     place (a packet that arrived between the two installs is not
//     counted as "another DSCP");
//   - the final reading waits until two dumps 10 ms apart agree (no
//     packet between the filters). When another test keeps the netdev
//     busy for longer than wireSettle, it takes the all-count from the
//     earlier dump and the DSCP count from the later one: a packet caught
//     between the filters then never counts as "another DSCP"; the price
//     is that the DSCP packets of those last 10 ms could offset as many
//     remarked ones (a remark on the way marks far more).
//
// With QP numbers given, it counts only the RoCEv2 packets addressed to
// those QPs (the BTH destination QP, InfiniBand Architecture Specification
// vol. 1, 9.2: bytes 5-7 of the base transport header, which follows the
// 8-byte UDP header): a pair's own traffic, not another pair's, nor the
// connection manager's MADs (QP1), nor a late retransmission of an earlier
// test's QP. Each QP then has its own two filters (prefs[2i] counts all of
// its packets, prefs[2i+1] those with the DSCP).
type WireObserver struct {
	h         *netlink.Handle
	link      netlink.Link
	key       string
	prefs     []uint16
	baseAll   uint64
	baseMatch uint64
}

// MaxWireQPs bounds the QPs an observer filters on one by one; a test with
// more QPs is counted by port only (every RoCEv2 packet on the netdev).
const MaxWireQPs = 64

// wireSettle bounds how long a final reading waits for the netdev's RoCE
// traffic to pause; wirePoll is the gap between its dumps.
var (
	wireSettle = 3 * time.Second
	wirePoll   = 10 * time.Millisecond
)

// Observers of concurrent tests may share a netdev (a ring round uses
// every NIC twice): each gets its own filter priorities, and the clsact
// qdisc is shared, added by the first and removed by the last (unless it
// was there before).
var (
	wireMu   sync.Mutex
	wireNext uint16 = wirePrefBase
	clsact          = map[string]*qdiscRef{}
)

type qdiscRef struct {
	users int
	added bool
}

// Filter priorities of the counters: high numbers, after any filter an
// operator installed, so ours never change what theirs see.
const wirePrefBase = 0xf000

const roceV2Port = 4791

// u32 keys on the IPv4 header (offsets from the network header): IHL 5
// (RoCE carries no IP options), protocol UDP, destination port 4791.
// qpn < 0 matches any destination QP; else the BTH's destination QP,
// the low 24 bits of the 32-bit word at 20 (IP) + 8 (UDP) + 4.
func roceKeys(dscp int, qpn int64) []nl.TcU32Key {
	first := nl.TcU32Key{Mask: 0x0f000000, Val: 0x05000000, Off: 0}
	if dscp >= 0 {
		first.Mask |= 0x00fc0000
		first.Val |= uint32(dscp) << 18
	}
	keys := []nl.TcU32Key{
		first,
		{Mask: 0x00ff0000, Val: unix.IPPROTO_UDP << 16, Off: 8},
		{Mask: 0x0000ffff, Val: roceV2Port, Off: 20},
	}
	if qpn >= 0 {
		keys = append(keys, nl.TcU32Key{Mask: 0x00ffffff, Val: uint32(qpn) & 0x00ffffff, Off: 32})
	}
	return keys
}

func clsactQdisc(link netlink.Link) *netlink.GenericQdisc {
	return &netlink.GenericQdisc{QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index,
		Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT}, QdiscType: "clsact"}
}

// ObserveWire starts counting on netdev (h: a netlink handle in the
// netdev's namespace; key names the netdev across handles, e.g.
// "netns:h1/eth1"), the packets addressed to qpns (none, or more than
// MaxWireQPs: every RoCEv2 packet).
func ObserveWire(h *netlink.Handle, key, netdev string, dscp int, qpns ...uint32) (*WireObserver, error) {
	link, err := h.LinkByName(netdev)
	if err != nil {
		return nil, fmt.Errorf("wire counters: %s: %w", netdev, err)
	}
	wireMu.Lock()
	defer wireMu.Unlock()
	ref := clsact[key]
	if ref == nil {
		ref = &qdiscRef{}
		switch err := h.QdiscAdd(clsactQdisc(link)); {
		case err == nil:
			ref.added = true
		case errors.Is(err, unix.EEXIST):
		default:
			return nil, fmt.Errorf("wire counters: clsact on %s: %w", netdev, err)
		}
		clsact[key] = ref
	}
	ref.users++
	targets := []int64{-1}
	if len(qpns) > 0 && len(qpns) <= MaxWireQPs {
		targets = targets[:0]
		for _, q := range qpns {
			targets = append(targets, int64(q))
		}
	}
	if int(wireNext)+2*len(targets) > 0xfff0 {
		wireNext = wirePrefBase
	}
	w := &WireObserver{h: h, link: link, key: key}
	for _, q := range targets {
		for _, d := range []int{-1, dscp} {
			pref := wireNext
			wireNext++
			w.prefs = append(w.prefs, pref)
			act := &netlink.GenericAction{ActionAttrs: netlink.ActionAttrs{Action: netlink.TC_ACT_UNSPEC}} // "continue"
			filter := &netlink.U32{
				FilterAttrs: netlink.FilterAttrs{LinkIndex: link.Attrs().Index, Parent: netlink.HANDLE_MIN_INGRESS,
					Priority: pref, Protocol: unix.ETH_P_IP},
				Sel:     &nl.TcU32Sel{Flags: nl.TC_U32_TERMINAL, Keys: roceKeys(d, q)},
				Actions: []netlink.Action{act},
			}
			if err := h.FilterAdd(filter); err != nil {
				w.closeLocked()
				return nil, fmt.Errorf("wire counters: u32 filter on %s: %w", netdev, err)
			}
		}
	}
	all, match, err := w.dump()
	if err != nil {
		w.closeLocked()
		return nil, err
	}
	w.baseAll, w.baseMatch = all, match
	return w, nil
}

// Read returns the packets counted since the observer started: all RoCEv2
// packets and those with the DSCP (see WireObserver for how it stays exact
// while traffic flows).
func (w *WireObserver) Read() (all, match uint64, err error) {
	prevAll, prevMatch, err := w.dump()
	if err != nil {
		return 0, 0, err
	}
	all, match = prevAll, prevMatch
	for deadline := time.Now().Add(wireSettle); time.Now().Before(deadline); {
		time.Sleep(wirePoll)
		a, m, err := w.dump()
		if err != nil {
			return 0, 0, err
		}
		// The earlier all-count with the later DSCP count: exact once
		// the two dumps agree (settled: no packet between the filters).
		all, match = prevAll, m
		if a == prevAll && m == prevMatch {
			break
		}
		prevAll, prevMatch = a, m
	}
	all -= min(all, w.baseAll)
	match -= min(match, w.baseMatch)
	return all, min(match, all), nil
}

// dump reads the two filters' counters in one filter dump.
func (w *WireObserver) dump() (all, match uint64, err error) {
	filters, err := w.h.FilterList(w.link, netlink.HANDLE_MIN_INGRESS)
	if err != nil {
		return 0, 0, fmt.Errorf("wire counters: %w", err)
	}
	role := map[uint16]int{} // 0: all, 1: the DSCP
	for i, p := range w.prefs {
		role[p] = i % 2
	}
	found := 0
	for _, f := range filters {
		u, ok := f.(*netlink.U32)
		if !ok || len(u.Actions) == 0 || u.Actions[0].Attrs().Statistics == nil {
			continue
		}
		r, mine := role[u.Priority]
		if !mine {
			continue
		}
		n := uint64(u.Actions[0].Attrs().Statistics.Basic.Packets)
		found++
		if r == 0 {
			all += n
		} else {
			match += n
		}
	}
	if found == 0 {
		return 0, 0, errors.New("wire counters: the filters are gone (removed while the test ran?)")
	}
	return all, match, nil
}

// Close removes the filters, and the clsact qdisc when the last observer
// of a netdev closes and the qdisc was not there before.
func (w *WireObserver) Close() error {
	wireMu.Lock()
	defer wireMu.Unlock()
	return w.closeLocked()
}

func (w *WireObserver) closeLocked() error {
	var errs []error
	for _, pref := range w.prefs {
		f := &netlink.U32{FilterAttrs: netlink.FilterAttrs{LinkIndex: w.link.Attrs().Index, Parent: netlink.HANDLE_MIN_INGRESS,
			Priority: pref, Protocol: unix.ETH_P_IP}}
		if err := w.h.FilterDel(f); err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, err)
		}
	}
	if ref := clsact[w.key]; ref != nil {
		ref.users--
		if ref.users <= 0 {
			delete(clsact, w.key)
			if ref.added {
				if err := w.h.QdiscDel(clsactQdisc(w.link)); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}
