// Package verbs is fabctl's built-in RDMA traffic test: RC RDMA WRITE,
// SEND/RECV and READ between two hosts, bandwidth and ping-pong latency,
// the way perftest measures them.
//
// Go drives the setup (device and GID selection, the out-of-band exchange
// over a TCP control channel, the QP state machine); a thin C shim against
// libibverbs and librdmacm (shim.c) runs the hot post/poll loop, so no cgo
// call sits on the per-message path. The cgo half is behind the `verbs`
// build tag: without it (no rdma-core on the build machine) the package
// still builds, and Available reports why the test cannot run. Nothing in
// fabctl may report an unavailable traffic test as passed.
//
// A second backend (perftest.go) drives perftest's ib_*_bw / ib_*_lat
// binaries with --out_json, for cross-checks on real fabrics.
package verbs

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// Op is the RDMA operation a test uses.
type Op string

// Operations.
const (
	OpWrite Op = "write"
	OpSend  Op = "send"
	OpRead  Op = "read"
)

// Mode is what a test measures.
type Mode string

// Modes.
const (
	ModeBandwidth Mode = "bw"
	ModeLatency   Mode = "lat"
)

// ConnMode is how the QPs are connected.
type ConnMode string

// Connection modes.
const (
	// ConnVerbs exchanges QPN/PSN/GID/LID over the control channel and
	// moves the QPs to RTR/RTS with ibv_modify_qp (perftest's default).
	ConnVerbs ConnMode = "verbs"
	// ConnCM connects through rdma_cm (perftest -R). iWARP requires it.
	ConnCM ConnMode = "rdma_cm"
)

// Defaults, as perftest's (src/perftest_parameters.h) where it has one.
const (
	DefaultSize    = 65536
	DefaultTxDepth = 128
	DefaultRxDepth = 512
	DefaultCQMod   = 100
	// DefaultInline and DefaultInlineSend are perftest's DEF_INLINE_WRITE
	// and DEF_INLINE_SEND_RC_UC, its inline sizes for RC latency tests.
	DefaultInline     = 220
	DefaultInlineSend = 236
	DefaultPort       = 18515 + 100
	// MaxQPs bounds qps per connection (the spec allows 1..1024).
	MaxQPs = 1024
	// maxLatencySamples bounds a duration-mode latency run's timestamps.
	maxLatencySamples = 20_000_000
)

// DefaultIterations is perftest's iteration count for an operation and
// mode (src/perftest_parameters.c init_perftest_params: DEF_ITERS_WB,
// 5000, for WRITE bandwidth, DEF_ITERS, 1000, for everything else).
func DefaultIterations(op Op, m Mode) int {
	if m == ModeBandwidth && op == OpWrite {
		return 5000
	}
	return 1000
}

// DefaultInlineFor is perftest's inline size when none is asked for
// (src/perftest_parameters.c ctx_set_max_inline): 220 bytes for WRITE and
// 236 for SEND latency tests on RC, nothing inline for READ and for every
// bandwidth test (-1: never).
func DefaultInlineFor(op Op, m Mode) int {
	switch {
	case m != ModeLatency:
		return -1
	case op == OpWrite:
		return DefaultInline
	case op == OpSend:
		return DefaultInlineSend
	}
	return -1
}

// Test is what both sides of one test agree on: the client proposes it in
// its hello, the server adopts it.
type Test struct {
	Op   Op       `json:"op"`
	Mode Mode     `json:"mode"`
	Conn ConnMode `json:"conn"`
	// Size is the message size in bytes.
	Size int `json:"size"`
	// Iterations per QP (perftest -n); 0 with Duration set runs for a time.
	Iterations int           `json:"iterations,omitempty"`
	Duration   time.Duration `json:"duration,omitempty"`
	QPs        int           `json:"qps"`
	TxDepth    int           `json:"tx_depth"`
	RxDepth    int           `json:"rx_depth"`
	// CQMod signals every CQMod-th send (completion moderation).
	CQMod int `json:"cq_mod"`
	// PostList is how many WRs one ibv_post_send carries (perftest -l).
	PostList int `json:"post_list,omitempty"`
	// Inline is the largest message sent inline (-1: never; 0 takes the
	// default, which the device may lower).
	Inline int `json:"inline"`
	// TClass is the GRH traffic class (RoCEv2: the IP ToS byte, DSCP<<2 |
	// ECN); -1 leaves the device default. With rdma_cm it is the ToS.
	TClass int `json:"tclass"`
	// SL is the InfiniBand service level (also the PCP on RoCEv1).
	SL int `json:"sl"`
	// MTU is the path MTU required in bytes (256..4096); 0 uses
	// min(local, remote) active MTU.
	MTU int `json:"mtu,omitempty"`
	// Timeout is the QP's local ACK timeout exponent (4.096 us * 2^n).
	Timeout int `json:"timeout"`
}

// Fill sets the defaults of unset fields.
func (t *Test) Fill() {
	if t.Op == "" {
		t.Op = OpWrite
	}
	if t.Mode == "" {
		t.Mode = ModeBandwidth
	}
	if t.Conn == "" {
		t.Conn = ConnVerbs
	}
	if t.Size == 0 {
		t.Size = DefaultSize
		if t.Mode == ModeLatency {
			t.Size = 2
		}
	}
	if t.Iterations == 0 && t.Duration == 0 {
		t.Iterations = DefaultIterations(t.Op, t.Mode)
	}
	if t.QPs == 0 {
		t.QPs = 1
	}
	if t.TxDepth == 0 {
		t.TxDepth = DefaultTxDepth
		if t.Mode == ModeLatency {
			t.TxDepth = 1
		}
	}
	if t.RxDepth == 0 {
		t.RxDepth = DefaultRxDepth
		if t.Mode == ModeLatency {
			t.RxDepth = 16
		}
	}
	if t.CQMod == 0 {
		t.CQMod = DefaultCQMod
		if t.Mode == ModeLatency {
			t.CQMod = 1
		}
	}
	if t.CQMod > t.TxDepth {
		t.CQMod = t.TxDepth
	}
	if t.PostList == 0 {
		t.PostList = 1
	}
	if t.Inline == 0 {
		t.Inline = DefaultInlineFor(t.Op, t.Mode)
	}
	if t.Timeout == 0 {
		t.Timeout = 14
	}
}

// Check reports the first problem with the test parameters.
func (t *Test) Check() error {
	switch t.Op {
	case OpWrite, OpSend, OpRead:
	default:
		return fmt.Errorf("unknown operation %q: want write, send or read", t.Op)
	}
	switch t.Mode {
	case ModeBandwidth, ModeLatency:
	default:
		return fmt.Errorf("unknown mode %q: want bw or lat", t.Mode)
	}
	switch t.Conn {
	case ConnVerbs, ConnCM:
	default:
		return fmt.Errorf("unknown connection mode %q: want verbs or rdma_cm", t.Conn)
	}
	switch {
	case t.Size < 1 || t.Size > 1<<31:
		return fmt.Errorf("message size %d out of range 1..2GiB", t.Size)
	case t.Iterations < 0 || t.Duration < 0:
		return errors.New("iterations and duration must not be negative")
	case t.Iterations == 0 && t.Duration == 0:
		return errors.New("set iterations or a duration")
	case t.Iterations > 0 && t.Duration > 0:
		return errors.New("set iterations or a duration, not both")
	case t.QPs < 1 || t.QPs > MaxQPs:
		return fmt.Errorf("qps %d out of range 1..%d", t.QPs, MaxQPs)
	case t.Mode == ModeLatency && t.QPs != 1:
		return errors.New("latency tests use one QP")
	case t.TxDepth < 1 || t.RxDepth < 1:
		return errors.New("tx and rx depth must be at least 1")
	case t.CQMod < 1 || t.CQMod > t.TxDepth:
		return fmt.Errorf("cq moderation %d must be 1..tx depth (%d)", t.CQMod, t.TxDepth)
	case t.PostList < 1 || t.PostList > t.TxDepth:
		return fmt.Errorf("post list %d must be 1..tx depth (%d)", t.PostList, t.TxDepth)
	case t.Inline < -1 || t.Inline > 1<<16:
		return errors.New("inline size out of range (-1 = never, up to 65536)")
	case t.TClass < -1 || t.TClass > 255:
		return fmt.Errorf("traffic class %d out of range 0..255", t.TClass)
	case t.SL < 0 || t.SL > 15:
		return fmt.Errorf("service level %d out of range 0..15", t.SL)
	case t.MTU != 0 && MTUEnum(t.MTU) == 0:
		return fmt.Errorf("path MTU %d is not an RDMA MTU (256, 512, 1024, 2048, 4096)", t.MTU)
	case t.Timeout < 1 || t.Timeout > 31:
		return fmt.Errorf("ack timeout exponent %d out of range 1..31", t.Timeout)
	case t.Mode == ModeLatency && t.Iterations > maxLatencySamples:
		return fmt.Errorf("a latency test keeps one timestamp per iteration: at most %d", maxLatencySamples)
	}
	return nil
}

// String is a one-line description: "write bw 65536B x5000 1qp".
func (t Test) String() string {
	n := fmt.Sprintf("x%d", t.Iterations)
	if t.Duration > 0 {
		n = t.Duration.String()
	}
	s := fmt.Sprintf("%s %s %dB %s %dqp", t.Op, t.Mode, t.Size, n, t.QPs)
	if t.TClass >= 0 {
		s += fmt.Sprintf(" tclass %d", t.TClass)
	}
	if t.Conn == ConnCM {
		s += " rdma_cm"
	}
	return s
}

// Local is one side's own choices: which device, port and GID, where to
// run. None of it is sent to the peer except what the exchange needs.
type Local struct {
	// Device is the RDMA device (mlx5_0, rxe_a); empty picks the device
	// of Netdev, or of Addr, or the first device.
	Device string
	Port   int // default 1
	// Netdev is the network interface the device sits on (for NUMA
	// locality and for choosing the device).
	Netdev string
	// GIDNetdev is the netdev whose GID a raw-verbs side takes, when it
	// is not Netdev: the RDMA VLAN interface, which holds the NIC's
	// addresses and so their GIDs (the host driver resolves
	// NCCL_IB_GID_INDEX there, internal/rdmagid). "" is Netdev.
	GIDNetdev string `json:",omitempty"`
	// GIDIndex selects the GID explicitly; -1 scores them like perftest.
	GIDIndex int
	// GIDType restricts the automatic choice: "roce-v2", "roce-v1", "ib"
	// (empty: RoCEv2 over v1).
	GIDType string
	// Addr is this side's IP address on the RDMA interface: the GID's
	// address family follows it, and rdma_cm binds to it.
	Addr netip.Addr
	// NUMANode pins the test thread and buffers to a node (nil: the NIC's
	// node when the system reports one). CPUs overrides the CPU set.
	NUMANode *int
	CPUs     []int
}

// GIDNetdevName is the netdev a side's GID must belong to: GIDNetdev,
// else Netdev.
func (l Local) GIDNetdevName() string {
	if l.GIDNetdev != "" {
		return l.GIDNetdev
	}
	return l.Netdev
}

// Fill sets the defaults of unset fields.
func (l *Local) Fill() {
	if l.Port == 0 {
		l.Port = 1
	}
}

// GID types as sysfs names them (gid_attrs/types/N).
const (
	GIDTypeRoCEv2 = "RoCE v2"
	GIDTypeRoCEv1 = "IB/RoCE v1"
)

// normGIDType maps a user spelling to the sysfs name.
func normGIDType(s string) (string, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "_", "-")) {
	case "":
		return "", nil
	case "roce-v2", "rocev2", "v2":
		return GIDTypeRoCEv2, nil
	case "roce-v1", "rocev1", "v1", "ib", "ib/rocev1":
		return GIDTypeRoCEv1, nil
	}
	return "", fmt.Errorf("unknown GID type %q: want roce-v2, roce-v1 or ib", s)
}
