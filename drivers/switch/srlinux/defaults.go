package srlinux

import (
	"encoding/json"

	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/intent"
)

// SystemDefaults is the QoS configuration every SR Linux starts with and
// fabctl refers to without creating it: forwarding classes fc0..fc7 on
// queues queue-0..queue-7, and PFC queues pfc0..pfc7 (the system-reserved
// defaults srl_nokia-qos describes for them). Tests and the local testbed
// start SR Linux gNMI targets with it (gnmitarget.Config.Initial). It is
// a 7220 IXR-D5's: a forwarding class names its output/unicast-queue
// (feature qos-unicast-queue); output/queue (qos-multi-traffic-queue) and
// forwarding-class-index (qos-forwarding-class-index) are features the
// D5 does not have, so the device refuses them (libyang with the D5's
// features agrees: yangval/libyang TestRenderedPayloads).
func SystemDefaults() []byte {
	var queues, pfcQueues, fcs []any
	for i := 0; i < 8; i++ {
		queues = append(queues, obj{"name": queue(i), "queue-index": i})
		pfcQueues = append(pfcQueues, obj{"pfc-queue-name": pfcQueue(i), "queue-index": i})
		fcs = append(fcs, obj{"name": fc(i), "output": obj{"unicast-queue": queue(i)}})
	}
	b, err := json.Marshal(obj{"srl_nokia-qos:qos": obj{
		"queues":             obj{"queue": queues, "pfc-queue": pfcQueues},
		"forwarding-classes": obj{"forwarding-class": fcs},
	}})
	if err != nil {
		panic(err) // a literal above
	}
	return b
}

// Factory is an SR Linux with its system defaults and the switch's ports
// (admin-state enable, as the gNMI target creates them).
func (Platform) Factory(sw *intent.Switch) map[string]any {
	v, err := gnmicore.Decode(SystemDefaults())
	if err != nil {
		panic(err) // SystemDefaults is built above
	}
	root := v.(map[string]any)
	var ifs []any
	for _, p := range sw.Ports {
		ifs = append(ifs, obj{"name": p.Name, "admin-state": "enable"})
	}
	if len(ifs) > 0 {
		root["srl_nokia-interfaces:interface"] = ifs
	}
	return root
}
