package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
)

// trafficDriver is a host driver that runs traffic steps (as the host
// driver does through its agents), answering each with a fixed result.
type trafficDriver struct {
	*memory.Driver
	got  []drivers.Target
	body []json.RawMessage
	fail error
}

func (d *trafficDriver) Traffic(ctx context.Context, t drivers.Target, body json.RawMessage, onLine func(string)) (json.RawMessage, error) {
	d.got, d.body = append(d.got, t), append(d.body, body)
	if d.fail != nil {
		return nil, d.fail
	}
	onLine("progress that is not a ready line")
	onLine(ReadyLine("192.0.2.1:7000"))
	return json.RawMessage(`{"device":"rxe_fa","software":true}`), nil
}

func registry(t *testing.T, d drivers.Driver) *drivers.Registry {
	t.Helper()
	reg := drivers.NewRegistry()
	if err := reg.Register(drivers.For(intent.Device{Kind: intent.KindHost}), func() drivers.Driver { return d }); err != nil {
		t.Fatal(err)
	}
	return reg
}

// SSHRemote hands each step to the host driver's TrafficRunner with the
// host's target, passes on only ready lines, and decodes the result.
func TestSSHRemote(t *testing.T) {
	s := sshHosts(t)
	if r := SSHRemote(s, registry(t, &memory.Driver{Store: memory.NewStore()}), false); r != nil {
		t.Fatal("a host driver without traffic steps gave a Remote")
	}
	if r := SSHRemote(s, drivers.NewRegistry(), false); r != nil {
		t.Fatal("a registry without a host driver gave a Remote")
	}
	d := &trafficDriver{Driver: &memory.Driver{Store: memory.NewStore()}}
	r := SSHRemote(s, registry(t, d), true)
	if r == nil {
		t.Fatal("no Remote")
	}
	var ready []string
	res, err := r(context.Background(), s.Hosts[1], &SideRequest{Role: RoleServer}, func(a string) { ready = append(ready, a) })
	if err != nil || res.Device != "rxe_fa" || !res.Software {
		t.Fatalf("%+v %v", res, err)
	}
	if len(d.got) != 1 || d.got[0].Device.Name != "hb" || !d.got[0].Insecure || d.got[0].Intent.(*intent.Host).Connect.Netns != "blue" {
		t.Fatalf("target %+v", d.got)
	}
	if !strings.Contains(string(d.body[0]), `"role":"server"`) || strings.Join(ready, ",") != "192.0.2.1:7000" {
		t.Fatalf("body %s, ready %v", d.body[0], ready)
	}
	d.fail = errors.New("ssh: handshake failed")
	if _, err := r(context.Background(), s.Hosts[0], &SideRequest{Role: RoleCounters}, func(string) {}); err == nil || err.Error() != "ssh: handshake failed" {
		t.Fatal(err)
	}
}
