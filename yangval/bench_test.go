package yangval

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

// genOC renders an OpenConfig QoS + interfaces payload for one switch with
// nIf interfaces: 8 queues and forwarding groups, a DSCP classifier with 8
// terms, two WRED/ECN profiles, a scheduler policy with 8 inputs, and per
// interface the classifier, scheduler-policy and 8 queue bindings, plus the
// interface config with MTU.
func genOC(nIf int) []byte {
	var queues, fgs, terms, inputs []any
	for q := 0; q < 8; q++ {
		qn := fmt.Sprintf("Q%d", q)
		queues = append(queues, map[string]any{"name": qn, "config": map[string]any{"name": qn, "queue-id": q}})
		fg := fmt.Sprintf("fg-%d", q)
		fgs = append(fgs, map[string]any{"name": fg, "config": map[string]any{"name": fg, "output-queue": qn}})
		terms = append(terms, map[string]any{"id": fg, "config": map[string]any{"id": fg},
			"conditions": map[string]any{"ipv4": map[string]any{"config": map[string]any{"dscp-set": []any{q * 8, q*8 + 2}}}},
			"actions":    map[string]any{"config": map[string]any{"target-group": fg}}})
		inputs = append(inputs, map[string]any{"id": qn, "config": map[string]any{"id": qn, "input-type": "QUEUE", "queue": qn, "weight": "10"}})
	}
	profiles := []any{}
	for _, p := range []string{"lossless-ecn", "lossy"} {
		profiles = append(profiles, map[string]any{"name": p, "config": map[string]any{"name": p},
			"wred": map[string]any{"uniform": map[string]any{"config": map[string]any{
				"min-threshold": "153600", "max-threshold": "1536000", "enable-ecn": p == "lossless-ecn",
				"max-drop-probability-percent": 5}}}})
	}
	var qifs, ifs []any
	for i := 0; i < nIf; i++ {
		name := fmt.Sprintf("Ethernet%d", i*8)
		var bind []any
		for q := 0; q < 8; q++ {
			prof := "lossy"
			if q == 3 || q == 4 {
				prof = "lossless-ecn"
			}
			qn := fmt.Sprintf("Q%d", q)
			bind = append(bind, map[string]any{"name": qn, "config": map[string]any{"name": qn, "queue-management-profile": prof}})
		}
		qifs = append(qifs, map[string]any{"interface-id": name, "config": map[string]any{"interface-id": name},
			"interface-ref": map[string]any{"config": map[string]any{"interface": name}},
			"input": map[string]any{"classifiers": map[string]any{"classifier": []any{
				map[string]any{"type": "IPV4", "config": map[string]any{"type": "IPV4", "name": "dscp"}}}}},
			"output": map[string]any{"scheduler-policy": map[string]any{"config": map[string]any{"name": "rdma"}},
				"queues": map[string]any{"queue": bind}}})
		ifs = append(ifs, map[string]any{"name": name, "config": map[string]any{"name": name, "mtu": 9100,
			"type": "iana-if-type:ethernetCsmacd", "enabled": true}})
	}
	doc := map[string]any{
		"openconfig-qos:qos": map[string]any{
			"queues":                    map[string]any{"queue": queues},
			"forwarding-groups":         map[string]any{"forwarding-group": fgs},
			"classifiers":               map[string]any{"classifier": []any{map[string]any{"name": "dscp", "config": map[string]any{"name": "dscp", "type": "IPV4"}, "terms": map[string]any{"term": terms}}}},
			"queue-management-profiles": map[string]any{"queue-management-profile": profiles},
			"scheduler-policies": map[string]any{"scheduler-policy": []any{map[string]any{"name": "rdma", "config": map[string]any{"name": "rdma"},
				"schedulers": map[string]any{"scheduler": []any{map[string]any{"sequence": 0, "config": map[string]any{"sequence": 0, "priority": "STRICT"},
					"inputs": map[string]any{"input": inputs}}}}}}},
			"interfaces": map[string]any{"interface": qifs},
		},
		"openconfig-interfaces:interfaces": map[string]any{"interface": ifs},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

func TestGeneratedPayloadValid(t *testing.T) {
	s := loadSet(t, "openconfig")
	if errs := s.ValidateJSON("/", genOC(256)); len(errs) > 0 {
		t.Fatalf("generated payload rejected:%s", errStrings(errs[:min(len(errs), 10)]))
	}
}

// BenchmarkValidateOC validates one 256-interface switch payload (8 queue
// bindings per interface) against the OpenConfig models, parsed once.
func BenchmarkValidateOC(b *testing.B) {
	s := loadSet(b, "openconfig")
	payload := genOC(256)
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if errs := s.ValidateJSON("/", payload); len(errs) > 0 {
			b.Fatal(errs[0])
		}
	}
}

// BenchmarkValidateOCFabric256 validates the payloads of a 256-switch
// fabric (64 ports per switch, 16384 interfaces in all) per iteration: the
// issue's budget is 2 s for the whole fabric with the models parsed once.
func BenchmarkValidateOCFabric256(b *testing.B) {
	s := loadSet(b, "openconfig")
	payload := genOC(64) // every switch renders the same shape
	b.SetBytes(int64(len(payload)) * 256)
	b.ResetTimer()
	cpu0 := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		for sw := 0; sw < 256; sw++ {
			if errs := s.ValidateJSON("/", payload); len(errs) > 0 {
				b.Fatal(errs[0])
			}
		}
	}
	// process CPU time: meaningful on a busy machine, where ns/op is not
	b.ReportMetric((testutil.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkLoadOC measures parsing and compiling the OpenConfig set.
func BenchmarkLoadOC(b *testing.B) {
	dir := testutil.Shared(b, "yang", "openconfig")
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
