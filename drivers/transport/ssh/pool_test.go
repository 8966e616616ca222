package sshtransport

import "testing"

type fakeConn struct{ closed int }

func (c *fakeConn) Close() { c.closed++ }

// TestPool: one idle connection per key, a spare closed, CloseIdle
// closes what is idle and nothing else.
func TestPool(t *testing.T) {
	p := NewPool[*fakeConn]()
	if c, ok := p.Get("a"); ok || c != nil {
		t.Fatal("an empty pool returned a connection")
	}
	a1, a2, b := &fakeConn{}, &fakeConn{}, &fakeConn{}
	p.Put("a", a1)
	p.Put("a", a2) // a spare
	p.Put("b", b)
	if a2.closed != 1 || a1.closed != 0 {
		t.Fatalf("spare not closed: %d %d", a1.closed, a2.closed)
	}
	if c, ok := p.Get("a"); !ok || c != a1 {
		t.Fatal("the idle connection was not returned")
	}
	if _, ok := p.Get("a"); ok {
		t.Fatal("a connection was returned twice")
	}
	p.CloseIdle()
	if b.closed != 1 || a1.closed != 0 {
		t.Fatalf("CloseIdle: %d %d", b.closed, a1.closed)
	}
	if _, ok := p.Get("b"); ok {
		t.Fatal("CloseIdle left a connection idle")
	}
}
