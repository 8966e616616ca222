package openconfig

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// linkSeeds are Get answers in the shape of the models the reader
// follows (openconfig-interfaces.yang and openconfig-if-ethernet.yang in
// ../shared/yang/openconfig; openconfig-lldp.yang of openconfig/public at
// 94f5896, see links.go), merged as ReadLinkTruth merges them, plus
// hostile shapes.
var linkSeeds = []string{
	`{"openconfig-interfaces:interfaces":{"interface":[{"name":"Ethernet0",
	  "state":{"name":"Ethernet0","admin-status":"UP","oper-status":"UP","counters":{"in-errors":"4","out-errors":"0","in-discards":"1","out-discards":"0"}},
	  "openconfig-if-ethernet:ethernet":{"state":{"port-speed":"openconfig-if-ethernet:SPEED_400GB","negotiated-port-speed":"openconfig-if-ethernet:SPEED_100GB","fec-mode":"openconfig-if-ethernet:FEC_RS544"}}},
	 {"name":"Ethernet8","state":{"admin-status":"DOWN","oper-status":"DOWN"}},
	 {"name":"Ethernet16","state":{"admin-status":"UP","oper-status":"LOWER_LAYER_DOWN"},"ethernet":{"state":{"port-speed":"SPEED_2500MB"}}}]},
	 "openconfig-lldp:lldp":{"interfaces":{"interface":[{"name":"Ethernet0","neighbors":{"neighbor":[{"id":"1",
	  "state":{"id":"1","system-name":"gpu01.example.net","chassis-id":"aa:bb:cc:00:00:00","chassis-id-type":"MAC_ADDRESS",
	   "port-id":"aa:bb:cc:00:00:01","port-id-type":"MAC_ADDRESS","port-description":"ens1f0"}}]}}]}}}`,
	`{"interfaces":{"interface":[{"name":"Ethernet0","ethernet":{"state":{"negotiated-port-speed":"SPEED_UNKNOWN"}}}]}}`,
	`{"interfaces":{"interface":[{"name":"Ethernet0","ethernet":{"state":{"port-speed":"FAST"}}}]}}`,
	`{"interfaces":{"interface":[{"name":"Ethernet0","state":{"counters":{"out-discards":true}}}]}}`,
	`{"interfaces":{"interface":"Ethernet0"},"lldp":{"interfaces":{"interface":[{"name":"Ethernet0","neighbors":{"neighbor":[1,"x"]}}]}}}`,
	`{"interfaces":{"interface":[null,{"name":7},{"name":"e","state":[]}]}}`,
}

func TestDecodeLinks(t *testing.T) {
	dl, err := decodeLinkSeed(linkSeeds[0])
	if err != nil {
		t.Fatal(err)
	}
	o := dl.Ports["Ethernet0"]
	if o == nil || o.Oper != linktruth.Up || o.SpeedMbps != 100_000 || o.FEC != "FEC_RS544" || o.Counters == nil || o.Counters.InErrors != 4 || o.Counters.InDiscards != 1 ||
		len(o.Neighbors) != 1 || o.Neighbors[0].SystemName != "gpu01.example.net" || o.Neighbors[0].PortDesc != "ens1f0" || o.Neighbors[0].PortIDSubtype != "mac" {
		t.Fatalf("Ethernet0 (negotiated speed before port-speed): %+v", o)
	}
	if o := dl.Ports["Ethernet8"]; o == nil || !o.AdminDown || o.Oper != linktruth.Down {
		t.Fatalf("Ethernet8: %+v", o)
	}
	if o := dl.Ports["Ethernet16"]; o == nil || o.Oper != "lower_layer_down" || o.SpeedMbps != 2500 {
		t.Fatalf("Ethernet16: %+v", o)
	}
	if dl, err := decodeLinkSeed(linkSeeds[1]); err != nil || dl.Ports["Ethernet0"].SpeedMbps != 0 {
		t.Fatalf("SPEED_UNKNOWN: %+v %v", dl, err)
	}
	for i, want := range map[int]string{2: `port Ethernet0: speed "FAST" is not an ETHERNET_SPEED identity`, 3: `port Ethernet0: out-discards "true" is not a counter64`} {
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
