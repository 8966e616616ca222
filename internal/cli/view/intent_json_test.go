package view

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

func TestSnakeName(t *testing.T) {
	for in, want := range map[string]string{
		"Name": "name", "DSCPToTC": "dscp_to_tc", "RDMAMTU": "rdma_mtu", "MTUFloor": "mtu_floor", "TCs": "tcs",
		"NICs": "nics", "QPsPerConn": "qps_per_conn", "MaxQPWR": "max_qp_wr", "CNPDSCP": "cnp_dscp",
		"IPoIB": "ipoib", "RoCEMode": "roce_mode", "PKeys": "pkeys", "PKey": "pkey", "SL2VL": "sl2vl",
		"VLArbHigh": "vl_arb_high", "MaxVLs": "max_vls", "CPUs": "cpus", "QoS": "qos", "NUMANode": "numa_node",
		"VLANName": "vlan_name", "IRQBalance": "irq_balance", "Filename": "filename", "TTL": "ttl", "HTTPPort": "http_port",
	} {
		if got := snakeName(in); got != want {
			t.Errorf("snakeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIntentJSON(t *testing.T) {
	sw := &intent.Switch{Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf1", Driver: "ssh", Address: "10.0.0.1"}, Transport: "rocev2"}
	v, err := IntentJSON(sw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// Field order kept; Driver and Address renamed; the RDMA transport keeps its name.
	if want := `{"kind":"switch","name":"leaf1","platform":"","management_transport":"ssh","management_address":"10.0.0.1","role":"","credentials":"","transport":"rocev2","trust":"","dscp_to_tc":[0,`; !strings.HasPrefix(string(b), want) {
		t.Errorf("got %s\nwant prefix %s", b, want)
	}
	// A key twice in one object is refused, not dropped.
	type clash struct {
		intent.Device
		ManagementAddress string
	}
	if _, err := IntentJSON(clash{}); err == nil || !strings.Contains(err.Error(), `"management_address" twice`) {
		t.Errorf("clash: err %v", err)
	}
}
