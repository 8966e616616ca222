package spec

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestSourceJSON: a Source survives JSON (the agent request carries
// Sources inside the compiled intent) with every attribute's whole range,
// in the shape it had before attribute ranges were made compact; a range
// from another file is kept too.
func TestSourceJSON(t *testing.T) {
	blk := hcl.Range{Filename: "a.fab.hcl", Start: hcl.Pos{Line: 3, Column: 1, Byte: 40}, End: hcl.Pos{Line: 3, Column: 9, Byte: 48}}
	src := Source{Block: blk}
	in := hcl.Range{Filename: "a.fab.hcl", Start: hcl.Pos{Line: 4, Column: 5, Byte: 60}, End: hcl.Pos{Line: 4, Column: 9, Byte: 64}}
	other := hcl.Range{Filename: "override.fab.hcl", Start: hcl.Pos{Line: 1, Column: 2, Byte: 3}, End: hcl.Pos{Line: 1, Column: 4, Byte: 5}}
	src.set("mtu", in)
	src.set("speed", other)
	b, err := json.Marshal(src)
	if err != nil {
		t.Fatal(err)
	}
	var shape struct {
		Attrs []struct {
			Name  string
			Range hcl.Range
		}
	}
	if err := json.Unmarshal(b, &shape); err != nil || len(shape.Attrs) != 2 || shape.Attrs[0].Range != in || shape.Attrs[1].Range != other {
		t.Fatalf("JSON shape %s: %v", b, err)
	}
	var back Source
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Attr("mtu") != in || back.Attr("speed") != other || back.Attr("pfc") != blk || !reflect.DeepEqual(back.Block, blk) {
		t.Fatalf("round trip: %+v", back)
	}
}
