package dcbnl

import (
	"errors"
	"fmt"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ErrOverrun is returned by Watcher.Next when the kernel dropped
// notifications because the socket buffer was full (ENOBUFS): the caller
// has missed changes and must read the state again.
var ErrOverrun = errors.New("dcbnl: notifications lost (socket buffer overrun); re-read the DCB state")

// Notification is one RTNLGRP_DCB message: the interface's whole IEEE DCB
// state after a change.
type Notification struct {
	Cmd   uint8 // CmdIEEESet or CmdIEEEDel (what caused it)
	State *IEEE // State.Ifname names the interface
}

// Watcher receives the kernel's DCB notifications (RTNLGRP_DCB): the
// kernel multicasts the full IEEE state after every IEEE_SET and
// IEEE_DEL from any process (fabctl, dcb, mlnx_qos, lldpad) and when a
// driver reports a change of its own (a DCBX peer in willing mode).
type Watcher struct {
	c       *netlink.Conn
	pending []Notification // decoded, not yet returned
}

// Subscribe joins RTNLGRP_DCB in the calling thread's network namespace,
// or in the one netnsFD refers to when it is > 0.
func Subscribe(netnsFD int) (*Watcher, error) {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: netnsFD})
	if err != nil {
		return nil, fmt.Errorf("dcbnl: dial rtnetlink: %w", err)
	}
	if err := c.JoinGroup(unix.RTNLGRP_DCB); err != nil {
		c.Close()
		return nil, fmt.Errorf("dcbnl: join RTNLGRP_DCB: %w", err)
	}
	return &Watcher{c: c}, nil
}

// Next blocks until the next IEEE notification, the deadline set with
// SetDeadline, or Close. CEE notifications are skipped.
func (w *Watcher) Next() (Notification, error) {
	for len(w.pending) == 0 {
		msgs, err := w.c.Receive()
		if err != nil {
			var oe *netlink.OpError
			if errors.As(err, &oe) && errors.Is(oe.Err, unix.ENOBUFS) {
				return Notification{}, ErrOverrun
			}
			return Notification{}, err
		}
		for _, m := range msgs {
			if m.Header.Type != RTMSetDCB && m.Header.Type != RTMGetDCB {
				continue
			}
			cmd, st, ok, err := DecodeNotification(m.Data)
			if err != nil {
				return Notification{}, err
			}
			if ok {
				w.pending = append(w.pending, Notification{Cmd: cmd, State: st})
			}
		}
	}
	n := w.pending[0]
	w.pending = w.pending[1:]
	return n, nil
}

// SetDeadline bounds the current and future Next calls.
func (w *Watcher) SetDeadline(t time.Time) error { return w.c.SetReadDeadline(t) }

// Close ends the subscription and unblocks Next.
func (w *Watcher) Close() error { return w.c.Close() }
