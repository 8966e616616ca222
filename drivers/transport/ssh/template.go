package sshtransport

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scrapli/scrapligo/driver/generic"
	"github.com/scrapli/scrapligo/driver/network"
	"github.com/scrapli/scrapligo/driver/options"
	"github.com/scrapli/scrapligo/platform"
	"github.com/scrapli/scrapligo/util"
)

// platformTemplate is a scrapligo platform prepared once per process:
// platform.NewPlatform parses the YAML definition and network.NewDriver
// compiles every privilege-level regexp and the privilege graph for each
// connection. A plan of 64 switches spent 9.5% of its CPU there (the
// 64-switch benchmark's profile). The prototype's prepared parts are
// read-only after construction and shared; each connection gets its own
// generic driver (transport, channel, logger).
type platformTemplate struct {
	p     *platform.Platform
	proto *network.Driver
}

var templates sync.Map // key -> *platformTemplate

func templateKey(def any) (string, error) {
	switch d := def.(type) {
	case string:
		return "name:" + d, nil
	case []byte:
		return "yaml:" + string(d), nil
	}
	return "", fmt.Errorf("platform definition of type %T (want a scrapligo platform name or YAML bytes)", def)
}

// templateFor returns the prepared platform for a scrapligo platform
// name or YAML definition.
func templateFor(def any) (*platformTemplate, error) {
	key, err := templateKey(def)
	if err != nil {
		return nil, err
	}
	if t, ok := templates.Load(key); ok {
		return t.(*platformTemplate), nil
	}
	// The prototype is never opened: the standard transport only stores
	// its arguments.
	p, err := platform.NewPlatform(def, "prototype", options.WithTransportType("standard"))
	if err != nil {
		return nil, err
	}
	proto, err := p.GetNetworkDriver()
	if err != nil {
		return nil, err
	}
	t, _ := templates.LoadOrStore(key, &platformTemplate{p: p, proto: proto})
	return t.(*platformTemplate), nil
}

// driver returns a new network driver for host. opts are applied to the
// generic driver (transport, channel, logging) and to the network driver
// (auth secondary) as network.NewDriver would. The platform's
// network-on-open commands run with command (one round trip each, within
// timeout), and its network-on-close writes without a round trip
// (onClose).
func (t *platformTemplate) driver(host string, timeout time.Duration, opts ...util.Option) (*network.Driver, error) {
	gd, err := generic.NewDriver(host, append(t.p.AsOptions(), opts...)...)
	if err != nil {
		return nil, err
	}
	// A copy of the prototype shares its compiled privilege levels and
	// privilege graph (never written after NewDriver: this package never
	// calls UpdatePrivileges on a connection's driver).
	d := *t.proto
	d.Driver = gd
	d.CurrentPriv = ""
	d.AuthSecondary = ""
	for _, o := range opts {
		if err := o(&d); err != nil && !errors.Is(err, util.ErrIgnoredOption) {
			return nil, err
		}
	}
	gd.Channel.PromptPattern = t.proto.Channel.PromptPattern
	d.OnOpen, d.OnClose = nil, nil
	if len(t.p.NetworkOnOpen) > 0 {
		d.OnOpen = onOpen(t.p.NetworkOnOpen, timeout)
	}
	if len(t.p.NetworkOnClose) > 0 {
		d.OnClose = onClose(t.p.NetworkOnClose)
	}
	return &d, nil
}
