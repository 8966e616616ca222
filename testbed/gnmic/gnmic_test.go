package gnmic

import (
	"strings"
	"testing"
)

// TestSetRequest: gnmic's reading of a request file. The old
// rendering ("replace"/"update"/"val") has no member gnmic knows, so
// gnmic would send an empty Set: refused here; item encoding, the
// --encoding default, path "/" and deletes follow gnmic.
func TestSetRequest(t *testing.T) {
	if _, err := SetRequest([]byte(`{"replace":[{"path":"/qos","val":{}}],"update":[]}`), ""); err == nil ||
		!strings.Contains(err.Error(), "empty Set") {
		t.Fatalf("old format: %v", err)
	}
	req, err := SetRequest([]byte(`{"updates":[{"value":{"a":1}},{"path":"/b","value":2,"encoding":"JSON_IETF"}],
"replaces":[{"path":"/interface[name=ethernet-1/1]","value":{"mtu":9014}}],"deletes":["/c"]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Update) != 2 || len(req.Replace) != 1 || len(req.Delete) != 1 {
		t.Fatalf("request: %v", req)
	}
	if u := req.Update[0]; len(u.Path.GetElem()) != 0 || string(u.Val.GetJsonVal()) != `{"a":1}` {
		t.Errorf("default path and encoding: %v", u)
	}
	if u := req.Update[1]; string(u.Val.GetJsonIetfVal()) != `2` {
		t.Errorf("item encoding: %v", u)
	}
	if r := req.Replace[0]; r.Path.GetElem()[0].GetKey()["name"] != "ethernet-1/1" || string(r.Val.GetJsonVal()) != `{"mtu":9014}` {
		t.Errorf("replace: %v", r)
	}
	for _, bad := range []string{`{"updates":[{"path":"/a","value":1,"encoding":"proto"}]}`, `{"updates":[{"path":"/{{.TargetName}}","value":1}]}`} {
		if _, err := SetRequest([]byte(bad), ""); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
