package gnmitarget

import (
	"context"
	"errors"
	"google.golang.org/grpc/status"
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// linkSource: Ethernet0 up at 400G with RS544 FEC, 3 input errors and a
// host neighbour; Ethernet8 cabled but down.
func linkSource(up, down, fecWord string) portlink.Static {
	return portlink.Static{}.
		With(up, linktruth.Observation{Oper: linktruth.Up, SpeedMbps: 400_000, FEC: fecWord,
			Counters:  &linktruth.Counters{InErrors: 3, OutDiscards: 7},
			Neighbors: []linktruth.Neighbor{{SystemName: "gpu01", PortDesc: "ens1f0", PortIDSubtype: "mac", PortID: "aa:bb:cc:00:00:01", ChassisID: "aa:bb:cc:00:00:00"}}}).
		With(down, linktruth.Observation{Oper: linktruth.Down, SpeedMbps: 400_000})
}

// TestLinkStateOpenConfig: the Source's cabling in OpenConfig's state
// paths, validated against the models; a disabled port is down whatever
// its cable; without a Source every port is down with no neighbour.
func TestLinkStateOpenConfig(t *testing.T) {
	_, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs, Links: linkSource("Ethernet0", "Ethernet8", "FEC_RS544")})
	for path, want := range map[string]string{
		"/interfaces/interface[name=Ethernet0]/state/oper-status":                                    `"UP"`,
		"/interfaces/interface[name=Ethernet0]/state/counters/in-errors":                             `"3"`,
		"/interfaces/interface[name=Ethernet0]/state/counters/out-discards":                          `"7"`,
		"/interfaces/interface[name=Ethernet0]/ethernet/state/negotiated-port-speed":                 `"openconfig-if-ethernet:SPEED_400GB"`,
		"/interfaces/interface[name=Ethernet0]/ethernet/state/fec-mode":                              `"openconfig-if-ethernet:FEC_RS544"`,
		"/interfaces/interface[name=Ethernet8]/state/oper-status":                                    `"DOWN"`,
		"/lldp/interfaces/interface[name=Ethernet0]/neighbors/neighbor[id=1]/state/system-name":      `"gpu01"`,
		"/lldp/interfaces/interface[name=Ethernet0]/neighbors/neighbor[id=1]/state/port-id-type":     `"MAC_ADDRESS"`,
		"/lldp/interfaces/interface[name=Ethernet0]/neighbors/neighbor[id=1]/state/port-description": `"ens1f0"`,
	} {
		if got := get(t, c, gpb.GetRequest_STATE, path); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	// a port down has no neighbour (and no negotiated speed)
	_, err := c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, "/lldp/interfaces/interface[name=Ethernet8]/neighbors")}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.NotFound)
	// the loaded set has no openconfig-lldp: /lldp is served as the
	// vendor's model draws it, outside the loaded models
	if got := get(t, c, gpb.GetRequest_STATE, "/lldp/state/enabled"); got != "true" {
		t.Errorf("/lldp/state/enabled = %s", got)
	}

	_, c0 := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs})
	if got := get(t, c0, gpb.GetRequest_STATE, "/interfaces/interface[name=Ethernet0]/state/oper-status"); got != `"DOWN"` {
		t.Errorf("no Source: oper-status %s, want DOWN", got)
	}
	_, err = c0.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, "/lldp/interfaces/interface[name=*]/neighbors")}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.NotFound)
}

// TestLinkStateSRLinux: the same in SR Linux's paths.
func TestLinkStateSRLinux(t *testing.T) {
	ifs := []string{"ethernet-1/1", "ethernet-1/2"}
	_, c := start(t, Config{Flavor: FlavorSRLinux, Schema: schema(t, "srlinux"), Interfaces: ifs, Links: linkSource(ifs[0], ifs[1], "cl119-rs544")})
	for path, want := range map[string]string{
		"/interface[name=ethernet-1/1]/oper-state":                                                `"up"`,
		"/interface[name=ethernet-1/1]/ethernet/port-speed":                                       `"400G"`,
		"/interface[name=ethernet-1/1]/ethernet/forward-error-correction/operational-host-if-fec": `"cl119-rs544"`,
		"/interface[name=ethernet-1/1]/statistics/in-error-packets":                               `"3"`,
		"/interface[name=ethernet-1/2]/oper-state":                                                `"down"`,
		"/system/lldp/interface[name=ethernet-1/1]/neighbor[id=1]/system-name":                    `"gpu01"`,
		"/system/lldp/interface[name=ethernet-1/1]/neighbor[id=1]/chassis-id":                     `"aa:bb:cc:00:00:00"`,
	} {
		if got := get(t, c, gpb.GetRequest_STATE, path); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	// SR Linux keeps admin-state beside the state: a Get of type ALL has both
	all := get(t, c, gpb.GetRequest_ALL, "/interface[name=ethernet-1/1]")
	if !strings.Contains(all, `"admin-state":"enable"`) || !strings.Contains(all, `"oper-state":"up"`) {
		t.Errorf("ALL: %s", all)
	}
}

// TestLinkStateValidated: a speed the model has no value for (3G: no
// ETHERNET_SPEED identity) and a FEC word it lacks are not served, as a
// device could not say them; state the models refuse (a SetState
// override) is the target's fault, reported as Internal naming the leaf,
// never served.
func TestLinkStateValidated(t *testing.T) {
	src := portlink.Static{}.With("Ethernet0", linktruth.Observation{Oper: linktruth.Up, SpeedMbps: 3000, FEC: "rs"})
	tg, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs, Links: src})
	if got := get(t, c, gpb.GetRequest_STATE, "/interfaces/interface[name=Ethernet0]/state/oper-status"); got != `"UP"` {
		t.Errorf("oper-status %s", got)
	}
	_, err := c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, "/interfaces/interface[name=Ethernet0]/ethernet")}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.NotFound)
	if err := tg.SetState("/interfaces/interface[name=Ethernet0]/state/oper-status", []byte(`"SIDEWAYS"`)); err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, "/interfaces/interface[name=*]/state")}, Encoding: gpb.Encoding_JSON_IETF})
	wantCode(t, err, codes.Internal, "oper-status", "SIDEWAYS")
}

// failingSource is a cabling that cannot answer (the testbed without
// lldpd).
type failingSource struct{}

func (failingSource) Ports(context.Context) (map[string]linktruth.Observation, error) {
	return nil, errors.New("lldpd is not installed")
}

// TestLinkSourceFailsLinkReadsOnly: a Source that cannot answer fails
// the reads that see link state (Unavailable, naming why) and never a
// read of the configuration: plan's Get of the QoS tree does not depend
// on the cabling.
func TestLinkSourceFailsLinkReadsOnly(t *testing.T) {
	_, c := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs, Links: failingSource{}})
	if _, err := c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, "/interfaces/interface[name=Ethernet0]/state")}, Encoding: gpb.Encoding_JSON_IETF}); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "lldpd is not installed") {
		t.Fatalf("a link read: %v", err)
	}
	if _, err := c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, "/lldp/interfaces")}, Encoding: gpb.Encoding_JSON_IETF}); status.Code(err) != codes.Unavailable {
		t.Fatalf("an LLDP read: %v", err)
	}
	for _, path := range []string{"/qos", "/interfaces/interface[name=Ethernet0]/config/mtu"} {
		_, err := c.Get(ctxT(t), &gpb.GetRequest{Path: []*gpb.Path{p(t, path)}, Type: gpb.GetRequest_CONFIG, Encoding: gpb.Encoding_JSON_IETF})
		if status.Code(err) == codes.Unavailable {
			t.Errorf("%s failed with the cabling: %v", path, err)
		}
	}
}
