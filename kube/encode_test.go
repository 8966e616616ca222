package kube

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// fill sets v (settable) to random values: zero, empty and non-zero ones
// of every kind, so nil and empty slices, maps and pointers to zero
// values all occur. Fields named Src stay zero (not published).
func fill(v reflect.Value, r *rand.Rand, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.Intn(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if r.Intn(3) > 0 {
			v.SetInt(int64(r.Intn(2000) - 1000))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if r.Intn(3) > 0 {
			v.SetUint(uint64(r.Intn(200)))
		}
	case reflect.Float32, reflect.Float64:
		if r.Intn(3) > 0 {
			v.SetFloat(r.NormFloat64() * 1e3)
		}
	case reflect.String:
		if r.Intn(3) > 0 {
			v.SetString([]string{"dscp", "ens1f0", `q"uo\te`, "ü", "0", "false"}[r.Intn(6)])
		}
	case reflect.Slice:
		switch r.Intn(4) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+r.Intn(3), 3)
			for i := 0; i < s.Len(); i++ {
				fill(s.Index(i), r, depth+1)
			}
			v.Set(s)
		}
	case reflect.Array:
		if r.Intn(3) > 0 {
			for i := 0; i < v.Len(); i++ {
				if r.Intn(8) == 0 {
					fill(v.Index(i), r, depth+1)
				}
			}
		}
	case reflect.Map:
		switch r.Intn(4) {
		case 0:
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for i := 0; i < 1+r.Intn(3); i++ {
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(k, r, depth+1)
				fill(e, r, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Pointer:
		switch r.Intn(3) {
		case 0:
		case 1:
			v.Set(reflect.New(v.Type().Elem())) // a pointer to a zero value
		default:
			p := reflect.New(v.Type().Elem())
			fill(p.Elem(), r, depth+1)
			v.Set(p)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.Name != "Src" && f.IsExported() {
				fill(v.Field(i), r, depth+1)
			}
		}
	}
}

// decodeFull is how the agent reads the full encoding of h (every field,
// as encoding/json writes it).
func decodeFull(t *testing.T, h *intent.Host) *intent.Host {
	t.Helper()
	b, err := json.Marshal(PublishedIntent(h))
	if err != nil {
		t.Fatal(err)
	}
	var out intent.Host
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestEncodeIntentCompactDecodesAsFull: the agent decodes the compact
// intent to exactly what it decodes from encoding/json's full encoding,
// for random hosts with every field zero, empty or set (nil and empty
// slices and maps, pointers to zero values), and the compact form is
// canonical (sorted keys: re-encoding its tree gives the same bytes).
func TestEncodeIntentCompactDecodesAsFull(t *testing.T) {
	r := rand.New(rand.NewSource(20))
	zero, falseV := 0, false
	fixed := []*intent.Host{
		{},
		{Device: intent.Device{Name: "h"}, NICs: []intent.NIC{{Name: "e", NUMANode: &zero, FirmwareLLDP: &falseV, PFC: []int{},
			IB: &intent.IBPort{PKeys: map[int]string{}}}}},
		{NICs: []intent.NIC{{DSCPToTC: [64]uint8{26: 3}}, {}}},
	}
	for i := 0; i < 500; i++ {
		var h intent.Host
		if i < len(fixed) {
			h = *fixed[i]
		} else {
			fill(reflect.ValueOf(&h).Elem(), r, 0)
		}
		raw, _, err := EncodeIntent(&h)
		if err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
		got, err := DecodeIntent(raw)
		if err != nil {
			t.Fatalf("host %d: %v\n%s", i, err, raw)
		}
		if want := decodeFull(t, &h); !reflect.DeepEqual(got, want) {
			t.Fatalf("host %d: compact intent decodes differently\ncompact: %s\ngot  %+v\nwant %+v", i, raw, got, want)
		}
		var tree any
		if err := json.Unmarshal(raw, &tree); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(tree)
		if string(again) != string(raw) {
			t.Fatalf("host %d: not canonical:\n%s\n%s", i, raw, again)
		}
	}
}

// TestEncodeIntentSize: an 8-NIC GPU host (the bench's) is published in
// under a third of encoding/json's full size.
func TestEncodeIntentSize(t *testing.T) {
	h := &intent.Host{Device: intent.Device{Kind: intent.KindHost, Name: "gpu00005", Platform: "linux"}, RDMATos: 106}
	for j := 0; j < 8; j++ {
		h.NICs = append(h.NICs, intent.NIC{Name: fmt.Sprintf("ens%df0", j), Device: fmt.Sprintf("mlx5_%d", j), MTU: 9000,
			Addresses: []string{fmt.Sprintf("10.%d.0.10/31", j)}, Trust: "dscp", PFC: []int{3},
			TCs: []intent.TC{{TC: 0, Bandwidth: 50}, {TC: 3, Bandwidth: 50, Lossless: true}}, ECN: true, ECNPrios: []int{3}, RoCEMode: "v2"})
	}
	raw, _, err := EncodeIntent(h)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := json.Marshal(PublishedIntent(h))
	t.Logf("8-NIC intent: %d bytes compact, %d full", len(raw), len(full))
	if 3*len(raw) > len(full) {
		t.Fatalf("compact intent is %d bytes, full %d: want under a third", len(raw), len(full))
	}
}
