package dcbnl

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// ErrNotSupported matches (errors.Is) an Error whose device has no DCB
// support (EOPNOTSUPP: the driver registers no dcbnl_rtnl_ops, e.g. veth).
var ErrNotSupported = errors.New("DCB not supported by the driver")

// Error is a failed DCB operation on one interface.
type Error struct {
	Ifname string
	Op     string // "get", "set ets", "set pfc", "add app", ...
	Err    error  // a syscall.Errno for kernel refusals
}

func (e *Error) Error() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		switch errno {
		case unix.EOPNOTSUPP:
			return fmt.Sprintf("%s: DCB not supported by the driver (EOPNOTSUPP)", e.Ifname)
		case unix.ENODEV:
			return fmt.Sprintf("%s: no such network device (ENODEV)", e.Ifname)
		case unix.EPERM:
			return fmt.Sprintf("%s: dcb %s: operation not permitted (EPERM: needs CAP_NET_ADMIN)", e.Ifname, e.Op)
		}
		return fmt.Sprintf("%s: dcb %s: %v (%s)", e.Ifname, e.Op, errno, unix.ErrnoName(errno))
	}
	return fmt.Sprintf("%s: dcb %s: %v", e.Ifname, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotSupported) true for EOPNOTSUPP.
func (e *Error) Is(target error) bool {
	return target == ErrNotSupported && errors.Is(e.Err, unix.EOPNOTSUPP)
}

// Conn is a DCB netlink connection (NETLINK_ROUTE).
type Conn struct {
	c *netlink.Conn
}

// Dial opens a connection in the calling thread's network namespace, or
// in the namespace netnsFD refers to when it is > 0.
func Dial(netnsFD int) (*Conn, error) {
	c, err := netlink.Dial(unix.NETLINK_ROUTE, &netlink.Config{NetNS: netnsFD})
	if err != nil {
		return nil, fmt.Errorf("dcbnl: dial rtnetlink: %w", err)
	}
	return &Conn{c: c}, nil
}

// NewConn wraps an existing netlink connection (tests use nltest.Dial).
func NewConn(c *netlink.Conn) *Conn { return &Conn{c: c} }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// execute sends one request and returns the body of its one reply.
// Requests carry NLM_F_REQUEST only: the DCB reply (or NLMSG_ERROR for
// errors found before the command runs) is the answer, so no separate ACK
// is left in the socket.
func (c *Conn) execute(typ netlink.HeaderType, ifname, op string, body []byte) ([]byte, error) {
	msgs, err := c.c.Execute(netlink.Message{
		Header: netlink.Header{Type: typ, Flags: netlink.Request},
		Data:   body,
	})
	if err != nil {
		var oe *netlink.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return nil, &Error{Ifname: ifname, Op: op, Err: oe.Err}
		}
		return nil, &Error{Ifname: ifname, Op: op, Err: err}
	}
	if len(msgs) != 1 {
		return nil, &Error{Ifname: ifname, Op: op, Err: fmt.Errorf("%d replies, want 1", len(msgs))}
	}
	if msgs[0].Header.Type != typ {
		return nil, &Error{Ifname: ifname, Op: op, Err: fmt.Errorf("reply of type %d, want %d", msgs[0].Header.Type, typ)}
	}
	return msgs[0].Data, nil
}

// IEEE reads the interface's IEEE DCB state (IEEE_GET).
func (c *Conn) IEEE(ifname string) (*IEEE, error) {
	req, err := EncodeGet(ifname)
	if err != nil {
		return nil, err
	}
	rep, err := c.execute(RTMGetDCB, ifname, "get", req)
	if err != nil {
		return nil, err
	}
	st, err := DecodeIEEE(rep)
	if err != nil {
		return nil, &Error{Ifname: ifname, Op: "get", Err: err}
	}
	return st, nil
}

// DCBX reads the DCBX mode flags (GDCBX).
func (c *Conn) DCBX(ifname string) (uint8, error) {
	req, err := EncodeGetDCBX(ifname)
	if err != nil {
		return 0, err
	}
	rep, err := c.execute(RTMGetDCB, ifname, "get dcbx", req)
	if err != nil {
		return 0, err
	}
	v, err := DecodeDCBX(rep)
	if err != nil {
		return 0, &Error{Ifname: ifname, Op: "get dcbx", Err: err}
	}
	return v, nil
}

// set sends a SET/DEL and decodes its int8 status.
func (c *Conn) set(ifname, op string, cmd uint8, attr uint16, req []byte, err error) error {
	if err != nil {
		return &Error{Ifname: ifname, Op: op, Err: err}
	}
	rep, err := c.execute(RTMSetDCB, ifname, op, req)
	if err != nil {
		return err
	}
	st, err := DecodeStatus(rep, cmd, attr)
	if err != nil {
		return &Error{Ifname: ifname, Op: op, Err: err}
	}
	if st != 0 {
		if cmd == CmdSDCBX {
			return &Error{Ifname: ifname, Op: op, Err: fmt.Errorf("the driver refused DCBX mode (status %d)", st)}
		}
		e := int(st)
		if e < 0 {
			e = -e
		}
		return &Error{Ifname: ifname, Op: op, Err: syscall.Errno(e)}
	}
	return nil
}

// SetETS writes ETS (IEEE_SET{ETS}).
func (c *Conn) SetETS(ifname string, e *ETS) error {
	req, err := EncodeSetETS(ifname, e)
	return c.set(ifname, "set ets", CmdIEEESet, AttrIEEE, req, err)
}

// SetPFC writes PFC (IEEE_SET{PFC}). On mlx5 a change of Enable flaps the link.
func (c *Conn) SetPFC(ifname string, p *PFC) error {
	req, err := EncodeSetPFC(ifname, p)
	return c.set(ifname, "set pfc", CmdIEEESet, AttrIEEE, req, err)
}

// SetMaxrate writes per-TC max rates (IEEE_SET{MAXRATE}).
func (c *Conn) SetMaxrate(ifname string, m *Maxrate) error {
	req, err := EncodeSetMaxrate(ifname, m)
	return c.set(ifname, "set maxrate", CmdIEEESet, AttrIEEE, req, err)
}

// SetBuffer writes the buffer configuration (IEEE_SET{DCB_BUFFER}). On
// mlx5 this switches the port to manual buffer mode for good.
func (c *Conn) SetBuffer(ifname string, b *Buffer) error {
	req, err := EncodeSetBuffer(ifname, b)
	return c.set(ifname, "set buffer", CmdIEEESet, AttrIEEE, req, err)
}

// AddApps adds APP entries (IEEE_SET{APP_TABLE}).
func (c *Conn) AddApps(ifname string, apps []App) error {
	if len(apps) == 0 {
		return nil
	}
	req, err := EncodeApps(CmdIEEESet, ifname, apps)
	return c.set(ifname, "add app", CmdIEEESet, AttrIEEE, req, err)
}

// DelApps deletes APP entries (IEEE_DEL{APP_TABLE}).
func (c *Conn) DelApps(ifname string, apps []App) error {
	if len(apps) == 0 {
		return nil
	}
	req, err := EncodeApps(CmdIEEEDel, ifname, apps)
	return c.set(ifname, "del app", CmdIEEEDel, AttrIEEE, req, err)
}

// SetDCBX sets the DCBX mode flags (SDCBX).
func (c *Conn) SetDCBX(ifname string, mode uint8) error {
	req, err := EncodeSetDCBX(ifname, mode)
	return c.set(ifname, "set dcbx", CmdSDCBX, AttrDCBX, req, err)
}

// UpdateETS reads ETS, lets fn modify it and writes it back (iproute2 dcb's
// read-modify-write). It writes nothing when fn leaves it unchanged.
func (c *Conn) UpdateETS(ifname string, fn func(*ETS)) error {
	st, err := c.IEEE(ifname)
	if err != nil {
		return err
	}
	var e ETS
	if st.ETS != nil {
		e = *st.ETS
	}
	before := e
	fn(&e)
	if e == before && st.ETS != nil {
		return nil
	}
	return c.SetETS(ifname, &e)
}

// UpdatePFC reads PFC, lets fn modify it and writes it back, keeping the
// delay (cable length) and the read-only counters as read.
func (c *Conn) UpdatePFC(ifname string, fn func(*PFC)) error {
	st, err := c.IEEE(ifname)
	if err != nil {
		return err
	}
	var p PFC
	if st.PFC != nil {
		p = *st.PFC
	}
	before := p
	fn(&p)
	if p == before && st.PFC != nil {
		return nil
	}
	return c.SetPFC(ifname, &p)
}

// UpdateBuffer reads the buffer configuration, lets fn modify it and
// writes it back with total_size as read.
func (c *Conn) UpdateBuffer(ifname string, fn func(*Buffer)) error {
	st, err := c.IEEE(ifname)
	if err != nil {
		return err
	}
	if st.Buffer == nil {
		return &Error{Ifname: ifname, Op: "set buffer", Err: unix.EOPNOTSUPP}
	}
	b := *st.Buffer
	total := b.TotalSize
	fn(&b)
	b.TotalSize = total
	if b == *st.Buffer {
		return nil
	}
	return c.SetBuffer(ifname, &b)
}

// DSCPApps returns the DSCP -> priority entries of an APP table, indexed
// by DSCP (-1: no entry). A DSCP value with several entries keeps the
// last one.
func DSCPApps(apps []App) [64]int {
	var t [64]int
	for i := range t {
		t[i] = -1
	}
	for _, a := range apps {
		if a.Selector == SelDSCP && a.Protocol < 64 {
			t[a.Protocol] = int(a.Priority)
		}
	}
	return t
}

// LinkMaxMTU reads a netdev's largest MTU (IFLA_MAX_MTU of RTM_GETLINK):
// mlx5 sizes a lossless buffer's headroom with it (en/port_buffer.c
// mlx5e_port_manual_buffer_config, max_t(netdev->max_mtu, 9216)).
func (c *Conn) LinkMaxMTU(ifname string) (int, error) {
	ae := netlink.NewAttributeEncoder()
	ae.String(unix.IFLA_IFNAME, ifname)
	attrs, err := ae.Encode()
	if err != nil {
		return 0, err
	}
	body := append(make([]byte, unix.SizeofIfInfomsg), attrs...) // struct ifinfomsg, AF_UNSPEC, index 0
	msgs, err := c.c.Execute(netlink.Message{
		Header: netlink.Header{Type: unix.RTM_GETLINK, Flags: netlink.Request},
		Data:   body,
	})
	if err != nil {
		var oe *netlink.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			return 0, &Error{Ifname: ifname, Op: "get link", Err: oe.Err}
		}
		return 0, &Error{Ifname: ifname, Op: "get link", Err: err}
	}
	for _, m := range msgs {
		if m.Header.Type != unix.RTM_NEWLINK || len(m.Data) < unix.SizeofIfInfomsg {
			continue
		}
		ad, err := netlink.NewAttributeDecoder(m.Data[unix.SizeofIfInfomsg:])
		if err != nil {
			return 0, &Error{Ifname: ifname, Op: "get link", Err: err}
		}
		for ad.Next() {
			if ad.Type() == unix.IFLA_MAX_MTU {
				return int(ad.Uint32()), nil
			}
		}
		if err := ad.Err(); err != nil {
			return 0, &Error{Ifname: ifname, Op: "get link", Err: err}
		}
	}
	return 0, &Error{Ifname: ifname, Op: "get link", Err: fmt.Errorf("no IFLA_MAX_MTU in the reply")}
}
