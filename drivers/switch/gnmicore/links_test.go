package gnmicore

import (
	"testing"

	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/yangval"
)

// TestLinkTree: updates at keyed paths (as a target answers a wildcard
// Get) merge into one tree with the keys filled in; a root value that is
// not an object is an error.
func TestLinkTree(t *testing.T) {
	ups := []gnmitransport.Update{
		{Path: mustPath(t, "/interfaces/interface[name=Ethernet0]/state"), Val: map[string]any{"oper-status": "UP"}},
		{Path: mustPath(t, "/interfaces/interface[name=Ethernet0]/ethernet/state"), Val: map[string]any{"port-speed": "SPEED_10GB"}},
		{Path: mustPath(t, "/interfaces/interface[name=Ethernet8]/state"), Val: map[string]any{"oper-status": "DOWN"}},
	}
	tree, err := LinkTree(ups)
	if err != nil {
		t.Fatal(err)
	}
	ifs := N(tree).Get("interfaces").List("interface")
	if len(ifs) != 2 {
		t.Fatalf("tree %v", tree)
	}
	if s, _ := ifs[0].At("ethernet", "state", "port-speed").String(); s != "SPEED_10GB" {
		t.Fatalf("Ethernet0: %v", ifs[0].Raw())
	}
	if name, _ := ifs[1].Get("name").String(); name != "Ethernet8" {
		t.Fatalf("Ethernet8 keyed: %v", ifs[1].Raw())
	}
	if _, err := LinkTree([]gnmitransport.Update{{Val: "x"}}); err == nil {
		t.Fatal("root string accepted")
	}
}

func mustPath(t testing.TB, s string) []yangval.PathElem {
	t.Helper()
	p, err := yangval.ParsePath(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzLinkTree: any two updates (path and JSON value) merge without a
// panic.
func FuzzLinkTree(f *testing.F) {
	f.Add("/interfaces/interface[name=Ethernet0]/state", []byte(`{"oper-status":"UP"}`), "/interfaces/interface[name=Ethernet0]", []byte(`"x"`))
	f.Add("/system/lldp/interface[name=e1]/neighbor[id=1]", []byte(`{"system-name":"s"}`), "/system/lldp/interface[name=e1]", []byte(`[1,2]`))
	f.Add("/", []byte(`{"interface":[{"name":"e"}]}`), "/interface[name=e][name=f]/x", []byte(`null`))
	f.Fuzz(func(t *testing.T, p1 string, v1 []byte, p2 string, v2 []byte) {
		var ups []gnmitransport.Update
		for _, x := range []struct {
			p string
			v []byte
		}{{p1, v1}, {p2, v2}} {
			elems, err := yangval.ParsePath(x.p)
			if err != nil {
				continue
			}
			val, err := Decode(x.v)
			if err != nil {
				continue
			}
			ups = append(ups, gnmitransport.Update{Path: elems, Val: val})
		}
		_, _ = LinkTree(ups)
	})
}
