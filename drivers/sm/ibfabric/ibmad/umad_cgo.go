//go:build linux && cgo

package ibmad

// The transport: Debian's libibumad (rdma-core v44, libibumad3), loaded
// with dlopen when the command runs, so a fabctl built with cgo needs
// neither libibumad's headers to build nor the library to start (only
// `fabctl ibmad` needs it, on the subnet manager host). The calls and
// their meaning are libibumad's (rdma-core v44.0 libibumad/umad.h and
// libibumad/man/umad_*.3):
//
//   - umad_init(); umad_open_port(NULL, 0): the first active port of the
//     first CA (the SM host's, as infiniband-diags do without -C/-P);
//   - umad_register(portid, class, version, rmpp_version, NULL): an agent
//     per management class, answering nothing unsolicited;
//   - umad_send(portid, agentid, umad, 256, timeout_ms, retries) with the
//     address set by umad_set_addr(umad, dlid, dqp, sl, qkey); a request
//     the kernel times out comes back through umad_recv with a non-zero
//     umad_status;
//   - umad_recv(portid, umad, &length, timeout_ms): -ETIMEDOUT when
//     nothing arrived in time.
//
// Under ibsim the same library runs with libumad2sim.so preloaded (what
// ibsim-run does): umad2sim replaces the open/ioctl/read/write/poll calls
// libibumad makes on /dev/infiniband/umad*, and, being preloaded, comes
// first in the symbol search order of a library loaded later with
// dlopen too.

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int (*f_init)(void);
typedef int (*f_open_port)(const char *, int);
typedef int (*f_close_port)(int);
typedef int (*f_register)(int, int, int, uint8_t, long *);
typedef size_t (*f_size)(void);
typedef void *(*f_get_mad)(void *);
typedef int (*f_status)(void *);
typedef int (*f_set_addr)(void *, int, int, int, int);
typedef int (*f_send)(int, int, void *, int, int, int);
typedef int (*f_recv)(int, void *, int *, int);

static f_init p_init;
static f_open_port p_open_port;
static f_close_port p_close_port;
static f_register p_register;
static f_size p_size;
static f_get_mad p_get_mad;
static f_status p_status;
static f_set_addr p_set_addr;
static f_send p_send;
static f_recv p_recv;

static const char *fabctl_umad_load(void) {
	void *lib = dlopen("libibumad.so.3", RTLD_NOW | RTLD_GLOBAL);
	if (!lib)
		return dlerror();
#define SYM(v, name) do { v = dlsym(lib, name); if (!v) return dlerror(); } while (0)
	SYM(p_init, "umad_init");
	SYM(p_open_port, "umad_open_port");
	SYM(p_close_port, "umad_close_port");
	SYM(p_register, "umad_register");
	SYM(p_size, "umad_size");
	SYM(p_get_mad, "umad_get_mad");
	SYM(p_status, "umad_status");
	SYM(p_set_addr, "umad_set_addr");
	SYM(p_send, "umad_send");
	SYM(p_recv, "umad_recv");
#undef SYM
	return NULL;
}

static int fabctl_umad_init(void) { return p_init(); }
static void fabctl_exit(int code) { exit(code); }
static int fabctl_umad_open(const char *ca, int port) { return p_open_port(ca, port); }
static int fabctl_umad_close(int portid) { return p_close_port(portid); }
static int fabctl_umad_register(int portid, int cls, int ver, int rmpp) {
	return p_register(portid, cls, ver, (uint8_t)rmpp, NULL);
}
static size_t fabctl_umad_size(void) { return p_size(); }

// fabctl_umad_send copies the MAD into a umad buffer, addresses it and
// sends it.
static int fabctl_umad_send(int portid, int agent, void *buf, const void *mad, int len,
                            int dlid, int dqp, int qkey, int timeout_ms) {
	memcpy(p_get_mad(buf), mad, len);
	p_set_addr(buf, dlid, dqp, 0, qkey);
	return p_send(portid, agent, buf, len, timeout_ms, 0);
}

// fabctl_umad_recv waits for a MAD and copies it out; *status is
// umad_status (non-zero: a request of ours the kernel gave up on).
static int fabctl_umad_recv(int portid, void *buf, void *mad, int *len, int timeout_ms, int *status) {
	int n = *len;
	int r = p_recv(portid, buf, &n, timeout_ms);
	if (r < 0)
		return r;
	if (n > *len)
		n = *len;
	memcpy(mad, p_get_mad(buf), n);
	*len = n;
	*status = p_status(buf);
	return r;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var (
	loadOnce sync.Once
	loadErr  error
)

func load() error {
	loadOnce.Do(func() {
		if msg := C.fabctl_umad_load(); msg != nil {
			loadErr = fmt.Errorf("libibumad: %s (Debian: apt-get install libibumad3)", C.GoString(msg))
			return
		}
		if r := C.fabctl_umad_init(); r < 0 {
			loadErr = fmt.Errorf("umad_init: %v", syscall.Errno(-r))
		}
	})
	return loadErr
}

// umadPort is an open port with one agent per management class. Its
// methods must be called from one goroutine (the engine's).
type umadPort struct {
	id     C.int
	agents map[uint8]C.int
	sbuf   unsafe.Pointer // umad_size()+256, C memory
	rbuf   unsafe.Pointer
	mad    [MADSize]byte // what Recv returns, until the next Recv
}

// OpenPort opens the first active port of the first CA and registers
// agents for the directed-route and LID-routed SMP classes and the SA.
func OpenPort() (Port, error) {
	if err := load(); err != nil {
		return nil, err
	}
	id := C.fabctl_umad_open(nil, 0)
	if id < 0 {
		return nil, fmt.Errorf("umad_open_port: %v (is there an InfiniBand port, and the ib_umad module? run as root)", syscall.Errno(-id))
	}
	p := &umadPort{id: id, agents: map[uint8]C.int{}}
	for _, c := range []struct{ class, version, rmpp int }{{ClassSMIDR, 1, 0}, {ClassSMILID, 1, 0}, {ClassSA, 2, 1}} {
		a := C.fabctl_umad_register(id, C.int(c.class), C.int(c.version), C.int(c.rmpp))
		if a < 0 {
			C.fabctl_umad_close(id)
			return nil, fmt.Errorf("umad_register class 0x%02x: %v", c.class, syscall.Errno(-a))
		}
		p.agents[uint8(c.class)] = a
	}
	size := C.fabctl_umad_size() + 2048
	p.sbuf = C.calloc(1, size)
	p.rbuf = C.calloc(1, size)
	return p, nil
}

func (p *umadPort) Send(mad []byte, dlid, dqp int, qkey uint32, timeout time.Duration) error {
	if len(mad) != MADSize {
		return fmt.Errorf("a MAD of %d bytes", len(mad))
	}
	agent, ok := p.agents[mad[1]]
	if !ok {
		return fmt.Errorf("no agent for class 0x%02x", mad[1])
	}
	// The MAD is Go memory without Go pointers: C may read it during the
	// call (cgo pointer rules).
	r := C.fabctl_umad_send(p.id, agent, p.sbuf, unsafe.Pointer(&mad[0]), C.int(len(mad)), C.int(dlid), C.int(dqp), C.int(qkey), C.int(timeout.Milliseconds()))
	if r < 0 {
		return fmt.Errorf("umad_send: %v", syscall.Errno(-r))
	}
	return nil
}

func (p *umadPort) Recv(timeout time.Duration) ([]byte, int, error) {
	buf := p.mad[:]
	n := C.int(MADSize)
	var status C.int
	ms := timeout.Milliseconds() // 0: only what is already there
	if timeout > 0 {
		ms = max(ms, 1)
	}
	r := C.fabctl_umad_recv(p.id, p.rbuf, unsafe.Pointer(&buf[0]), &n, C.int(ms), &status)
	if r < 0 {
		e := syscall.Errno(-r)
		if errors.Is(e, syscall.ETIMEDOUT) || errors.Is(e, syscall.EAGAIN) || errors.Is(e, syscall.EINTR) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("umad_recv: %v", e)
	}
	return buf[:n], int(status), nil
}

// Exit ends the process through the C library's exit, so the handlers a
// preloaded libumad2sim registered with atexit run: umad2sim_cleanup
// disconnects the client from ibsim (which serves at most
// IBSIM_MAX_CLIENTS, 10) and removes its ./sys-<pid> tree (ibsim-0.10
// umad2sim/umad2sim.c umad2sim_init). Go's os.Exit skips them.
func Exit(code int) {
	C.fabctl_exit(C.int(code))
}

func (p *umadPort) Close() error {
	C.fabctl_umad_close(p.id)
	C.free(p.sbuf)
	C.free(p.rbuf)
	return nil
}
