package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabctl/fabctl/drivers"
	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// leafValues read a streamed leaf's value as its descriptor says
// (drivers.GNMILeaf.Value).
var leafValues = map[drivers.LeafValue]func(string) (float64, bool){
	drivers.LeafCounter:    counterValue,
	drivers.LeafOperStatus: upValue,
	drivers.LeafSpeed:      speedValue,
}

var switchMetrics = map[string]struct {
	help  string
	typ   prometheus.ValueType
	extra []string
}{
	"port_up":                     {"1 when the switch port is operationally up (on change).", prometheus.GaugeValue, nil},
	"port_speed_bits":             {"The switch port's speed in bits per second (on change).", prometheus.GaugeValue, nil},
	"in_discards_total":           {"Packets the switch port discarded on receive.", prometheus.CounterValue, nil},
	"mac_pause_frames_total":      {"IEEE 802.3x (global) pause frames, rx and tx.", prometheus.CounterValue, []string{"direction"}},
	"pfc_pause_frames_total":      {"PFC pause frames per priority: rx (received from the peer) and tx (generated).", prometheus.CounterValue, []string{"direction", "priority"}},
	"pfc_watchdog_events_total":   {"PFC watchdog (deadlock recovery) occurrences per priority.", prometheus.CounterValue, []string{"priority"}},
	"ecn_marked_packets_total":    {"Packets ECN-marked (ECT to CE) per egress queue; priority is the queue's traffic class.", prometheus.CounterValue, []string{"priority"}},
	"queue_dropped_packets_total": {"Packets dropped per egress queue; priority is the queue's traffic class.", prometheus.CounterValue, []string{"priority"}},
}

func counterValue(s string) (float64, bool) {
	v, err := strconv.ParseUint(strings.Trim(s, `"`), 10, 64)
	return float64(v), err == nil
}

func upValue(s string) (float64, bool) {
	switch strings.ToLower(strings.Trim(s, `"`)) {
	case "up":
		return 1, true
	case "down", "lower_layer_down", "dormant", "not_present", "testing", "unknown", "empty":
		return 0, true
	}
	return 0, false
}

// speedValue parses SR Linux "100G"/"25G" and OpenConfig
// "openconfig-if-ethernet:SPEED_100GB" port speeds.
func speedValue(s string) (float64, bool) {
	s = strings.Trim(s, `"`)
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimPrefix(s, "SPEED_")
	s = strings.TrimSuffix(s, "B")
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, strings.TrimSuffix(s, "G")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "T"):
		mult, s = 1e12, strings.TrimSuffix(s, "T")
	default:
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * mult, err == nil
}

// priorityOf is a list entry's priority: SR Linux pfc-priority index, or
// an OpenConfig queue named as fabctl's openconfig driver names them
// ("Q3": traffic class 3 = priority 3) or by number.
func priorityOf(key string) string {
	k := strings.TrimPrefix(key, "Q")
	if _, err := strconv.Atoi(k); err == nil {
		return k
	}
	return key
}

type seriesKey struct {
	metric, sw, port, dir, prio string
}

// SwitchCollector holds the latest values the switches streamed.
type SwitchCollector struct {
	Fabric string
	ports  map[[2]string]Labels // switch, port -> labels
	plats  map[string]string    // switch -> platform
	// gnmi are the gNMI platforms' telemetry paths, by platform name
	// (their descriptors' GNMITelemetry).
	gnmi map[string]*drivers.GNMITelemetry

	mu   sync.Mutex
	vals map[seriesKey]float64
	up   map[string]bool
	errs map[string]string
	spec map[[2]string]float64
	// lacks are each switch's metrics its models or show commands lack.
	lacks map[string][]string
	// polled are the SSH CLI switches (poll.go), each its driver.
	polled map[string]drivers.CounterReader
	// unseen are the spec's switches neither streamed nor polled, each
	// with the reason (fabctl_switch_up 0, reason label).
	unseen map[string]string

	descs map[string]*prometheus.Desc
}

// NewSwitchCollector is the collector of the gNMI switches of s, on the
// telemetry paths their platforms' descriptors give (drivers/builtin's
// Platforms()).
func NewSwitchCollector(s *spec.Spec, platforms []drivers.Platform) *SwitchCollector {
	c := &SwitchCollector{Fabric: s.Fabric.Name, ports: map[[2]string]Labels{}, plats: map[string]string{},
		gnmi: map[string]*drivers.GNMITelemetry{},
		vals: map[seriesKey]float64{}, up: map[string]bool{}, errs: map[string]string{}, spec: map[[2]string]float64{},
		lacks: map[string][]string{}, polled: map[string]drivers.CounterReader{}, unseen: map[string]string{},
		descs: map[string]*prometheus.Desc{}}
	for _, p := range platforms {
		if p.GNMITelemetry != nil {
			c.gnmi[p.Name] = p.GNMITelemetry
		}
	}
	for _, sw := range s.Switches {
		if gp := c.gnmi[sw.Platform]; gp != nil {
			c.add(s, sw, gp.Lacks)
		}
	}
	for name, m := range switchMetrics {
		c.descs[name] = prometheus.NewDesc("fabctl_switch_"+name, m.help, append(append([]string{}, LabelNames...), m.extra...), nil)
	}
	c.descs["spec_speed_bits"] = prometheus.NewDesc("fabctl_switch_spec_speed_bits", "The switch port's speed in the spec, bits per second.", LabelNames, nil)
	c.descs["up"] = prometheus.NewDesc("fabctl_switch_up", "1 while the switch's gNMI telemetry stream is established (SSH CLI: while its last poll succeeded); 0 otherwise. reason is set on a switch of the spec that fabctl cannot read at all (its platform is not polled or streamed).", []string{"fabric", "leaf", "platform", "reason"}, nil)
	c.descs["counter_supported"] = prometheus.NewDesc("fabctl_switch_counter_supported", "0 for a counter the platform's models lack.", []string{"fabric", "leaf", "platform", "counter"}, nil)
	return c
}

func (c *SwitchCollector) add(s *spec.Spec, sw *spec.Switch, lacks []string) {
	c.plats[sw.Name] = sw.Platform
	c.lacks[sw.Name] = lacks
	for _, p := range SwitchPorts(s, sw) {
		c.ports[[2]string{sw.Name, p.Labels.Port}] = p.Labels
		if p.SpeedBits > 0 {
			c.spec[[2]string{sw.Name, p.Labels.Port}] = p.SpeedBits
		}
	}
}

// Switches are the switches the collector streams from (gNMI) or polls
// (SSH CLI), sorted.
func (c *SwitchCollector) Switches() []string {
	var out []string
	for n := range c.plats {
		if c.unseen[n] == "" {
			out = append(out, n)
		}
	}
	sortStrings(out)
	return out
}

// NotSeen are the spec's switches the collector neither streams nor
// polls, each with the reason (AddPolled).
func (c *SwitchCollector) NotSeen() map[string]string {
	out := make(map[string]string, len(c.unseen))
	for n, why := range c.unseen {
		out[n] = why
	}
	return out
}

// Describe sends every descriptor.
func (c *SwitchCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *SwitchCollector) labels(sw, port string) []string {
	if l, ok := c.ports[[2]string{sw, port}]; ok {
		return l.Values()
	}
	return Labels{Fabric: c.Fabric, Leaf: sw, Port: port}.Values()
}

// Collect sends the latest values.
func (c *SwitchCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.vals {
		m := switchMetrics[k.metric]
		lv := c.labels(k.sw, k.port)
		if k.dir != "" {
			lv = append(lv, k.dir)
		}
		if k.prio != "" || len(m.extra) > 0 && m.extra[len(m.extra)-1] == "priority" {
			lv = append(lv, k.prio)
		}
		ch <- prometheus.MustNewConstMetric(c.descs[k.metric], m.typ, v, lv...)
	}
	for k, v := range c.spec {
		ch <- prometheus.MustNewConstMetric(c.descs["spec_speed_bits"], prometheus.GaugeValue, v, c.labels(k[0], k[1])...)
	}
	for sw, plat := range c.plats {
		ch <- prometheus.MustNewConstMetric(c.descs["up"], prometheus.GaugeValue, b2f(c.up[sw]), c.Fabric, sw, plat, c.unseen[sw])
		for _, l := range c.lacks[sw] {
			ch <- prometheus.MustNewConstMetric(c.descs["counter_supported"], prometheus.GaugeValue, 0, c.Fabric, sw, plat, l)
		}
	}
}

// Apply takes one notification of switch sw.
func (c *SwitchCollector) Apply(sw string, n *gpb.Notification) {
	plat := c.gnmi[c.plats[sw]]
	if plat == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range n.GetUpdate() {
		elems := append(append([]*gpb.PathElem{}, n.GetPrefix().GetElem()...), u.GetPath().GetElem()...)
		raw := u.GetVal().GetJsonIetfVal()
		if raw == nil {
			raw = u.GetVal().GetJsonVal()
		}
		var v any
		if raw != nil {
			if err := json.Unmarshal(raw, &v); err != nil {
				continue
			}
		} else {
			v = scalarOf(u.GetVal())
		}
		flatten(elems, v, func(p []*gpb.PathElem, leaf any) {
			c.applyLeaf(sw, plat, p, leaf)
		})
	}
}

func scalarOf(tv *gpb.TypedValue) any {
	switch x := tv.GetValue().(type) {
	case *gpb.TypedValue_UintVal:
		return strconv.FormatUint(x.UintVal, 10)
	case *gpb.TypedValue_IntVal:
		return strconv.FormatInt(x.IntVal, 10)
	case *gpb.TypedValue_StringVal:
		return x.StringVal
	}
	return nil
}

// flatten walks a JSON value at path p down to its leaves.
func flatten(p []*gpb.PathElem, v any, fn func([]*gpb.PathElem, any)) {
	switch x := v.(type) {
	case map[string]any:
		for k, cv := range x {
			if arr, ok := cv.([]any); ok {
				for _, e := range arr {
					m, ok := e.(map[string]any)
					if !ok {
						continue
					}
					keys := map[string]string{}
					for _, kn := range []string{"name", "index", "interface-id"} {
						if kv, ok := m[kn]; ok {
							keys[kn] = fmt.Sprint(kv)
							break
						}
					}
					flatten(append(append([]*gpb.PathElem{}, p...), &gpb.PathElem{Name: k, Key: keys}), m, fn)
				}
				continue
			}
			flatten(append(append([]*gpb.PathElem{}, p...), &gpb.PathElem{Name: k}), cv, fn)
		}
	default:
		fn(p, v)
	}
}

func bare(name string) string {
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return name[i+1:]
	}
	return name
}

func (c *SwitchCollector) applyLeaf(sw string, plat *drivers.GNMITelemetry, p []*gpb.PathElem, leaf any) {
	names := make([]string, len(p))
	for i, e := range p {
		names[i] = bare(e.GetName())
	}
	schema := strings.Join(names, "/")
	for _, r := range plat.Leaves {
		if !strings.HasSuffix(schema, r.Suffix) {
			continue
		}
		var port, prio string
		for _, e := range p {
			n := bare(e.GetName())
			if k, ok := e.GetKey()["interface-id"]; ok && n == "interface" {
				port = k
			} else if k, ok := e.GetKey()["name"]; ok && n == "interface" && port == "" {
				port = k
			}
			if r.PriorityList != "" && n == r.PriorityList {
				for _, kv := range e.GetKey() {
					prio = priorityOf(kv)
				}
			}
		}
		if port == "" {
			return
		}
		value := leafValues[r.Value]
		if value == nil {
			return
		}
		v, ok := value(fmt.Sprint(leaf))
		if !ok {
			return
		}
		c.vals[seriesKey{metric: r.Metric, sw: sw, port: port, dir: r.Direction, prio: prio}] = v
		return
	}
}

// SetUp records whether switch sw's stream is established (err: why not).
func (c *SwitchCollector) SetUp(sw string, up bool, err error) {
	c.mu.Lock()
	c.up[sw] = up
	if err != nil {
		c.errs[sw] = err.Error()
	} else {
		delete(c.errs, sw)
	}
	c.mu.Unlock()
}

// Status is each switch's stream state: "" when up, else why not.
func (c *SwitchCollector) Status() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for sw := range c.plats {
		switch {
		case c.unseen[sw] != "":
			out[sw] = c.unseen[sw]
		case c.up[sw]:
			out[sw] = ""
		case c.errs[sw] != "":
			out[sw] = c.errs[sw]
		default:
			out[sw] = "not connected yet"
		}
	}
	return out
}

// StreamOptions tune Stream.
type StreamOptions struct {
	Sample   time.Duration // SAMPLE interval (default 10s)
	Retry    time.Duration // wait before reconnecting (default 5s)
	Insecure bool
	Getenv   func(string) string
	// Until, when set, ends streaming (serve --once): a switch's stream
	// ends at Until once it has delivered one complete sample (the
	// target's sync_response after the initial updates), or when its
	// last attempt failed; a switch still without a complete sample gets
	// one more Sample interval, then reads down saying so. Stream returns
	// when every switch's stream has ended.
	Until time.Time
}

// Stream subscribes to every gNMI switch's counters and keeps the
// collector current until ctx ends (or, with Until, until each switch
// has been read once and Until has passed). A stream cut short by ctx
// leaves its switch's state as it was: neither up nor down.
func Stream(ctx context.Context, s *spec.Spec, c *SwitchCollector, o StreamOptions) {
	if o.Sample <= 0 {
		o.Sample = 10 * time.Second
	}
	if o.Retry <= 0 {
		o.Retry = 5 * time.Second
	}
	var wg sync.WaitGroup
	for _, name := range c.Switches() {
		if c.polled[name] != nil {
			continue // an SSH CLI switch: Poll
		}
		sw := s.Switch(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			streamSwitch(ctx, s, sw, c, o)
		}()
	}
	wg.Wait()
}

// streamSwitch streams one switch, reconnecting after a failure, until
// ctx ends or (with o.Until) the switch has been read once and Until has
// passed.
func streamSwitch(ctx context.Context, s *spec.Spec, sw *spec.Switch, c *SwitchCollector, o StreamOptions) {
	bctx := ctx
	if !o.Until.IsZero() {
		var cancel context.CancelFunc
		bctx, cancel = context.WithDeadline(ctx, o.Until.Add(o.Sample))
		defer cancel()
	}
	for {
		synced, err := streamOne(bctx, s, sw, c, o)
		switch {
		case ctx.Err() != nil:
			return // cut short: neither up nor down
		case synced && err == nil:
			return // Until passed after a complete sample
		case bctx.Err() != nil:
			if !synced {
				c.SetUp(sw.Name, false, fmt.Errorf("no complete sample (gNMI sync_response) by the end of --once and one sample interval (%s) after it", o.Sample))
			}
			return
		}
		c.SetUp(sw.Name, false, err)
		var untilC <-chan time.Time
		if !o.Until.IsZero() {
			if !time.Now().Before(o.Until) {
				return // this attempt's failure is the switch's state
			}
			t := time.NewTimer(time.Until(o.Until))
			defer t.Stop()
			untilC = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-untilC:
			return
		case <-time.After(o.Retry):
		}
	}
}

// streamOne runs one subscription. It returns synced when the target
// sent its sync_response and the stream then ended because o.Until had
// passed (a nil error); otherwise the error that ended it, or nil when
// ctx ended it.
func streamOne(ctx context.Context, s *spec.Spec, sw *spec.Switch, c *SwitchCollector, o StreamOptions) (synced bool, err error) {
	t := drivers.Target{Device: intent.Device{Kind: intent.KindSwitch, Name: sw.Name, Platform: sw.Platform, Driver: sw.Driver,
		Address: sw.Address, Role: sw.Role, Credentials: sw.Credentials},
		Credentials: s.CredentialsByName(sw.Credentials), Insecure: o.Insecure}
	cl, _, err := gnmitransport.Dial(ctx, t, gnmitransport.Options{Getenv: o.Getenv})
	if err != nil {
		return false, err
	}
	defer cl.Close()
	plat := c.gnmi[sw.Platform]
	if plat == nil || len(plat.Subscriptions) == 0 {
		return false, fmt.Errorf("%s: platform %s has no gNMI telemetry paths", sw.Name, sw.Platform)
	}
	sl := &gpb.SubscriptionList{Mode: gpb.SubscriptionList_STREAM, Encoding: gpb.Encoding_JSON_IETF}
	for _, sub := range plat.Subscriptions {
		p, err := gnmitransport.Path(sub.Path)
		if err != nil {
			return false, err
		}
		gs := &gpb.Subscription{Path: p, Mode: gpb.SubscriptionMode_SAMPLE, SampleInterval: uint64(o.Sample)}
		if sub.OnChange {
			gs.Mode, gs.SampleInterval = gpb.SubscriptionMode_ON_CHANGE, 0
		}
		sl.Subscription = append(sl.Subscription, gs)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// With Until: once the switch has synced, its stream ends at Until.
	var done atomic.Bool
	if !o.Until.IsZero() {
		end := time.AfterFunc(time.Until(o.Until), func() {
			if done.Load() {
				cancel()
			}
		})
		defer end.Stop()
	}
	stream, err := cl.Subscribe(sctx, sl)
	if err != nil {
		return false, err
	}
	for {
		r, err := stream.Recv()
		if err != nil {
			if done.Load() && ctx.Err() == nil && sctx.Err() != nil {
				return true, nil // ended at Until after a complete sample
			}
			if ctx.Err() != nil {
				return false, nil
			}
			return false, cl.SubscribeError(plat.Subscriptions[0].Path, err)
		}
		if r.GetSyncResponse() {
			c.SetUp(sw.Name, true, nil)
			if !o.Until.IsZero() {
				done.Store(true)
				if !time.Now().Before(o.Until) {
					return true, nil
				}
			}
		}
		if n := r.GetUpdate(); n != nil {
			c.Apply(sw.Name, n)
		}
	}
}
