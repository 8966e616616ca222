//go:build verbs

package verbs

/*
#cgo LDFLAGS: -libverbs -lrdmacm
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"syscall"
	"time"
	"unsafe"
)

// Built reports whether this binary has the verbs engine.
const Built = true

// Available reports whether the verbs engine can run here: the build has
// it, so the question is whether the host has an RDMA device.
func Available() error {
	if len(Sysfs{Root: SysRoot}.Devices()) == 0 {
		return fmt.Errorf("%w: this host has no RDMA devices (no /sys/class/infiniband entries; load the NIC's RDMA driver, or rdma_rxe/siw for a software device)", ErrUnavailable)
	}
	return nil
}

type cEngine struct{}

func (cEngine) Available() error { return Available() }

var defaultEngine engine = cEngine{}

// cSide is one side's resources; the C struct lives in C memory because
// the hot loops read its target/stop fields while Go writes them.
type cSide struct {
	s       *C.struct_fab_side
	l       Local
	t       Test
	server  bool
	dev     C.struct_fab_devinfo
	port    C.struct_fab_port
	local   Endpoint
	pathMTU int
	notes   []string
	route   *Route // rdma_cm's path (nil: verbs mode, iWARP)
}

func newSide(l Local, t Test, server bool) *cSide {
	s := (*C.struct_fab_side)(C.calloc(1, C.sizeof_struct_fab_side))
	s.target = C.uint64_t(math.MaxUint64)
	return &cSide{s: s, l: l, t: t, server: server}
}

// cerr turns the C side's message into an error.
func (c *cSide) cerr(what string) error {
	msg := C.GoString(&c.s.err[0])
	if what != "" {
		msg = what + ": " + msg
	}
	if st := int(c.s.wc_status); st != 0 {
		if h := WCHint(st, c.pathMTU); h != "" {
			msg += " — " + h
		}
	}
	return errors.New(msg)
}

func linkLayer(ll C.int) string {
	if ll == C.IBV_LINK_LAYER_ETHERNET {
		return LinkEthernet
	}
	return LinkInfiniBand
}

var portStates = map[C.int]string{1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}

// device opens (or adopts) the context and reads the port and device.
func (c *cSide) queryDevice() error {
	if C.fab_query_port(c.s, C.int(c.l.Port), &c.port) != 0 {
		return c.cerr(c.l.Device)
	}
	if c.port.state != C.IBV_PORT_ACTIVE {
		return fmt.Errorf("%s port %d is %s, not ACTIVE (the netdev is down or has no carrier, or no subnet manager on InfiniBand)",
			c.l.Device, c.l.Port, portStates[c.port.state])
	}
	if C.fab_query_dev(c.s, &c.dev) != 0 {
		return c.cerr(c.l.Device)
	}
	c.local = Endpoint{Device: C.GoString(&c.dev.name[0]), Port: c.l.Port, LinkLayer: linkLayer(c.port.link_layer),
		Transport: "ib", LID: uint16(c.port.lid), MTU: MTUBytes(int(c.port.active_mtu)), GIDIndex: -1,
		MaxRdAtomic: min(int(c.dev.max_qp_rd_atom), 16)}
	if c.dev.transport == C.IBV_TRANSPORT_IWARP {
		c.local.Transport = "iwarp"
	}
	return nil
}

// resources allocates the PD, buffer and CQs, sized within the device's
// limits.
func (c *cSide) resources() error {
	t := c.t
	if t.TxDepth > int(c.dev.max_qp_wr) || t.RxDepth > int(c.dev.max_qp_wr) {
		return fmt.Errorf("tx/rx depth %d/%d exceeds %s's max_qp_wr %d", t.TxDepth, t.RxDepth, c.local.Device, c.dev.max_qp_wr)
	}
	scqe, rcqe := t.TxDepth*t.QPs, 1
	if c.receives() {
		rcqe = t.RxDepth * t.QPs
	}
	if scqe > int(c.dev.max_cqe) || rcqe > int(c.dev.max_cqe) {
		return fmt.Errorf("%d QPs x depth %d needs %d CQ entries; %s has max_cqe %d (lower qps or the depth)",
			t.QPs, max(t.TxDepth, t.RxDepth), max(scqe, rcqe), c.local.Device, c.dev.max_cqe)
	}
	node := -1
	if c.l.NUMANode != nil {
		node = *c.l.NUMANode
	}
	if C.fab_alloc(c.s, C.uint32_t(t.Size), C.int(t.QPs), C.int(node)) != 0 {
		return c.cerr(c.local.Device)
	}
	switch b := int(c.s.numa_bound); {
	case b == 1:
		c.notes = append(c.notes, fmt.Sprintf("buffers bound to NUMA node %d", node))
	case b < 0:
		c.notes = append(c.notes, fmt.Sprintf("could not bind buffers to NUMA node %d: %v", node, syscall.Errno(-b)))
	}
	if C.fab_create_cqs(c.s, C.int(scqe), C.int(rcqe)) != 0 {
		return c.cerr(c.local.Device)
	}
	c.local.RKey = uint32(c.s.mr.rkey)
	c.local.Addr = uint64(uintptr(unsafe.Pointer(c.s.buf)))
	c.local.BufSize = uint64(c.s.buflen)
	return nil
}

// receives reports whether this side posts receives: SEND bandwidth
// servers and both sides of a SEND ping-pong.
func (c *cSide) receives() bool {
	return c.t.Op == OpSend && (c.server || c.t.Mode == ModeLatency)
}

// addQP creates a QP (on an rdma_cm id when id is set: rdma_cm leaves it
// in INIT; a verbs QP is moved to INIT here) and posts its receives,
// which a QP takes from INIT on.
func (c *cSide) addQP(id *C.struct_rdma_cm_id) error {
	rx := 1
	if c.receives() {
		rx = c.t.RxDepth
	}
	inline := max(c.t.Inline, 0)
	if C.fab_create_qp(c.s, id, C.int(c.t.TxDepth), C.int(rx), C.int(inline)) != 0 {
		return c.cerr(c.local.Device)
	}
	i := int(c.s.nqp) - 1
	if id == nil && C.fab_qp_init(c.s, C.int(i), C.int(c.l.Port)) != 0 {
		return c.cerr(c.local.Device)
	}
	if c.receives() && C.fab_post_recvs(c.s, C.int(i), C.int(rx)) != 0 {
		return c.cerr(c.local.Device)
	}
	qp := c.s.qp[i]
	c.local.QPs = append(c.local.QPs, QPInfo{QPN: uint32(qp.qp_num), PSN: rand.Uint32() & 0xffffff})
	return nil
}

func (c *cSide) inlineNote() {
	if c.t.Inline > 0 && c.t.Op != OpRead && int(c.s.max_inline) < min(c.t.Size, c.t.Inline) {
		c.notes = append(c.notes, fmt.Sprintf("%s supports %d bytes of inline data: messages are not sent inline", c.local.Device, int(c.s.max_inline)))
	}
}

func (cEngine) Open(l Local, t Test, server bool) (side, error) {
	sys := Sysfs{Root: SysRoot}
	if err := l.resolve(sys); err != nil {
		return nil, err
	}
	c := newSide(l, t, server)
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	cname := C.CString(l.Device)
	defer C.free(unsafe.Pointer(cname))
	if C.fab_open_device(c.s, cname) != 0 {
		return nil, c.cerr("")
	}
	if err := c.queryDevice(); err != nil {
		return nil, err
	}
	if c.local.Transport == "iwarp" {
		return nil, fmt.Errorf("%s is an iWARP device: iWARP connects only through rdma_cm (use the rdma_cm connection mode)", c.local.Device)
	}
	if err := c.selectGID(sys); err != nil {
		return nil, err
	}
	if err := c.resources(); err != nil {
		return nil, err
	}
	for i := 0; i < t.QPs; i++ {
		if err := c.addQP(nil); err != nil {
			return nil, err
		}
	}
	c.inlineNote()
	ok = true
	return c, nil
}

// selectGID picks the GID like perftest (RoCE) or index 0 (InfiniBand),
// and reads it back through verbs.
func (c *cSide) selectGID(sys Sysfs) error {
	idx := c.l.GIDIndex
	if c.local.LinkLayer == LinkEthernet {
		typ, err := normGIDType(c.l.GIDType)
		if err != nil {
			return err
		}
		table, err := sys.GIDTable(c.local.Device, c.l.Port)
		if err != nil {
			return err
		}
		ch := GIDChoice{Index: idx, Type: typ, Netdev: c.l.GIDNetdevName(), IPv6: c.l.Addr.Is6() && !c.l.Addr.Is4In6(), Addr: c.l.Addr}
		e, err := SelectGID(c.local.Device, c.l.Port, table, ch)
		if err != nil {
			return err
		}
		idx = e.Index
		c.local.GIDType = e.Type
	} else if idx < 0 {
		idx = 0
		c.local.GIDType = GIDTypeRoCEv1 // "IB/RoCE v1": the IB GID
	}
	var g [16]C.uint8_t
	if C.fab_query_gid(c.s, C.int(c.l.Port), C.int(idx), &g[0]) != 0 {
		return c.cerr(c.local.Device)
	}
	for i := range g {
		c.local.GID[i] = byte(g[i])
	}
	c.local.GIDIndex = idx
	return nil
}

func (c *cSide) Endpoint() *Endpoint { e := c.local; return &e }
func (c *cSide) PathMTU() int        { return c.pathMTU }
func (c *cSide) Notes() []string     { return c.notes }
func (c *cSide) Route() *Route       { return c.route }

func (c *cSide) Connect(peer *Endpoint, av AddressVector, mtu int) error {
	c.s.raddr = C.uint64_t(peer.Addr)
	c.s.rkey = C.uint32_t(peer.RKey)
	if mtu == 0 {
		return nil // rdma_cm
	}
	c.pathMTU = mtu
	cav := C.struct_fab_av{dlid: C.uint16_t(av.DLID), sl: C.uint8_t(av.SL), sgid_index: C.uint8_t(av.SGIDIndex),
		hop_limit: C.uint8_t(av.HopLimit), tclass: C.uint8_t(av.TClass), flow_label: C.uint32_t(av.FlowLabel), port: C.uint8_t(av.Port)}
	if av.IsGlobal {
		cav.is_global = 1
	}
	for i, b := range av.DGID {
		cav.dgid[i] = C.uint8_t(b)
	}
	rdIn := min(int(c.dev.max_qp_rd_atom), 16)
	rdOut := min(peer.MaxRdAtomic, int(c.dev.max_qp_init_rd_atom), 16)
	for i := range c.local.QPs {
		if rc := C.fab_qp_rtr(c.s, C.int(i), &cav, C.int(MTUEnum(mtu)), C.uint32_t(peer.QPs[i].QPN), C.uint32_t(peer.QPs[i].PSN), C.int(rdIn)); rc != 0 {
			err := c.cerr(c.local.Device)
			if h := RTRHint(syscall.Errno(rc), &c.local, peer, mtu, c.t.TClass); h != "" {
				err = fmt.Errorf("%w — %s", err, h)
			}
			return err
		}
		if C.fab_qp_rts(c.s, C.int(i), C.uint32_t(c.local.QPs[i].PSN), C.int(c.t.Timeout), C.int(max(rdOut, 1))) != 0 {
			return c.cerr(c.local.Device)
		}
	}
	return nil
}

func (c *cSide) run(t Test, limit time.Duration) C.struct_fab_run {
	op := map[Op]C.int{OpWrite: C.FAB_OP_WRITE, OpSend: C.FAB_OP_SEND, OpRead: C.FAB_OP_READ}[t.Op]
	r := C.struct_fab_run{op: op, size: C.uint32_t(t.Size), tx_depth: C.int(t.TxDepth), cq_mod: C.int(t.CQMod), post_list: C.int(t.PostList),
		iters: C.uint64_t(t.Iterations), duration_ns: C.uint64_t(t.Duration.Nanoseconds())}
	if t.Inline > 0 {
		r.use_inline = 1
	}
	if limit > 0 {
		r.deadline_ns = C.fab_now() + C.uint64_t(limit.Nanoseconds())
	}
	return r
}

// stallLimit is how long a client waits without any completion before it
// declares the peer unreachable: twice the time the transport's own
// retries take (8 attempts of 4.096us x 2^timeout), at least 30 s.
func stallLimit(t Test) time.Duration {
	retries := 2 * 8 * 4096 * time.Nanosecond << t.Timeout
	return max(30*time.Second, retries)
}

func (c *cSide) RunClient(t Test, limit time.Duration) (runOut, error) {
	r := c.run(t, limit)
	r.stall_ns = C.uint64_t(stallLimit(t).Nanoseconds())
	var rc C.int
	if t.Mode == ModeLatency {
		rc = C.fab_run_lat(c.s, &r, 0)
	} else {
		rc = C.fab_run_bw(c.s, &r)
	}
	out := runOut{Messages: uint64(r.messages), Elapsed: time.Duration(r.t_end - r.t_start)}
	if r.ts != nil {
		out.Posts = append([]uint64(nil), unsafe.Slice((*uint64)(unsafe.Pointer(r.ts)), int(r.ts_len))...)
		C.fab_free_ts(&r)
	}
	if rc != 0 {
		return out, c.cerr(fmt.Sprintf("%s after %d messages", c.local.Device, uint64(r.messages)))
	}
	return out, nil
}

func (c *cSide) RunServer(t Test, limit time.Duration) (runOut, error) {
	r := c.run(t, limit)
	var rc C.int
	if t.Mode == ModeLatency {
		rc = C.fab_run_lat(c.s, &r, 1)
	} else {
		rc = C.fab_run_recv(c.s, &r)
	}
	C.fab_free_ts(&r)
	out := runOut{Messages: uint64(r.messages), Elapsed: time.Duration(r.t_end - r.t_start)}
	if rc != 0 {
		return out, c.cerr(fmt.Sprintf("%s after %d messages", c.local.Device, uint64(r.messages)))
	}
	return out, nil
}

func (c *cSide) SetTarget(n uint64) { C.fab_set_target(c.s, C.uint64_t(n)) }
func (c *cSide) Abort()             { C.fab_abort(c.s) }

func (c *cSide) Close() {
	if c.s != nil {
		C.fab_close(c.s)
		C.free(unsafe.Pointer(c.s))
		c.s = nil
	}
}

// ---- rdma_cm ----

type cListener struct {
	c    *cSide
	port int
}

func (cEngine) Listen(l Local, t Test) (cmListener, error) {
	if !l.Addr.IsValid() {
		return nil, errors.New("rdma_cm: the server needs its address on the RDMA interface (listen address)")
	}
	_ = l.resolve(Sysfs{Root: SysRoot}) // best effort: rdma_cm picks the device from the address
	c := newSide(l, t, true)
	ip := C.CString(l.Addr.Unmap().String())
	defer C.free(unsafe.Pointer(ip))
	var port C.int
	if C.fab_cm_listen(c.s, ip, 0, C.int(t.TClass), &port) != 0 {
		err := c.cerr("rdma_cm listen")
		c.Close()
		return nil, err
	}
	return &cListener{c: c, port: int(port)}, nil
}

func (ln *cListener) Port() int { return ln.port }

func (ln *cListener) Close() {
	if ln.c != nil {
		ln.c.Close()
	}
}

// adopt takes the device context rdma_cm chose and sets up the side on it.
func (c *cSide) adopt(id *C.struct_rdma_cm_id, role string) error {
	got := C.GoString(C.fab_id_device(id))
	if c.l.Device != "" && got != c.l.Device {
		return fmt.Errorf("rdma_cm %s through %s, not %s: the route to the peer does not leave through %s's netdev "+
			"(a local route through loopback makes rdma_cm pick the peer's own device; check the routing of the test addresses)",
			role, got, c.l.Device, c.l.Device)
	}
	c.l.Device = got
	c.s.ctx = id.verbs
	c.l.Port = int(id.port_num)
	if err := c.queryDevice(); err != nil {
		return err
	}
	return c.resources()
}

func (ln *cListener) Accept(t Test, timeout time.Duration) (side, error) {
	c := ln.c
	ms := C.int(timeout.Milliseconds())
	for i := 0; i < t.QPs; i++ {
		var id *C.struct_rdma_cm_id
		if C.fab_cm_wait(c.s, C.RDMA_CM_EVENT_CONNECT_REQUEST, ms, &id) != 0 {
			return nil, c.cerr("rdma_cm: waiting for the client's connection")
		}
		if i == 0 {
			if err := c.adopt(id, "accepted the connection"); err != nil {
				return nil, err
			}
			var tc, sl C.int
			C.fab_id_route(id, &tc, &sl)
			if tc >= 0 {
				c.route = &Route{TClass: int(tc), SL: int(sl)}
			}
		}
		if err := c.addQP(id); err != nil {
			return nil, err
		}
		rd := min(int(c.dev.max_qp_rd_atom), 16)
		if C.fab_cm_accept(c.s, id, C.int(rd), C.int(min(int(c.dev.max_qp_init_rd_atom), 16))) != 0 {
			return nil, c.cerr("")
		}
		if C.fab_cm_wait(c.s, C.RDMA_CM_EVENT_ESTABLISHED, ms, nil) != 0 {
			return nil, c.cerr("rdma_cm: connection not established")
		}
	}
	c.pathMTU = int(C.fab_qp_mtu(c.s, 0))
	c.inlineNote()
	ln.c = nil // the side owns the resources now
	return c, nil
}

func (cEngine) Dial(l Local, server netip.AddrPort, t Test, timeout time.Duration) (side, error) {
	_ = l.resolve(Sysfs{Root: SysRoot})
	c := newSide(l, t, false)
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	src := ""
	if l.Addr.IsValid() {
		src = l.Addr.Unmap().String()
	}
	csrc, cdst := C.CString(src), C.CString(server.Addr().String())
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cdst))
	ms := C.int(timeout.Milliseconds())
	for i := 0; i < t.QPs; i++ {
		var id *C.struct_rdma_cm_id
		if rc := C.fab_cm_resolve(c.s, &id, csrc, cdst, C.int(server.Port()), C.int(t.TClass), C.int(t.Timeout), ms); rc != 0 {
			return nil, fmt.Errorf("%w — peer not reachable: rdma_cm could not resolve a path from %s to %s (no route from an RDMA interface, or the address is not on an RDMA device there)",
				c.cerr("rdma_cm"), orAny(src), server)
		}
		if i == 0 {
			if err := c.adopt(id, "resolved the peer"); err != nil {
				return nil, err
			}
			var tc, sl C.int
			C.fab_id_route(id, &tc, &sl)
			if tc >= 0 {
				c.route = &Route{TClass: int(tc), SL: int(sl)}
			}
		}
		if err := c.addQP(id); err != nil {
			return nil, err
		}
		rd := min(int(c.dev.max_qp_rd_atom), 16)
		if C.fab_cm_connect(c.s, id, C.int(rd), C.int(min(int(c.dev.max_qp_init_rd_atom), 16)), ms) != 0 {
			return nil, fmt.Errorf("%w (the server refused or did not answer the rdma_cm connection)", c.cerr("rdma_cm connect"))
		}
	}
	c.pathMTU = int(C.fab_qp_mtu(c.s, 0))
	c.inlineNote()
	ok = true
	return c, nil
}

func orAny(s string) string {
	if s == "" {
		return "any local address"
	}
	return s
}
