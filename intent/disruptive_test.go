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

// First run, defect 12: "not set" (an EOS DSCP code point the
// running-config does not list) is absence: a desired value is an
// addition, not a change; no desired value is no removal, except that a
// code point the normal form leaves out is added with the default class.
func TestDiffNotSetIsAbsence(t *testing.T) {
	live := State{"dscp/default": NotSet, "dscp/26": NotSet, "dscp/0": NotSet, "dscp/48": "6", "tc/3/ecn/min": NotSet}
	want := State{"dscp/default": "0", "dscp/26": "3", "dscp/48": "6"}
	got := map[string]AttrChange{}
	for _, c := range Diff(want, live, nil) {
		got[c.Path] = c
	}
	for _, p := range []string{"dscp/default", "dscp/26"} {
		if c := got[p]; c.Action != Create || c.Before != "" {
			t.Errorf("%s: %+v, want an addition", p, c)
		}
	}
	if c := got["dscp/0"]; c.Action != Create || c.After != "0" {
		t.Errorf("dscp/0: %+v, want an addition of the default class", c)
	}
	if c, ok := got["tc/3/ecn/min"]; ok {
		t.Errorf("a setting absent on both sides changes: %+v", c)
	}
	for _, c := range got {
		if c.Action == Delete {
			t.Errorf("removal of an absent setting: %+v", c)
		}
	}
}
