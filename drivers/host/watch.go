package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/vishvananda/netns"
)

// Drift is a NIC's DCB state moving away from where it was when the watch
// began (normally right after fabctl applied it): someone ran dcb,
// mlnx_qos or lldpad, or a willing NIC took the switch's DCBX settings.
type Drift struct {
	NIC  string    `json:"nic"`
	Cmd  string    `json:"cmd"` // what the kernel reported: IEEE_SET, IEEE_DEL, or resync after lost notifications
	Time time.Time `json:"time"`
	// Changes: Before is the baseline, After the state now; in the plan's
	// paths (nic/<n>/pfc, trust, dscp/<d>, tc/<t>/...) plus the raw DCB
	// fields under nic/<n>/dcb/ (prio_tc, tc_tsa, tc_bw, pfc_delay,
	// maxrate, buffer/*, dcbx). Empty: the NIC is back at its baseline.
	Changes []intent.AttrChange `json:"changes"`
}

// WatchDCB reports DCB drift of the named NICs (every NIC with DCB when
// ifaces is empty) in the calling process's network namespace: it reads
// each NIC's state as the baseline, subscribes to the kernel's DCB
// notifications (RTNLGRP_DCB, sent after every IEEE_SET/IEEE_DEL by any
// process and on driver DCBX events) and calls fn whenever a NIC's
// difference from its baseline changes, including back to none. It
// returns when ctx ends (nil) or on a netlink error.
func WatchDCB(ctx context.Context, ifaces []string, fn func(Drift)) error {
	return watchDCB(ctx, netns.None(), ifaces, fn)
}

// WatchDCBNetns is WatchDCB inside a named network namespace.
func WatchDCBNetns(ctx context.Context, ns string, ifaces []string, fn func(Drift)) error {
	h, err := netns.GetFromName(ns)
	if err != nil {
		return fmt.Errorf("network namespace %q: %w", ns, err)
	}
	defer h.Close()
	return watchDCB(ctx, h, ifaces, fn)
}

func watchDCB(ctx context.Context, ns netns.NsHandle, ifaces []string, fn func(Drift)) error {
	fd := 0
	if ns.IsOpen() {
		fd = int(ns)
	}
	// Subscribe before reading the baseline so no change falls between.
	w, err := dcbnl.Subscribe(fd)
	if err != nil {
		return err
	}
	defer w.Close()
	c, err := dcbnl.Dial(fd)
	if err != nil {
		return err
	}
	defer c.Close()
	want := map[string]bool{}
	for _, n := range ifaces {
		want[n] = true
	}
	base := map[string]intent.State{}
	for _, n := range ifaces {
		st, err := c.IEEE(n)
		if err != nil {
			return fmt.Errorf("watch %s: %w", n, err)
		}
		base[n] = dcbState(n, st)
	}
	reported := map[string]string{} // NIC -> key of the last reported change set
	report := func(nic, cmd string, st *dcbnl.IEEE) {
		b, ok := base[nic]
		if !ok {
			if len(want) > 0 {
				return
			}
			// Watching every NIC: the first notification is the baseline.
			base[nic] = dcbState(nic, st)
			return
		}
		ch := diffStates(b, dcbState(nic, st))
		key := changesKey(ch)
		if key == reported[nic] {
			return
		}
		reported[nic] = key
		fn(Drift{NIC: nic, Cmd: cmd, Time: time.Now(), Changes: ch})
	}
	stop := context.AfterFunc(ctx, func() { _ = w.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		n, err := w.Next()
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, dcbnl.ErrOverrun) {
			// Notifications were lost: read every watched NIC again.
			for nic := range base {
				st, err := c.IEEE(nic)
				if err != nil {
					return fmt.Errorf("watch %s: resync: %w", nic, err)
				}
				report(nic, "resync", st)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("watch DCB notifications: %w", err)
		}
		cmd := "IEEE_SET"
		if n.Cmd == dcbnl.CmdIEEEDel {
			cmd = "IEEE_DEL"
		}
		report(n.State.Ifname, cmd, n.State)
	}
}

// dcbState flattens a NIC's IEEE DCB state: the plan's paths (putDCB)
// plus the raw fields the plan does not model.
func dcbState(nic string, ieee *dcbnl.IEEE) intent.State {
	st := intent.State{}
	p := "nic/" + nic + "/"
	putDCB(st, p, ieee)
	d := p + "dcb/"
	if e := ieee.ETS; e != nil {
		st[d+"prio_tc"] = u8s(e.PrioTC[:])
		st[d+"tc_tsa"] = u8s(e.TCTSA[:])
		st[d+"tc_bw"] = u8s(e.TCTxBW[:])
	}
	if ieee.PFC != nil {
		st[d+"pfc_delay"] = strconv.Itoa(int(ieee.PFC.Delay))
	}
	if m := ieee.Maxrate; m != nil {
		parts := make([]string, len(m))
		for i, v := range m {
			parts[i] = strconv.FormatUint(v, 10)
		}
		st[d+"maxrate"] = strings.Join(parts, ",")
	}
	if b := ieee.Buffer; b != nil {
		st[d+"buffer/prio"] = u8s(b.Prio2Buffer[:])
		parts := make([]string, len(b.BufferSize))
		for i, v := range b.BufferSize {
			parts[i] = strconv.FormatUint(uint64(v), 10)
		}
		st[d+"buffer/size"] = strings.Join(parts, ",")
	}
	if ieee.DCBX != nil {
		st[d+"dcbx"] = fmt.Sprintf("0x%02x", *ieee.DCBX)
	}
	return st
}

func u8s(v []uint8) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(int(x))
	}
	return strings.Join(parts, ",")
}

// diffStates lists how now differs from base, sorted by path.
func diffStates(base, now intent.State) []intent.AttrChange {
	var out []intent.AttrChange
	for k, b := range base {
		n, ok := now[k]
		switch {
		case !ok:
			out = append(out, intent.AttrChange{Path: k, Action: intent.Delete, Before: b})
		case n != b:
			out = append(out, intent.AttrChange{Path: k, Action: intent.Update, Before: b, After: n})
		}
	}
	for k, n := range now {
		if _, ok := base[k]; !ok {
			out = append(out, intent.AttrChange{Path: k, Action: intent.Create, After: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func changesKey(cs []intent.AttrChange) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\n", c.Path, c.Action, c.Before, c.After)
	}
	return b.String()
}
