package agentproto

import (
	"encoding/json"
	"strings"
	"testing"
)

const goodLinks = `{"ports":{"eth1":{"port":"eth1","oper":"up","speed_mbps":100000,"counters":{"in_errors":0,"out_errors":0,"in_discards":0,"out_discards":0},"neighbors":[{"system_name":"leaf1","port_id":"Ethernet4"}]}},"source":"rtnetlink","lldp":true,"lldp_source":"lldpcli -f json show neighbors"}`

// TestDecodeLinks: an agent's link report is taken only when it is a
// report of the host's spec NICs; anything else is an error saying what
// is wrong, never a panic.
func TestDecodeLinks(t *testing.T) {
	dl, err := DecodeLinks(json.RawMessage(goodLinks), []string{"eth1", "eth2"})
	if err != nil {
		t.Fatal(err)
	}
	o := dl.Ports["eth1"]
	if !dl.LLDP || o.Oper != "up" || o.SpeedMbps != 100000 || len(o.Neighbors) != 1 || o.Neighbors[0].SystemName != "leaf1" {
		t.Fatalf("%+v %+v", dl, o)
	}
	long := strings.Repeat("x", 256)
	tests := []struct{ name, in, want string }{
		{"none", ``, "no link report"},
		{"null", `null`, "no link report"},
		{"huge", `"` + strings.Repeat("a", MaxLinks) + `"`, "larger than 1024 KiB"},
		{"not an object", `[1,2]`, "not valid"},
		{"wrong type", `{"ports":{"eth1":{"port":"eth1","speed_mbps":"fast"}}}`, "not valid"},
		{"unknown field", `{"ports":{},"extra":1}`, `unknown field "extra"`},
		{"trailing", `{"ports":{}} {}`, "trailing data"},
		{"no ports", `{"source":"x"}`, `no "ports"`},
		{"foreign port", `{"ports":{"eth9":{"port":"eth9"}}}`, `port "eth9", which is not a NIC`},
		{"null port", `{"ports":{"eth1":null}}`, "null observation"},
		{"misfiled", `{"ports":{"eth1":{"port":"eth2"}}}`, `another port name ("eth2")`},
		{"oper", `{"ports":{"eth1":{"port":"eth1","oper":"dormant"}}}`, `oper state "dormant"`},
		{"negative speed", `{"ports":{"eth1":{"port":"eth1","speed_mbps":-5}}}`, "speed -5 Mb/s"},
		{"absurd speed", `{"ports":{"eth1":{"port":"eth1","speed_mbps":99999999999}}}`, "speed 99999999999 Mb/s"},
		{"long TLV", `{"ports":{"eth1":{"port":"eth1","neighbors":[{"system_name":"` + long + `"}]}}}`, "256 bytes"},
		{"many neighbours", `{"ports":{"eth1":{"port":"eth1","neighbors":[` + strings.TrimSuffix(strings.Repeat(`{},`, 257), ",") + `]}}}`, "257 LLDP neighbours"},
		{"foreign port id", `{"ports":{},"port_ids":{"eth7":"etp7"}}`, `Port ID "etp7" for "eth7"`},
		{"long note", `{"ports":{},"lldp_note":"` + strings.Repeat("n", 5000) + `"}`, "text of 5000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeLinks(json.RawMessage(tt.in), []string{"eth1", "eth2"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestUnknownOp: what an agent answers to an op it does not know (an
// agent older than the op: Check's refusal) is recognised as such, and
// nothing else is.
func TestUnknownOp(t *testing.T) {
	h := testHost(t)
	e := (&Request{Protocol: Protocol, Op: "teleport", Host: h}).Check()
	if e == nil || e.Kind != KindRequest {
		t.Fatalf("check %+v", e)
	}
	r := &Response{Errors: []Error{*e}}
	if !r.UnknownOp("teleport") || r.UnknownOp(OpLinks) {
		t.Fatalf("UnknownOp on %+v", r)
	}
	// The answer of an agent of protocol 1 from before OpLinks, as its
	// Check wrote it.
	old := &Response{Errors: []Error{{Kind: KindRequest, Message: `unknown op "links" (want read, plan, apply, rollback or traffic)`}}}
	if !old.UnknownOp(OpLinks) {
		t.Fatal("an older agent's refusal of links not recognised")
	}
	for _, r := range []*Response{
		{OK: true},
		{Errors: []Error{{Kind: KindRead, Message: `unknown op "links"`}}},
		{Errors: []Error{{Kind: KindRequest, Message: `no "host" intent (with a name)`}}},
	} {
		if r.UnknownOp(OpLinks) {
			t.Fatalf("UnknownOp on %+v", r)
		}
	}
	if e := (&Request{Protocol: Protocol, Op: OpLinks, Host: h}).Check(); e != nil {
		t.Fatalf("links refused: %v", e)
	}
}

// FuzzDecodeLinks: any agent answer gives a checked report or an error,
// never a panic; a report it takes names only the spec's NICs, each
// under its own name.
func FuzzDecodeLinks(f *testing.F) {
	f.Add([]byte(goodLinks))
	f.Add([]byte(`{"ports":{"eth1":{"port":"eth1","oper":"down","admin_down":true}},"source":"s","lldp":false,"lldp_note":"lldpd is not running"}`))
	f.Add([]byte(`{"ports":{"eth1":null}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dl, err := DecodeLinks(b, []string{"eth1", "eth2"})
		if err != nil {
			return
		}
		for name, o := range dl.Ports {
			if (name != "eth1" && name != "eth2") || o == nil || o.Port != name {
				t.Fatalf("accepted %q: %+v", name, o)
			}
		}
	})
}
