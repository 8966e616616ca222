package host

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// session holds the kernel handles of one host: rtnetlink (links,
// addresses), DCB netlink and the ethtool ioctl socket, all bound to the
// host's network namespace. Handles are created in the namespace and keep
// working there whatever thread uses them, so no goroutine has to stay in
// the namespace.
type session struct {
	name  string // "local" or the namespace name
	where string // payload suffix: "" or " (netns gpu01)"
	ns    netns.NsHandle
	nl    *netlink.Handle
	dcb   *dcbnl.Conn
	eth   *ethtool.Ethtool
	ethEr error
}

func open(h *intent.Host) (*session, error) {
	s := &session{ns: netns.None()}
	switch h.Connect.Kind {
	case "local", "":
		s.name = "local"
		nl, err := netlink.NewHandle()
		if err != nil {
			return nil, fmt.Errorf("rtnetlink: %w", err)
		}
		s.nl = nl
	case "netns":
		s.name, s.where = h.Connect.Netns, " (netns "+h.Connect.Netns+")"
		ns, err := netns.GetFromName(h.Connect.Netns)
		if err != nil {
			return nil, fmt.Errorf("network namespace %q: %w", h.Connect.Netns, err)
		}
		s.ns = ns
		nl, err := netlink.NewHandleAt(ns)
		if err != nil {
			ns.Close()
			return nil, fmt.Errorf("rtnetlink in netns %q: %w", h.Connect.Netns, err)
		}
		s.nl = nl
	case "ssh":
		// Never reached: the driver hands SSH hosts to their agent.
		return nil, errors.New("a host reached over SSH is read and applied by its agent, not opened locally")
	default:
		return nil, fmt.Errorf("unknown host transport %q", h.Connect.Kind)
	}
	fd := 0
	if s.ns.IsOpen() {
		fd = int(s.ns)
	}
	c, err := dcbnl.Dial(fd)
	if err != nil {
		s.close()
		return nil, err
	}
	s.dcb = c
	return s, nil
}

// ethtool returns the ethtool socket, created inside the namespace (an
// ioctl socket acts on the namespace it was created in).
func (s *session) ethtool() (*ethtool.Ethtool, error) {
	if s.eth != nil || s.ethEr != nil {
		return s.eth, s.ethEr
	}
	if !s.ns.IsOpen() {
		s.eth, s.ethEr = ethtool.NewEthtool()
		return s.eth, s.ethEr
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		s.ethEr = err
		return nil, err
	}
	defer orig.Close()
	if err := netns.Set(s.ns); err != nil {
		runtime.UnlockOSThread()
		s.ethEr = err
		return nil, err
	}
	s.eth, s.ethEr = ethtool.NewEthtool()
	if err := netns.Set(orig); err != nil {
		// The thread is stuck in the host's namespace: leave it locked so
		// the runtime retires it instead of reusing it.
		return s.eth, s.ethEr
	}
	runtime.UnlockOSThread()
	return s.eth, s.ethEr
}

func (s *session) close() {
	if s.eth != nil {
		s.eth.Close()
	}
	if s.dcb != nil {
		s.dcb.Close()
	}
	if s.nl != nil {
		s.nl.Close()
	}
	if s.ns.IsOpen() {
		s.ns.Close()
	}
}
