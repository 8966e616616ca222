package srlinux

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// linkSeeds are Get answers in the shape of the models the reader
// follows (srl_nokia-interfaces.yang in ../shared/yang/srlinux;
// srl_nokia-lldp.yang of nokia/srlinux-yang-models v25.3.1, see
// links.go), merged as ReadLinkTruth merges them, plus hostile shapes.
var linkSeeds = []string{
	`{"srl_nokia-interfaces:interface":[{"name":"ethernet-1/1","admin-state":"enable","oper-state":"up",
	  "statistics":{"in-error-packets":"0","out-error-packets":"2","in-discarded-packets":"0","out-discarded-packets":"0"},
	  "ethernet":{"port-speed":"100G","forward-error-correction":{"operational-host-if-fec":"cl91-rs528"}}},
	 {"name":"ethernet-1/2","admin-state":"disable","oper-state":"down"}],
	 "srl_nokia-system:system":{"srl_nokia-lldp:lldp":{"admin-state":"enable","interface":[{"name":"ethernet-1/1","admin-state":"enable",
	  "neighbor":[{"id":"1A:2B:3C:4D:5E:6F","system-name":"spine1","chassis-id":"1A:2B:3C:4D:5E:6F","chassis-id-type":"MAC_ADDRESS",
	   "port-id":"ethernet-1/49","port-id-type":"INTERFACE_NAME","port-description":"to leaf5"}]}]}}}`,
	`{"interface":[{"name":"ethernet-1/1","ethernet":{"port-speed":"1T"},"statistics":{"in-error-packets":18446744073709551615}}]}`,
	`{"interface":[{"name":"ethernet-1/1","ethernet":{"port-speed":"fast"}}]}`,
	`{"interface":[{"name":"ethernet-1/1","statistics":{"in-error-packets":"-1"}}]}`,
	`{"interface":{"name":"x"},"system":{"lldp":{"interface":[{"name":"ethernet-1/1","neighbor":"none"}]}}}`,
	`{"interface":[7,null,{"name":["a"]},{"name":"e1","oper-state":{"x":1}}]}`,
}

func TestDecodeLinks(t *testing.T) {
	dl, err := decodeLinkSeed(linkSeeds[0])
	if err != nil {
		t.Fatal(err)
	}
	o := dl.Ports["ethernet-1/1"]
	if o == nil || o.Oper != "up" || o.SpeedMbps != 100_000 || o.FEC != "cl91-rs528" || o.Counters == nil || o.Counters.OutErrors != 2 ||
		len(o.Neighbors) != 1 || o.Neighbors[0].SystemName != "spine1" || o.Neighbors[0].PortID != "ethernet-1/49" || o.Neighbors[0].PortIDSubtype != "ifname" {
		t.Fatalf("ethernet-1/1: %+v", o)
	}
	if o := dl.Ports["ethernet-1/2"]; o == nil || !o.AdminDown || o.Oper != "down" || o.Counters != nil {
		t.Fatalf("ethernet-1/2: %+v", o)
	}
	if dl, err := decodeLinkSeed(linkSeeds[1]); err != nil || dl.Ports["ethernet-1/1"].SpeedMbps != 1_000_000 || dl.Ports["ethernet-1/1"].Counters.InErrors != 1<<64-1 {
		t.Fatalf("1T / max counter: %+v %v", dl, err)
	}
	for i, want := range map[int]string{2: `port ethernet-1/1: port-speed "fast"`, 3: `port ethernet-1/1: in-error-packets "-1" is not a counter64`} {
		if _, err := decodeLinkSeed(linkSeeds[i]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("seed %d: %v, want %q", i, err, want)
		}
	}
}

func decodeLinkSeed(s string) (*linktruth.DeviceLinks, error) {
	return switchtest.DecodeLinkTree([]byte(s), decodeAll)
}

func decodeAll(tree map[string]any) (*linktruth.DeviceLinks, error) {
	return Platform{}.DecodeLinks(tree, true)
}

// FuzzDecodeLinks: any Get answer reads as ports or a clear error, never
// a panic, and every port is reported under its own name.
func FuzzDecodeLinks(f *testing.F) { switchtest.FuzzLinkTree(f, linkSeeds, decodeAll) }
