package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/fabctl/fabctl/intent"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
)

// linkSource names what the host's link report is read with: the
// kernel's operational state and 64-bit statistics over rtnetlink
// (IFLA_OPERSTATE, RFC 2863 states; IFLA_STATS64 rx/tx_errors and
// rx/tx_dropped, include/uapi/linux/if_link.h) and the negotiated speed
// over the ethtool ioctl ETHTOOL_GSET (include/uapi/linux/ethtool.h:
// speed and speed_hi, SPEED_UNKNOWN = -1; net/ethtool/ioctl.c
// ethtool_get_settings answers it from the driver's get_link_ksettings).
// GSET rather than the library's GLINKSETTINGS helper: that one prints a
// warning on stdout at the kernel's nwords handshake, which would reach
// plan's own output.
const linkSource = "rtnetlink (IFLA_OPERSTATE, IFLA_STATS64) + ethtool (ETHTOOL_GSET)"

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks reads the state, speed and error counters of the spec's
// NICs, and their LLDP neighbours where lldpd runs, on a local or
// namespace host; a host reached over SSH is read by its agent, which
// runs this same read there (agentproto.OpLinks, remote.go).
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	if h.Connect.Kind == "ssh" {
		return d.readLinksRemote(ctx, t, h)
	}
	s, err := open(h)
	if err != nil {
		return nil, err
	}
	defer s.close()
	dl := &linktruth.DeviceLinks{Ports: make(map[string]*linktruth.Observation, len(h.NICs)), Source: linkSource}
	for i := range h.NICs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := h.NICs[i].Name
		link, err := s.nl.LinkByName(name)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				continue // not reported: the comparison says the port was not reported
			}
			return nil, err
		}
		a := link.Attrs()
		o := &linktruth.Observation{Port: name, Oper: linktruth.Down}
		// RFC 2863 ifOperStatus: only "up" passes traffic ("unknown" is
		// a driver without carrier reporting, such as a dummy device:
		// not judged).
		switch a.OperState {
		case netlink.OperUp:
			o.Oper = linktruth.Up
		case netlink.OperUnknown:
			o.Oper = ""
		}
		// IFF_UP clear: nobody brought the NIC up (testbed up leaves
		// it so for apply) or it was shut; not a cable.
		o.AdminDown = a.Flags&net.FlagUp == 0
		if st := a.Statistics; st != nil {
			o.Counters = &linktruth.Counters{InErrors: st.RxErrors, OutErrors: st.TxErrors, InDiscards: st.RxDropped, OutDiscards: st.TxDropped}
		}
		if o.Oper == linktruth.Up {
			if eth, err := s.ethtool(); err == nil {
				var cmd ethtool.EthtoolCmd
				if speed, err := eth.CmdGet(&cmd, name); err == nil && speed != 0 && speed != ^uint32(0) {
					o.SpeedMbps = int64(speed)
				}
			}
		}
		dl.Ports[name] = o
	}
	readLLDP(ctx, h, dl, lldpcliRun)
	return dl, nil
}

// LLDPSocket is the lldpd control socket fabctl reads a netns:NAME
// host's LLDP neighbours through: /run/lldpd.netns-NAME.socket (an
// lldpd started in the namespace with `-u` that path, as the local
// testbed does: docs/testbed.md). A local host's lldpd answers on its
// default socket (lldpd(8) -u; lldpcli(8)).
func LLDPSocket(netnsName string) string { return "/run/lldpd.netns-" + netnsName + ".socket" }

// defaultLLDPSocket is lldpd's own default control socket (Debian's
// lldpd 1.0.16 is built with it in /run).
const defaultLLDPSocket = "/run/lldpd.socket"

// lldpcliRun runs lldpcli with args (a few seconds at most).
func lldpcliRun(ctx context.Context, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("lldpcli"); err != nil {
		return nil, errLLDPCLIMissing
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "lldpcli", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return nil, err
	}
	return out, nil
}

var errLLDPCLIMissing = errors.New("lldpcli is not installed (Debian package lldpd)")

// readLLDP fills the NICs' LLDP neighbours from the host's lldpd
// (`lldpcli [-u SOCKET] -f json show neighbors`, lldpcli(8); parsed by
// linktruth.ParseLLDPCLI), or says in dl.LLDPNote why they were not read:
// no lldpcli, no lldpd answering on the socket, or a spec NIC lldpd does
// not run on (`show interfaces`: a port it does not listen on hears
// nothing, which is no finding about the cable). Never a guess: with a
// note the comparison judges the host's ports by state and speed only.
func readLLDP(ctx context.Context, h *intent.Host, dl *linktruth.DeviceLinks, run func(context.Context, ...string) ([]byte, error)) {
	sock := defaultLLDPSocket
	var sockArgs []string
	if h.Connect.Kind == "netns" {
		sock = LLDPSocket(h.Connect.Netns)
		sockArgs = []string{"-u", sock}
	}
	if _, err := os.Stat(sock); err != nil {
		if h.Connect.Kind == "netns" {
			dl.LLDPNote = fmt.Sprintf("no lldpd runs for netns %s (no control socket %s)", h.Connect.Netns, sock)
		} else {
			dl.LLDPNote = fmt.Sprintf("lldpd is not running (no control socket %s)", sock)
		}
		return
	}
	query := func(what string) (map[string][]linktruth.Neighbor, error) {
		out, err := run(ctx, append(sockArgs, "-f", "json", "show", what)...)
		if err != nil {
			return nil, err
		}
		return linktruth.ParseLLDPCLI(out)
	}
	local, err := query("interfaces")
	if err == nil {
		var off []string
		for name := range dl.Ports {
			if _, ok := local[name]; !ok {
				off = append(off, name)
			}
		}
		if len(off) > 0 {
			sort.Strings(off)
			dl.LLDPNote = fmt.Sprintf("lldpd does not run on %s (lldpcli show interfaces)", strings.Join(off, ", "))
			return
		}
	}
	var heard map[string][]linktruth.Neighbor
	if err == nil {
		heard, err = query("neighbors")
	}
	if err != nil {
		if errors.Is(err, errLLDPCLIMissing) {
			dl.LLDPNote = err.Error()
		} else {
			dl.LLDPNote = "lldpcli: " + err.Error()
		}
		return
	}
	for name, o := range dl.Ports {
		o.Neighbors = heard[name]
	}
	dl.LLDP = true
	dl.LLDPSource = strings.TrimSpace("lldpcli " + strings.Join(sockArgs, " ") + " -f json show neighbors")
}
