package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/verbs"
)

// VerbsOptions are the inputs of fabctl verbs server|client.
type VerbsOptions struct {
	IO      *IOStreams
	JSON    bool
	Debugf  func(format string, args ...any)
	Server  bool
	Peer    string // client: the server's address[:port]
	Listen  string // server: address[:port] of the control channel
	Backend string // fabctl | perftest
	Test    verbs.Test
	Local   verbs.Local
	Addr    string // --addr: local address on the RDMA interface
	NUMA    int    // --numa-node (-1: the NIC's)
	CPUs    string // --cpus
	Timeout time.Duration
	GIDIdx  int
}

// NewCmdVerbs returns `fabctl verbs`: one side of the built-in RDMA
// traffic test, run by hand (fabctl validate runs both sides itself).
func NewCmdVerbs(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "verbs <server|client>",
		Short: "Run one side of the RDMA traffic test (like perftest)",
		Long: `Run one side of fabctl's built-in RDMA traffic test by hand, perftest style:
start the server on one host, then the client on the other with the
server's address. The client chooses the test; the server adopts it.

RC RDMA WRITE, SEND and READ; bandwidth (--mode bw) or ping-pong latency
(--mode lat). QPs connect with an out-of-band exchange over a TCP control
channel (default), or through rdma_cm (--rdma-cm; iWARP needs it). The GID
is chosen as perftest does (RoCEv2 over v1, the address family of --addr,
not link-local) unless -x gives one; the path MTU is the smaller active
MTU of the two ports unless --mtu requires one.

--backend perftest runs perftest's ib_<op>_<mode> binary with the same
options instead (both sides need it), for cross-checks.

This command needs a fabctl built with -tags verbs against rdma-core
(libibverbs, librdmacm); a build without says so and exits 5.

Exit status: 0 the test ran; 1 it failed (the message says why); 5 the
test could not run here (no verbs support, no RDMA device, no perftest);
64 a usage error.`,
		Example: `  fabctl verbs server --listen 198.18.0.1
  fabctl verbs client 198.18.0.1 --op write -s 64KiB -n 5000 --tclass 106
  fabctl verbs client 198.18.0.1 --mode lat --op send -s 2 -n 2000
  fabctl verbs server --listen 198.18.1.1 --rdma-cm          # iWARP (siw)`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newCmdVerbsSide(f, true, nil), newCmdVerbsSide(f, false, nil))
	return cmd
}

// newCmdVerbsSide returns `fabctl verbs server` or `fabctl verbs client`.
func newCmdVerbsSide(f *Factory, server bool, runF func(*VerbsOptions) error) *cobra.Command {
	opts := &VerbsOptions{IO: f.IOStreams, Server: server}
	var size, dur, op, mode string
	var rdmaCM bool
	use, short, args := "client SERVER[:PORT]", "Run the client side: connect to a server and run the test", cobra.ExactArgs(1)
	if server {
		use, short, args = "server", "Run the server side: wait for a client and serve one test", cobra.NoArgs
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  usageArgs(args),
		RunE: func(cmd *cobra.Command, a []string) error {
			opts.JSON = f.Global.JSON
			opts.Debugf = f.Debugf
			if !server {
				opts.Peer = a[0]
			}
			t := &opts.Test
			t.Op, t.Mode = verbs.Op(op), verbs.Mode(mode)
			if rdmaCM {
				t.Conn = verbs.ConnCM
			}
			if size != "" {
				b, err := spec.ParseBytes(size)
				if err != nil {
					return FlagErrorf("invalid --size %q: %v", size, err)
				}
				t.Size = int(b)
			}
			if dur != "" {
				d, err := parseSeconds(dur)
				if err != nil {
					return FlagErrorf("invalid --duration %q: %v", dur, err)
				}
				t.Duration = d
			}
			t.Fill()
			if err := t.Check(); err != nil {
				return FlagErrorf("%v", err)
			}
			if opts.Addr != "" {
				ip, err := netip.ParseAddr(opts.Addr)
				if err != nil {
					return FlagErrorf("invalid --addr %q: want an IP address", opts.Addr)
				}
				opts.Local.Addr = ip
			}
			if opts.NUMA >= 0 {
				n := opts.NUMA
				opts.Local.NUMANode = &n
			}
			if opts.CPUs != "" {
				cpus, err := spec.ParseIntRanges(opts.CPUs, 0, 1<<16)
				if err != nil {
					return FlagErrorf("invalid --cpus %q: %v", opts.CPUs, err)
				}
				opts.Local.CPUs = cpus
			}
			opts.Local.GIDIndex = opts.GIDIdx
			switch opts.Backend {
			case "fabctl", "perftest":
			default:
				return FlagErrorf("invalid --backend %q: want fabctl or perftest", opts.Backend)
			}
			if runF != nil {
				return runF(opts)
			}
			return verbsRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Local.Device, "device", "d", "", "RDMA `device` (default: the device of --netdev or --addr, else the first)")
	fl.IntVarP(&opts.Local.Port, "ib-port", "i", 1, "Device `port`")
	fl.IntVarP(&opts.GIDIdx, "gid-index", "x", -1, "GID `index`; -1 chooses it like perftest")
	fl.StringVar(&opts.Local.GIDType, "gid-type", "", "Restrict the GID choice to `type` roce-v2 or roce-v1")
	fl.StringVar(&opts.Local.Netdev, "netdev", "", "Network `interface` of the RDMA device (device and NUMA lookup)")
	fl.StringVar(&opts.Addr, "addr", "", "This host's `address` on the RDMA interface (GID choice, rdma_cm source)")
	fl.IntVar(&opts.NUMA, "numa-node", -1, "Pin the test thread and buffers to NUMA `node`; -1 uses the NIC's node")
	fl.StringVar(&opts.CPUs, "cpus", "", "Pin the test thread to `cpus` (\"0-3,8\")")
	fl.StringVar(&opts.Backend, "backend", "fabctl", "Traffic `engine`: fabctl or perftest")
	fl.DurationVar(&opts.Timeout, "timeout", 30*time.Second, "Give up a setup step (peer, exchange, QP bring-up) after `duration`")
	if server {
		fl.StringVar(&opts.Listen, "listen", "", "Control channel `address[:port]` (default: all addresses, port "+strconv.Itoa(verbs.DefaultPort)+")")
	}
	// The client chooses the test. A perftest server needs the same
	// options as its client, so the server takes them too.
	fl.StringVar(&op, "op", "write", "RDMA `operation`: write, send or read")
	fl.StringVar(&mode, "mode", "bw", "What to measure (`what`): bw (bandwidth) or lat (ping-pong latency)")
	fl.StringVarP(&size, "size", "s", "", "Message `size` (\"64KiB\", \"2\"; default 64KiB for bw, 2 B for lat)")
	fl.IntVarP(&opts.Test.Iterations, "iterations", "n", 0, "Messages per QP (`n`; default 5000 for bw, 1000 for lat)")
	fl.StringVarP(&dur, "duration", "D", "", "Run for a `time` instead of a count (\"10s\"; a bare number is seconds)")
	fl.IntVarP(&opts.Test.QPs, "qps", "q", 1, "Queue pairs (`n`)")
	fl.IntVarP(&opts.Test.TxDepth, "tx-depth", "t", 0, "Send queue `depth` (default 128 for bw)")
	fl.IntVarP(&opts.Test.RxDepth, "rx-depth", "r", 0, "Receive queue `depth` (default 512 for bw)")
	fl.IntVarP(&opts.Test.CQMod, "cq-mod", "Q", 0, "Signal every `n`-th send (default 100 for bw)")
	fl.IntVarP(&opts.Test.PostList, "post-list", "l", 1, "Work requests per post (`n`; perftest -l)")
	fl.IntVarP(&opts.Test.Inline, "inline", "I", 0, "Largest message sent inline, `bytes` (-1 never)")
	fl.IntVar(&opts.Test.TClass, "tclass", -1, "GRH traffic class / IP ToS `byte` (DSCP<<2 | ECN; -1 device default)")
	fl.IntVar(&opts.Test.SL, "sl", 0, "InfiniBand service `level`")
	fl.IntVarP(&opts.Test.MTU, "mtu", "m", 0, "Require this path `MTU` (256..4096; default the smaller active MTU)")
	fl.BoolVarP(&rdmaCM, "rdma-cm", "R", false, "Connect the QPs through rdma_cm (required for iWARP)")
	fl.IntVarP(&opts.Test.Timeout, "qp-timeout", "u", 14, "QP ACK timeout `exponent` (4.096us x 2^n; perftest -u)")
	return cmd
}

// parseSeconds accepts a Go duration or a bare number of seconds.
func parseSeconds(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return spec.ParseDuration(s)
}

// verbsJSON is the --json output of fabctl verbs.
type verbsJSON struct {
	FormatVersion string        `json:"format_version"`
	OK            bool          `json:"ok"`
	Error         string        `json:"error,omitempty"`
	Unavailable   bool          `json:"unavailable,omitempty"`
	Result        *verbs.Result `json:"result,omitempty"`
}

func verbsRun(ctx context.Context, opts *VerbsOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	res, err := verbsSide(ctx, opts)
	code := ExitOK
	if err != nil {
		code = ExitError
		if errors.Is(err, verbs.ErrUnavailable) {
			code = ExitNothingTested
		}
	}
	if opts.JSON {
		doc := verbsJSON{FormatVersion: jsonFormatVersion, OK: err == nil, Result: res, Unavailable: code == ExitNothingTested}
		if err != nil {
			doc.Error = err.Error()
		}
		if werr := writeJSON(opts.IO.Out, doc); werr != nil {
			return werr
		}
		return exitWith(code)
	}
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "Error: %v\n", err)
		return exitWith(code)
	}
	writeVerbsResult(opts.IO, res)
	return nil
}

func writeVerbsResult(io *IOStreams, r *verbs.Result) {
	out := io.Out
	st := newStyles(out, io.ColorEnabled())
	if r.Role == "server" && r.Backend == "fabctl" {
		// The client measures; the server only says what it served.
		what := ""
		if r.Messages > 0 {
			what = fmt.Sprintf(" (%d messages received)", r.Messages)
		}
		fmt.Fprintf(out, "%s served %s%s\n", st.OK.Render("✔"), r.Test, what)
	} else {
		fmt.Fprintf(out, "%s %s (%s)\n", st.OK.Render("✔"), r.Summary(), r.Role)
	}
	if r.Local != nil && r.Peer != nil && r.Test.Conn == verbs.ConnCM {
		fmt.Fprintf(out, "  %s port %d  ->  %s, connected through rdma_cm; path MTU %d\n", r.Local.Device, r.Local.Port, r.Peer.Device, r.PathMTU)
	} else if r.Local != nil && r.Peer != nil {
		fmt.Fprintf(out, "  %s port %d GID[%d] %s %s  ->  %s GID[%d] %s; path MTU %d\n", r.Local.Device, r.Local.Port,
			r.Local.GIDIndex, r.Local.GID, r.Local.GIDType, r.Peer.Device, r.Peer.GIDIndex, r.Peer.GID, r.PathMTU)
	}
	for _, n := range append(append([]string(nil), r.Placement...), r.Notes...) {
		fmt.Fprintf(out, "  %s\n", st.Faint.Render(n))
	}
}

// verbsSide runs this host's side with the chosen backend.
func verbsSide(ctx context.Context, opts *VerbsOptions) (*verbs.Result, error) {
	vo := verbs.Options{Setup: opts.Timeout, Fabctl: readBuildInfo().Version, Logf: opts.Debugf}
	if opts.Server {
		host, port, err := splitHostPortDefault(opts.Listen, verbs.DefaultPort)
		if err != nil {
			return nil, FlagErrorf("invalid --listen %q: %v", opts.Listen, err)
		}
		if !opts.Local.Addr.IsValid() && host != "" {
			if ip, err := netip.ParseAddr(host); err == nil {
				opts.Local.Addr = ip
			}
		}
		if opts.Backend == "perftest" {
			return verbs.RunPerftest(ctx, opts.Test, perftestLocal(opts.Local, opts.Test), port, "", opts.IO.ErrOut)
		}
		if err := verbs.Available(); err != nil {
			return nil, err
		}
		ln, err := verbs.Listen(net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		fmt.Fprintf(opts.IO.ErrOut, "fabctl verbs server: waiting for a client on %s\n", ln.Addr())
		ctl, err := verbs.Accept(ctx, ln, 0)
		if err != nil {
			return nil, err
		}
		defer ctl.Close()
		return verbs.Serve(ctx, ctl, opts.Local, vo)
	}
	host, port, err := splitHostPortDefault(opts.Peer, verbs.DefaultPort)
	if err != nil || host == "" {
		return nil, FlagErrorf("invalid server address %q: want HOST or HOST:PORT", opts.Peer)
	}
	if opts.Backend == "perftest" {
		return verbs.RunPerftest(ctx, opts.Test, perftestLocal(opts.Local, opts.Test), port, host, opts.IO.ErrOut)
	}
	if err := verbs.Available(); err != nil {
		return nil, err
	}
	ctl, err := verbs.Dial(ctx, net.JoinHostPort(host, strconv.Itoa(port)), opts.Timeout)
	if err != nil {
		return nil, err
	}
	defer ctl.Close()
	return verbs.RunClient(ctx, ctl, opts.Local, opts.Test, vo)
}

// perftestLocal settles the device and GID perftest gets, with the same
// selection fabctl's engine uses, so both backends run on the same GID.
func perftestLocal(l verbs.Local, t verbs.Test) verbs.Local {
	l.Fill()
	sys := verbs.Sysfs{Root: verbs.SysRoot}
	if l.Device == "" {
		if l.Netdev == "" && l.Addr.IsValid() {
			l.Netdev, _ = verbs.NetdevForAddr(l.Addr)
		}
		if l.Netdev != "" {
			l.Device, _ = sys.DeviceForNetdev(l.Netdev)
		}
	}
	if t.Conn == verbs.ConnVerbs && l.GIDIndex < 0 && l.Device != "" {
		if table, err := sys.GIDTable(l.Device, l.Port); err == nil {
			ch := verbs.GIDChoice{Index: -1, Netdev: l.Netdev, Addr: l.Addr}
			if e, err := verbs.SelectGID(l.Device, l.Port, table, ch); err == nil {
				l.GIDIndex = e.Index
			}
		}
	}
	return l
}

// splitHostPortDefault splits "host[:port]" ("" and ":port" mean all
// addresses), with def when no port is given.
func splitHostPortDefault(s string, def int) (string, int, error) {
	if s == "" {
		return "", def, nil
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, fmt.Errorf("invalid port %q", p)
		}
		return h, n, nil
	}
	if strings.Count(s, ":") > 1 || !strings.Contains(s, ":") {
		return strings.Trim(s, "[]"), def, nil
	}
	return "", 0, fmt.Errorf("want HOST or HOST:PORT")
}
