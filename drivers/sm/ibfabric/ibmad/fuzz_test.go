package ibmad

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds device bytes to every decoder: none may panic, and
// what decodes re-encodes to the same table.
func FuzzDecode(f *testing.F) {
	mad, _ := Request{Class: ClassSMIDR, Method: MethodGet, Attr: AttrPortInfo, Path: []int{1, 3}}.Encode(7)
	f.Add(mad)
	f.Add(make([]byte, 64))
	f.Add([]byte{1, 0x81, 1, 0x81})
	f.Add(bytes.Repeat([]byte{0xff}, 256))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeResponse(b)
		_, _ = DecodeNodeInfo(b)
		_ = DecodeNodeDesc(b)
		_, _ = DecodeSwitchInfo(b)
		_, _ = DecodePortInfo(b)
		if keys, err := DecodePKeyBlock(b); err == nil && !bytes.Equal(EncodePKeyBlock(keys), b[:64]) {
			t.Errorf("P_Key block does not re-encode")
		}
		if vl, err := DecodeSL2VL(b); err == nil {
			if got := EncodeSL2VL(vl); !bytes.Equal(got[:8], b[:8]) {
				t.Errorf("SL2VL does not re-encode")
			}
		}
		if ws, err := DecodeVLArbBlock(b); err == nil {
			got := EncodeVLArbBlock(ws)
			for i := 0; i < 64; i += 2 {
				if got[i] != b[i]&0x0f || got[i+1] != b[i+1] {
					t.Fatalf("VL arbitration does not re-encode at %d", i)
				}
			}
		}
		for _, attr := range []uint16{AttrPKeyRecord, AttrSL2VLRecord, AttrVLArbRecord, 0} {
			_, _ = RecordTable(attr, b, b, 2, 3)
		}
	})
}
