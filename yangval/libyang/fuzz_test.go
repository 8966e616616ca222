package libyang

import (
	"encoding/json"
	"testing"
)

// FuzzValidateJSON feeds arbitrary bytes to ValidateJSON (the RFC 7951
// parser and the removal loop), to ValidateSet as a replace at a path,
// and to ValidateConfigDB when they decode as CONFIG_DB: no panic, no
// crash, and a refusal is always Errors. Seeds: testdata/fuzz.
func FuzzValidateJSON(f *testing.F) {
	f.Add([]byte(`{"openconfig-qos:qos":{"queues":{"queue":[{"name":"Q3","config":{"name":"Q3","queue-id":3}}]}}}`))
	f.Add([]byte(`{"srl_nokia-qos:qos":{"classifiers":{"dscp-policy":[{"dscp":[{"forwarding-class":"fc0","value":0}],"name":"x"}]}}}`))
	f.Add([]byte(`{"PORT":{"Ethernet0":{"mtu":"9100","lanes":"0,1,2,3"}}}`))
	oc := profile(f, "openconfig")
	srl := profile(f, "srlinux")
	sonic := profile(f, "sonic")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*Context{oc, srl} {
			if err := c.ValidateJSON(data, Options{MaxErrors: 20}); err != nil {
				if _, ok := err.(Errors); !ok {
					t.Fatalf("error is not Errors: %v", err)
				}
			}
		}
		if err := srl.ValidateSet(nil, SetRequest{Replace: []Update{{Path: "/qos/queues/queue[name=q]", Val: data}}}, Options{MaxErrors: 20}); err != nil {
			if _, ok := err.(Errors); !ok {
				t.Fatalf("error is not Errors: %v", err)
			}
		}
		var db ConfigDB
		if json.Unmarshal(data, &db) == nil {
			if err := sonic.ValidateConfigDB(db, Options{MaxErrors: 20}); err != nil {
				if _, ok := err.(Errors); !ok {
					t.Fatalf("error is not Errors: %v", err)
				}
			}
		}
	})
}
