package ibmad

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Port is an open umad port: libibumad's (OpenPort), or a test's.
type Port interface {
	// Send sends a 256-byte MAD to dlid/dqp (qkey for the GSI); timeout
	// is the kernel's wait for the answer.
	Send(mad []byte, dlid, dqp int, qkey uint32, timeout time.Duration) error
	// Recv waits at most timeout for a MAD (0: takes one already there,
	// without waiting). nil, 0, nil: nothing came. The MAD may live in
	// a buffer the next Recv reuses.
	// status is umad_status: non-zero for a request of ours the kernel
	// gave up on (it comes back instead of an answer).
	Recv(timeout time.Duration) (mad []byte, status int, err error)
	Close() error
}

// Options tune the engine.
type Options struct {
	// Window is how many MADs are in flight at once (default and at
	// most MaxWindow). libibnetdisc keeps 2 (ibnd_config.max_smps); a
	// window the size of a switch's port count lets the SMA answer while
	// the next requests travel. Under ibsim (make bench-ib, 16 switches
	// and 64 adapters, load 7, five alternating pairs) 64 read in 0.14 to
	// 0.23 s where 32 took 0.17 to 0.28 s, with 1.5 to 4.5 ms less of
	// ibsim's CPU and fewer context switches: the simulator and
	// umad2sim's receiver find more answers and requests waiting at each
	// wake-up.
	Window int
	// Timeout is one MAD's wait for its answer (default 500 ms) and
	// Retries how often a MAD without one is sent again (default 2).
	Timeout time.Duration
	Retries int
}

// MaxWindow bounds Options.Window. Under ibsim a larger window can hang
// the client and spin ibsim: umad2sim holds its global lock across the
// blocking socket write of a request (ibsim-0.10 umad2sim/umad2sim.c
// write -> umad2sim_write), so once the socket's send buffer is full of
// unread requests its receiver thread cannot take the answers, and
// ibsim, whose client sockets are non-blocking, retries its write of an
// answer for as long as EAGAIN lasts (ibsim/ibsim.c sim_read_pkt) instead
// of reading the requests. 512 in flight hung that way here; 64 fill a
// fraction of the default 208 KiB send buffer (net.core.wmem_default).
const MaxWindow = 64

func (o Options) withDefaults() Options {
	if o.Window <= 0 {
		o.Window = MaxWindow
	}
	o.Window = min(o.Window, MaxWindow)
	if o.Timeout <= 0 {
		o.Timeout = 500 * time.Millisecond
	}
	if o.Retries < 0 {
		o.Retries = 0
	} else if o.Retries == 0 {
		o.Retries = 2
	}
	return o
}

// call is one request in the engine: sent, waiting or queued.
type call struct {
	req      Request
	done     func(*Response, error)
	tries    int
	deadline time.Time
}

// engine runs MADs over a Port with a window of them in flight. It is
// single-threaded: the callbacks run on the engine's goroutine and may
// queue more requests.
//
// After each wait it takes every answer already there without waiting
// (Recv with no timeout) before it refills the window, and it finds the
// next deadline from the order requests were sent in: the answers of a
// whole window cost no pass over the requests in flight each.
//
// A request is encoded into one buffer and an answer decoded into one
// Response, both the engine's: a callback gets the answer for its own
// call only and must copy what it keeps of Response.Data.
type engine struct {
	port    Port
	o       Options
	queue   []*call
	flight  map[uint32]*call
	order   []sentAs // in the order sent: deadlines ascend
	nextTID uint32
	sent    int
	buf     [MADSize]byte
	resp    Response
}

func newEngine(p Port, o Options) *engine {
	return &engine{port: p, o: o.withDefaults(), flight: map[uint32]*call{}, nextTID: 1}
}

// do queues a request; done gets the answer (a status other than 0 is
// an error) or the failure.
func (e *engine) do(r Request, done func(*Response, error)) {
	e.queue = append(e.queue, &call{req: r, done: done})
}

// run sends and receives until no request is left or ctx ends.
func (e *engine) run(ctx context.Context) error {
	// libibumad and umad2sim keep per-thread state in nothing, but one
	// OS thread keeps the calls in the order the engine makes them.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for len(e.queue) > 0 || len(e.flight) > 0 {
		if err := ctx.Err(); err != nil {
			e.failAll(err)
			return err
		}
		for len(e.flight) < e.o.Window && len(e.queue) > 0 {
			c := e.queue[0]
			e.queue[0] = nil
			e.queue = e.queue[1:]
			e.send(c)
		}
		if len(e.flight) == 0 {
			continue
		}
		wait := max(time.Until(e.earliest()), time.Millisecond)
		for {
			mad, status, err := e.port.Recv(wait)
			if err != nil {
				e.failAll(err)
				return err
			}
			if mad == nil {
				break
			}
			e.receive(mad, status)
			if len(e.flight) == 0 {
				break
			}
			wait = 0 // the answers already there, then send again
		}
		e.expire()
	}
	return nil
}

// sentAs is a request as sent under a transaction id: still in flight
// while flight[tid] is its call (an answer or a retry ends that).
type sentAs struct {
	c   *call
	tid uint32
}

func (e *engine) inFlight(s sentAs) bool { return e.flight[s.tid] == s.c }

// earliest is the deadline of the request in flight longest (every
// request waits the same Timeout, so the first sent ends first).
func (e *engine) earliest() time.Time {
	for len(e.order) > 0 && !e.inFlight(e.order[0]) {
		e.order = e.order[1:] // answered
	}
	if len(e.order) == 0 {
		return time.Now()
	}
	return e.order[0].c.deadline
}

func (e *engine) send(c *call) {
	tid := e.nextTID
	e.nextTID++
	if e.nextTID == 0 {
		e.nextTID = 1
	}
	mad := e.buf[:]
	if err := c.req.EncodeTo(mad, uint64(tid)); err != nil {
		c.done(nil, err)
		return
	}
	dlid, dqp, qkey := permissive, 0, uint32(0)
	switch c.req.Class {
	case ClassSMILID:
		dlid = c.req.LID
	case ClassSA:
		dlid, dqp, qkey = c.req.LID, 1, QP1Qkey
	}
	c.tries++
	c.deadline = time.Now().Add(e.o.Timeout)
	if err := e.port.Send(mad, dlid, dqp, qkey, e.o.Timeout); err != nil {
		c.done(nil, err)
		return
	}
	e.sent++
	e.flight[tid] = c
	e.order = append(e.order, sentAs{c, tid})
}

// receive matches an answer to its request by the low 32 bits of the
// transaction id (the kernel and umad2sim put the agent in the high
// bits).
func (e *engine) receive(mad []byte, status int) {
	r := &e.resp
	if err := r.decode(mad); err != nil {
		return // not ours to judge: an unsolicited or broken MAD
	}
	tid := uint32(r.TID)
	c, ok := e.flight[tid]
	if !ok {
		return // a late answer to a retried request
	}
	delete(e.flight, tid)
	if status != 0 {
		e.retry(c, fmt.Errorf("no answer (umad status %d)", status))
		return
	}
	if r.Method&0x80 == 0 || r.Attr != c.req.Attr {
		c.done(nil, fmt.Errorf("answer of method 0x%02x attribute 0x%04x to a request for attribute 0x%04x", r.Method, r.Attr, c.req.Attr))
		return
	}
	if r.Status != 0 {
		c.done(r, errors.New(StatusText(r.Status)))
		return
	}
	c.done(r, nil)
}

func (e *engine) expire() {
	now := time.Now()
	for len(e.order) > 0 {
		s := e.order[0]
		if e.inFlight(s) {
			if !now.After(s.c.deadline) {
				return
			}
			delete(e.flight, s.tid)
			e.retry(s.c, fmt.Errorf("no answer within %s", e.o.Timeout))
		}
		e.order = e.order[1:]
	}
}

func (e *engine) retry(c *call, why error) {
	if c.tries <= e.o.Retries {
		e.queue = append([]*call{c}, e.queue...)
		return
	}
	c.done(nil, fmt.Errorf("%w after %d tries", why, c.tries))
}

func (e *engine) failAll(err error) {
	for _, s := range e.order {
		if e.inFlight(s) {
			delete(e.flight, s.tid)
			s.c.done(nil, err)
		}
	}
	e.order = nil
	for _, c := range e.queue {
		c.done(nil, err)
	}
	e.queue = nil
}
