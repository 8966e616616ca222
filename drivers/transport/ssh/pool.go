package sshtransport

import (
	"sync"
	"time"
)

// PoolIdle is how long a Pool keeps an idle connection open.
const PoolIdle = 60 * time.Second

// Pool keeps one idle connection per key (a login) between the steps of
// a run. A fabctl apply reads each host (plan), re-reads it (staleness),
// applies and reads back; without reuse each step would pay a TCP and
// SSH handshake (and an sshd process) plus whatever the user checks once
// per connection. Idle connections close after PoolIdle. C is the
// user's connection type (an *ExecConn, or a type carrying one with
// per-connection state).
type Pool[C interface{ Close() }] struct {
	mu   sync.Mutex
	idle map[string]*idleConn[C]
}

type idleConn[C interface{ Close() }] struct {
	c     C
	timer *time.Timer
}

// NewPool returns an empty pool.
func NewPool[C interface{ Close() }]() *Pool[C] {
	return &Pool[C]{idle: map[string]*idleConn[C]{}}
}

// Get takes the idle connection of a login; ok is false when there is
// none.
func (p *Pool[C]) Get(key string) (c C, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.idle[key]
	if e == nil {
		return c, false
	}
	delete(p.idle, key)
	e.timer.Stop()
	return e.c, true
}

// Put keeps c idle for the next step on the same login (one per login;
// a spare is closed).
func (p *Pool[C]) Put(key string, c C) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, busy := p.idle[key]; busy {
		c.Close()
		return
	}
	e := &idleConn[C]{c: c}
	p.idle[key] = e
	e.timer = time.AfterFunc(PoolIdle, func() {
		p.mu.Lock()
		if p.idle[key] == e {
			delete(p.idle, key)
			e.c.Close()
		}
		p.mu.Unlock()
	})
}

// CloseIdle closes every idle connection now.
func (p *Pool[C]) CloseIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, e := range p.idle {
		e.timer.Stop()
		e.c.Close()
		delete(p.idle, k)
	}
}
