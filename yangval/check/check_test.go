package check

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateSkipsAndNamesTheMissingSet: payloads that are nil are
// skipped (a device without a YANG-modelled payload); a model set the
// --yang-dir does not hold fails the validation naming the payload and
// where the models should be.
func TestValidateSkipsAndNamesTheMissingSet(t *testing.T) {
	dir := t.TempDir()
	m := &Models{Root: dir}
	res, err := m.Validate([]*Payload{nil, nil})
	if err != nil || len(res) != 2 || res[0] != nil || res[1] != nil {
		t.Fatalf("nil payloads: %v %v", res, err)
	}
	_, err = m.Validate([]*Payload{nil, {Models: "srlinux"}})
	var le *LoadError
	if !errors.As(err, &le) || le.Index != 1 || !strings.Contains(err.Error(), dir+"/srlinux/*.yang") {
		t.Fatalf("missing model set: %v", err)
	}
}

// TestPayloadKey: the key of a payload covers the models' directory and
// every part of the payload, with their lengths (no two payloads of
// different parts share one).
func TestPayloadKey(t *testing.T) {
	a := &Payload{Models: "m", Ops: []Op{{Op: "update", Path: "/a", Val: []byte("1")}}}
	for _, b := range []*Payload{
		{Models: "m", Ops: []Op{{Op: "update", Path: "/a1", Val: []byte("")}}},
		{Models: "m", Ops: []Op{{Op: "replace", Path: "/a", Val: []byte("1")}}},
		{Models: "m", Ops: []Op{{Op: "update", Path: "/a", Val: []byte("1")}}, Tree: []byte("{}")},
		{Models: "n", Ops: []Op{{Op: "update", Path: "/a", Val: []byte("1")}}},
	} {
		if PayloadKey("d", a) == PayloadKey("d", b) {
			t.Errorf("%+v and %+v share a key", a, b)
		}
	}
	if PayloadKey("d", a) != PayloadKey("d", &Payload{Models: "m", Ops: []Op{{Op: "update", Path: "/a", Val: []byte("1")}}}) || PayloadKey("d", a) == PayloadKey("e", a) {
		t.Error("equal payloads must share a key, and only in the same directory")
	}
}
