package sshtransport

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/eosemu"
)

// TestSharedTemplateConcurrent: sessions on one prepared platform run
// concurrently (run with -race: the prototype's compiled privilege
// levels are shared read-only), each reaching privileged exec on its own
// and failing commands on its own.
func TestSharedTemplateConcurrent(t *testing.T) {
	sw, err := eosemu.Start(eosemu.Options{Hostname: "leaf1", Password: secret, Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := sw.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	tg := drivers.Target{
		Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf1", Platform: "eos", Address: sw.Addr()},
		Credentials: &spec.Credentials{Name: "lab", Username: "admin", KnownHosts: kh,
			Password: &spec.SecretRef{Kind: "env", Name: "PW"}},
	}
	o := Options{Platform: "arista_eos", ConnectTimeout: 5 * time.Second, CommandTimeout: 5 * time.Second,
		Getenv: func(string) string { return secret }}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(context.Background(), tg, o)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if out, err := c.Send("show running-config"); err != nil || !strings.Contains(out, "hostname leaf1") {
				errs <- err
			}
			if _, err := c.Send("frobnicate"); err == nil {
				errs <- errNotFailed
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t1, _ := templateFor("arista_eos"); t1 == nil {
		t.Fatal("no template")
	} else if t2, _ := templateFor("arista_eos"); t1 != t2 {
		t.Fatal("the platform is prepared more than once")
	}
}

type notFailed struct{}

func (notFailed) Error() string { return "an invalid command did not fail" }

var errNotFailed = notFailed{}
