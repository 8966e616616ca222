package dcbnl

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// fakeDevice answers DCB requests like a driver with dcbnl_ops: it keeps
// ETS, PFC and the APP table and enforces mlx5's ETS rule.
type fakeDevice struct {
	ets  ETS
	pfc  PFC
	apps []App
	reqs []uint8 // commands seen
}

func (d *fakeDevice) handle(t *testing.T) nltest.Func {
	return func(reqs []netlink.Message) ([]netlink.Message, error) {
		req := reqs[0]
		if req.Header.Flags&netlink.Request == 0 {
			t.Fatalf("flags %v", req.Header.Flags)
		}
		cmd := req.Data[1]
		d.reqs = append(d.reqs, cmd)
		ad, err := netlink.NewAttributeDecoder(req.Data[4:])
		if err != nil {
			return nil, err
		}
		ifname := ""
		var ieee []byte
		for ad.Next() {
			switch ad.Type() {
			case AttrIfname:
				ifname = ad.String()
			case AttrIEEE:
				ieee = ad.Bytes()
			}
		}
		if ifname != "eth1" {
			return nltest.Error(int(unix.ENODEV), reqs)
		}
		reply := func(attrs []byte) ([]netlink.Message, error) {
			return []netlink.Message{{Header: netlink.Header{Type: req.Header.Type, Sequence: req.Header.Sequence},
				Data: append([]byte{0, cmd, 0, 0}, attrs...)}}, nil
		}
		status := func(st int8) ([]netlink.Message, error) {
			return reply(nltest.MustMarshalAttributes([]netlink.Attribute{{Type: AttrIEEE, Data: []byte{byte(st)}}}))
		}
		switch cmd {
		case CmdIEEEGet:
			var tbl []netlink.Attribute
			for _, a := range d.apps {
				tbl = append(tbl, netlink.Attribute{Type: AppAttrIEEE, Data: a.Marshal()})
			}
			nest := nltest.MustMarshalAttributes([]netlink.Attribute{
				{Type: IEEEAttrETS, Data: d.ets.Marshal()}, {Type: IEEEAttrPFC, Data: d.pfc.Marshal()},
				{Type: IEEEAttrAppTable, Data: nltest.MustMarshalAttributes(tbl)}})
			return reply(nltest.MustMarshalAttributes([]netlink.Attribute{
				{Type: AttrIfname, Data: []byte("eth1\x00")}, {Type: AttrIEEE, Data: nest}}))
		case CmdIEEESet, CmdIEEEDel:
			n, _ := netlink.NewAttributeDecoder(ieee)
			for n.Next() {
				switch n.Type() {
				case IEEEAttrETS:
					var e ETS
					if err := e.Unmarshal(n.Bytes()); err != nil {
						return status(-int8(unix.EINVAL))
					}
					sum := 0
					for tc := range 8 {
						if e.TCTSA[tc] == TSAETS {
							sum += int(e.TCTxBW[tc])
						}
					}
					if sum != 100 {
						return status(-int8(unix.EINVAL))
					}
					d.ets = e
				case IEEEAttrPFC:
					if err := d.pfc.Unmarshal(n.Bytes()); err != nil {
						return status(-int8(unix.EINVAL))
					}
				case IEEEAttrAppTable:
					tb, _ := netlink.NewAttributeDecoder(n.Bytes())
					for tb.Next() {
						var a App
						_ = a.Unmarshal(tb.Bytes())
						if cmd == CmdIEEESet {
							d.apps = append(d.apps, a)
							continue
						}
						for i, x := range d.apps {
							if x == a {
								d.apps = append(d.apps[:i], d.apps[i+1:]...)
								break
							}
						}
					}
				}
			}
			return status(0)
		}
		return nltest.Error(int(unix.EOPNOTSUPP), reqs)
	}
}

func TestConnReadModifyWrite(t *testing.T) {
	skipBigEndian(t)
	dev := &fakeDevice{pfc: PFC{Cap: 8, Delay: 7}}
	c := NewConn(nltest.Dial(dev.handle(t)))
	defer c.Close()

	if err := c.UpdatePFC("eth1", func(p *PFC) { p.Enable = 1 << 3 }); err != nil {
		t.Fatal(err)
	}
	if dev.pfc.Enable != 0x08 || dev.pfc.Delay != 7 || dev.pfc.Cap != 8 {
		t.Fatalf("pfc %+v: the read-modify-write lost the delay or cap", dev.pfc)
	}
	// Unchanged: GET only, no SET.
	n := len(dev.reqs)
	if err := c.UpdatePFC("eth1", func(p *PFC) { p.Enable = 1 << 3 }); err != nil {
		t.Fatal(err)
	}
	if got := dev.reqs[n:]; len(got) != 1 || got[0] != CmdIEEEGet {
		t.Fatalf("unchanged PFC sent %v", got)
	}

	// ETS that does not sum to 100: the int8 status becomes EINVAL.
	err := c.UpdateETS("eth1", func(e *ETS) { e.TCTSA[0], e.TCTxBW[0] = TSAETS, 60 })
	if !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), "eth1: dcb set ets") {
		t.Fatalf("bad ETS: %v", err)
	}
	if err := c.UpdateETS("eth1", func(e *ETS) {
		e.TCTSA[0], e.TCTxBW[0], e.TCTSA[3], e.TCTxBW[3], e.PrioTC[3] = TSAETS, 50, TSAETS, 50, 3
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddApps("eth1", []App{{SelDSCP, 3, 26}, {SelDSCP, 6, 48}}); err != nil {
		t.Fatal(err)
	}
	if err := c.DelApps("eth1", []App{{SelDSCP, 6, 48}}); err != nil {
		t.Fatal(err)
	}
	st, err := c.IEEE("eth1")
	if err != nil {
		t.Fatal(err)
	}
	if st.ETS.PrioTC[3] != 3 || st.ETS.TCTxBW[3] != 50 || len(st.Apps) != 1 || st.Apps[0].Protocol != 26 {
		t.Fatalf("read back %+v %+v", st.ETS, st.Apps)
	}

	// Errors before the command runs arrive as NLMSG_ERROR.
	_, err = c.IEEE("nope0")
	if err == nil || err.Error() != "nope0: no such network device (ENODEV)" {
		t.Fatalf("ENODEV: %v", err)
	}
	_, err = c.DCBX("eth1")
	if !errors.Is(err, ErrNotSupported) || err.Error() != "eth1: DCB not supported by the driver (EOPNOTSUPP)" {
		t.Fatalf("EOPNOTSUPP: %v", err)
	}
}

// TestKernelVethNotSupported sends real DCB requests to the kernel for a
// veth (no dcbnl_rtnl_ops) inside a fresh namespace: the wire path works
// and EOPNOTSUPP comes back as the clear per-interface message.
func TestKernelVethNotSupported(t *testing.T) {
	c := vethConn(t, "fabctl-dcbnl-test", "dcb0", "dcb1")
	_, err := c.IEEE("dcb0")
	if !errors.Is(err, ErrNotSupported) || err.Error() != "dcb0: DCB not supported by the driver (EOPNOTSUPP)" {
		t.Fatalf("IEEE_GET on veth: %v", err)
	}
	if err := c.SetPFC("dcb0", &PFC{Enable: 8}); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("IEEE_SET on veth: %v", err)
	}
	_, err = c.IEEE("missing0")
	if !errors.Is(err, unix.ENODEV) {
		t.Fatalf("IEEE_GET on a missing device: %v", err)
	}
}

// TestLinkMaxMTU: IFLA_MAX_MTU through the kernel for a veth
// (veth_setup: ETH_MAX_MTU, 65535) in a fresh namespace; mlx5 sizes
// lossless buffers with a NIC's max_mtu.
func TestLinkMaxMTU(t *testing.T) {
	c := vethConn(t, "fabctl-dcbnl-maxmtu", "mm0", "mm1")
	if v, err := c.LinkMaxMTU("mm0"); err != nil || v != 65535 {
		t.Fatalf("veth max_mtu %d %v, want 65535", v, err)
	}
	if _, err := c.LinkMaxMTU("fabnodev0"); !errors.Is(err, unix.ENODEV) {
		t.Errorf("missing device: %v, want ENODEV", err)
	}
}

// vethConn makes a veth pair a/b in a fresh namespace name and returns a
// DCB netlink connection in it; the calling goroutine stays locked to its
// OS thread until the test ends (Dial enters the namespace).
func vethConn(t *testing.T, name, a, b string) *Conn {
	t.Helper()
	testutil.RequireRoot(t, "creates a network namespace")
	testutil.Netns(t, name)
	if out, err := exec.Command("ip", "-n", name, "link", "add", a, "type", "veth", "peer", "name", b).CombinedOutput(); err != nil {
		t.Fatalf("veth: %v %s", err, out)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	ns, err := netns.GetFromName(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	c, err := Dial(int(ns))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
