package gnmitarget

import (
	"encoding/json"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestToolsSaveReload: on the SR Linux flavor an update of
// /tools/system/configuration/save with [null] makes startup the
// running configuration and Reload boots from startup; an unsaved change
// is lost at reload; a save fault fails the save and leaves startup; a
// wrong value, another tools path, a save mixed with configuration and
// a save on the OpenConfig flavor are refused.
func TestToolsSaveReload(t *testing.T) {
	save := []Op{{Op: "update", Path: "/tools/system/configuration/save", Val: json.RawMessage(`[null]`)}}
	mtu := func(v int) []Op {
		return []Op{{Op: "update", Path: "/interface[name=ethernet-1/1]/mtu", Val: json.RawMessage(json.Number(itoa(v)))}}
	}
	tg, cl := start(t, Config{Flavor: FlavorSRLinux, Schema: schema(t, "srlinux"), Interfaces: []string{"ethernet-1/1"}})
	factory, _ := tg.Startup()
	if _, err := cl.Set(ctxT(t), request(t, mtu(9000))); err != nil {
		t.Fatal(err)
	}
	if s, _ := tg.Startup(); string(s) != string(factory) {
		t.Fatal("a configuration Set changed startup")
	}
	if _, err := cl.Set(ctxT(t), request(t, save)); err != nil {
		t.Fatalf("save: %v", err)
	}
	saved := config(t, tg)
	if s, _ := tg.Startup(); string(s) != saved {
		t.Fatal("startup is not the running configuration after the save")
	}
	if _, err := cl.Set(ctxT(t), request(t, mtu(9100))); err != nil {
		t.Fatal(err)
	}
	tg.Reload()
	if config(t, tg) != saved {
		t.Fatal("reload did not boot from startup (the unsaved MTU 9100 survived)")
	}
	tg.Inject(Fault{RPC: "Save", Kind: FaultReject, Code: codes.Internal, Message: "disk full"})
	if _, err := cl.Set(ctxT(t), request(t, mtu(9200))); err != nil {
		t.Fatal(err) // the Save fault does not hit configuration Sets
	}
	_, err := cl.Set(ctxT(t), request(t, save))
	wantCode(t, err, codes.Internal, "disk full")
	if s, _ := tg.Startup(); string(s) != saved {
		t.Fatal("a failed save changed startup")
	}
	for _, tc := range []struct {
		name string
		ops  []Op
		code codes.Code
		want string
	}{
		{"value", []Op{{Op: "update", Path: "/tools/system/configuration/save", Val: json.RawMessage(`true`)}}, codes.InvalidArgument, "want [null]"},
		{"other tools command", []Op{{Op: "update", Path: "/tools/system/configuration/rescue-save", Val: json.RawMessage(`[null]`)}}, codes.Unimplemented, "not modelled"},
		{"mixed", append(mtu(9300), save...), codes.InvalidArgument, "configuration changes in one Set"},
	} {
		_, err := cl.Set(ctxT(t), request(t, tc.ops))
		wantCode(t, err, tc.code, tc.want)
	}
	if st := tg.Stats(); st.Saves != 1 || st.Reloads != 1 {
		t.Errorf("stats %+v", st)
	}
	oc, occl := start(t, Config{Schema: schema(t, "openconfig"), Interfaces: ocIfs})
	_, err = occl.Set(ctxT(t), request(t, save))
	wantCode(t, err, codes.InvalidArgument, "no tools datastore")
	_ = oc
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
