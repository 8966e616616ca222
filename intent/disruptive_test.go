package intent

import "testing"

// Issue 21: a plan said "disruptive: removing an address" for a change
// that only adds one. An address list is disruptive only when the change
// drops an address (drivers/host's nic/*/addresses field).
func TestDisruptiveOnRemoval(t *testing.T) {
	const why = "removing an address drops the connections that use it"
	fields := []Field{
		{Pattern: "nic/*/addresses", Disruptive: why, DisruptiveOnRemoval: true},
		{Pattern: "nic/*/mtu", Disruptive: "an MTU change restarts the NIC's queues"},
	}
	for _, c := range []struct {
		name       string
		live, want State
		disruptive string
	}{
		{"add to an empty list", State{"nic/eth1/addresses": ""}, State{"nic/eth1/addresses": "198.18.0.1/31"}, ""},
		{"add where none was read", State{}, State{"nic/eth1/addresses": "198.18.0.1/31"}, ""},
		{"add a second", State{"nic/eth1/addresses": "10.0.0.1/31"}, State{"nic/eth1/addresses": "10.0.0.1/31,10.0.1.1/31"}, ""},
		{"replace one", State{"nic/eth1/addresses": "10.0.0.1/31"}, State{"nic/eth1/addresses": "10.0.0.3/31"}, why},
		{"remove one of two", State{"nic/eth1/addresses": "10.0.0.1/31,10.0.1.1/31"}, State{"nic/eth1/addresses": "10.0.1.1/31"}, why},
		{"remove all", State{"nic/eth1/addresses": "10.0.0.1/31"}, State{"nic/eth1/addresses": ""}, why},
		{"other fields keep their reason", State{"nic/eth1/mtu": "1500"}, State{"nic/eth1/mtu": "9000"}, "an MTU change restarts the NIC's queues"},
	} {
		ch := Diff(c.want, c.live, fields)
		if len(ch) != 1 {
			t.Fatalf("%s: %d changes: %+v", c.name, len(ch), ch)
		}
		if ch[0].Disruptive != c.disruptive {
			t.Errorf("%s: disruptive %q, want %q", c.name, ch[0].Disruptive, c.disruptive)
		}
	}
	// A setting the spec no longer owns but the device has: removing it
	// removes its addresses.
	ch := Diff(State{"nic/eth1/mtu": "9000"}, State{"nic/eth1/mtu": "9000", "nic/eth1/addresses": "10.0.0.1/31"}, fields)
	if len(ch) != 1 || ch[0].Action != Delete || ch[0].Disruptive != why {
		t.Errorf("delete: %+v", ch)
	}
}
