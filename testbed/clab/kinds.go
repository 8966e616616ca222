package clab

import (
	"fmt"
	"regexp"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
)

// kind is what fabctl knows of one containerlab kind (drivers.ClabKind).
type kind = drivers.ClabKind

// kinds are the kinds fabctl generates, all canonical names from
// containerlab's schema enum (short aliases such as srl, ceos and cvx are
// not in it): the switch kinds the platforms' descriptors define
// (drivers.Platform.Clab), and linux for hosts.
var kinds = func() map[string]*kind {
	m := map[string]*kind{
		// Hosts: the spec's NIC names are the container's interface names.
		// srl-labs/network-multitool v0.6.0 (git tag, which its CI
		// publishes as ghcr.io/srl-labs/network-multitool:v0.6.0,
		// .github/workflows/cicd.yml type=ref,event=tag) runs an SSH
		// server: entrypoint.sh generates dropbear host keys and starts
		// dropbear; Dockerfile creates user admin (password multit00l,
		// README "ssh admin@<name>. Password multit00l"), puts it in wheel
		// with "%wheel ALL=(ALL:ALL) NOPASSWD: ALL" and installs
		// openssh-sftp-server. fabctl logs in as admin and runs its agent
		// with sudo -n.
		"linux": {Name: "linux", Image: "ghcr.io/srl-labs/network-multitool:v0.6.0", IfName: linuxIf, User: "admin", PasswordEnv: "FABCTL_CLAB_HOSTS_PASSWORD"},
	}
	for _, p := range builtin.Platforms() {
		if p.Clab != nil {
			m[p.Clab.Name] = p.Clab
		}
	}
	return m
}()

// platformKinds maps fabctl's switch platforms to the kinds that play
// them (drivers.Platform.ClabKind).
var platformKinds = func() map[string]string {
	m := map[string]string{}
	for _, p := range builtin.Platforms() {
		if p.ClabKind != "" {
			m[p.Name] = p.ClabKind
		}
	}
	return m
}()

// platformSetups are, per switch platform, the partial startup
// configurations kinds that play it need (drivers.Platform.ClabSetup).
var platformSetups = func() map[string]map[string]drivers.ClabFile {
	m := map[string]map[string]drivers.ClabFile{}
	for _, p := range builtin.Platforms() {
		if len(p.ClabSetup) > 0 {
			m[p.Name] = p.ClabSetup
		}
	}
	return m
}()

// defaultPasswords are the passwords the kinds' nodes come up with, by
// kind: containerlab's kind pages as docs/testbed.md#credentials lists
// them, and the host image's README (above). The lab never writes them;
// fabctl's next steps print the export lines with them.
var defaultPasswords = map[string]string{
	"nokia_srlinux":    "NokiaSrl1!",
	"arista_ceos":      "admin",
	"sonic-vs":         "YourPaSsWoRd",
	"cisco_n9kv":       "admin",
	"nvidia_cumulusvx": "Clab123!",
	"linux":            "multit00l",
}

var linuxRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func linuxIf(p string) (string, error) {
	switch {
	case p == "eth0":
		return "", fmt.Errorf("eth0 is the container's management interface")
	case p == "lo" || !linuxRe.MatchString(p):
		return "", fmt.Errorf("not a Linux interface name")
	}
	return p, nil
}
