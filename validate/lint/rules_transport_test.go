package lint

import (
	"testing"

	"github.com/fabctl/fabctl/spec"
)

func TestACLMatchesRoCE(t *testing.T) {
	for _, tc := range []struct {
		acl  spec.ACL
		want bool
	}{
		{spec.ACL{Protocol: "udp", DstPorts: []spec.PortRange{{From: 4791, To: 4791}}}, true},
		{spec.ACL{Protocol: "udp", DstPorts: []spec.PortRange{{From: 4000, To: 5000}}}, true},
		{spec.ACL{Protocol: "udp", DstPorts: []spec.PortRange{{From: 4792, To: 5000}}}, false},
		{spec.ACL{Protocol: "any"}, true}, // no port list: every port
		{spec.ACL{Protocol: "udp"}, true},
		{spec.ACL{Protocol: "tcp", DstPorts: []spec.PortRange{{From: 4791, To: 4791}}}, false},
	} {
		if got := aclMatchesRoCE(&tc.acl); got != tc.want {
			t.Errorf("aclMatchesRoCE(%+v) = %v, want %v", tc.acl, got, tc.want)
		}
	}
}
