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
// start SR Linux gNMI targets with it (gnmitarget.Config.Initial). Both
// output/queue and output/unicast-queue are set: the models guard them
// with features a schema validator does not evaluate, so it wants both.
func SystemDefaults() []byte {
	var queues, pfcQueues, fcs []any
	for i := 0; i < 8; i++ {
		queues = append(queues, obj{"name": queue(i), "queue-index": i})
		pfcQueues = append(pfcQueues, obj{"pfc-queue-name": pfcQueue(i), "queue-index": i})
		fcs = append(fcs, obj{"name": fc(i), "forwarding-class-index": i,
			"output": obj{"queue": queue(i), "unicast-queue": queue(i)}})
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
