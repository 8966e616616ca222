package switchtest

import (
	"strings"
	"testing"

	gpb "github.com/openconfig/gnmi/proto/gnmi"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/testbed/gnmic"
)

// FuzzGNMI is FuzzRenderedLines for a gNMI platform: the request file
// the driver renders from any spec the loader accepts must read in gnmic
// (its template step and YAML parse: no "{{" action, every path
// parsed), hold no line with a control character, and carry no port
// name outside the platform's grammar (naming, a PortNaming).
func FuzzGNMI(f *testing.F, platform string, naming drivers.PortNaming, newDriver func() drivers.Driver) {
	FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, port1, port2, desc, addr, user, nic, dev string) {
		in := FuzzInput{Port1: port1, Port2: port2, Description: desc, Address: addr, User: user, NIC: nic, Device: dev}
		fab, ok := FuzzLoad(t, platform, in)
		if !ok {
			return
		}
		drv := newDriver()
		target, _ := FuzzSwitch(t, fab, drv)
		r, ok := drv.(drivers.Renderer)
		if !ok {
			t.Fatalf("%s: no Renderer", platform)
		}
		files, err := r.Render(target)
		if err != nil {
			return // refused: nothing is sent
		}
		for _, fl := range files {
			text := string(fl.Data)
			CheckLines(t, platform+" "+fl.Name, strings.Split(strings.TrimSpace(text), "\n"))
			if strings.Contains(text, "{{") {
				t.Errorf("%s: %s holds a template action for gnmic", platform, fl.Name)
			}
			req, err := gnmic.SetRequest(fl.Data, "")
			if err != nil {
				t.Errorf("%s: gnmic would not read %s: %v", platform, fl.Name, err)
				continue
			}
			// Every list key gnmic reads that names a fuzzed port (or its
			// subinterface) must be one of the platform's port names.
			var paths []*gpb.Path
			paths = append(paths, req.Delete...)
			for _, u := range append(req.Update, req.Replace...) {
				paths = append(paths, u.Path)
			}
			for _, p := range paths {
				for _, e := range p.GetElem() {
					for _, v := range e.GetKey() {
						for _, port := range []string{port1, port2} {
							if v != port && !strings.HasPrefix(v, port+".") {
								continue
							}
							if err := naming.CheckPort(port); err != nil {
								t.Errorf("%s: %s key %s=%q: %v", platform, fl.Name, e.GetName(), v, err)
							}
						}
					}
				}
			}
		}
	})
}
